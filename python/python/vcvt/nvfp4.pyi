from typing import Literal, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

NvProfile = Literal["modelopt", "mlx", "ggml"]
NvLayout = Literal["planar", "ggml"]

PROFILES: Tuple[str, ...]
LAYOUTS: Tuple[str, ...]

def identity_tensor_scale(profile: NvProfile = "modelopt") -> float: ...
def quantize(
    a: npt.ArrayLike,
    *,
    profile: NvProfile = "modelopt",
    layout: NvLayout = "planar",
    tensor_scale: Optional[float] = None,
    threads: Optional[int] = None,
) -> Tuple[np.ndarray, np.ndarray, float]: ...
def dequantize(
    codes_: npt.ArrayLike,
    scales: npt.ArrayLike,
    tensor_scale: Optional[float],
    shape: Sequence[int],
    *,
    profile: NvProfile = "modelopt",
    layout: NvLayout = "planar",
    dtype: object = "float32",
    out: Optional[np.ndarray] = None,
    threads: Optional[int] = None,
) -> np.ndarray: ...
