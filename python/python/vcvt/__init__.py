"""vcvt: exact, fast conversion of numpy arrays between float32/float64 and the narrow float
formats of machine learning (float16, bfloat16, fp8 OCP and fnuz, fp6, fp4, E8M0), and
block-scaled quantization (``vcvt.mx``, ``vcvt.nvfp4``, ``vcvt.fp8``).

Every result is the source value rounded once (nearest, ties to even), bit-identical on
every CPU; the work runs in Rust with the GIL released, on every core for large arrays.
ml_dtypes is optional: with it, narrow results carry its dtypes; without it they are
uint8/uint16 arrays of codes.
"""

from . import fp8, mx, nvfp4
from ._core import astype, backend, backends, formats, has_ml_dtypes, result_dtype, round_trip

__all__ = [
    "astype",
    "round_trip",
    "backend",
    "backends",
    "formats",
    "has_ml_dtypes",
    "result_dtype",
    "mx",
    "nvfp4",
    "fp8",
]
__version__ = "0.1.0"
