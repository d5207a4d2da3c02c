"""Shared helpers of the block-format modules (``vcvt.mx``, ``vcvt.nvfp4``, ``vcvt.fp8``)."""

from __future__ import annotations

import numpy as np

from ._core import contiguous, format_name, out_ok, result_dtype, write_into

_KINDS = ("float32", "bfloat16", "float16")


def block_source(a):
    """``a`` as a C-contiguous array of float32/bfloat16/float16, with its kind and
    ``(rows, cols)``: rows are every axis but the last, blocks run along the last."""
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    try:
        kind = format_name(a.dtype)
    except TypeError:
        kind = None
    if kind not in _KINDS:
        raise TypeError(
            f"block quantization takes float32, bfloat16 or float16 values, not {a.dtype} "
            "(convert float64 with vcvt.astype(a, 'float32') first)"
        )
    if a.ndim == 0:
        raise ValueError("block quantization needs an array with at least one axis")
    rows = int(np.prod(a.shape[:-1], dtype=np.int64))
    return contiguous(a), kind, rows, a.shape[-1]


def codes(a, what: str, nbytes: int, shape) -> np.ndarray:
    """``a`` (any 1-byte dtype: uint8, int8, float8_e4m3fn, ...) as a C-contiguous flat
    uint8 array of exactly ``nbytes`` bytes, or a ``ValueError`` naming ``what``."""
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    if a.dtype.itemsize != 1:
        raise TypeError(f"{what} must hold 1-byte codes (uint8 or an fp8 dtype), not {a.dtype}")
    if a.size != nbytes:
        raise ValueError(f"{what} has {a.size} bytes; shape {tuple(shape)} needs {nbytes}")
    return contiguous(a).reshape(-1).view(np.uint8)


def dest_shape(shape) -> tuple:
    try:
        shape = tuple(int(n) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be a tuple of ints, not {shape!r}") from None
    if len(shape) == 0:
        raise ValueError("shape needs at least one axis")
    if any(n < 0 for n in shape):
        raise ValueError(f"shape {shape} has a negative axis")
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    return shape, rows, shape[-1]


def dest_kind(dtype) -> str:
    kind = format_name(dtype)
    if kind not in _KINDS:
        raise TypeError(f"block dequantization writes float32, bfloat16 or float16, not {kind}")
    return kind


def dequantize_into(shape, kind, out, sources, fill):
    """A new array (or the checked ``out``) of ``shape`` and ``kind``, filled by ``fill``."""
    if out is None:
        res = np.empty(shape, result_dtype(kind))
        fill(res)
        return res
    out_ok(out, kind, shape)
    return write_into(out, sources, fill)
