#!/usr/bin/env python3
"""Third-party known-answer vectors from ml_dtypes for six narrow float formats.

What it does
------------
For each ml_dtypes type below it writes one TSV into the output directory, named after the
vcvt format:

    float8_e4m3fnuz -> F8E4M3FNUZ.tsv     float6_e3m2fn  -> F6E3M2.tsv
    float8_e5m2fnuz -> F8E5M2FNUZ.tsv     float4_e2m1fn  -> F4E2M1.tsv
    float6_e2m3fn   -> F6E2M3.tsv         float8_e8m0fnu -> F8E8M0.tsv

Every file starts with ``#`` comment lines (generator, ml_dtypes/numpy versions, column
meanings), then tab-separated rows ``op  input_hex  output_hex  note``:

* ``f32``   input = f32 bits (8 lowercase hex digits), output = the code (2 hex digits) that
            ``np.array([x], np.float32).astype(T).view(np.uint8)`` gives.
* ``f64``   input = f64 bits (16 hex digits), output = the code from
            ``np.array([x], np.float64).astype(T)``. The note ends in ``,f32exact`` when the
            f64 value is exactly an f32 (double rounding through f32 cannot matter), else in
            ``,via_f32``.
* ``widen`` input = a code (2 hex digits: all 256 codes for 8-bit formats, 0..63 for fp6,
            0..15 for fp4), output = f32 bits from
            ``np.array([code], np.uint8).view(T).astype(np.float32)``.

``note`` is a comma-separated list of short words; the first says what the input is
(``code_value``, ``midpoint``, ``mid+1ulp``, ``nan``, ``random``, ...). Rows are deduplicated
(the first reason an input was chosen names it) and sorted by op, then input.

Nothing here decides what is *right*: the rows are what ml_dtypes does. Independently, the
script also computes the exact nearest code of every finite input with ``fractions.Fraction``
(ties to even; for E8M0 nearest in linear space, ties up) and writes the rows where ml_dtypes
disagrees to ``exact_mismatches.txt`` in the same directory, with a summary on stderr. Its
overflow and NaN policy is ml_dtypes' own (the code ml_dtypes gives for 2*max, resp. NaN is
not compared), so a mismatch there is a rounding difference, not a policy difference.

Deterministic: fixed seed, no timestamps. Requires numpy and ml_dtypes only.

Rerun:
    pip install "ml_dtypes==0.6.*" numpy
    python3 scripts/gen_mldtypes_vectors.py tests/data/mldtypes
"""

import math
import os
import struct
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

SEED = 20240601
N_RANDOM_RESTRICTED = 2000
N_RANDOM_ANY = 200

FORMATS = [
    # (ml_dtypes name, vcvt name, width in bits)
    ("float8_e4m3fnuz", "F8E4M3FNUZ", 8),
    ("float8_e5m2fnuz", "F8E5M2FNUZ", 8),
    ("float6_e2m3fn", "F6E2M3", 6),
    ("float6_e3m2fn", "F6E3M2", 6),
    ("float4_e2m1fn", "F4E2M1", 4),
    ("float8_e8m0fnu", "F8E8M0", 8),
]

F32_NANS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFFBFFFFF]
F32_SUBNORMALS = [0x00000001, 0x00400000, 0x00400001, 0x005FFFFF, 0x00600000, 0x00600001, 0x007FFFFF]
F32_MAX_BITS = 0x7F7FFFFF
# f64-only extras (outside f32's range or precision in ways the f32 list cannot show).
F64_EXTRA_BITS = [
    (0x7FF8000000000000, "nan"),
    (0xFFF8000000000000, "nan"),
    (0x7FF0000000000001, "nan"),
    (0x7FF4000000000000, "nan"),
    (0xFFF0000000000001, "nan"),
    (0x7FEFFFFFFFFFFFFF, "f64_max"),
    (0xFFEFFFFFFFFFFFFF, "f64_max"),
    (0x0000000000000001, "f64_subnormal"),
    (0x8000000000000001, "f64_subnormal"),
]
F64_EXTRA_VALUES = [
    (1e300, "f64_huge"),
    (3.4028235677973366e38, "above_f32max"),  # rounds to f32::MAX in f32
    (3.4028235677973368e38, "above_f32max"),  # f32::MAX + half f32 ulp: rounds to inf in f32
    (3.5e38, "above_f32max"),
    (1e-50, "f64_tiny"),
    (2.0 ** -150, "f64_tiny"),  # half the smallest f32 subnormal: 0 in f32
    (1.5 * 2.0 ** -150, "f64_tiny"),
    (2.0 ** -151, "f64_tiny"),
]


