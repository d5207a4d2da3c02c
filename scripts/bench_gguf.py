#!/usr/bin/env python3
"""Times gguf 0.19's numpy MXFP4 implementation on the data sizes of benches/block.rs, so that
its rate can be put beside vcvt's (docs/performance.md, "Block-scaled formats").

What it measures: `gguf.quants.dequantize(blocks, MXFP4)` (ggml `block_mxfp4` bytes -> a new
float32 array) and `gguf.quants.quantize(f32 array, MXFP4)`, the whole call, median of N runs,
in values per nanosecond. It is numpy on one core (gguf processes rows in groups), with f32
output (gguf has no BF16 output; converting to BF16 would be a further pass).

    pip install "gguf==0.19.0" "numpy==2.4.6"
    python3 scripts/bench_gguf.py [--n 1024] [--n 134217728] [--runs 7]
"""
import argparse
import statistics
import time

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants


def rate(fn, n, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return n / statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, action="append")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    rng = np.random.default_rng(2)
    for n in a.n or [1024]:
        w = ((rng.random(n, dtype=np.float32) - 0.5) * (1 << (np.arange(n) // 32 % 8))).astype(np.float32)
        w = w.reshape(-1, 1024) if n >= 1024 else w.reshape(1, -1)
        q = quants.quantize(w, T.MXFP4)
        runs = a.runs if n < (1 << 24) else 3
        dq = rate(lambda: quants.dequantize(q, T.MXFP4), n, runs)
        qu = rate(lambda: quants.quantize(w, T.MXFP4), n, runs)
        print(f"n={n}: gguf-numpy MXFP4 dequantize -> f32 {dq:.4f} values/ns, quantize from f32 {qu:.4f} values/ns")


if __name__ == "__main__":
    main()
