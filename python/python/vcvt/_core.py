"""Dtype resolution, array preparation and the element-wise entry points of ``vcvt``."""

from __future__ import annotations

import operator

import numpy as np

from . import _vcvt

__all__ = ["astype", "round_trip", "backend", "backends", "formats", "has_ml_dtypes"]

#: Every format name, wide ones first (``float32``, ``float64``), in a fixed order.
FORMATS = tuple(_vcvt.format_names())
_WIDE = ("float32", "float64")
_NARROW = tuple(f for f in FORMATS if f not in _WIDE)
_ITEMSIZE = {f: (4 if f == "float32" else 8 if f == "float64" else 2 if f in ("float16", "bfloat16") else 1) for f in FORMATS}
_PAIRS = frozenset((s, d) for s in FORMATS for d in FORMATS if _vcvt.has_pair(s, d))
_OVERFLOW = (None, "saturate", "nonsaturating")
_NAN = (None, "preserve", "canonical", "to_max")

_UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16)}
_NUMPY_FORMATS = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.float16): "float16",
}

_ml_dtypes_module = None
_ml_dtypes_tried = False


def _ml_dtypes():
    """The ``ml_dtypes`` module if it can be imported, else ``None`` (looked up once)."""
    global _ml_dtypes_module, _ml_dtypes_tried
    if not _ml_dtypes_tried:
        _ml_dtypes_tried = True
        try:
            import ml_dtypes  # noqa: PLC0415 (optional, resolved at run time)

            _ml_dtypes_module = ml_dtypes
        except ImportError:
            _ml_dtypes_module = None
    return _ml_dtypes_module


def has_ml_dtypes() -> bool:
    """Whether ``ml_dtypes`` is importable, so narrow results carry its dtypes."""
    return _ml_dtypes() is not None


# dtype -> format name, for the dtypes seen so far (None: not a format).
_dtype_cache: dict = {}
# format name -> the dtype of arrays vcvt returns for it.
_result_cache: dict = {}


def _format_of_dtype(dt: np.dtype):
    """The format of arrays of dtype ``dt``, or ``None`` (raw uint8/uint16 and others)."""
    try:
        return _dtype_cache[dt]
    except KeyError:
        pass
    f = _NUMPY_FORMATS.get(dt)
    if not dt.isnative:
        f = None  # byte-swapped: not what the kernels read or write
    elif f is None and dt.name in _NARROW and dt.itemsize == _ITEMSIZE[dt.name] and dt.kind in "Vf":
        # An ml_dtypes dtype (or one named like it with the same size).
        f = dt.name
    _dtype_cache[dt] = f
    return f


def result_dtype(fmt: str) -> np.dtype:
    """The dtype of the arrays vcvt returns for format ``fmt``: numpy's for float32/float64/
    float16, ml_dtypes' for the other narrow formats when it is installed, else uint8/uint16
    holding the codes (always uint8 for the packed ``float4_e2m1fn_x2``)."""
    try:
        return _result_cache[fmt]
    except KeyError:
        pass
    if fmt in ("float32", "float64", "float16"):
        dt = np.dtype(fmt)
    else:
        ml = _ml_dtypes()
        t = getattr(ml, fmt, None) if ml is not None and fmt != "float4_e2m1fn_x2" else None
        dt = np.dtype(t) if t is not None else _UINT[_ITEMSIZE[fmt]]
    _result_cache[fmt] = dt
    return dt


def format_name(dtype) -> str:
    """The vcvt format named by ``dtype``: a format name, a numpy/ml_dtypes dtype, or a type."""
    if isinstance(dtype, str):
        if dtype in _ITEMSIZE:
            return dtype
        try:
            dt = np.dtype(dtype)
        except TypeError:
            ml = _ml_dtypes()
            t = getattr(ml, dtype, None) if ml is not None else None
            if t is None:
                raise TypeError(
                    f"unknown dtype {dtype!r}: use one of {', '.join(FORMATS)}"
                ) from None
            dt = np.dtype(t)
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"{dtype!r} is not a dtype") from None
    f = _format_of_dtype(dt)
    if f is None:
        raise TypeError(
            f"dtype {dt} is not a vcvt format; use one of {', '.join(FORMATS)} "
            "(raw uint8/uint16 codes need the format's name)"
        )
    return f