# ---------------------------------------------------------------- bit helpers

def f32_bits(x):
    return int(np.array([x], np.float32).view(np.uint32)[0])


def f32_from_bits(b):
    return np.array([b], np.uint32).view(np.float32)[0]


def f64_bits(x):
    return int(np.array([x], np.float64).view(np.uint64)[0])


def f64_from_bits(b):
    return np.array([b], np.uint64).view(np.float64)[0]


def exact_f32(v):
    """np.float32 of a Python float that must be exactly representable."""
    r = np.float32(v)
    assert float(r) == v, (v, float(r))
    return r


def f32_next(x, up):
    return np.nextafter(np.float32(x), np.float32(np.inf if up else -np.inf))


def f64_next(x, up):
    return np.nextafter(np.float64(x), np.float64(np.inf if up else -np.inf))


# ---------------------------------------------------------------- ml_dtypes calls

def code_of(T, arr):
    return arr.astype(T).view(np.uint8)


def widen_code(T, code):
    return f32_bits(np.array([code], np.uint8).view(T).astype(np.float32)[0])


# ---------------------------------------------------------------- input sets

class Inputs:
    """Ordered, deduplicated f32 / f64 input lists (first reason wins)."""

    def __init__(self):
        self.f32 = {}  # bits -> note
        self.f64 = {}

    def add32(self, x, note, negate=True):
        b = f32_bits(x)
        self.f32.setdefault(b, note)
        if negate:
            self.f32.setdefault(b ^ 0x80000000, note)

    def add32_bits(self, b, note):
        self.f32.setdefault(b, note)

    def add64(self, x, note, negate=True):
        b = f64_bits(x)
        self.f64.setdefault(b, note)
        if negate:
            self.f64.setdefault(b ^ (1 << 63), note)

    def add64_bits(self, b, note):
        self.f64.setdefault(b, note)


def random_f32(rng, n, keep):
    """n random f32 bit patterns (as uint32) accepted by keep(float32 array) -> bool array."""
    out = []
    while len(out) < n:
        bits = rng.integers(0, 1 << 32, size=4096, dtype=np.uint64).astype(np.uint32)
        vals = bits.view(np.float32)
        with np.errstate(all="ignore"):
            mask = keep(vals)
        out.extend(int(b) for b in bits[mask])
    return out[:n]


