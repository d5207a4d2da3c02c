#!/usr/bin/env python3
"""The ratios of the width-generic kernels' performance targets (issue 27), from saved runs of
the throughput example's full tables.

    for i in 1 2 3; do
        cargo run --release --example throughput -- --full --size 1024 \\
            --backend avx512-bf16,avx2 > run$i.txt
    done
    python3 scripts/kernel_ratios.py run1.txt run2.txt run3.txt

Each pair's el/ns is the median over the runs (per backend column), then the ratios are
formed from those medians:

* f32 -> X against f32 -> F8E4M3; X -> f32 against F8E5M2 -> f32;
* X -> F16/BF16 against X -> f32; F16/BF16 -> X against f32 -> X;
* round_trip X against f32 -> X;
* the tier gain: (best tier / avx2) for X against the same quotient for F8E4M3 (narrowing) or
  F8E5M2 (widening).

Rows of a run that is not a full table (the default quick run) are ignored. Prints Markdown.
"""
import re
import statistics
import sys
from collections import defaultdict

ROW = re.compile(r"^([a-z0-9_]+)\s+([0-9.]+)")


def parse(paths):
    """{pair: {backend: [el/ns, ...]}} and the backend columns, best first."""
    data = defaultdict(lambda: defaultdict(list))
    columns = None
    for path in paths:
        cols = None
        for line in open(path, encoding="utf-8"):
            if line.startswith("pair "):
                cols = [c.rstrip("*") for c in line.split()[1:] if c not in ("best/",)]
                continue
            if cols is None or not ROW.match(line):
                continue
            parts = line.split()
            name, vals = parts[0], parts[1:]
            for i, b in enumerate(cols):
                if 2 * i < len(vals):
                    try:
                        data[name][b].append(float(vals[2 * i].rstrip("s")))
                    except ValueError:
                        pass
            columns = cols
    return data, columns


def main():
    data, cols = parse(sys.argv[1:])
    if not data:
        sys.exit("no full tables found")
    med = {p: {b: statistics.median(v) for b, v in d.items()} for p, d in data.items()}
    best = cols[0]
    formats = ["f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f6e2m3", "f6e3m2", "f4e2m1", "f8e8m0"]

    def r(a, b, col=best):
        try:
            return med[a][col] / med[b][col]
        except (KeyError, ZeroDivisionError):
            return float("nan")

    print(f"Medians of {len(sys.argv) - 1} runs; el/ns of `{best}` (the best tier) at the run's size.\n")
    print("| X | f32 → X | ÷ f32 → F8E4M3 | X → f32 | ÷ F8E5M2 → f32 | X → F16 ÷ X → f32 | X → BF16 ÷ X → f32 "
          "| F16 → X ÷ f32 → X | BF16 → X ÷ f32 → X | gain ÷ E4M3's (narrow) | gain ÷ E5M2's (widen) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    other = cols[1] if len(cols) > 2 else None

    def gain(p):
        if other is None:
            return float("nan")
        try:
            return med[p][best] / med[p][other]
        except (KeyError, ZeroDivisionError):
            return float("nan")

    for x in formats:
        n, w = f"f32_to_{x}", f"{x}_to_f32"
        row = [
            x,
            f"{med.get(n, {}).get(best, float('nan')):.2f}",
            f"{r(n, 'f32_to_f8e4m3'):.2f}",
            f"{med.get(w, {}).get(best, float('nan')):.2f}",
            f"{r(w, 'f8e5m2_to_f32'):.2f}",
            f"{r(f'{x}_to_f16', w):.2f}",
            f"{r(f'{x}_to_bf16', w):.2f}",
            f"{r(f'f16_to_{x}', n):.2f}",
            f"{r(f'bf16_to_{x}', n):.2f}",
            f"{gain(n) / gain('f32_to_f8e4m3'):.2f}",
            f"{gain(w) / gain('f8e5m2_to_f32'):.2f}",
        ]
        print("| " + " | ".join(row) + " |")
    print()
    print("| round trip | el/ns | ÷ f32 → X |")
    print("|---|---:|---:|")
    for x in ["f16", "bf16", "f8e4m3", "f8e5m2", "f4e2m1"]:
        rt = f"round_trip_{x}"
        print(f"| {x} | {med.get(rt, {}).get(best, float('nan')):.2f} | {r(rt, f'f32_to_{x}'):.2f} |")


if __name__ == "__main__":
    main()
