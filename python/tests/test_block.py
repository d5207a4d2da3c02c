"""vcvt.mx / vcvt.nvfp4 / vcvt.fp8 against third parties: every line of the committed
known-answer files in tests/data/block/ (made by gguf 0.19.0, mlx 0.32.4, ggml's C code and
numpy + ml_dtypes statements of the profiles; see that directory's README), run through the
Python API; and fresh random tensors against gguf's and mlx's own quantizers, live."""

import struct
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import vcvt

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "block"

MX_FILES = {
    "mxfp4_ocp": ("mxfp4", "ocp", "planar"),
    "mxfp4_ceil": ("mxfp4", "ceil", "planar"),
    "mxfp6e2m3_ocp": ("mxfp6_e2m3", "ocp", "planar"),
    "mxfp6e2m3_ceil": ("mxfp6_e2m3", "ceil", "planar"),
    "mxfp6e3m2_ocp": ("mxfp6_e3m2", "ocp", "planar"),
    "mxfp6e3m2_ceil": ("mxfp6_e3m2", "ceil", "planar"),
    "mxfp8e4m3_ocp": ("mxfp8_e4m3", "ocp", "planar"),
    "mxfp8e4m3_ceil": ("mxfp8_e4m3", "ceil", "planar"),
    "mxfp8e5m2_ocp": ("mxfp8_e5m2", "ocp", "planar"),
    "mxfp8e5m2_ceil": ("mxfp8_e5m2", "ceil", "planar"),
    "mxfp4_mlx": ("mxfp4", "mlx", "planar"),
    "mxfp8_mlx": ("mxfp8_e4m3", "mlx", "planar"),
    "mxfp4_gguf": ("mxfp4", "ggml", "ggml"),
    "mxfp4_ggml_c": ("mxfp4", "ggml", "ggml"),
}
NV_FILES = {
    "nvfp4_modelopt": ("modelopt", "planar"),
    "nvfp4_mlx": ("mlx", "planar"),
    "nvfp4_gguf": ("ggml", "ggml"),
    "nvfp4_ggml_c": ("ggml", "ggml"),
}
# Lines where two references disagree and the profile follows the other one (llama.cpp's C
# MXFP4 quantizer skips a NaN lane when taking amax; gguf-py, the profile's reference,
# propagates it): they must differ.
KNOWN_DIFFERENT = {("mxfp4_ggml_c", "NaN lane")}

DTYPES = {"f32": np.dtype(np.float32), "bf16": np.dtype(ml_dtypes.bfloat16), "f16": np.dtype(np.float16)}
KIND = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def files():
    fs = sorted(p.stem for p in DATA.glob("*.tsv"))
    assert len(fs) >= 20, f"expected the reference files in {DATA}"
    return fs


def unhex(s):
    return b"" if s == "-" else bytes.fromhex(s)


def f32_field(s):
    return None if s == "-" else struct.unpack(">f", bytes.fromhex(s))[0]


def f32_bits(x):
    return struct.pack(">f", x).hex()


def run_line(name, f):
    """Runs one line; returns None when it matches, else a description of the difference."""
    op, dt, rows, cols = f[0], f[1], int(f[2]), int(f[3])
    shape = (rows, cols)
    if op == "q":
        src = np.frombuffer(unhex(f[4]), DTYPES[dt]).reshape(shape)
        t_in = f32_field(f[5])
        want = (unhex(f[6]), unhex(f[7]), f[8])
        if name in MX_FILES:
            fmt, prof, lay = MX_FILES[name]
            d, s = vcvt.mx.quantize(src, fmt, profile=prof, layout=lay)
            got = (d.tobytes(), s.tobytes(), "-")
        elif name in NV_FILES:
            prof, lay = NV_FILES[name]
            d, s, g = vcvt.nvfp4.quantize(src, profile=prof, layout=lay, tensor_scale=t_in)
            got = (d.tobytes(), s.tobytes(), f32_bits(g))
            if want[2] == "-":
                got = got[:2] + ("-",)
        else:
            block, prof = fp8_scheme(name)
            w, s = vcvt.fp8.quantize(src, block, profile=prof)
            assert s.dtype == np.float32
            got = (w.tobytes(), s.tobytes(), "-")
        return None if got == want else f"q {dt} {shape}: got {got}, want {want}"
    # d <dst dtype> <rows> <cols> <data> <scales> <tensor scale> <dst bytes> <note>
    data, scales, t = unhex(f[4]), unhex(f[5]), f32_field(f[6])
    codes = np.frombuffer(data, np.uint8)
    sc = np.frombuffer(scales, np.uint8)
    kind = KIND[dt]
    if name in MX_FILES:
        fmt, prof, lay = MX_FILES[name]
        out = vcvt.mx.dequantize(codes, sc, shape, fmt, profile=prof, layout=lay, dtype=kind)
    elif name in NV_FILES:
        prof, lay = NV_FILES[name]
        out = vcvt.nvfp4.dequantize(codes, sc, t, shape, profile=prof, layout=lay, dtype=kind)
    else:
        block, prof = fp8_scheme(name)
        si = np.frombuffer(scales, np.float32)
        w = codes.view(ml_dtypes.float8_e4m3fn).reshape(shape)
        out = vcvt.fp8.dequantize(w, si, block, dtype=kind)
    assert out.dtype == DTYPES[dt] and out.shape == shape
    want = unhex(f[7])
    return None if out.tobytes() == want else f"d {dt} {shape}: differs"


