"""NVFP4: FP4 (E2M1) values two per byte, an E4M3 scale byte per 16 values of a row, and one
float32 tensor scale.

Profiles: ``"modelopt"`` (default; NVIDIA ModelOpt checkpoints: ``weight``, ``weight_scale``,
``weight_scale_2``), ``"mlx"`` (MLX 0.32's CPU ``mx.quantize(mode="nvfp4")``, tensor scale =
its ``global_scale``), ``"ggml"`` (llama.cpp ``block_nvfp4``). Layouts: ``"planar"`` and
``"ggml"`` (36 bytes per 64 values, scales inside; the scales array is empty).
"""

from __future__ import annotations

import numpy as np

from . import _vcvt
from ._block import block_source, codes, dequantize_into, dest_kind, dest_shape
from ._core import check_threads

__all__ = ["quantize", "dequantize", "identity_tensor_scale", "PROFILES", "LAYOUTS"]

PROFILES = ("modelopt", "mlx", "ggml")
LAYOUTS = ("planar", "ggml")


def identity_tensor_scale(profile="modelopt") -> float:
    """The tensor scale that means "none" for ``profile`` (2688.0 for mlx, 1.0 otherwise)."""
    return _vcvt.nv_identity_scale(profile)


def quantize(a, *, profile="modelopt", layout="planar", tensor_scale=None, threads=None):
    """Quantizes ``a`` (float32, bfloat16 or float16; blocks of 16 along the last axis) into
    ``(codes, scales, tensor_scale)``: packed codes ``uint8[..., ceil(cols/2)]``, E4M3 scale
    bytes ``uint8[..., ceil(cols/16)]`` and the float tensor scale used (the given one, else
    the profile's: ModelOpt ``amax(a) / 2688``)."""
    threads = check_threads(threads)
    a, kind, rows, cols = block_source(a)
    nd, ns = _vcvt.nv_lens(profile, layout, rows, cols)  # checks the real shape
    rb, rs = (nd // rows, ns // rows) if rows else _vcvt.nv_lens(profile, layout, 1, cols)
    lead = a.shape[:-1]
    data = np.empty(lead + (rb,), np.uint8)
    scales = np.empty(lead + (rs,), np.uint8)
    g = None if tensor_scale is None else float(tensor_scale)
    g = _vcvt.nv_quantize(profile, layout, kind, a, rows, cols, data, scales, g, threads)
    return data, scales, g


def dequantize(codes_, scales, tensor_scale, shape, *, profile="modelopt", layout="planar",
               dtype="float32", out=None, threads=None):
    """Dequantizes NVFP4 ``codes_``, E4M3 ``scales`` and ``tensor_scale`` (``None``: the
    profile's identity) into a ``dtype`` array of ``shape``."""
    threads = check_threads(threads)
    shape, rows, cols = dest_shape(shape)
    kind = dest_kind(dtype)
    nd, ns = _vcvt.nv_lens(profile, layout, rows, cols)
    d = codes(codes_, "codes", nd, shape)
    s = codes(scales, "scales", ns, shape)
    g = identity_tensor_scale(profile) if tensor_scale is None else float(tensor_scale)
    return dequantize_into(
        shape, kind, out, (d, s),
        lambda t: _vcvt.nv_dequantize(profile, layout, d, s, g, rows, cols, kind, t, threads),
    )