def regular_inputs(T, fmt_values, rng):
    """Inputs for the sign/exponent/mantissa formats (all but E8M0)."""
    inp = Inputs()
    pos = sorted(v for v in fmt_values if v >= 0)  # exact f32 values, 0 first
    vmax = pos[-1]
    smin = pos[1]
    ulp_top = vmax - pos[-2]  # max and its predecessor share a binade in all five formats
    midpoints = []

    inp.add32(np.float32(0.0), "zero")
    inp.add32(np.float32(np.inf), "inf")
    for b in F32_NANS:
        inp.add32_bits(b, "nan")
    for v in pos[1:]:
        inp.add32(exact_f32(v), "code_value")
    for lo, hi in zip(pos, pos[1:]):
        m = exact_f32((lo + hi) / 2)
        midpoints.append(m)
        inp.add32(m, "midpoint")
        inp.add32(f32_next(m, True), "mid+1ulp")
        inp.add32(f32_next(m, False), "mid-1ulp")
    # Above the largest value.
    mtop = exact_f32(vmax + ulp_top / 2)
    midpoints.append(mtop)
    inp.add32(mtop, "max_tie")
    inp.add32(f32_next(mtop, True), "max_tie+1ulp")
    inp.add32(f32_next(mtop, False), "max_tie-1ulp")
    inp.add32(exact_f32(vmax + ulp_top / 4), "above_max")
    inp.add32(f32_next(np.float32(vmax), True), "above_max")
    inp.add32(exact_f32(2 * vmax), "overflow")
    inp.add32(np.float32(1e30), "overflow")
    inp.add32(f32_from_bits(F32_MAX_BITS), "overflow")
    # Around the smallest subnormal.
    half = exact_f32(smin / 2)
    inp.add32(half, "min_sub_half")
    inp.add32(f32_next(half, True), "min_sub_half+1ulp")
    inp.add32(f32_next(half, False), "min_sub_half-1ulp")
    inp.add32(exact_f32(smin / 4), "min_sub_quarter")
    for b in F32_SUBNORMALS:
        inp.add32(f32_from_bits(b), "f32_subnormal")
    # Random.
    lo_mag, hi_mag = np.float32(smin / 4), np.float32(4 * vmax)
    for b in random_f32(rng, N_RANDOM_RESTRICTED,
                        lambda a: np.isfinite(a) & (np.abs(a) >= lo_mag) & (np.abs(a) <= hi_mag)):
        inp.add32_bits(b, "random")
    for b in random_f32(rng, N_RANDOM_ANY, lambda a: np.ones(a.shape, bool)):
        inp.add32_bits(b, "random_any")
    return inp, midpoints


def e8m0_inputs(rng):
    inp = Inputs()
    midpoints = []
    inp.add32(np.float32(0.0), "zero")
    inp.add32(np.float32(np.inf), "inf")
    for b in F32_NANS:
        inp.add32_bits(b, "nan")
    for k in range(-127, 128):
        p = exact_f32(2.0 ** k)
        inp.add32(p, "pow2")
        t = exact_f32(1.5 * 2.0 ** k)
        midpoints.append(t)
        inp.add32(t, "tie")
        inp.add32(f32_next(t, True), "tie+1ulp")
        inp.add32(f32_next(t, False), "tie-1ulp")
        inp.add32(np.float32(1.45 * 2.0 ** k), "x1.45")
        inp.add32(np.float32(1.55 * 2.0 ** k), "x1.55")
    for b in F32_SUBNORMALS + [0x00200000, 0x00300000, 0x00500000, 0x00700000]:
        inp.add32(f32_from_bits(b), "f32_subnormal")
    top_tie = exact_f32(1.5 * 2.0 ** 127)
    inp.add32(f32_next(top_tie, True), "above_max_tie")
    inp.add32(exact_f32(1.75 * 2.0 ** 127), "above_max_tie")
    inp.add32(f32_next(np.float32(2.0 ** 127), True), "above_max")
    inp.add32(exact_f32(1.25 * 2.0 ** 127), "above_max")
    inp.add32(f32_from_bits(F32_MAX_BITS), "overflow")
    for b in random_f32(rng, N_RANDOM_RESTRICTED, lambda a: np.isfinite(a) & (a > 0)):
        inp.add32_bits(b, "random")
    for b in random_f32(rng, N_RANDOM_ANY, lambda a: np.ones(a.shape, bool)):
        inp.add32_bits(b, "random_any")
    return inp, midpoints


def add_f64_inputs(inp, midpoints):
    """The f32 inputs as f64, then double-rounding traps around every midpoint, then extras."""
    for b, note in list(inp.f32.items()):
        x = np.float64(f32_from_bits(b))  # numpy quiets signalling NaNs here; fine, bits are recorded
        inp.add64(x, note, negate=False)
    for m in midpoints:
        m64 = np.float64(m)
        up = np.float64(float(m64) * (1 + 2.0 ** -40))
        dn = np.float64(float(m64) * (1 - 2.0 ** -40))
        assert np.float32(up) == m and np.float32(dn) == m and up != m64 and dn != m64
        inp.add64(up, "trap_up")
        inp.add64(dn, "trap_down")
        inp.add64(f64_next(m64, True), "mid+1ulp64")
        inp.add64(f64_next(m64, False), "mid-1ulp64")
    for b, note in F64_EXTRA_BITS:
        inp.add64_bits(b, note)
    for v, note in F64_EXTRA_VALUES:
        inp.add64(np.float64(v), note)


