"""vcvt.astype against ml_dtypes (the pinned version), bit for bit, for every format ml_dtypes
has: every 8-bit and 16-bit source code, 2^20 random float32 and float64 values plus ties,
subnormals and specials. Where vcvt deliberately differs (NaN payloads, fp6/fp4 NaN, E8M0 just
above 2^-127, float64 values that ml_dtypes rounds twice), the test checks vcvt's documented
rule instead, computed here independently of vcvt."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import vcvt

NARROW = [
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
    "float8_e8m0fnu",
]
NO_NAN = ("float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")
# Formats whose codes carry a sign bit (fnuz's 0x80 is the NaN, E8M0 has no sign).
UNSIGNED_NAN = ("float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
WIDTH = {"float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4}


def test_ml_dtypes_pinned():
    # The expectations below were checked against this version (CI pins it).
    assert ml_dtypes.__version__ == "0.6.0"


def dt(name):
    return np.dtype(np.float16) if name == "float16" else np.dtype(getattr(ml_dtypes, name))


def uint(name):
    return np.uint16 if dt(name).itemsize == 2 else np.uint8


def all_codes(name):
    bits = WIDTH.get(name, 8 * dt(name).itemsize)
    return np.arange(1 << bits, dtype=uint(name))


def finite_values(name):
    """Every finite value of the format, sorted, without duplicates (as float64)."""
    with np.errstate(invalid="ignore"):
        v = all_codes(name).view(dt(name)).astype(np.float64)
    return np.unique(v[np.isfinite(v)])


def sign_bit(x):
    """The sign bit of float32/float64 values."""
    return np.signbit(x)


def check_narrow(src, name, got_codes, ref_codes):
    """Equal codes, except where a documented difference applies (checked by its rule)."""
    d = dt(name)
    bad = np.nonzero(got_codes != ref_codes)[0]
    if bad.size == 0:
        return
    s = src[bad]
    got = got_codes[bad]
    ref = ref_codes[bad]
    nan = np.isnan(s)
    if name in NO_NAN:
        # A NaN becomes ±MAX with its sign (ml_dtypes: a zero).
        mx = float(ml_dtypes.finfo(d).max)
        gv = got[nan].view(d).astype(np.float64)
        assert np.all(np.abs(gv) == mx)
        assert np.array_equal(np.signbit(gv), sign_bit(s[nan]))
    else:
        # NaN payloads differ (vcvt keeps the top payload bits with the quiet bit set); the
        # result is a NaN, with the source's sign where the format has one.
        gv = got[nan].view(d).astype(np.float32)
        rv = ref[nan].view(d).astype(np.float32)
        assert np.all(np.isnan(gv)) and np.all(np.isnan(rv))
        if name not in UNSIGNED_NAN:
            assert np.array_equal(np.signbit(gv), sign_bit(s[nan]))
    rest = ~nan
    if not np.any(rest):
        return
    assert name == "float8_e8m0fnu", (name, s[rest][:5], got[rest][:5], ref[rest][:5])
    # E8M0: the nearest power of two in linear space, ties up; below 2^-127 (its smallest
    # value) every positive value gives 2^-127 (code 0x00). ml_dtypes gives 0x01 for
    # (2^-127, 1.5 * 2^-127) and 0xFF for positive float64 values below float32's range.
    x = s[rest].astype(np.float64)
    assert np.all((x > 0) & (x < 1.5 * 2.0**-127)), x[:5]
    assert np.all(got[rest] == 0)


def check_all_narrowings(src, name):
    d = dt(name)
    u = uint(name)
    with np.errstate(all="ignore"):
        ref = src.astype(d).view(u)
    got = vcvt.astype(src, name, overflow="nonsaturating").view(u)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    check_narrow(src, name, got, ref)


# --- every source code --------------------------------------------------------------------


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("wide", [np.float32, np.float64])
def test_widen_every_code(name, wide):
    x = all_codes(name).view(dt(name))
    wu = np.uint32 if wide == np.float32 else np.uint64
    with np.errstate(all="ignore"):
        ref = x.astype(wide)
    got = vcvt.astype(x, wide)
    assert got.dtype == np.dtype(wide)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    # Every non-NaN value bit for bit; NaN codes keep their sign (payload rules differ:
    # vcvt sets the quiet bit of a signalling F16 NaN, as VCVTPH2PS does).
    assert np.array_equal(got[~nan].view(wu), ref[~nan].view(wu))
    if name not in UNSIGNED_NAN:
        assert np.array_equal(np.signbit(got[nan]), np.signbit(ref[nan]))


HUB_LEAVES = [n for n in NARROW if n not in ("float16", "bfloat16")]


@pytest.mark.parametrize("hub", ["float16", "bfloat16"])
@pytest.mark.parametrize("leaf", HUB_LEAVES)
def test_16bit_codes_to_8bit(hub, leaf):
    # Every float16/bfloat16 code to every smaller format: one rounding of the exact value.
    x = np.arange(1 << 16, dtype=np.uint16).view(dt(hub))
    with np.errstate(all="ignore"):
        ref = x.astype(dt(leaf)).view(uint(leaf))
    got = vcvt.astype(x, leaf, overflow="nonsaturating").view(uint(leaf))
    check_narrow(x.astype(np.float32), leaf, got, ref)


@pytest.mark.parametrize(
    "hub,src", [(h, s) for h in ("float16", "bfloat16") for s in HUB_LEAVES + ["float16", "bfloat16"] if s != h]
)
def test_8bit_codes_to_16bit(hub, src):
    x = all_codes(src).view(dt(src))
    with np.errstate(all="ignore"):
        ref = x.astype(dt(hub)).view(np.uint16)
    got = vcvt.astype(x, hub, overflow="nonsaturating").view(np.uint16)
    check_narrow(x.astype(np.float32), hub, got, ref)


def test_raw_codes_with_src_dtype():
    codes = np.arange(256, dtype=np.uint8)
    a = vcvt.astype(codes, np.float32, src_dtype="float8_e4m3fn")
    b = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert np.array_equal(a.view(np.uint32)[~np.isnan(b)], b.view(np.uint32)[~np.isnan(b)])


# --- random float32 / float64 with ties, subnormals, specials ----------------------------

N = 1 << 20


def specials32():
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0]
    v += [np.finfo(np.float32).max, np.finfo(np.float32).tiny, np.finfo(np.float32).smallest_subnormal]
    bits = np.array([0x7F800001, 0x7FC00001, 0xFFBFFFFF, 0x7FFFFFFF, 0x00000001, 0x807FFFFF], np.uint32)
    return np.concatenate([np.array(v, np.float32), bits.view(np.float32)])


def ties(name, wide):
    """Midpoints between neighbouring values of the format (and above MAX), the values just
    beside them, the format's values themselves and their negatives."""
    v = finite_values(name)
    v = v[v >= 0]
    mids = (v[:-1] + v[1:]) / 2  # exact in float32: one more bit than the format
    top = v[-1] + (v[-1] - v[-2]) / 2
    pts = np.concatenate([mids, [top], v]).astype(wide)
    near = np.concatenate([pts, np.nextafter(pts, wide(np.inf)), np.nextafter(pts, wide(0))])
    return np.concatenate([near, -near])


