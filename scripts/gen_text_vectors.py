#!/usr/bin/env python3
"""Independent oracle for vcvt's text (issue 16): exact rational arithmetic, pure Python.

Usage:
    python3 scripts/gen_text_vectors.py OUT_DIR        # writes fmt.tsv, digests.tsv, parse.tsv
    python3 scripts/gen_text_vectors.py --dump FORMAT  # prints `{:04x}\t{}\t{:?}\t{:e}` per code
    python3 scripts/gen_text_vectors.py OUT_DIR --mldtypes  # also: ml_dtypes reads every `{}` back

Everything here is computed from the format *definitions* (field widths, bias, which codes
are Inf/NaN) with `fractions.Fraction`, and from the definitions of the outputs:

* `{}`: the fewest significant digits n such that an n-digit decimal lies in the code's
  rounding interval (the midpoints with the neighbouring values, MAX's upper neighbour
  being MAX + ulp; ends included iff the code is even); among the (at most two) n-digit
  decimals next to the value, the closer one, an exact tie going to the larger one. Searched
  by brute force, n = 1, 2, ...; no digit-generation algorithm. E8M0 prints its exact value.
* `{:?}`: the same digits, `.0` on integers, scientific when the printed decimal (those
  digits, not the code's value) is below 1e-4 or at least 1e16: the text f32's Debug gives
  the f32 those digits denote. (f32's Debug compares the value with the f32 literals 1e-4
  and 1e16, whose shortest digits are 1e-4 and 1e16, so for f32 the two agree; for a narrow
  format they differ where a code below a literal prints as 1e16, BF16 0x5a0e.)
* `{:e}`: the same digits in scientific form.
* parsing: the exact decimal rounded to the nearest value (bisection over the sorted
  values), ties to the even code (E8M0: nearest power of two in linear space, ties up), then
  the overflow policy.

No code of vcvt is used. `.ci/text.sh` regenerates the files and compares them with the
committed ones, and compares `--dump f16` with Rust nightly core `f16`.
"""

import hashlib
import os
import struct
import sys
from fractions import Fraction as Fr
from bisect import bisect_left

# name: (exponent bits, mantissa bits, bias, kind)
#   ieee: all-ones exponent = Inf (fraction 0) / NaN;  fn: all-ones exponent finite, only
#   S.1111.111 is NaN (OCP E4M3);  fnuz: 0x80 is the only NaN, no -0, no Inf;  none: no
#   Inf, no NaN (MX fp6/fp4);  e8m0: 2^(c-127), 0xFF NaN, unsigned.
FORMATS = {
    "f16": (5, 10, 15, "ieee"),
    "bf16": (8, 7, 127, "ieee"),
    "f8e4m3": (4, 3, 7, "fn"),
    "f8e5m2": (5, 2, 15, "ieee"),
    "f8e4m3fnuz": (4, 3, 8, "fnuz"),
    "f8e5m2fnuz": (5, 2, 16, "fnuz"),
    "f6e2m3": (2, 3, 1, "none"),
    "f6e3m2": (3, 2, 3, "none"),
    "f4e2m1": (2, 1, 1, "none"),
    "f8e8m0": (8, 0, 127, "e8m0"),
}

# f32's Debug thresholds (the literals rounded to f32): the codes nearest them go into fmt.tsv.
F32_1EM4 = Fr(struct.unpack("<f", struct.pack("<f", 1e-4))[0])
F32_1E16 = Fr(struct.unpack("<f", struct.pack("<f", 1e16))[0])


