from typing import Literal, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import fp8 as fp8
from . import mx as mx
from . import nvfp4 as nvfp4

__version__: str

FormatName = Literal[
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
    "float4_e2m1fn_x2",
    "float8_e8m0fnu",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e5m3fnu",
]
DTypeLike = Union[FormatName, str, np.dtype, type]
OverflowPolicy = Optional[Literal["saturate", "nonsaturating"]]
NanPolicy = Optional[Literal["preserve", "canonical", "to_max"]]

def astype(
    a: npt.ArrayLike,
    dtype: DTypeLike,
    *,
    overflow: OverflowPolicy = None,
    nan: NanPolicy = None,
    out: Optional[np.ndarray] = None,
    threads: Optional[int] = None,
    src_dtype: Optional[DTypeLike] = None,
) -> np.ndarray: ...
def round_trip(
    a: npt.ArrayLike,
    dtype: DTypeLike,
    *,
    overflow: OverflowPolicy = None,
    nan: NanPolicy = None,
    threads: Optional[int] = None,
) -> np.ndarray: ...
def backend() -> str: ...
def backends() -> list[str]: ...
def formats() -> Tuple[str, ...]: ...
def has_ml_dtypes() -> bool: ...
def result_dtype(fmt: str) -> np.dtype: ...