@pytest.fixture(scope="module")
def random32():
    rng = np.random.default_rng(20260)
    bits = rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
    # A quarter of the values in every format's range (random bits mostly land far outside).
    small = rng.standard_normal(N // 4).astype(np.float32) * np.float32(2.0) ** rng.integers(
        -30, 18, N // 4
    ).astype(np.float32)
    sub = (rng.integers(0, 1 << 23, 4096, dtype=np.uint32)).view(np.float32)  # f32 subnormals
    return np.concatenate([bits.view(np.float32), small, sub, -sub, specials32()])


@pytest.mark.parametrize("name", NARROW)
def test_random_float32(name, random32):
    check_all_narrowings(random32, name)


@pytest.mark.parametrize("name", NARROW)
def test_ties_float32(name):
    check_all_narrowings(ties(name, np.float32), name)


@pytest.fixture(scope="module")
def random64():
    rng = np.random.default_rng(20261)
    # float64 values that are float32 values: ml_dtypes' f64 path (through float32) is exact
    # on them, so every code must match.
    bits = rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        return np.concatenate([bits.view(np.float32), specials32()]).astype(np.float64)


@pytest.mark.parametrize("name", NARROW)
def test_random_float64_exact_in_float32(name, random64):
    check_all_narrowings(random64, name)


