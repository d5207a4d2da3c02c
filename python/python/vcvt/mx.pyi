from typing import Literal, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

MxFormat = Literal["mxfp4", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp8_e4m3", "mxfp8_e5m2"]
MxProfile = Literal["ceil", "ocp", "ggml", "mlx"]
MxLayout = Literal["planar", "ggml"]
BlockDType = Literal["float32", "bfloat16", "float16"]

FORMATS: Tuple[str, ...]
PROFILES: Tuple[str, ...]
LAYOUTS: Tuple[str, ...]

def quantize(
    a: npt.ArrayLike,
    format: MxFormat = "mxfp4",
    *,
    profile: MxProfile = "ceil",
    layout: MxLayout = "planar",
    threads: Optional[int] = None,
) -> Tuple[np.ndarray, np.ndarray]: ...
def dequantize(
    codes_: npt.ArrayLike,
    scales: npt.ArrayLike,
    shape: Sequence[int],
    format: MxFormat = "mxfp4",
    *,
    profile: MxProfile = "ceil",
    layout: MxLayout = "planar",
    dtype: object = "float32",
    out: Optional[np.ndarray] = None,
    threads: Optional[int] = None,
) -> np.ndarray: ...
