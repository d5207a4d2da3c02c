#!/usr/bin/env python3
"""Exhaustive ml_dtypes narrowing tables, run-length encoded, for the formats vcvt added
from ml_dtypes 0.7 (and their widenings).

For each format below it converts **every** f32 bit pattern (2^32 of them, in chunks) with
``np.ndarray.astype`` and writes ``<vcvt name>.runs.tsv`` into the output directory:

* ``run  start_hex  code_hex``: from f32 bits ``start`` (8 hex digits) up to the next run's
  start (or 0xFFFFFFFF), every input narrows to ``code``. A narrowing is a step function of
  the bits, so a few hundred runs describe all 2^32 results exactly; ``tests/mldtypes_runs.rs``
  expands them and compares vcvt's narrowing of every f32 with them.
* ``widen  code_hex  f32_hex``: every one of the 256 codes widened to f32.

ml_dtypes' ``astype`` does not saturate (overflow gives Inf or NaN) and gives the canonical
NaN, which is vcvt's ``Overflow::NonSaturating`` with ``NanPolicy::Preserve``.

Deterministic. Rerun (about 15 s of numpy per format):
    pip install "ml_dtypes==0.7.0" "numpy==2.4.6"
    python3 scripts/gen_mldtypes_runs.py tests/data/mldtypes

``--check DIR`` (what CI runs, in a second): holds the committed files to the installed
ml_dtypes at every run's first input, the input before it, its last input and 64 inputs
spread over it, and at every code widened; it exits 1 on the first difference.
"""

import os
import sys

import ml_dtypes
import numpy as np

FORMATS = [
    ("float8_e3m4", "F8E3M4"),
    ("float8_e4m3", "F8E4M3IEEE"),
    ("float8_e4m3b11fnuz", "F8E4M3B11FNUZ"),
    ("float8_e5m3fnu", "F8E5M3FNU"),
]

CHUNK = 1 << 24


def runs(dtype):
    out = []
    prev = None
    for base in range(0, 1 << 32, CHUNK):
        bits = np.arange(base, base + CHUNK, dtype=np.uint64).astype(np.uint32)
        codes = bits.view(np.float32).astype(dtype).view(np.uint8)
        change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
        if prev is None or codes[0] != prev:
            out.append((base, int(codes[0])))
        for i in change:
            out.append((base + int(i), int(codes[i])))
        prev = codes[-1]
    return out


def check(indir):
    for mname, vname in FORMATS:
        dtype = getattr(ml_dtypes, mname)
        path = os.path.join(indir, f"{vname}.runs.tsv")
        starts, codes, widen = [], [], {}
        for line in open(path):
            if line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            if f[0] == "run":
                starts.append(int(f[1], 16))
                codes.append(int(f[2], 16))
            else:
                widen[int(f[1], 16)] = int(f[2], 16)
        bits, want = [], []
        for i, (start, code) in enumerate(zip(starts, codes)):
            end = starts[i + 1] if i + 1 < len(starts) else 1 << 32
            points = {start, end - 1} | {start + k * (end - start) // 64 for k in range(64)}
            for b in sorted(points):
                bits.append(b)
                want.append(code)
            if start > 0:
                bits.append(start - 1)
                want.append(codes[i - 1])
        x = np.array(bits, dtype=np.uint32).view(np.float32)
        got = x.astype(dtype).view(np.uint8)
        bad = np.flatnonzero(got != np.array(want, dtype=np.uint8))
        if bad.size:
            k = bad[0]
            print(f"{vname}: f32 {bits[k]:#010x} is {got[k]:#04x} in ml_dtypes "
                  f"{ml_dtypes.__version__}, the file says {want[k]:#04x}", file=sys.stderr)
            sys.exit(1)
        c = np.arange(256, dtype=np.uint8)
        w = c.view(dtype).astype(np.float32).view(np.uint32)
        for code in range(256):
            if widen.get(code) != int(w[code]):
                print(f"{vname}: code {code:#04x} widens to {int(w[code]):#010x} in ml_dtypes, "
                      f"the file says {widen.get(code)}", file=sys.stderr)
                sys.exit(1)
        print(f"{vname}: {len(starts)} runs ({len(bits)} inputs) and 256 widenings agree with "
              f"ml_dtypes {ml_dtypes.__version__}")


def main():
    if sys.argv[1] == "--check":
        check(sys.argv[2])
        return
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for mname, vname in FORMATS:
        dtype = getattr(ml_dtypes, mname)
        r = runs(dtype)
        codes = np.arange(256, dtype=np.uint8)
        wide = codes.view(dtype).astype(np.float32).view(np.uint32)
        path = os.path.join(outdir, f"{vname}.runs.tsv")
        with open(path, "w") as f:
            f.write(f"# {vname}: ml_dtypes.{mname}, every f32 narrowed (run-length) and every code widened\n")
            f.write("# generator: scripts/gen_mldtypes_runs.py; rerun: python3 scripts/gen_mldtypes_runs.py tests/data/mldtypes\n")
            f.write(f"# ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}\n")
            f.write("# run <start f32 bits> <code>: inputs from start up to the next run's start narrow to code\n")
            f.write("# widen <code> <f32 bits>\n")
            for start, code in r:
                f.write(f"run\t{start:08x}\t{code:02x}\n")
            for c, w in zip(codes, wide):
                f.write(f"widen\t{int(c):02x}\t{int(w):08x}\n")
        print(f"{vname}: {len(r)} runs", file=sys.stderr)


if __name__ == "__main__":
    main()