def is_f32_exact(b64):
    x = f64_from_bits(b64)
    with np.errstate(all="ignore"):
        back = np.float64(np.float32(x))
    return f64_bits(back) == b64


# ---------------------------------------------------------------- exact reference

class Reference:
    """Exact nearest code from a Fraction; None where no rounding question is asked."""

    def __init__(self, T, name, bits, codes_values):
        self.name = name
        self.e8m0 = name == "F8E8M0"
        self.sign_bit = 1 << (bits - 1)
        # positive finite codes (code -> exact value)
        self.pos = sorted((Fraction(v), c) for c, v in codes_values
                          if math.isfinite(v) and not (c & self.sign_bit and not self.e8m0)
                          and (v > 0 or (v == 0 and c == 0)))
        self.vals = [v for v, _ in self.pos]
        self.codes = [c for _, c in self.pos]
        with np.errstate(all="ignore"):  # 2*max is inf in f32 for E8M0
            arr = np.array([2 * float(self.vals[-1])], np.float32)
            self.overflow_pos = int(code_of(T, arr)[0])
            self.overflow_neg = int(code_of(T, -arr)[0])
        self.fnuz = name.endswith("FNUZ")

    def __call__(self, x):
        """x: Python float (finite or inf) -> expected code, or None (not compared)."""
        if math.isnan(x):
            return None
        if self.e8m0:
            return self._e8m0(x)
        neg = math.copysign(1.0, x) < 0
        sign = self.sign_bit if neg else 0
        if math.isinf(x):
            return None  # policy; not a rounding question
        a = abs(Fraction(x))
        vals, codes = self.vals, self.codes
        vmax = vals[-1]
        ulp_top = vals[-1] - vals[-2]
        if a >= vmax + ulp_top / 2:  # max has an odd mantissa: the tie goes up, i.e. overflows
            return self.overflow_neg if neg else self.overflow_pos
        # nearest, ties to even code
        best = None
        for v, c in zip(vals, codes):
            d = abs(a - v)
            if best is None or d < best[0] or (d == best[0] and c % 2 == 0):
                best = (d, c)
        c = best[1]
        if c == 0:
            return 0 if self.fnuz else sign
        return c | sign

    def _e8m0(self, x):
        if math.isinf(x) or x <= 0:
            return None  # no zero, no sign, no inf: policy
        a = Fraction(x)
        if a < Fraction(2) ** -127:
            return 0x00  # nearest representable is 2^-127
        k = math.floor(math.log2(x))
        while Fraction(2) ** k > a:
            k -= 1
        while Fraction(2) ** (k + 1) <= a:
            k += 1
        if a >= Fraction(3, 2) * Fraction(2) ** k:
            k += 1
        if k > 127:
            return self.overflow_pos
        return k + 127


# ---------------------------------------------------------------- main

