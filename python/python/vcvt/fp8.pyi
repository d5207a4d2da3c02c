from typing import Literal, Optional, Tuple

import numpy as np
import numpy.typing as npt

Fp8Profile = Literal["deepseek", "ue8m0"]

PROFILES: Tuple[str, ...]

def quantize(
    a: npt.ArrayLike,
    block: Tuple[int, int] = (128, 128),
    *,
    profile: Fp8Profile = "deepseek",
    threads: Optional[int] = None,
) -> Tuple[np.ndarray, np.ndarray]: ...
def dequantize(
    w: npt.ArrayLike,
    weight_scale_inv: npt.ArrayLike,
    block: Tuple[int, int] = (128, 128),
    *,
    dtype: object = "float32",
    out: Optional[np.ndarray] = None,
    threads: Optional[int] = None,
) -> np.ndarray: ...