def source_format(a: np.ndarray, src_dtype) -> str:
    """The format of source array ``a``: its dtype's, or ``src_dtype`` for raw codes."""
    dt = a.dtype
    f = _format_of_dtype(dt)
    if src_dtype is not None:
        s = format_name(src_dtype)
        if f is not None and f != s:
            raise TypeError(f"src_dtype={s!r} given for an array of dtype {dt}")
        if f is None and dt != _UINT.get(_ITEMSIZE[s]):
            raise TypeError(
                f"src_dtype={s!r} needs a {_UINT[_ITEMSIZE[s]]} array of codes "
                f"(or an array of that dtype), not {dt}"
            )
        return s
    if f is None:
        if dt in (_UINT[1], _UINT[2]):
            raise TypeError(
                f"a {dt} array holds raw codes: say which format with src_dtype= "
                "(e.g. src_dtype='float8_e4m3fn')"
            )
        raise TypeError(f"vcvt does not convert arrays of dtype {dt}; use one of {', '.join(FORMATS)}")
    return f


def check_options(overflow, nan, threads):
    if overflow not in _OVERFLOW:
        raise ValueError(f'overflow must be None, "saturate" or "nonsaturating", not {overflow!r}')
    if nan not in _NAN:
        raise ValueError(f'nan must be None, "preserve", "canonical" or "to_max", not {nan!r}')
    return check_threads(threads)


def check_threads(threads):
    if threads is None:
        return None
    try:
        t = operator.index(threads)
    except TypeError:
        raise TypeError(f"threads must be None or a positive integer, not {threads!r}") from None
    if t < 1:
        raise ValueError(f"threads must be None (every core) or a positive integer, not {t}")
    return t


def contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` if C-contiguous and aligned, else a C-contiguous aligned copy (same dtype)."""
    f = a.flags
    if f.c_contiguous and f.aligned:
        return a
    return np.require(a, requirements=("C", "A"))


def out_ok(out, fmt: str, shape: tuple, what: str = "out") -> None:
    """Checks a caller's ``out`` array (type, dtype, shape, writeable); raises otherwise."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{what} must be a numpy array, not {type(out).__name__}")
    dt = out.dtype
    f = _format_of_dtype(dt)
    if not (f == fmt or (f is None and fmt not in _WIDE and fmt != "float16" and dt == _UINT[_ITEMSIZE[fmt]])):
        raise TypeError(f"{what} has dtype {dt}; a {fmt} result needs dtype {result_dtype(fmt)}")
    if out.shape != shape:
        raise ValueError(f"{what} has shape {out.shape}; the result has shape {shape}")
    if not out.flags.writeable:
        raise ValueError(f"{what} is read-only")


def write_into(out: np.ndarray, sources, fill) -> np.ndarray:
    """Calls ``fill(target)`` on ``out`` itself when it is C-contiguous, aligned and shares no
    memory with any of ``sources``; otherwise on a fresh array, then copies that into ``out``
    (so an error leaves ``out`` untouched either way: ``fill`` checks before it writes)."""
    f = out.flags
    direct = f.c_contiguous and f.aligned and not any(np.may_share_memory(out, s) for s in sources)
    if direct:
        fill(out)
    else:
        tmp = np.empty(out.shape, out.dtype)
        fill(tmp)
        np.copyto(out, tmp)
    return out


def _out_shape(shape: tuple, s: str, d: str) -> tuple:
    if s == "float4_e2m1fn_x2" or d == "float4_e2m1fn_x2":
        if len(shape) == 0:
            raise ValueError("packed float4_e2m1fn_x2 needs an array with at least one axis")
        n = shape[-1]
        n = 2 * n if s == "float4_e2m1fn_x2" else (n + 1) // 2
        return shape[:-1] + (n,)
    return shape


# (source dtype, requested dtype) -> (source format, destination format, result dtype), for
# the calls that need no src_dtype and involve no packed format.
_fast: dict = {}


def _resolve(a_dtype, dtype):
    s = source_format_of_dtype(a_dtype)
    d = format_name(dtype)
    check_pair(s, d)
    return s, d, result_dtype(d)


def source_format_of_dtype(dt):
    f = _format_of_dtype(dt)
    if f is None:
        if dt in (_UINT[1], _UINT[2]):
            raise TypeError(
                f"a {dt} array holds raw codes: say which format with src_dtype= "
                "(e.g. src_dtype='float8_e4m3fn')"
            )
        raise TypeError(f"vcvt does not convert arrays of dtype {dt}; use one of {', '.join(FORMATS)}")
    return f


def check_pair(s, d):
    if (s, d) not in _PAIRS:
        raise TypeError(
            f"vcvt has no conversion from {s} to {d} (pairs: float32/float64 <-> every narrow "
            "format, float16/bfloat16 <-> every other narrow format)"
        )


def astype(a, dtype, *, overflow=None, nan=None, out=None, threads=None, src_dtype=None):
    """Converts array ``a`` to ``dtype``, rounding once (nearest, ties to even), exactly as
    the vcvt library does on every CPU.

    Parameters
    ----------
    a : array_like
        float32, float64, float16 or an ml_dtypes narrow dtype (``bfloat16``,
        ``float8_e4m3fn``, ...), any shape and layout; or a uint8/uint16 array of raw codes
        with ``src_dtype`` naming their format. A C-contiguous aligned array is read in place;
        any other layout is copied to a C-contiguous one first.
    dtype : str, numpy dtype or ml_dtypes type
        The destination format (see ``vcvt.formats()``). The pairs are float32/float64 to and
        from every narrow format, and float16/bfloat16 to and from every other narrow format.
    overflow : None, "saturate" or "nonsaturating"
        What a value beyond the destination's range becomes. ``None`` (default) is the
        format's own default: non-saturating (±Inf) for float16/bfloat16, saturating (±MAX)
        for the 8-bit and smaller formats. ``"nonsaturating"`` gives what ml_dtypes gives
        (Inf, or NaN for formats without Inf). fp6/fp4 always saturate.
    nan : None, "preserve", "canonical" or "to_max"
        What a NaN source becomes (default ``"preserve"``).
    out : numpy.ndarray, optional
        Where to write: the result's shape, and its dtype (or uint8/uint16 for a narrow
        format). Checked before anything is written; a non-contiguous ``out`` is filled
        through a temporary.
    threads : None or int
        ``None`` (default) splits arrays of at least 256 Ki values over every core; ``1``
        runs on the calling thread; ``n`` on a pool of ``n`` threads.
    src_dtype : str, optional
        The format of a uint8/uint16 array of raw codes.

    Returns
    -------
    numpy.ndarray
        ``out`` if given, else a new C-contiguous array of the result dtype (``ml_dtypes``'
        dtype for narrow formats when installed, else uint8/uint16 codes). The packed
        ``float4_e2m1fn_x2`` halves (rounding up) the last axis; unpacking doubles it.

    Raises
    ------
    TypeError
        An unknown dtype, a pair vcvt does not convert, raw codes without ``src_dtype``, or
        an ``out`` of the wrong dtype.
    ValueError
        A bad ``overflow``/``nan``/``threads`` value, or an ``out`` of the wrong shape or
        read-only. Nothing is written when an error is raised.

    The GIL is released while converting.
    """
    if threads is not None:
        threads = check_threads(threads)
    if src_dtype is None and type(a) is np.ndarray:
        key = (a.dtype, dtype)
        try:
            s, d, rdt = _fast[key]
        except KeyError:
            if not a.dtype.isnative:
                # Byte-swapped data (e.g. big-endian '>f4'): swapped to native order first.
                a = a.astype(a.dtype.newbyteorder("="))
                return astype(a, dtype, overflow=overflow, nan=nan, out=out, threads=threads)
            s, d, rdt = _resolve(a.dtype, dtype)
            if "float4_e2m1fn_x2" in (s, d):
                return _astype_slow(a, s, d, overflow, nan, out, threads)
            _fast[key] = (s, d, rdt)
        except TypeError:  # an unhashable dtype argument
            return _astype_slow(a, source_format(a, None), format_name(dtype), overflow, nan, out, threads)
        if out is None:
            res = np.empty(a.shape, rdt)
            if _vcvt.convert(s, d, a, res, overflow, nan, threads) == 1:
                _vcvt.convert(s, d, contiguous(a), res, overflow, nan, threads)
            return res
        return _into(a, s, d, a.shape, overflow, nan, out, threads)
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return _astype_slow(a, source_format(a, src_dtype), format_name(dtype), overflow, nan, out, threads)


def _astype_slow(a, s, d, overflow, nan, out, threads):
    check_pair(s, d)
    check_options(overflow, nan, threads)
    shape = _out_shape(a.shape, s, d)
    if d == "float4_e2m1fn_x2" and a.ndim > 1 and a.shape[-1] % 2 == 1:
        # Each row packs on its own: an odd row gets a zero value, a zero high nibble.
        a = np.concatenate([a, np.zeros(a.shape[:-1] + (1,), a.dtype)], axis=-1)
    a = contiguous(a)
    if out is None:
        res = np.empty(shape, result_dtype(d))
        _vcvt.convert(s, d, a, res, overflow, nan, threads)
        return res
    return _into(a, s, d, shape, overflow, nan, out, threads)


def _into(a, s, d, shape, overflow, nan, out, threads):
    """Converts into the caller's ``out``: in place when it is C-contiguous, aligned and apart
    from ``a``; otherwise through a temporary that is then copied in. Checked first."""
    out_ok(out, d, shape)
    r = _vcvt.convert(s, d, a, out, overflow, nan, threads)
    if r == 1:
        a = contiguous(a)
        r = _vcvt.convert(s, d, a, out, overflow, nan, threads)
    if r == 2:
        tmp = np.empty(out.shape, out.dtype)
        _vcvt.convert(s, d, a, tmp, overflow, nan, threads)
        np.copyto(out, tmp)
    return out


def round_trip(a, dtype, *, overflow=None, nan=None, threads=None):
    """Each value of the float32/float64 array ``a`` narrowed to format ``dtype`` and widened
    back ("fake quantization"), as a new array of ``a``'s dtype and shape: the same values as
    ``astype(astype(a, dtype), a.dtype)``, without the narrow array. Options as for
    :func:`astype`."""
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    if a.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"round_trip needs a float32 or float64 array, not {a.dtype}")
    d = format_name(dtype)
    if d in _WIDE:
        raise TypeError(f"round_trip needs a narrow format, not {d}")
    threads = check_options(overflow, nan, threads)
    res = np.array(a, order="C", copy=True)
    _vcvt.round_trip_inplace(res, d, overflow, nan, threads)
    return res


def backend() -> str:
    """The SIMD backend the conversions run on here (``avx512``, ``avx2``, ``neon``, ...;
    ``VCVT_BACKEND`` set before the first conversion forces one)."""
    return _vcvt.backend()


def backends() -> list:
    """The backends this CPU can run."""
    return _vcvt.available_backends()


def formats() -> tuple:
    """Every format name vcvt knows, wide ones first."""
    return FORMATS