def generate(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(SEED)
    mismatch_lines = []
    summary = []
    for mlname, vname, bits in FORMATS:
        T = getattr(ml_dtypes, mlname)
        ncodes = 1 << bits
        widen = [(c, widen_code(T, c)) for c in range(ncodes)]
        values = [(c, float(f32_from_bits(w))) for c, w in widen]
        finite = [v for _, v in values if math.isfinite(v)]
        if vname == "F8E8M0":
            inp, mids = e8m0_inputs(rng)
        else:
            inp, mids = regular_inputs(T, set(finite), rng)
        add_f64_inputs(inp, mids)

        rows = []
        b32 = sorted(inp.f32)
        with np.errstate(all="ignore"):
            out32 = code_of(T, np.array(b32, np.uint32).view(np.float32))
        for b, o in zip(b32, out32):
            rows.append(("f32", "%08x" % b, "%02x" % int(o), inp.f32[b]))
        b64 = sorted(inp.f64)
        with np.errstate(all="ignore"):
            out64 = code_of(T, np.array(b64, np.uint64).view(np.float64))
        for b, o in zip(b64, out64):
            tag = "f32exact" if is_f32_exact(b) else "via_f32"
            rows.append(("f64", "%016x" % b, "%02x" % int(o), inp.f64[b] + "," + tag))
        for c, w in widen:
            v = float(f32_from_bits(w))
            note = "nan" if math.isnan(v) else "inf" if math.isinf(v) else "zero" if v == 0 else "code_value"
            rows.append(("widen", "%02x" % c, "%08x" % w, note))
        rows.sort(key=lambda r: ({"f32": 0, "f64": 1, "widen": 2}[r[0]], int(r[1], 16)))

        # Independent exact check.
        ref = Reference(T, vname, bits, values)
        counts = {}
        for op, ih, oh, note in rows:
            if op == "widen":
                continue
            x = float(f32_from_bits(int(ih, 16))) if op == "f32" else float(f64_from_bits(int(ih, 16)))
            want = ref(x)
            key = op + ("" if op == "f32" else ":" + note.rsplit(",", 1)[1])
            tot = counts.setdefault(key, [0, 0])
            if want is None:
                continue
            tot[0] += 1
            if want != int(oh, 16):
                tot[1] += 1
                mismatch_lines.append("%s\t%s\t%s\t%s\t%02x\t%s" % (vname, op, ih, oh, want, note))
        summary.append((vname, counts))

        path = os.path.join(out_dir, vname + ".tsv")
        with open(path, "w") as f:
            f.write("# %s: ml_dtypes.%s known-answer vectors\n" % (vname, mlname))
            f.write("# generator: scripts/gen_mldtypes_vectors.py (seed %d); rerun: "
                    "python3 scripts/gen_mldtypes_vectors.py tests/data/mldtypes\n" % SEED)
            f.write("# ml_dtypes %s, numpy %s\n" % (ml_dtypes.__version__, np.__version__))
            f.write("# columns (tab-separated): op input_hex output_hex note\n")
            f.write("#   f32:   input = f32 bits (8 hex), output = code of "
                    "np.array([x], np.float32).astype(T).view(np.uint8) (2 hex)\n")
            f.write("#   f64:   input = f64 bits (16 hex), output = code of "
                    "np.array([x], np.float64).astype(T); note ends ',f32exact' if x is exactly an f32, "
                    "else ',via_f32' (ml_dtypes rounds f64 -> f32 -> T)\n")
            f.write("#   widen: input = code (2 hex), output = f32 bits (8 hex) of "
                    "np.array([code], np.uint8).view(T).astype(np.float32)\n")
            f.write("#   note:  what the input is (comma-separated words); these are ml_dtypes' outputs, "
                    "not necessarily correct ones (see README.md)\n")
            for r in rows:
                f.write("\t".join(r) + "\n")
        print("%s: %d rows -> %s" % (vname, len(rows), path), file=sys.stderr)

    with open(os.path.join(out_dir, "exact_mismatches.txt"), "w") as f:
        f.write("# Rows of the *.tsv files where ml_dtypes %s differs from the exact nearest code\n"
                % ml_dtypes.__version__)
        f.write("# computed with fractions.Fraction by scripts/gen_mldtypes_vectors.py (ties to even; "
                "E8M0: nearest in linear space, ties up; overflow = ml_dtypes' code for 2*max).\n")
        f.write("# columns: format op input_hex mldtypes_code exact_code note\n")
        for line in mismatch_lines:
            f.write(line + "\n")
    for vname, counts in summary:
        print("%s: %s" % (vname, ", ".join("%s %d compared / %d differ" % (k, v[0], v[1])
                                           for k, v in sorted(counts.items()))), file=sys.stderr)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    generate(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
