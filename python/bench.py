#!/usr/bin/env python3
"""vcvt.astype against ml_dtypes' astype and numpy's float16 astype, side by side.

For each pair and size, the reference and vcvt (one thread, then every core) run in turns
(ref, vcvt-1, vcvt-all, ref, ...), ``--reps`` rounds, and the table shows the median time of
each, in nanoseconds per element, and the ratios of the medians (reference / vcvt: above 1
means vcvt is faster). ml_dtypes and numpy convert on one thread. Every vcvt result is
checked equal to the reference's before timing (NaN-free inputs; overflow="nonsaturating",
as ml_dtypes does).

    python3 python/bench.py                      # 1 Ki, 1 Mi, 64 Mi elements
    python3 python/bench.py --sizes 1024 1048576 --reps 7
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import ml_dtypes
import numpy as np

import vcvt

NARROWING = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float6_e2m3fn", "float4_e2m1fn"]
WIDENING = ["bfloat16", "float8_e4m3fn", "float4_e2m1fn"]


def dt(name):
    return np.dtype(np.float16) if name == "float16" else np.dtype(getattr(ml_dtypes, name))


def cases():
    """(label, reference name, source-maker, destination dtype)."""
    out = []
    for n in NARROWING:
        out.append((f"f32->{n}", "ml_dtypes", lambda x: x, n))
    out.append(("f32->float16", "numpy", lambda x: x, "float16"))
    for n in WIDENING:
        out.append((f"{n}->f32", "ml_dtypes", lambda x, n=n: x.astype(dt(n)), "float32"))
    out.append(("float16->f32", "numpy", lambda x: x.astype(np.float16), "float32"))
    return out


def clock(f, inner):
    t0 = time.perf_counter_ns()
    for _ in range(inner):
        f()
    return (time.perf_counter_ns() - t0) / inner


def measure(fns, n, reps):
    """Median ns per element of each function in ``fns``, run in turns."""
    # Enough calls per sample for ~20 ms at a guessed 1 ns/el.
    inner = max(1, int(2e7 // max(n, 1)))
    for f in fns:  # warm up (page faults of fresh outputs, pools, caches)
        f()
    samples = [[] for _ in fns]
    for _ in range(reps):
        for i, f in enumerate(fns):
            samples[i].append(clock(f, inner) / n)
    return [statistics.median(s) for s in samples]


def fixed_cost(reps):
    x = np.linspace(-3, 3, 16, dtype=np.float32)
    out = np.empty(16, dt("float8_e4m3fn"))
    fns = {
        "vcvt.astype(16 f32 -> e4m3)": lambda: vcvt.astype(x, "float8_e4m3fn"),
        "vcvt.astype(..., out=)": lambda: vcvt.astype(x, "float8_e4m3fn", out=out),
        "ml_dtypes astype(16 f32 -> e4m3)": lambda: x.astype(ml_dtypes.float8_e4m3fn),
        "numpy astype(16 f32 -> f16)": lambda: x.astype(np.float16),
    }
    res = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            res[k].append(clock(f, 20000) / 1000.0)
    print("\nfixed cost of one call (16 elements), median microseconds per call:")
    for k, v in res.items():
        print(f"  {k:36s} {statistics.median(v):7.2f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1 << 10, 1 << 20, 1 << 26])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="labels to run (default: all)")
    args = ap.parse_args()

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"vcvt backend {vcvt.backend()}; {os.cpu_count()} logical CPUs ({cpu}); "
          f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, Python {platform.python_version()}")
    print(f"load average at start: {os.getloadavg()}")
    print(f"median of {args.reps} rounds; ns/el = nanoseconds per element; ratio = reference time / vcvt time\n")
    hdr = f"{'pair':24s} {'n':>9s} {'ref':>9s} {'ref ns/el':>10s} {'vcvt 1T':>9s} {'vcvt all':>9s} {'ratio 1T':>9s} {'ratio all':>9s}"
    print(hdr)
    print("-" * len(hdr))
    rng = np.random.default_rng(0)
    for n in args.sizes:
        base = (rng.standard_normal(n) * 4).astype(np.float32)
        for label, refname, make, dst in cases():
            if args.only and label not in args.only:
                continue
            src = make(base)
            d = dt(dst) if dst != "float32" else np.dtype(np.float32)
            ref_out = np.empty(src.shape, d)
            v_out = np.empty(src.shape, d)
            with np.errstate(all="ignore"):
                want = src.astype(d)
            got = vcvt.astype(src, dst, overflow="nonsaturating")
            assert got.tobytes() == want.tobytes(), f"{label}: vcvt differs from {refname}"

            def ref():
                # numpy/ml_dtypes cast into a preallocated array, as vcvt's out= does.
                np.copyto(ref_out, src, casting="unsafe")

            def v1():
                vcvt.astype(src, dst, overflow="nonsaturating", out=v_out, threads=1)

            def vall():
                vcvt.astype(src, dst, overflow="nonsaturating", out=v_out)

            r, a, b = measure([ref, v1, vall], n, args.reps)
            print(f"{label:24s} {n:9d} {refname:>9s} {r:10.3f} {a:9.3f} {b:9.3f} {r / a:9.1f} {r / b:9.1f}", flush=True)
            del src, ref_out, v_out, want, got
    fixed_cost(args.reps)
    print(f"\nload average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
