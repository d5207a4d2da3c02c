"""Block FP8 as DeepSeek-V3/R1 checkpoints store it: E4M3 codes (``weight``,
``float8_e4m3fn [out, in]``) with one float32 per ``block`` tile (``weight_scale_inv``,
``[ceil(out/128), ceil(in/128)]``); edge tiles are cropped to the shape.

Profiles: ``"deepseek"`` (default; scale = amax / 448) and ``"ue8m0"`` (DeepSeek-V3.1's
power-of-two scales).
"""

from __future__ import annotations

import numpy as np

from . import _vcvt
from ._block import block_source, codes, dequantize_into, dest_kind
from ._core import check_threads, contiguous, result_dtype

__all__ = ["quantize", "dequantize", "PROFILES"]

PROFILES = ("deepseek", "ue8m0")


def _block(block):
    try:
        tr, tc = (int(x) for x in block)
    except (TypeError, ValueError):
        raise TypeError(f"block must be a pair of ints (tile rows, tile cols), not {block!r}") from None
    if tr < 1 or tc < 1:
        raise ValueError(f"block must be positive, not {(tr, tc)}")
    return tr, tc


def _matrix(shape):
    if len(shape) == 0:
        raise ValueError("block FP8 needs an array with at least one axis")
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    return rows, shape[-1]


def quantize(a, block=(128, 128), *, profile="deepseek", threads=None):
    """Quantizes ``a`` (float32, bfloat16 or float16; rows = every axis but the last) into
    ``(weight, weight_scale_inv)``: E4M3 codes of ``a``'s shape (dtype ``float8_e4m3fn`` when
    ml_dtypes is installed, else uint8) and float32 scales ``[ceil(rows/tr), ceil(cols/tc)]``."""
    tr, tc = _block(block)
    threads = check_threads(threads)
    a, kind, rows, cols = block_source(a)
    nd, ns = _vcvt.fp8_lens(tr, tc, rows, cols)
    w = np.empty(a.shape, result_dtype("float8_e4m3fn"))
    s = np.empty((-(-rows // tr), -(-cols // tc)), np.float32)
    _vcvt.fp8_quantize(tr, tc, profile, kind, a, rows, cols,
                       w.reshape(-1).view(np.uint8), s.reshape(-1).view(np.uint8), threads)
    return w, s


def dequantize(w, weight_scale_inv, block=(128, 128), *, dtype="float32", out=None, threads=None):
    """Dequantizes E4M3 ``w`` (float8_e4m3fn or uint8, rows = every axis but the last) with
    float32 ``weight_scale_inv`` tiles into a ``dtype`` array of ``w``'s shape: ``f32(code) *
    scale_inv`` rounded to float32, then to ``dtype`` (as DeepSeek's ``weight_dequant``)."""
    tr, tc = _block(block)
    threads = check_threads(threads)
    if not isinstance(w, np.ndarray):
        w = np.asarray(w)
    shape = w.shape
    rows, cols = _matrix(shape)
    kind = dest_kind(dtype)
    nd, ns = _vcvt.fp8_lens(tr, tc, rows, cols)
    d = codes(w, "w", nd, shape)
    si = np.asarray(weight_scale_inv)
    if si.dtype != np.float32:
        raise TypeError(f"weight_scale_inv must be float32, not {si.dtype}")
    if 4 * si.size != ns:
        raise ValueError(
            f"weight_scale_inv has {si.size} values; shape {shape} in {tr}x{tc} tiles needs {ns // 4}"
        )
    s = contiguous(si).reshape(-1).view(np.uint8)
    return dequantize_into(
        shape, kind, out, (d, s),
        lambda t: _vcvt.fp8_dequantize(tr, tc, d, s, rows, cols, kind, t, threads),
    )
