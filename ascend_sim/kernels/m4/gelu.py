"""GELU (高斯误差线性单元) of half data on the vector cores, the tanh approximation computed in float32.

The high-level Gelu API (Gelu.md) gives GELU's tanh approximation "化简后可得" (simplified) as
``x / (1 + exp(-sqrt(8 / pi) * (x + 0.044715 * x^3)))``, equal to ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715
x^3)))`` because ``0.5 (1 + tanh z) = 1 / (1 + exp(-2 z))``. Per tile: Cast to float, Mul, Mul (x^3), Muls,
Add, Muls by -sqrt(8 / pi), Mins (the exponent is kept at most 80 so that exp stays finite: the quotient is
then below 1e-34 |x|, zero in half), Exp, Adds 1, Div, Cast back. The split is kernels/tiling.py's (any
length, former and tail cores); a tile that ends mid-block moves with DataCopyPad.
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (Add, Adds, Cast, Div, Exp, GetBlockIdx, GlobalTensor, LaunchResult, Mins, Mul, Muls,
                        RoundMode, TBuf, TPipe, TPosition, TQue, float32, half, kernel, launch)
from ascend_sim.kernels._common import copy_flat
from ascend_sim.kernels.tiling import MultiCoreTiling, split_even

GELU_A = 0.044715
SQRT_8_OVER_PI = float(np.sqrt(8.0 / np.pi))
EXP_CAP = 80.0


@kernel
def gelu_kernel(x, y, s: MultiCoreTiling) -> None:
    """This core's range, tile by tile: CopyIn, Cast, the tanh-form GELU in float32, Cast, CopyOut."""
    start, length = s.core_range(GetBlockIdx())
    gx, gy = GlobalTensor(half), GlobalTensor(half)
    gx.SetGlobalBuffer(x + start, max(length, 1))
    gy.SetGlobalBuffer(y + start, max(length, 1))
    pipe = TPipe()
    qx, qy = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    pipe.InitBuffer(qx, 2, s.tile_length * 2)
    pipe.InitBuffer(qy, 2, s.tile_length * 2)
    fb, tb = TBuf(), TBuf()
    pipe.InitBuffer(fb, s.tile_length * 4)
    pipe.InitBuffer(tb, s.tile_length * 4)
    xf, t = fb.Get(float32), tb.Get(float32)
    for off, n in s.tiles(length):
        xl = qx.AllocTensor(half)
        copy_flat(xl, gx[off], n)
        qx.EnQue(xl)
        xl = qx.DeQue(half)
        Cast(xf, xl, RoundMode.CAST_NONE, n)
        qx.FreeTensor(xl)
        Mul(t, xf, xf, n)
        Mul(t, t, xf, n)                         # x^3
        Muls(t, t, GELU_A, n)
        Add(t, t, xf, n)                         # x + 0.044715 x^3
        Muls(t, t, -SQRT_8_OVER_PI, n)
        Mins(t, t, EXP_CAP, n)
        Exp(t, t, n)
        Adds(t, t, 1.0, n)
        Div(xf, xf, t, n)                        # x / (1 + exp(-sqrt(8/pi) (x + 0.044715 x^3)))
        yl = qy.AllocTensor(half)
        Cast(yl, xf, RoundMode.CAST_RINT, n)
        qy.EnQue(yl)
        yl = qy.DeQue(half)
        copy_flat(gy[off], yl, n)
        qy.FreeTensor(yl)


def gelu(x: np.ndarray, *, chip=None, **_: object) -> tuple[np.ndarray, LaunchResult]:
    """GELU (tanh form) of a half array of any shape through the kernel; half out."""
    x = np.ascontiguousarray(x, np.float16)
    if x.size == 0:
        raise ValueError("gelu: the input is empty")
    s = split_even(x.size, np.float16, chip=chip, tensors=6, buffers=2)
    y = np.zeros_like(x)
    res = launch(gelu_kernel, s.block_dim, x, y, s, chip=chip, gm_names=["x", "y"])
    return y, res


def gelu_ref(x: np.ndarray) -> np.ndarray:
    """The tanh-form GELU in float32 numpy (tanh, not the kernel's exp form: an independent check)."""
    x = np.asarray(x, np.float32)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + GELU_A * x ** 3)))


__all__ = ["GELU_A", "SQRT_8_OVER_PI", "gelu_kernel", "gelu", "gelu_ref"]
