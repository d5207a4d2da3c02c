"""The astype API: shapes, layouts, out=, errors (and that nothing is written on error),
threads, concurrency and dask. Expected values come from ml_dtypes/numpy."""

import subprocess
import sys
import threading
import time

import ml_dtypes
import numpy as np
import pytest

import vcvt

E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
BF16 = np.dtype(ml_dtypes.bfloat16)


def ref(x, dtype):
    with np.errstate(all="ignore"):
        return x.astype(dtype)


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.fixture
def x():
    rng = np.random.default_rng(11)
    return (rng.standard_normal((6, 7, 9)) * 50).astype(np.float32)


def test_issue_example():
    got = vcvt.astype(np.ones(4, np.float32), "float8_e4m3fn")
    assert got.dtype == E4M3
    assert got.view(np.uint8).tolist() == [0x38] * 4


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", E4M3, ml_dtypes.float8_e4m3fn])
def test_dtype_spellings(x, dtype):
    same(vcvt.astype(x, dtype, overflow="nonsaturating"), ref(x, E4M3))


def test_any_shape(x):
    for a in (x, x[0], x[0, 0], x.reshape(-1), x.reshape(2, 3, 7, 9)):
        same(vcvt.astype(a, "bfloat16"), ref(a, BF16))


def test_zero_size_and_0d():
    for shape in [(0,), (3, 0), (0, 5, 2)]:
        e = np.empty(shape, np.float32)
        same(vcvt.astype(e, "float8_e5m2"), e.astype(ml_dtypes.float8_e5m2))
    s = np.array(2.5, np.float64)
    got = vcvt.astype(s, "bfloat16")
    assert got.shape == () and got.dtype == BF16 and float(got) == 2.5
    assert vcvt.astype(np.float32(3.0), "float16").shape == ()
    assert vcvt.round_trip(np.array(0.1, np.float32), "bfloat16").shape == ()


def test_array_likes():
    same(vcvt.astype([1.0, 2.0, 3.5], "float16"), np.array([1, 2, 3.5], np.float16))


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a[:, ::2, :],
        lambda a: a.T,
        lambda a: a[::-1],
        lambda a: np.asfortranarray(a),
        lambda a: a[..., 1:],
    ],
)
def test_non_contiguous_source(x, view):
    a = view(x)
    assert not a.flags.c_contiguous
    same(vcvt.astype(a, "bfloat16"), ref(a, BF16))
    same(vcvt.astype(a, "float8_e4m3fn", overflow="nonsaturating"), ref(a, E4M3))


def test_byte_swapped_source(x):
    be = x.astype(">f4")
    same(vcvt.astype(be, "bfloat16"), ref(x, BF16))
    codes = ref(x, BF16).view(np.uint16).astype(">u2")
    same(vcvt.astype(codes, np.float32, src_dtype="bfloat16"), ref(x, BF16).astype(np.float32))
    out = np.zeros(x.shape, ">f2")
    with pytest.raises(TypeError, match="dtype"):
        vcvt.astype(x, "float16", out=out)
    assert not np.any(out)
    h = x.astype(np.float16)
    assert [c.tobytes() for c in vcvt.mx.quantize(h.astype(">f2"))] == [c.tobytes() for c in vcvt.mx.quantize(h)]


def test_unaligned_source():
    buf = np.zeros(4 * 100 + 1, np.uint8)
    a = buf[1:].view(np.float32)
    a[:] = np.arange(100, dtype=np.float32) / 7
    assert not a.flags.aligned
    same(vcvt.astype(a, "float16"), a.astype(np.float16))


def test_narrow_source_non_contiguous(x):
    b = ref(x, BF16)[:, ::3]
    same(vcvt.astype(b, np.float32), b.astype(np.float32))


def test_out(x):
    out = np.empty(x.shape, BF16)
    r = vcvt.astype(x, "bfloat16", out=out)
    assert r is out
    same(out, ref(x, BF16))
    raw = np.empty(x.shape, np.uint16)
    vcvt.astype(x, "bfloat16", out=raw)
    assert raw.tobytes() == out.tobytes()


def test_out_non_contiguous(x):
    big = np.zeros((6, 14, 9), BF16)
    out = big[:, ::2]
    vcvt.astype(x, "bfloat16", out=out)
    same(np.ascontiguousarray(out), ref(x, BF16))
    assert not np.any(big[:, 1::2].astype(np.float32))  # the gaps untouched


def test_out_overlapping_source():
    # out is the same memory as the source (raw codes converted in place).
    codes = np.arange(256, dtype=np.uint16) * 97
    want = codes.view(BF16).astype(np.float16)
    vcvt.astype(codes, "float16", src_dtype="bfloat16", out=codes.view(np.float16))
    assert codes.view(np.float16).tobytes() == want.tobytes()


