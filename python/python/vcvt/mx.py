"""OCP Microscaling (MX) block formats: MXFP4, MXFP6 (E2M3, E3M2), MXFP8 (E4M3, E5M2).

32 consecutive values of a row share one E8M0 scale byte. Arrays are read as rows (every
axis but the last) of ``cols`` values (the last axis); a row's last block may be short.

Profiles (how a block's scale is chosen and its elements rounded):

* ``"ceil"`` (default): the smallest power of two >= amax / element max (RCEIL; torchao
  ``RCEIL``, Triton ``ROUND_UP``, cuBLAS);
* ``"ocp"``: the OCP MX v1.0 rule (floor of log2 amax minus the element's emax);
* ``"ggml"``: llama.cpp/gguf's MXFP4 (mxfp4 only), bit-exact with gguf 0.19;
* ``"mlx"``: MLX 0.32's CPU ``mx.quantize(mode="mxfp4"/"mxfp8")`` (mxfp4 and mxfp8_e4m3).

Layouts: ``"planar"`` (codes and scales in two arrays: safetensors ``*_blocks`` +
``*_scales``, torchao, MLX) and ``"ggml"`` (llama.cpp ``block_mxfp4``, 17 bytes per 32
values, scales inside; the scales array is empty).
"""

from __future__ import annotations

import numpy as np

from . import _vcvt
from ._block import block_source, codes, dequantize_into, dest_kind, dest_shape
from ._core import check_threads

__all__ = ["quantize", "dequantize", "FORMATS", "PROFILES", "LAYOUTS"]

FORMATS = ("mxfp4", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp8_e4m3", "mxfp8_e5m2")
PROFILES = ("ceil", "ocp", "ggml", "mlx")
LAYOUTS = ("planar", "ggml")


def _lens(format, profile, layout, rows, cols):
    return _vcvt.mx_lens(format, profile, layout, rows, cols)


def quantize(a, format="mxfp4", *, profile="ceil", layout="planar", threads=None):
    """Quantizes ``a`` (float32, bfloat16 or float16; blocks along the last axis) into
    ``(codes, scales)``, both uint8 arrays of ``a``'s leading shape plus one axis:
    ``codes[..., row_bytes]`` (one byte per value; mxfp4 two per byte, element 2j in the low
    nibble of byte j) and ``scales[..., ceil(cols / 32)]`` (E8M0 bytes; empty for the ggml
    layout). Raises ``ValueError`` for an unknown format/profile/layout or a combination the
    library refuses (e.g. the ggml layout with cols not a multiple of 32)."""
    threads = check_threads(threads)
    a, kind, rows, cols = block_source(a)
    nd, ns = _lens(format, profile, layout, rows, cols)  # checks the real shape
    rb, rs = (nd // rows, ns // rows) if rows else _lens(format, profile, layout, 1, cols)
    lead = a.shape[:-1]
    data = np.empty(lead + (rb,), np.uint8)
    scales = np.empty(lead + (rs,), np.uint8)
    _vcvt.mx_quantize(format, profile, layout, kind, a, rows, cols, data, scales, threads)
    return data, scales


def dequantize(codes_, scales, shape, format="mxfp4", *, profile="ceil", layout="planar",
               dtype="float32", out=None, threads=None):
    """Dequantizes MX ``codes_`` and ``scales`` (uint8, any shape holding the right number of
    bytes) into a ``dtype`` array (float32, bfloat16 or float16) of ``shape``: each value is
    ``element * 2^(scale - 127)``, exact in float32 and rounded once to bfloat16/float16."""
    threads = check_threads(threads)
    shape, rows, cols = dest_shape(shape)
    kind = dest_kind(dtype)
    nd, ns = _lens(format, profile, layout, rows, cols)
    d = codes(codes_, "codes", nd, shape)
    s = codes(scales, "scales", ns, shape)
    return dequantize_into(
        shape, kind, out, (d, s),
        lambda t: _vcvt.mx_dequantize(format, profile, layout, d, s, rows, cols, kind, t, threads),
    )
