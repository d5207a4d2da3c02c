"""The fp8 formats of ml_dtypes 0.7 (float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
float8_e5m3fnu) against ml_dtypes 0.7.0's own answers, committed as run tables in
tests/data/mldtypes/<FORMAT>.runs.tsv: every f32 bit pattern from a run's start up to the next
run's start narrows to the run's code (ml_dtypes' astype: non-saturating, NaN preserved), and
every code's widening to f32. Independent of the installed ml_dtypes: with ml_dtypes 0.6.0 (CI's
pin) float8_e5m3fnu is not a numpy dtype, so its results are uint8 codes; the other three are
ml_dtypes dtypes there. For each format the installed ml_dtypes has, one more test compares
with its astype directly (float8_e5m3fnu needs ml_dtypes >= 0.7)."""

from pathlib import Path

import numpy as np
import pytest

import vcvt

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "mldtypes"
FORMATS = {
    "float8_e3m4": "F8E3M4",
    "float8_e4m3": "F8E4M3IEEE",
    "float8_e4m3b11fnuz": "F8E4M3B11FNUZ",
    "float8_e5m3fnu": "F8E5M3FNU",
}


def load(name):
    starts, codes, widen = [], [], {}
    for line in (DATA / f"{FORMATS[name]}.runs.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        if f[0] == "run":
            starts.append(int(f[1], 16))
            codes.append(int(f[2], 16))
        elif f[0] == "widen":
            widen[int(f[1], 16)] = int(f[2], 16)
    assert len(starts) > 100 and starts[0] == 0 and sorted(starts) == starts
    assert sorted(widen) == list(range(256))
    return (
        np.array(starts, np.uint64),
        np.array(codes, np.uint8),
        np.array([widen[c] for c in range(256)], np.uint32),
    )


def run_code(starts, codes, bits):
    """The code the runs give each f32 bit pattern."""
    return codes[np.searchsorted(starts, bits.astype(np.uint64), side="right") - 1]


def samples(starts):
    """First, middle and last f32 bit pattern of every run."""
    lo = starts
    hi = np.append(starts[1:] - 1, np.uint64(0xFFFFFFFF))
    return np.concatenate([lo, lo + (hi - lo) // 2, hi]).astype(np.uint32)


def codes_of(a):
    return a.view(np.uint8)


def f64_bits_equal(got, want_f32_bits):
    """float64 results against f32 widenings: exact for numbers, NaN for NaN (and its sign)."""
    want = want_f32_bits.view(np.float32).astype(np.float64)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(np.signbit(got[nan]), np.signbit(want[nan]))
    assert np.array_equal(got[~nan].view(np.uint64), want[~nan].view(np.uint64))


def test_formats_listed():
    f = vcvt.formats()
    for name in FORMATS:
        assert name in f


@pytest.mark.parametrize("name", list(FORMATS))
def test_result_dtype(name):
    ml = vcvt._core._ml_dtypes()
    t = getattr(ml, name, None) if ml is not None else None
    want = np.dtype(t) if t is not None else np.dtype(np.uint8)
    assert vcvt.result_dtype(name) == want


@pytest.mark.parametrize("name", list(FORMATS))
def test_narrow_f32_f64(name):
    starts, codes, _ = load(name)
    bits = samples(starts)
    want = run_code(starts, codes, bits)
    x = bits.view(np.float32)
    r = vcvt.astype(x, name, overflow="nonsaturating")
    assert r.dtype == vcvt.result_dtype(name)
    assert np.array_equal(codes_of(r), want)
    # The same values as float64 (exact) round once to the same codes.
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)  # NaN payloads kept (numpy warns on signaling NaNs)
    r64 = vcvt.astype(x64, name, overflow="nonsaturating")
    assert np.array_equal(codes_of(r64), want)
    # Into a caller's uint8 out.
    out = np.full(x.shape, 0x5A, np.uint8)
    assert vcvt.astype(x, name, overflow="nonsaturating", out=out) is out
    assert np.array_equal(out, want)


@pytest.mark.parametrize("name", list(FORMATS))
def test_narrow_from_f16_bf16(name):
    starts, codes, _ = load(name)
    h = np.arange(1 << 16, dtype=np.uint16)
    # f16: every code; its f32 value looked up in the runs (numpy's float16 -> float32 is exact).
    with np.errstate(invalid="ignore"):
        f = h.view(np.float16).astype(np.float32).view(np.uint32)
    r = vcvt.astype(h.view(np.float16), name, overflow="nonsaturating")
    assert np.array_equal(codes_of(r), run_code(starts, codes, f))
    # bf16: every code as raw uint16 (a bf16 is the top half of an f32).
    r = vcvt.astype(h, name, src_dtype="bfloat16", overflow="nonsaturating")
    assert np.array_equal(codes_of(r), run_code(starts, codes, h.astype(np.uint32) << 16))


@pytest.mark.parametrize("name", list(FORMATS))
def test_widen(name):
    _, _, widen = load(name)
    c = np.arange(256, dtype=np.uint8)
    r = vcvt.astype(c, np.float32, src_dtype=name)
    assert np.array_equal(r.view(np.uint32), widen)
    f64_bits_equal(vcvt.astype(c, np.float64, src_dtype=name), widen)
    # To float16: numpy's own float32 -> float16 cast of the widened value (exact or +-Inf).
    w = widen.view(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        want16 = w.astype(np.float16)
    got16 = vcvt.astype(c, np.float16, src_dtype=name)
    nan = np.isnan(w)
    assert np.array_equal(got16[~nan].view(np.uint16), want16[~nan].view(np.uint16))
    assert np.all(np.isnan(got16[nan]))
    # To bfloat16 (every value of these formats is exact in bf16).
    bf = vcvt.astype(c, "bfloat16", src_dtype=name).view(np.uint16)
    assert np.array_equal(bf[~nan], (widen[~nan] >> 16).astype(np.uint16))
    assert np.all((bf[nan] & 0x7FFF) > 0x7F80)


@pytest.mark.parametrize("name", list(FORMATS))
def test_round_trip(name):
    starts, codes, widen = load(name)
    bits = samples(starts)
    x = bits.view(np.float32).copy()
    want = widen[run_code(starts, codes, bits)]
    y = vcvt.round_trip(x, name, overflow="nonsaturating")
    assert np.array_equal(y.view(np.uint32), want)


def test_unsigned_e5m3():
    # Negative values but -0 are NaN (0xFF); -0 is +0; saturation gives MAX 0xFE.
    x = np.array([-0.0, -1.0, -1e-30, -np.inf, 1.0, 1e9, np.inf, np.nan], np.float32)
    assert list(codes_of(vcvt.astype(x, "float8_e5m3fnu"))) == [0, 0xFF, 0xFF, 0xFF, 0x78, 0xFE, 0xFE, 0xFF]
    got = codes_of(vcvt.astype(x, "float8_e5m3fnu", overflow="nonsaturating"))
    assert list(got) == [0, 0xFF, 0xFF, 0xFF, 0x78, 0xFF, 0xFF, 0xFF]


def _installed_dtype(name):
    """ml_dtypes' dtype of that name, or None (no ml_dtypes, or one older than the format)."""
    try:
        import ml_dtypes  # noqa: PLC0415
    except ImportError:
        return None
    t = getattr(ml_dtypes, name, None)
    return np.dtype(t) if t is not None else None


@pytest.mark.parametrize("name", list(FORMATS))
def test_against_installed_ml_dtypes(name):
    # With ml_dtypes 0.6.0 (CI's pin) this runs for float8_e3m4, float8_e4m3 and
    # float8_e4m3b11fnuz, and skips float8_e5m3fnu (new in 0.7).
    d = _installed_dtype(name)
    if d is None:
        pytest.skip(f"the installed ml_dtypes has no {name}")
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        ref = x.astype(d).view(np.uint8)
    r = vcvt.astype(x, d, overflow="nonsaturating")
    assert r.dtype == d
    assert np.array_equal(r.view(np.uint8), ref)
    c = np.arange(256, dtype=np.uint8)
    with np.errstate(all="ignore"):
        w = c.view(d).astype(np.float32).view(np.uint32)
    assert np.array_equal(vcvt.astype(c.view(d), np.float32).view(np.uint32), w)