def fp8_scheme(name):
    rest = name.removeprefix("fp8_deepseek_")
    prof = "deepseek"
    if rest.startswith("ue8m0_"):
        prof, rest = "ue8m0", rest.removeprefix("ue8m0_")
    r, c = rest.split("x")
    return (int(r), int(c)), prof


@pytest.mark.parametrize("name", files())
def test_reference_vectors(name):
    assert name in MX_FILES or name in NV_FILES or name.startswith("fp8_deepseek_"), (
        f"{name}: a reference file this test does not know"
    )
    lines = [ln for ln in (DATA / f"{name}.tsv").read_text().splitlines() if ln and not ln.startswith("#")]
    assert lines
    failures = []
    for ln in lines:
        f = ln.split("\t")
        note = f[-1]
        diff = run_line(name, f)
        if any(name == n and k in note for n, k in KNOWN_DIFFERENT):
            if diff is None:
                failures.append(f"expected a documented difference: {note}")
        elif diff is not None:
            failures.append(f"{note}: {diff}"[:300])
    assert not failures, f"{len(failures)} of {len(lines)} lines differ: {failures[:3]}"


# --- live: fresh random tensors through gguf and mlx ----------------------------------------


def weights(shape, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape).astype(np.float32)
    w *= np.float32(2.0) ** rng.integers(-8, 8, shape[:-1] + (1,)).astype(np.float32)
    return w


def test_gguf_mxfp4_live():
    gguf = pytest.importorskip("gguf")
    from gguf.quants import dequantize, quantize

    w = weights((64, 256), 31)
    ref = quantize(w, gguf.GGMLQuantizationType.MXFP4)
    codes, scales = vcvt.mx.quantize(w, "mxfp4", profile="ggml", layout="ggml")
    assert scales.size == 0
    assert codes.tobytes() == np.ascontiguousarray(ref).tobytes()
    back = dequantize(ref, gguf.GGMLQuantizationType.MXFP4)
    got = vcvt.mx.dequantize(codes, scales, w.shape, "mxfp4", profile="ggml", layout="ggml")
    assert got.tobytes() == np.ascontiguousarray(back, np.float32).tobytes()


def test_gguf_nvfp4_dequantize_live():
    gguf = pytest.importorskip("gguf")
    from gguf.quants import dequantize

    # gguf 0.19 cannot quantize NVFP4: random blocks (finite UE4M3 scales) through its reader.
    rng = np.random.default_rng(32)
    blocks = rng.integers(0, 256, (16, 8, 36), dtype=np.uint8)
    blocks[..., :4] &= 0x7E  # scale bytes: finite, non-negative
    raw = blocks.reshape(16, 8 * 36)
    back = dequantize(raw, gguf.GGMLQuantizationType.NVFP4)
    got = vcvt.nvfp4.dequantize(raw, np.empty(0, np.uint8), None, (16, 8 * 64), profile="ggml", layout="ggml")
    assert got.tobytes() == np.ascontiguousarray(back, np.float32).tobytes()


def mlx_or_skip():
    return pytest.importorskip("mlx.core")


@pytest.mark.parametrize("mode,fmt", [("mxfp4", "mxfp4"), ("mxfp8", "mxfp8_e4m3")])
def test_mlx_mx_live(mode, fmt):
    mx = mlx_or_skip()
    w = weights((32, 256), 33)
    bits = 4 if mode == "mxfp4" else 8
    q, s = mx.quantize(mx.array(w), group_size=32, bits=bits, mode=mode)
    codes, scales = vcvt.mx.quantize(w, fmt, profile="mlx")
    assert codes.tobytes() == np.array(q).astype("<u4").tobytes()
    assert scales.tobytes() == np.array(s).tobytes()
    back = mx.dequantize(q, s, group_size=32, bits=bits, mode=mode, dtype=mx.float32)
    got = vcvt.mx.dequantize(codes, scales, w.shape, fmt, profile="mlx")
    assert got.tobytes() == np.array(back).tobytes()


def test_mlx_nvfp4_live():
    mx = mlx_or_skip()
    w = weights((32, 128), 34)
    q, s = mx.quantize(mx.array(w), group_size=16, bits=4, mode="nvfp4")
    codes, scales, g = vcvt.nvfp4.quantize(w, profile="mlx")
    assert g == vcvt.nvfp4.identity_tensor_scale("mlx") == 2688.0
    assert codes.tobytes() == np.array(q).astype("<u4").tobytes()
    assert scales.tobytes() == np.array(s).tobytes()
    back = mx.dequantize(q, s, group_size=16, bits=4, mode="nvfp4", dtype=mx.float32)
    got = vcvt.nvfp4.dequantize(codes, scales, None, w.shape, profile="mlx")
    assert got.tobytes() == np.array(back).tobytes()