class Fmt:
    def __init__(self, name):
        self.name = name
        e, m, bias, kind = FORMATS[name]
        self.e, self.m, self.bias, self.kind = e, m, bias, kind
        self.signed = kind != "e8m0"
        self.bits = e + m + (1 if self.signed else 0)
        self.sign = 1 << (self.bits - 1) if self.signed else 0
        # value of each magnitude code (None: NaN or Inf, noted separately)
        self.val = {}
        self.special = {}
        for c in range(1 << (self.bits - (1 if self.signed else 0))):
            self.val[c] = self._value(c)
        finite = [(v, c) for c, v in self.val.items() if v is not None]
        finite.sort()
        self.pos = finite  # sorted (value, code), from 0 (or 2^-127 for e8m0)
        self.max_code = finite[-1][1]
        if kind == "e8m0":
            self.over = finite[-1][0] * 2
        else:
            vmax = finite[-1][0]
            self.over = vmax + (vmax - finite[-2][0])  # MAX + ulp(MAX)
        self.vals = [v for v, _ in finite] + [self.over]
        self.codes = [c for _, c in finite] + [None]

    def _value(self, c):
        e, m, bias, kind = self.e, self.m, self.bias, self.kind
        if kind == "e8m0":
            if c == 0xFF:
                self.special[c] = "nan"
                return None
            return Fr(2) ** (c - bias)
        ex, fr = c >> m, c & ((1 << m) - 1)
        top = (1 << e) - 1
        if kind == "ieee" and ex == top:
            self.special[c] = "inf" if fr == 0 else "nan"
            return None
        if kind == "fn" and ex == top and fr == (1 << m) - 1:
            self.special[c] = "nan"
            return None
        if ex == 0:
            return Fr(fr) * Fr(2) ** (1 - bias - m)
        return Fr((1 << m) + fr) * Fr(2) ** (ex - bias - m)

    def classify(self, code):
        """('nan'|'inf'|'zero'|'fin', negative, value)"""
        neg = bool(code & self.sign)
        mag = code & ~self.sign
        if self.kind == "fnuz" and code == 0x80:
            return ("nan", False, None)
        if mag in self.special:
            return (self.special[mag], neg, None)
        v = self.val[mag]
        return ("zero" if v == 0 else "fin", neg, v)

    def interval(self, mag):
        """(low, high, inclusive) of positive finite magnitude code mag."""
        if not hasattr(self, "index"):
            self.index = {c: i for i, (_, c) in enumerate(self.pos)}
        i = self.index[mag]
        v = self.pos[i][0]
        lo = (self.pos[i - 1][0] + v) / 2 if i > 0 else v / 2
        hi = (self.pos[i + 1][0] + v) / 2 if i + 1 < len(self.pos) else (self.over + v) / 2
        return lo, hi, mag % 2 == 0


def floor_log10(x):
    """floor(log10(x)) for a positive Fraction."""
    k = len(str(x.numerator)) - len(str(x.denominator))
    while Fr(10) ** k > x:
        k -= 1
    while Fr(10) ** (k + 1) <= x:
        k += 1
    return k


def to_digits(x):
    """(digit string without trailing zeros, k) with x = 0.d1d2... * 10^k, x > 0 a decimal."""
    k = floor_log10(x) + 1
    # x * 10^(n-k) is an integer for large enough n
    n = 1
    while True:
        y = x * Fr(10) ** (n - k)
        if y.denominator == 1:
            s = str(y.numerator).rstrip("0")
            return s, k
        n += 1


def exact_digits(v):
    assert v.denominator & (v.denominator - 1) == 0  # dyadic: finite decimal
    return to_digits(v)