BAD_OUT = [
    (lambda s: np.empty(s, np.float32), TypeError, "dtype"),
    (lambda s: np.empty(s, ml_dtypes.float8_e5m2), TypeError, "dtype"),
    (lambda s: np.empty((s[0] + 1,) + s[1:], BF16), ValueError, "shape"),
    (lambda s: np.empty(s[::-1], BF16), ValueError, "shape"),
    (lambda s: [0] * s[0], TypeError, "numpy array"),
]


@pytest.mark.parametrize("make,exc,word", BAD_OUT)
def test_out_checked_nothing_written(x, make, exc, word):
    out = make(x.shape)
    before = out.tobytes() if isinstance(out, np.ndarray) else None
    with pytest.raises(exc, match=word):
        vcvt.astype(x, "bfloat16", out=out)
    if before is not None:
        assert out.tobytes() == before


def test_out_read_only(x):
    out = np.zeros(x.shape, BF16)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        vcvt.astype(x, "bfloat16", out=out)
    assert not np.any(out.astype(np.float32))


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        (dict(dtype="float7"), TypeError, "float7"),
        (dict(dtype=np.int32), TypeError, "int32"),
        (dict(dtype="float64"), TypeError, "no conversion from float32 to float64"),
        (dict(dtype="bfloat16", overflow="clip"), ValueError, "overflow"),
        (dict(dtype="bfloat16", nan="zero"), ValueError, "nan"),
        (dict(dtype="bfloat16", threads=0), ValueError, "threads"),
        (dict(dtype="bfloat16", threads=-2), ValueError, "threads"),
        (dict(dtype="bfloat16", threads=1.5), TypeError, "threads"),
    ],
)
def test_errors(x, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        vcvt.astype(x, **kwargs)


def test_source_errors():
    with pytest.raises(TypeError, match="src_dtype"):
        vcvt.astype(np.zeros(3, np.uint8), np.float32)
    with pytest.raises(TypeError, match="int64"):
        vcvt.astype(np.zeros(3, np.int64), "bfloat16")
    with pytest.raises(TypeError, match="uint8"):
        vcvt.astype(np.zeros(3, np.uint16), np.float32, src_dtype="float8_e4m3fn")
    with pytest.raises(TypeError, match="no conversion from float8_e4m3fn to float8_e5m2"):
        vcvt.astype(np.zeros(3, E4M3), "float8_e5m2")
    with pytest.raises(TypeError, match="round_trip needs a float32 or float64"):
        vcvt.round_trip(np.zeros(3, np.float16), "float8_e4m3fn")


def test_native_checks_too(x):
    # The native layer refuses what the Python layer would never pass it, and reports the
    # layouts it cannot use in place (1: the source, 2: out) without writing anything.
    from vcvt import _vcvt

    out = np.zeros(x.size, np.uint16)
    assert _vcvt.convert("float32", "bfloat16", x[:, ::2], out) == 1
    assert _vcvt.convert("float32", "bfloat16", x.reshape(-1), out[::-1]) == 2
    assert _vcvt.convert("bfloat16", "float16", out, out) == 2
    with pytest.raises(ValueError, match="elements"):
        _vcvt.convert("float32", "bfloat16", x, out[:-1])
    with pytest.raises(TypeError, match="2-byte"):
        _vcvt.convert("float32", "bfloat16", x, np.zeros(x.size, np.uint8))
    with pytest.raises(TypeError, match="numpy array"):
        _vcvt.convert("float32", "bfloat16", x, bytearray(2 * x.size))
    ro = np.zeros(x.size, np.uint16)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _vcvt.convert("float32", "bfloat16", x, ro)
    assert not np.any(out)


def test_nan_policies():
    nan = np.array([np.nan, -np.nan, 1e30], np.float32)
    assert vcvt.astype(nan, "float8_e4m3fn").view(np.uint8).tolist() == [0x7F, 0xFF, 0x7E]
    assert vcvt.astype(nan, "float8_e4m3fn", nan="to_max").view(np.uint8).tolist() == [0x7E, 0xFE, 0x7E]
    assert vcvt.astype(nan, "float8_e4m3fn", overflow="nonsaturating").view(np.uint8).tolist()[2] == 0x7F
    assert vcvt.astype(nan[:2], "bfloat16", nan="canonical").view(np.uint16).tolist() == [0x7FC0, 0xFFC0]


def test_packed_fp4():
    x = np.array([[0.5, -1.0, 6.0], [3.0, 7.0, -0.0]], np.float32)
    p = vcvt.astype(x, "float4_e2m1fn_x2")
    assert p.dtype == np.uint8 and p.shape == (2, 2)
    one = x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    assert p[:, 0].tolist() == (one[:, 0] | (one[:, 1] << 4)).tolist()
    assert p[:, 1].tolist() == one[:, 2].tolist()  # odd count: the high nibble is 0
    with pytest.raises(ValueError, match="at least one axis"):
        vcvt.astype(np.float32(1.0), "float4_e2m1fn_x2")
    back = vcvt.astype(p, np.float32, src_dtype="float4_e2m1fn_x2")
    assert back.shape == (2, 4)
    same(np.ascontiguousarray(back[:, :3]), one.view(ml_dtypes.float4_e2m1fn).astype(np.float32))


def test_threads_equal(x):
    big = np.random.default_rng(1).standard_normal(1 << 20).astype(np.float32) * 300
    want = ref(big, E4M3)
    for t in (None, 1, 2, 3):
        same(vcvt.astype(big, "float8_e4m3fn", overflow="nonsaturating", threads=t), want)
    rt = vcvt.round_trip(big, "bfloat16")
    same(vcvt.round_trip(big, "bfloat16", threads=1), rt)


def test_eight_python_threads():
    rng = np.random.default_rng(2)
    arrays = [(rng.standard_normal(300_000 + 1000 * i) * 10).astype(np.float32) for i in range(8)]
    wants = [ref(a, BF16) for a in arrays]
    results = [None] * 8
    errors = []
    barrier = threading.Barrier(8)

    def work(i):
        try:
            barrier.wait()
            for _ in range(5):
                r = vcvt.astype(arrays[i], "bfloat16", threads=None if i % 2 else 1)
                assert r.tobytes() == wants[i].tobytes()
            results[i] = r
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert all(r is not None for r in results)


def test_gil_released():
    # While one thread is inside a long conversion, another runs Python code: the longest
    # pause between its ticks stays well below the conversion's duration (with the GIL held
    # throughout, it would be at least that long).
    big = np.ones(1 << 25, np.float32)
    out = np.empty(big.shape, BF16)
    t0 = time.perf_counter()
    vcvt.astype(big, "bfloat16", out=out, threads=1)
    duration = time.perf_counter() - t0
    worker = threading.Thread(target=lambda: vcvt.astype(big, "bfloat16", out=out, threads=1))
    gaps = []
    last = time.perf_counter()
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    assert len(gaps) > 10
    assert max(gaps) < duration / 2, (max(gaps), duration)


def test_dask_map_blocks():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((512, 300)) * 40).astype(np.float32)
    d = da.from_array(x, chunks=(100, 70))
    y = d.map_blocks(lambda b: vcvt.astype(b, "float8_e4m3fn"), dtype=E4M3).compute(scheduler="threads")
    same(y, vcvt.astype(x, "float8_e4m3fn"))