# --- API: shapes, errors, out=, threads ----------------------------------------------------


def test_block_shapes_and_round_trip():
    w = weights((3, 4, 70), 35)
    codes, scales = vcvt.mx.quantize(w, "mxfp4")
    assert codes.shape == (3, 4, 35) and scales.shape == (3, 4, 3)
    back = vcvt.mx.dequantize(codes, scales, w.shape, "mxfp4", dtype="bfloat16")
    assert back.shape == w.shape and back.dtype == np.dtype(ml_dtypes.bfloat16)
    # Dequantized MX is exact in f32: the bfloat16 output is one rounding of it.
    f = vcvt.mx.dequantize(codes, scales, w.shape, "mxfp4")
    assert back.tobytes() == f.astype(ml_dtypes.bfloat16).tobytes()
    c, s, g = vcvt.nvfp4.quantize(w)
    assert c.shape == (3, 4, 35) and s.shape == (3, 4, 5) and isinstance(g, float)
    w8, si = vcvt.fp8.quantize(w.reshape(12, 70), (4, 32))
    assert w8.dtype == np.dtype(ml_dtypes.float8_e4m3fn) and si.shape == (3, 3)


def test_block_non_contiguous_and_source_dtypes():
    w = weights((8, 128), 36)
    t = np.asfortranarray(w)
    assert [a.tobytes() for a in vcvt.mx.quantize(t)] == [a.tobytes() for a in vcvt.mx.quantize(w)]
    for dt in (ml_dtypes.bfloat16, np.float16):
        h = w.astype(dt)
        a = vcvt.mx.quantize(h, "mxfp8_e4m3")
        b = vcvt.mx.quantize(h.astype(np.float32), "mxfp8_e4m3")
        assert [x.tobytes() for x in a] == [x.tobytes() for x in b]


def test_block_threads_equal():
    w = weights((512, 1024), 37)
    one = vcvt.mx.quantize(w, "mxfp4", threads=1)
    for t in (None, 2):
        assert [a.tobytes() for a in vcvt.mx.quantize(w, "mxfp4", threads=t)] == [a.tobytes() for a in one]
    d1 = vcvt.fp8.dequantize(*vcvt.fp8.quantize(w), threads=1)
    assert d1.tobytes() == vcvt.fp8.dequantize(*vcvt.fp8.quantize(w)).tobytes()


def test_block_errors_nothing_written():
    w = weights((4, 64), 38)
    codes, scales = vcvt.mx.quantize(w)
    with pytest.raises(ValueError, match="unknown MX format"):
        vcvt.mx.quantize(w, "mxfp5")
    with pytest.raises(ValueError, match="profile"):
        vcvt.mx.quantize(w, profile="floor")
    with pytest.raises(ValueError, match="Ggml profile is defined for E2M1"):
        vcvt.mx.quantize(w, "mxfp8_e4m3", profile="ggml")
    with pytest.raises(ValueError, match="multiple of 32"):
        vcvt.mx.quantize(weights((2, 40), 1), layout="ggml", profile="ggml")
    with pytest.raises(TypeError, match="float64"):
        vcvt.mx.quantize(w.astype(np.float64))
    with pytest.raises(ValueError, match="codes has"):
        vcvt.mx.dequantize(codes[:, :-1], scales, w.shape)
    with pytest.raises(ValueError, match="scales has"):
        vcvt.mx.dequantize(codes, scales[:-1], w.shape)
    out = np.full(w.shape, 7.0, np.float32)
    with pytest.raises(ValueError, match="shape"):
        vcvt.mx.dequantize(codes, scales, w.shape, out=out[:, :-1])
    with pytest.raises(TypeError, match="dtype"):
        vcvt.mx.dequantize(codes, scales, w.shape, out=out.astype(np.float16))
    assert np.all(out == 7.0)
    r = vcvt.mx.dequantize(codes, scales, w.shape, out=out)
    assert r is out and out.tobytes() == vcvt.mx.dequantize(codes, scales, w.shape).tobytes()
    w8, si = vcvt.fp8.quantize(w, (1, 32))
    with pytest.raises(ValueError, match="weight_scale_inv has"):
        vcvt.fp8.dequantize(w8, si, (128, 128))
    with pytest.raises(TypeError, match="float32"):
        vcvt.fp8.dequantize(w8, si.astype(np.float64), (1, 32))
    with pytest.raises(ValueError, match="block must be positive"):
        vcvt.fp8.quantize(w, (0, 32))
    with pytest.raises(ValueError, match="profile"):
        vcvt.nvfp4.quantize(w, profile="nvidia")


def test_empty_blocks():
    e = np.empty((0, 64), np.float32)
    c, s = vcvt.mx.quantize(e)
    assert c.shape == (0, 32) and s.shape == (0, 2)
    assert vcvt.mx.dequantize(c, s, (0, 64)).shape == (0, 64)