def shortest_digits(f, mag):
    v = f.val[mag]
    lo, hi, inc = f.interval(mag)

    def inside(c):
        return (lo < c < hi) or (inc and (c == lo or c == hi))

    k = floor_log10(v)
    n = 1
    while True:
        scale = Fr(10) ** (k - n + 1)
        a = (v // scale) * scale
        b = a + scale
        cands = [c for c in (a, b) if inside(c)]
        if cands:
            if len(cands) == 2:
                da, db = v - a, b - v
                c = a if da < db else b  # tie -> up
            else:
                c = cands[0]
            return to_digits(c)
        n += 1


def positional(d, k, point_zero):
    n = len(d)
    if k <= 0:
        return "0." + "0" * (-k) + d
    if k < n:
        return d[:k] + "." + d[k:]
    return d + "0" * (k - n) + (".0" if point_zero else "")


def scientific(d, k, upper=False):
    s = d[0] + ("." + d[1:] if len(d) > 1 else "")
    return s + ("E" if upper else "e") + str(k - 1)


def texts(f, code):
    """(display, debug, lowerexp, exact) of a code."""
    kind, neg, v = f.classify(code)
    sg = "-" if neg else ""
    if kind == "nan":
        return ("NaN",) * 4
    if kind == "inf":
        return (sg + "inf",) * 4
    if kind == "zero":
        return (sg + "0", sg + "0.0", sg + "0e0", sg + "0")
    mag = code & ~f.sign
    ed, ek = exact_digits(v)
    d, k = (ed, ek) if f.kind == "e8m0" else shortest_digits(f, mag)
    disp = sg + positional(d, k, False)
    printed = Fr(int(d)) * Fr(10) ** (k - len(d))
    if printed < Fr(1, 10**4) or printed >= 10**16:
        dbg = sg + scientific(d, k)
    else:
        dbg = sg + positional(d, k, True)
    return (disp, dbg, sg + scientific(d, k), sg + positional(ed, ek, False))


DUMPS = {}


def dump(f):
    if f.name not in DUMPS:
        DUMPS[f.name] = _dump(f)
    return DUMPS[f.name]


def _dump(f):
    width = 4 if f.bits > 8 else 2
    out = []
    for c in range(1 << f.bits):
        d, g, e, _ = texts(f, c)
        out.append(f"{c:0{width}x}\t{d}\t{g}\t{e}\n")
    return "".join(out)


# ---------------------------------------------------------------- parsing oracle


def nan_code(f, neg):
    return {
        "ieee": (f.sign if neg else 0) | (((1 << f.e) - 1) << f.m) | (1 << (f.m - 1)),
        "fn": (f.sign if neg else 0) | ((1 << (f.e + f.m)) - 1),
        "fnuz": 0x80,
        "e8m0": 0xFF,
        "none": None,
    }[f.kind]


def overflow_code(f, neg, sat):
    if f.kind == "e8m0":
        return 0xFE if sat and not neg else 0xFF
    s = f.sign if neg else 0
    if sat or f.kind == "none":
        return s | f.max_code
    if f.kind == "ieee":
        return s | (((1 << f.e) - 1) << f.m)
    if f.kind == "fn":
        return s | ((1 << (f.e + f.m)) - 1)
    return 0x80  # fnuz


def round_value(f, a, neg, sat):
    """Code of the exact rational a >= 0 with sign neg under the policy."""
    if f.kind == "e8m0":
        if neg or a == 0:
            return 0xFF
        vals, codes = f.vals, f.codes
        i = bisect_left(vals, a)
        if i == 0:
            return codes[0]
        if i == len(vals):
            return overflow_code(f, False, sat)
        lo, hi = vals[i - 1], vals[i]
        if a == hi:
            j = i
        else:
            mid = (lo + hi) / 2
            j = i if a >= mid else i - 1  # ties up
        return codes[j] if codes[j] is not None else overflow_code(f, False, sat)
    vals, codes = f.vals, f.codes
    i = bisect_left(vals, a)
    if i < len(vals) and vals[i] == a:
        j = i
    elif i == len(vals):
        return overflow_code(f, neg, sat)
    else:
        lo, hi = vals[i - 1], vals[i]
        mid = (lo + hi) / 2
        if a < mid:
            j = i - 1
        elif a > mid:
            j = i
        else:  # tie: the even code (the overflow sentinel counts as MAX + 1, odd iff MAX even)
            lc = codes[i - 1]
            hc = codes[i] if codes[i] is not None else f.max_code + 1
            j = i - 1 if lc % 2 == 0 else i
            assert (lc % 2 == 0) != (hc % 2 == 0)
    c = codes[j]
    if c is None:
        return overflow_code(f, neg, sat)
    if c == 0 and f.kind == "fnuz":
        return 0
    return c | (f.sign if neg else 0)


def parse_string(f, s, sat):
    t = s.strip().lower()
    body = t.lstrip("+-")
    neg = t.startswith("-")
    if body == "nan":
        return nan_code(f, neg)
    if body in ("inf", "infinity"):
        return round_value(f, Fr(10**400), neg, sat)
    mant, _, exp = body.partition("e")
    # Exponents beyond +-5000 change nothing for these formats (and would not fit in memory).
    x = Fr(mant) * Fr(10) ** max(-5000, min(5000, int(exp or "0")))
    return round_value(f, x, neg, sat)


def dec_str(x):
    """Exact positional decimal of a positive dyadic Fraction."""
    d, k = to_digits(x)
    return positional(d, k, False)


def bump(s, pos, up):
    """s (a positional decimal) plus/minus one unit at the pos-th significant digit."""
    d, k = to_digits(Fr(s))
    unit = Fr(10) ** (k - pos)
    return dec_str(Fr(s) + unit if up else Fr(s) - unit)


def parse_rows(f, pairs):
    rows = []
    for lo, hi in pairs:
        mid = (lo + hi) / 2
        m = dec_str(mid)
        strings = [m, bump(m, 25, True), bump(m, 25, False), bump(m, 60, True), bump(m, 60, False)]
        d, k = to_digits(mid)
        strings.append(scientific(d, k))
        strings.append("0" * 5 + m + ("" if "." in m else ".") + "0" * 30)
        if lo != 0:
            strings.append(dec_str(lo))
        for s in strings:
            for sg in ("", "-"):
                rows.append((sg + s, parse_string(f, sg + s, True), parse_string(f, sg + s, False)))
    return rows


SPECIAL_STRINGS = [
    "inf", "-inf", "+inf", "Infinity", "-INFINITY", "nan", "-nan", "NaN", "+nan",
    "0", "-0", "+0.0", "0e0", "-0e-5", "1e-400", "-1e-400", "1e400", "-1e400",
    "1e99999999999999999999", "-1e99999999999999999999", "1e-99999999999999999999",
    "1", "-1", "1.", ".5", "007", "1E3", "1e+3", "2.5", "0.1", "-0.1", "3", "7", "448", "464", "57344",
    "61440", "65504", "65520", "100000",
]


def mldtypes_check():
    """ml_dtypes (0.6.0) reads every printed `{}` string of the oracle back to the same code
    (it parses through a Python float, so this is interop evidence, not an oracle)."""
    import ml_dtypes
    import numpy as np

    types = {
        "bf16": ml_dtypes.bfloat16, "f8e4m3": ml_dtypes.float8_e4m3fn,
        "f8e5m2": ml_dtypes.float8_e5m2, "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
        "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz, "f6e2m3": ml_dtypes.float6_e2m3fn,
        "f6e3m2": ml_dtypes.float6_e3m2fn, "f4e2m1": ml_dtypes.float4_e2m1fn,
        "f8e8m0": ml_dtypes.float8_e8m0fnu,
    }
    bad = 0
    for name, t in types.items():
        f = Fmt(name)
        codes, strs = [], []
        for line in dump(f).splitlines():
            c, s = line.split("\t")[:2]
            if s != "NaN":
                codes.append(int(c, 16))
                strs.append(s)
        got = np.array([float(x) for x in strs]).astype(t)
        udt = np.uint16 if f.bits > 8 else np.uint8
        got = got.view(udt).astype(np.int64) & ((1 << f.bits) - 1)
        for c, s, g in zip(codes, strs, got):
            if c != g and not (f.kind == "fnuz" and c == 0 and g == 0):
                bad += 1
                if bad < 10:
                    print(f"ml_dtypes reads {name} {s!r} as {g:#x}, not {c:#x}")
        print(f"{name}: ml_dtypes read {len(strs)} strings")
    if bad:
        sys.exit(1)


def debug_threshold_codes(f):
    """The positive codes nearest f32's Debug thresholds: for each of f32(1e-4) and f32(1e16),
    up to two codes below it and two at or above it (fewer where the range ends)."""
    out = []
    for t in (F32_1EM4, F32_1E16):
        i = bisect_left([v for v, _ in f.pos], t)
        out += [c for _, c in f.pos[max(i - 2, 0):i + 2]]
    return out


def main():
    if sys.argv[1] == "--dump":
        sys.stdout.write(dump(Fmt(sys.argv[2])))
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    fmts = {n: Fmt(n) for n in FORMATS}

    # fmt.tsv: every code of the 8-bit and smaller formats, a sample of BF16 and F16 with
    # the codes nearest f32's Debug thresholds, with the exact value too.
    lines = []
    for name, f in fmts.items():
        if f.bits > 8:
            near = debug_threshold_codes(f)
            codes = sorted(set(list(range(0, 1 << f.bits, 61)) + list(range(0, 40)) +
                               [f.max_code, f.max_code - 1, 1 << f.m, (1 << f.m) - 1] +
                               [c | f.sign for c in range(0, 1 << f.bits, 257)] +
                               near + [c | f.sign for c in near]))
        else:
            codes = range(1 << f.bits)
        for c in codes:
            lines.append(name + "\t" + f"{c:x}\t" + "\t".join(texts(f, c)) + "\n")
    with open(os.path.join(out, "fmt.tsv"), "w") as fh:
        fh.write("".join(lines))

    # digests.tsv: SHA-256 of the full dump of every format.
    with open(os.path.join(out, "digests.tsv"), "w") as fh:
        for name, f in fmts.items():
            fh.write(f"{name}\t{hashlib.sha256(dump(f).encode()).hexdigest()}\n")

    # parse.tsv: string, expected code under Saturate and NonSaturating (hex, or err).
    rows = []
    for name, f in fmts.items():
        vals = [v for v, _ in f.pos] + [f.over]
        pairs = list(zip(vals, vals[1:]))
        if f.bits > 8:
            pairs = pairs[:40] + pairs[40:-40:97] + pairs[-40:]
        elif f.kind == "e8m0":
            pairs = pairs + [(Fr(0), vals[0])]
        for s, a, b in parse_rows(f, pairs):
            rows.append((name, s, a, b))
        for s in SPECIAL_STRINGS:
            try:
                a, b = parse_string(f, s, True), parse_string(f, s, False)
            except ValueError:
                continue
            rows.append((name, s, a, b))

    def h(c):
        return "err" if c is None else f"{c:x}"

    with open(os.path.join(out, "parse.tsv"), "w") as fh:
        for name, s, a, b in rows:
            fh.write(f"{name}\t{s}\t{h(a)}\t{h(b)}\n")

    if "--mldtypes" in sys.argv[2:]:
        mldtypes_check()


if __name__ == "__main__":
    main()