def test_info():
    assert vcvt.backend() in vcvt.backends()
    assert "scalar" in vcvt.backends()
    assert vcvt.formats()[:2] == ("float32", "float64")
    assert len(set(vcvt.formats())) == 17
    assert vcvt.has_ml_dtypes()


def test_without_ml_dtypes():
    # ml_dtypes is optional: without it narrow results are raw codes (uint8/uint16), raw codes
    # convert back with src_dtype, and the bits are the same.
    code = """
import sys
sys.modules["ml_dtypes"] = None  # import ml_dtypes now raises ImportError
import numpy as np, vcvt
assert not vcvt.has_ml_dtypes()
x = np.array([1.0, -2.5, 500.0], np.float32)
e = vcvt.astype(x, "float8_e4m3fn")
b = vcvt.astype(x, "bfloat16")
assert e.dtype == np.uint8 and b.dtype == np.uint16, (e.dtype, b.dtype)
print(e.tolist(), b.tolist(), vcvt.astype(e, "float32", src_dtype="float8_e4m3fn").tolist())
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    x = np.array([1.0, -2.5, 500.0], np.float32)
    e = vcvt.astype(x, "float8_e4m3fn").view(np.uint8).tolist()
    b = x.astype(BF16).view(np.uint16).tolist()
    assert r.stdout.split("] [")[0] + "]" == str(e)
    assert r.stdout.strip() == f"{e} {b} {[1.0, -2.5, 448.0]}"


def _child_convert(q):
    big = np.arange(1 << 20, dtype=np.float32) / 3
    q.put(vcvt.astype(big, "bfloat16").tobytes())


def test_forked_child_after_parallel_work():
    # The parent has run parallel work (the pool's threads exist); a forked child, where
    # those threads do not, still converts (on its own thread) and gets the same bits.
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork start method here")
    big = np.arange(1 << 20, dtype=np.float32) / 3
    want = vcvt.astype(big, "bfloat16").tobytes()  # parallel: 1 Mi values
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_convert, args=(q,))
    p.start()
    try:
        got = q.get(timeout=60)
        p.join(timeout=60)
    finally:
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0
    assert got == want
