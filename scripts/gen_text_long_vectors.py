#!/usr/bin/env python3
"""Long decimal strings around the rounding boundaries of F16 and BF16, with the code the
exact decimal rounds to (nearest, ties to even; beyond the largest finite value: infinity),
computed with Python's exact rationals: the oracle of tests/text_long.rs (issue 33).

Each line of tests/data/text/long.tsv describes one string, which the test rebuilds:

    format  sign  lead  digits  pad  tail  exp  expected-bits-hex

    string = sign + "0." + "0" * lead + digits + "0" * pad + TAIL + "e" + exp

where TAIL is "" for `-`, "1" for `1`, and "9" * N for `9xN`. `digits` are the significant
digits of a midpoint between two adjacent codes (or of a code, or of the overflow
threshold); `1` after the padding puts the value just above it, and a last digit lowered by
one followed by `9`s just below it. The padding (up to 3,000 zeros) and leading zeros (up
to 20,000, and 1,050,000 in about one string in 19, so that the exponent passes 2^20)
move the deciding digit far beyond the 800 digits the parser keeps.

    python3 scripts/gen_text_long_vectors.py > tests/data/text/long.tsv
"""

import random
import sys
from fractions import Fraction

FORMATS = {"f16": (5, 10), "bf16": (8, 7)}


def value(ebits, mbits, code):
    """The exact value of a positive finite code."""
    bias = (1 << (ebits - 1)) - 1
    e, m = code >> mbits, code & ((1 << mbits) - 1)
    if e == 0:
        return Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)


def round_to(ebits, mbits, x):
    """Bits of the code nearest to x >= 0, ties to even, overflow to infinity."""
    inf = ((1 << ebits) - 1) << mbits
    lo, hi = 0, inf - 1  # codes 0 ..= largest finite, increasing in value
    if x >= value(ebits, mbits, hi) + (value(ebits, mbits, hi) - value(ebits, mbits, hi - 1)) / 2:
        return inf
    while lo < hi:  # largest code with value <= x
        mid = (lo + hi + 1) // 2
        if value(ebits, mbits, mid) <= x:
            lo = mid
        else:
            hi = mid - 1
    c = lo
    if c == inf - 1:
        return c
    a, b = value(ebits, mbits, c), value(ebits, mbits, c + 1)
    if x - a < b - x:
        return c
    if x - a > b - x:
        return c + 1
    return c if c % 2 == 0 else c + 1


def decimal(x):
    """(digits, k) with x = 0.digits * 10^k exactly (x a positive dyadic rational)."""
    n, d = x.numerator, x.denominator
    # d is a power of two: scale by 5^t to make it a power of ten.
    t = d.bit_length() - 1
    n *= 5 ** t
    s = str(n)
    k = len(s) - t
    return s.rstrip("0"), k


def main():
    sys.set_int_max_str_digits(0)
    rng = random.Random(33)
    print("# format\tsign\tlead\tdigits\tpad\ttail\texp\texpected (see scripts/gen_text_long_vectors.py)")
    for name, (ebits, mbits) in FORMATS.items():
        inf = ((1 << ebits) - 1) << mbits
        codes = [0, 1, 2, (1 << mbits) - 1, 1 << mbits, inf - 2, inf - 1]
        codes += [rng.randrange(0, inf - 1) for _ in range(40)]
        for c in codes:
            a, b = value(ebits, mbits, c), value(ebits, mbits, c + 1)
            points = [(a + b) / 2]
            if c > 0:
                points.append(a)
            for p in points:
                digits, k = decimal(p)
                for tail in ["-", "1", "9"]:
                    lead = rng.choice([0, 1, rng.randrange(0, 20000)] * 6 + [1_050_000])
                    pad = rng.choice([0, 900, rng.randrange(0, 3000)])
                    ds = digits
                    if tail == "9":
                        n9 = rng.choice([1, 900, rng.randrange(1, 3000)])
                        tail_s = f"9x{n9}"
                        last = int(ds[-1])
                        ds = ds[:-1] + str(last - 1)
                        if ds.lstrip("0") == "":
                            continue
                    else:
                        tail_s = tail
                    sign = rng.choice(["+", "-"])
                    # String: 0.(lead zeros)(ds)(pad zeros)(tail) e exp, value ds-part = 0.ds * 10^k
                    exp = k + lead
                    full = "0" * pad + ("" if tail_s == "-" else "1" if tail_s == "1" else "9" * n9)
                    x = Fraction(int(ds + full), 10 ** len(ds + full)) * Fraction(10) ** k
                    bits = round_to(ebits, mbits, x)
                    if sign == "-":
                        bits |= 1 << (ebits + mbits)
                    print(f"{name}\t{sign}\t{lead}\t{ds}\t{pad}\t{tail_s}\t{exp}\t{bits:04x}")


if __name__ == "__main__":
    main()