def correct_code(x: float, name: str):
    """The nearest finite value of the format to float64 ``x`` (ties to the even code),
    computed with exact fractions (only for in-range finite ``x``)."""
    v = finite_values(name)
    codes = all_codes(name)
    with np.errstate(invalid="ignore"):
        vals = codes.view(dt(name)).astype(np.float64)
    fx = Fraction(float(x))
    i = int(np.searchsorted(v, x))
    cands = [v[j] for j in (i - 1, i) if 0 <= j < len(v)]
    best = min(abs(fx - Fraction(float(c))) for c in cands)
    winners = [c for c in cands if abs(fx - Fraction(float(c))) == best]
    if len(winners) == 2:
        # Tie: the code with an even mantissa.
        ks = [int(codes[np.nonzero(vals == c)[0][0]]) for c in winners]
        return winners[0] if ks[0] % 2 == 0 else winners[1]
    return winners[0]


@pytest.mark.parametrize("name", [n for n in NARROW if n != "float8_e8m0fnu"])
def test_float64_rounded_once(name):
    # Values a hair beside the midpoints: through float32 they become exact ties (and round
    # to even), rounded once they go to the nearer side. vcvt must give the nearer one.
    v = finite_values(name)
    v = v[(v > 0)]
    mids = (v[:-1] + v[1:]) / 2
    x = np.concatenate([mids * (1 + 2.0**-40), mids * (1 - 2.0**-40)])
    x = np.concatenate([x, -x])
    got = vcvt.astype(x, name, overflow="nonsaturating").astype(np.float64)
    # Some of these differ from ml_dtypes (double rounding); all must be the nearest value.
    rng = np.random.default_rng(5)
    for i in rng.choice(len(x), size=min(400, len(x)), replace=False):
        want = np.copysign(correct_code(abs(x[i]), name), x[i])
        if name in ("float8_e4m3fnuz", "float8_e5m2fnuz") and want == 0:
            want = 0.0
        assert got[i] == want, (name, x[i], got[i], want)
    with np.errstate(all="ignore"):
        ref = x.astype(dt(name)).astype(np.float64)
    # ml_dtypes rounds twice here (numpy's own float64 -> float16 cast rounds once): the
    # test exercises a real difference.
    if name == "float16":
        assert np.array_equal(got, ref)
    elif name not in ("float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"):
        assert np.any(got != ref)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_saturate_is_ml_dtypes_of_clipped(name):
    # The default for fp8 saturates: the same as ml_dtypes on values clipped to ±MAX.
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(1 << 16) * 10.0 ** rng.integers(-3, 7, 1 << 16)).astype(np.float32)
    x = np.concatenate([x, np.array([np.inf, -np.inf], np.float32)])
    mx = np.float32(ml_dtypes.finfo(dt(name)).max)
    ref = np.clip(x, -mx, mx).astype(dt(name)).view(np.uint8)
    got = vcvt.astype(x, name).view(np.uint8)
    assert np.array_equal(got, ref)


def test_float16_overflow_default_is_ieee():
    x = np.array([65504.0, 65519.0, 65520.0, 1e9, -np.inf], np.float32)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    assert np.array_equal(vcvt.astype(x, np.float16).view(np.uint16), want.view(np.uint16))
    sat = vcvt.astype(x, np.float16, overflow="saturate")
    assert np.array_equal(sat, np.array([65504, 65504, 65504, 65504, -65504], np.float16))


def test_round_trip_equals_two_casts():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(10000) * 100).astype(np.float32)
    for name in NARROW:
        got = vcvt.round_trip(x, name)
        ref = vcvt.astype(vcvt.astype(x, name), np.float32)
        assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), name
        if name not in NO_NAN and name != "float8_e8m0fnu":
            with np.errstate(all="ignore"):
                ml = np.clip(x, -1e38, 1e38).astype(dt(name)).astype(np.float32)
            fin = np.abs(x) <= float(ml_dtypes.finfo(dt(name)).max)
            assert np.array_equal(got[fin], ml[fin]), name
    y = x.astype(np.float64)
    assert np.array_equal(vcvt.round_trip(y, "bfloat16"), y.astype(ml_dtypes.bfloat16).astype(np.float64))
