#!/usr/bin/env python3
"""Markdown tables of the `cargo bench --bench convert` results.

Reads every ``<criterion dir>/**/new/benchmark.json`` (ids and the element count) and the
``estimates.json`` next to it (the median point estimate: nanoseconds per iteration), and
prints:

1. throughput: one row per pair and size, one column per contender, in elements/ns; the
   DRAM-sized rows also give GB/s (source bytes read + destination bytes written);
2. ratios: the primary vcvt backend (default: the best one present, e.g. ``vcvt-avx512``)
   against ``half``, ``float8``, the fastest ``bare-*`` loop, and ``memcpy`` (which reads
   and writes as many bytes as the conversion, so the time ratio is the bytes/s ratio), and
   ``avx2`` against the primary backend;
   a ratio above 1 means the primary backend is faster;
3. short slices: per-element throughput at 16 and 64 elements relative to 1 Ki, for the
   primary backend and for ``vcvt`` (the default entry point).

Missing contenders or sizes show as "-". Python 3.11 standard library only.

Usage:
    python3 scripts/bench_table.py [CRITERION_DIR ...] [--primary vcvt-avx2]

With several directories (copies of ``target/criterion`` from repeated runs), every figure
is the median over the runs of each run's median estimate: on a shared machine whose speed
drifts over minutes, that keeps one slow stretch from deciding a ratio.

CRITERION_DIR defaults to ``$CARGO_TARGET_DIR/criterion`` if that variable is set, else
``target/criterion`` in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

# Element sizes in bytes, by the names used in the pair ids.
ELEM_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "f8e4m3": 1, "f8e5m2": 1}

PAIR_ORDER = [
    f"{w}_to_{f}" for w in ("f32", "f64") for f in ("f16", "bf16", "f8e4m3", "f8e5m2")
] + [f"{f}_to_{w}" for w in ("f32", "f64") for f in ("f16", "bf16", "f8e4m3", "f8e5m2")]

# vcvt backends, best first (the order of `vcvt::Backend::ALL`).
BACKEND_ORDER = ["avx512-fp16", "avx512-bf16", "avx512-vbmi", "avx512", "avx2", "neon-bf16", "neon", "scalar"]

DRAM = 1 << 24


def size_label(n: int) -> str:
    for shift, unit in ((20, "Mi"), (10, "Ki")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return str(n)


def fmt(x: float | None, digits: int = 3) -> str:
    """About `digits` significant digits; '-' for a missing value."""
    if x is None:
        return "-"
    if x == 0:
        return "0"
    mag = 0
    y = abs(x)
    while y >= 10 and mag < 6:
        y /= 10
        mag += 1
    while y < 1 and mag > -6:
        y *= 10
        mag -= 1
    decimals = max(0, digits - 1 - mag)
    return f"{x:.{decimals}f}"


def contender_key(name: str) -> tuple[int, int, str]:
    """Column order: vcvt, vcvt-<backend> best first, half, float8, bare-*, memcpy."""
    if name == "vcvt":
        return (0, 0, name)
    if name.startswith("vcvt-"):
        b = name[5:]
        return (1, BACKEND_ORDER.index(b) if b in BACKEND_ORDER else 99, name)
    if name == "half":
        return (2, 0, name)
    if name == "float8":
        return (3, 0, name)
    if name.startswith("bare-"):
        return (4, 0, name)
    if name == "memcpy":
        return (6, 0, name)
    return (5, 0, name)


def pair_key(pair: str) -> tuple[int, str]:
    return (PAIR_ORDER.index(pair) if pair in PAIR_ORDER else len(PAIR_ORDER), pair)


def pair_bytes(pair: str) -> tuple[int, int] | None:
    """(source, destination) element sizes, or None for an unknown pair name."""
    parts = pair.split("_to_")
    if len(parts) != 2 or parts[0] not in ELEM_BYTES or parts[1] not in ELEM_BYTES:
        return None
    return ELEM_BYTES[parts[0]], ELEM_BYTES[parts[1]]


def load(root: Path) -> tuple[dict[tuple[str, int], dict[str, float]], list[float]]:
    """({(pair, n): {contender: ns per iteration}}, result file mtimes) from a criterion
    directory."""
    results: dict[tuple[str, int], dict[str, float]] = {}
    mtimes: list[float] = []
    for bench_json in sorted(root.glob("**/new/benchmark.json")):
        try:
            meta = json.loads(bench_json.read_text())
            est_path = bench_json.parent / "estimates.json"
            est = json.loads(est_path.read_text())
            mtime = est_path.stat().st_mtime
            ns = float(est["median"]["point_estimate"])
            group = meta["group_id"]
            function = meta.get("function_id")
            throughput = meta.get("throughput") or {}
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"warning: skipping {bench_json.parent}: {e}", file=sys.stderr)
            continue
        if function is None or "/" not in group:
            continue  # not one of this bench's `<pair>/<n>/<contender>` ids
        pair, _, size = group.rpartition("/")
        try:
            n = int(throughput.get("Elements", size))
        except (TypeError, ValueError):
            continue
        if ns > 0:
            results.setdefault((pair, n), {})[function] = ns
            mtimes.append(mtime)
    return results, mtimes


def elems_per_ns(n: int, ns: float | None) -> float | None:
    return None if ns is None else n / ns


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table, left-aligned first column, right-aligned numbers."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = []

    def line(cells: list[str]) -> str:
        padded = [
            c.ljust(widths[i]) if i == 0 else c.rjust(widths[i])
            for i, c in enumerate(cells)
        ]
        return "| " + " | ".join(padded) + " |"

    out.append(line(header))
    out.append(
        "|"
        + "|".join(
            "-" * (w + 1) + ":" if i > 0 else ":" + "-" * (w + 1)
            for i, w in enumerate(widths)
        )
        + "|"
    )
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_dir = (
        Path(os.environ["CARGO_TARGET_DIR"]) / "criterion"
        if os.environ.get("CARGO_TARGET_DIR")
        else Path(__file__).resolve().parent.parent / "target" / "criterion"
    )
    ap.add_argument("dirs", nargs="*", type=Path, default=[default_dir])
    ap.add_argument(
        "--primary",
        help="the vcvt contender the ratios are about (default: the best backend present)",
    )
    args = ap.parse_args()

    runs = []
    mtimes: list[float] = []
    for d in args.dirs:
        if not d.is_dir():
            print(f"error: {d} is not a directory (run `cargo bench` first)", file=sys.stderr)
            return 1
        r, m = load(d)
        if not r:
            print(f"error: no criterion results under {d}", file=sys.stderr)
            return 1
        runs.append(r)
        mtimes.extend(m)
    results: dict[tuple[str, int], dict[str, float]] = {}
    for key in sorted({k for r in runs for k in r}):
        names = {c for r in runs for c in r.get(key, {})}
        results[key] = {
            c: statistics.median([r[key][c] for r in runs if c in r.get(key, {})])
            for c in names
        }
    source = ", ".join(f"`{d}`" for d in args.dirs)
    if len(runs) > 1:
        source = f"the median over {len(runs)} runs ({source})"

    contenders = sorted({c for r in results.values() for c in r}, key=contender_key)
    primary = args.primary
    if primary is None:
        primary = next(
            (f"vcvt-{b}" for b in BACKEND_ORDER if f"vcvt-{b}" in contenders), None
        )
    keys = sorted(results, key=lambda k: (pair_key(k[0]), k[1]))

    # 1. Throughput.
    print("## Throughput (elements/ns; DRAM-sized rows also GB/s read + written)\n")
    stamp = "%Y-%m-%d %H:%M"
    oldest, newest = time.strftime(stamp, time.localtime(min(mtimes))), time.strftime(
        stamp, time.localtime(max(mtimes))
    )
    print(f"Criterion median estimates from {source}, written {oldest} to {newest}.")
    if len(runs) == 1 and max(mtimes) - min(mtimes) > 3600:
        print(
            "**Warning: the results span more than an hour, so they may come from different "
            "runs or code; delete the criterion directory and rerun for one consistent set.**"
        )
    print()
    rows = []
    for pair, n in keys:
        r = results[(pair, n)]
        sizes = pair_bytes(pair)
        row = [f"{pair} / {size_label(n)}"]
        for c in contenders:
            ns = r.get(c)
            cell = fmt(elems_per_ns(n, ns))
            if ns is not None and n >= DRAM and sizes is not None:
                moved = n * (sizes[0] + sizes[1])
                cell += f" ({fmt(moved / ns)} GB/s)"
            row.append(cell)
        rows.append(row)
    print(table(["pair / n", *contenders], rows))
    print(
        "\n`memcpy` copies n x (source + destination element size) / 2 bytes, so that it "
        "reads and writes as many bytes as the conversion; every GB/s figure counts reads "
        "plus writes."
    )

    if primary is None:
        print("\n(no vcvt backend results: no ratios)")
        return 0

    # 2. Ratios.
    p = primary
    print(f"\n## Ratios of `{p}` (throughput of {p} / throughput of the other; > 1: {p} is faster)\n")
    have = set(contenders)
    cols = []
    if "half" in have:
        cols.append("/ half")
    if "float8" in have:
        cols.append("/ float8")
    if any(c.startswith("bare-") for c in have):
        cols.append("/ fastest bare loop")
    if "memcpy" in have:
        cols.append("/ memcpy (bytes/s)")
    if "vcvt-avx2" in have and p != "vcvt-avx2":
        cols.append(f"avx2 / {p[5:]}")
    rows = []
    for pair, n in keys:
        r = results[(pair, n)]
        t = r.get(p)
        sizes = pair_bytes(pair)
        row = [f"{pair} / {size_label(n)}"]
        for col in cols:
            if col == "/ half":
                row.append(fmt(ratio(r.get("half"), t)))
            elif col == "/ float8":
                row.append(fmt(ratio(r.get("float8"), t)))
            elif col == "/ fastest bare loop":
                bare = {c: ns for c, ns in r.items() if c.startswith("bare-")}
                if bare and t is not None:
                    name, ns = min(bare.items(), key=lambda kv: kv[1])
                    row.append(f"{fmt(ns / t)} ({name[5:]})")
                else:
                    row.append("-")
            elif col == "/ memcpy (bytes/s)":
                m = r.get("memcpy")
                if m is None or t is None or sizes is None:
                    row.append("-")
                else:
                    # Same bytes moved: the bytes/s ratio is the time ratio.
                    row.append(fmt(m / t))
            elif col.startswith("avx2 / "):
                row.append(fmt(ratio(t, r.get("vcvt-avx2"))))
        rows.append(row)
    if cols:
        print(table(["pair / n", *cols], rows))
    else:
        print("(no other contenders present)")

    # 3. Short slices: per-element throughput relative to 1 Ki.
    ref = 1 << 10
    short = sorted({n for _, n in keys if n < ref})
    who = [c for c in ("vcvt", p) if c in have]
    if short and who:
        print(
            f"\n## Short slices: per-element throughput at n / at {size_label(ref)} "
            "(1 = no per-call overhead)\n"
        )
        header = ["pair"] + [f"{c} @ {n}" for c in who for n in short]
        rows = []
        for pair in sorted({k[0] for k in keys}, key=pair_key):
            base = results.get((pair, ref), {})
            row = [pair]
            for c in who:
                for n in short:
                    at_n = results.get((pair, n), {}).get(c)
                    at_ref = base.get(c)
                    row.append(
                        fmt(ratio(elems_per_ns(n, at_n), elems_per_ns(ref, at_ref)))
                    )
            rows.append(row)
        print(table(header, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
