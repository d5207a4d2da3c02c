#!/usr/bin/env python3
"""Median vcvt/NumKong ratio per pair and length over several outputs of the tool.

    cargo run --release > run1.txt   # (and run2.txt, run3.txt, ...)
    python3 ratios.py run1.txt run2.txt run3.txt

Prints a Markdown table: one row per pair, one column per length, each cell the median of the
runs' ratios with their range in brackets, and "below target" where the median misses the
target the tool printed for that length.
"""

import re
import statistics
import sys


def parse(path):
    """{(length label, pair): ratio} and {length label: target} of one output."""
    ratios, targets, size = {}, {}, None
    head = re.compile(r"^(\S+ \S+) elements, .* target vcvt/NumKong >= ([0-9.]+)$")
    row = re.compile(r"^(\S+ -> \S+)\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)( MISS)?$")
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = head.match(line)
            if m:
                size = m.group(1)
                targets[size] = float(m.group(2))
                continue
            m = row.match(line)
            if m and size is not None:
                ratios[(size, m.group(1))] = float(m.group(2))
    return ratios, targets


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ratios.py OUTPUT...")
    runs = [parse(p) for p in sys.argv[1:]]
    sizes, pairs = [], []
    for ratios, _ in runs:
        for size, pair in ratios:
            if size not in sizes:
                sizes.append(size)
            if pair not in pairs:
                pairs.append(pair)
    targets = {}
    for _, t in runs:
        targets.update(t)
    print("| pair | " + " | ".join(sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for pair in pairs:
        cells = []
        for size in sizes:
            vals = [r[(size, pair)] for r, _ in runs if (size, pair) in r]
            if not vals:
                cells.append("")
                continue
            med = statistics.median(vals)
            cell = f"{med:.2f}"
            if len(vals) > 1:
                cell += f" ({min(vals):.2f}–{max(vals):.2f})"
            if med < targets[size]:
                cell += " **below target**"
            cells.append(cell)
        print(f"| {pair.replace('->', '→')} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
