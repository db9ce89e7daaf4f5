"""The residual add fused with its ReLU in UB (UB融合): ``z = max(x + y, 0)`` in one pass over GM.

Unfused, the block would write ``x + y`` to GM and read it back for the ReLU; fused, each tile is copied in
once, added and rectified in UB, and copied out once. The split is kernels/tiling.py's (any length, former
and tail cores, 32-byte aligned); a tile that ends mid-block moves with DataCopyPad.
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (Add, DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, GetBlockIdx,
                        GlobalTensor, LaunchResult, Relu, TPipe, TPosition, TQue, half, kernel, launch)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.kernels.tiling import MultiCoreTiling, split_even


def _copy(dst, src, count: int, itemsize: int) -> None:
    if count * itemsize % DATA_BLOCK_BYTES == 0:
        DataCopy(dst, src, count)
    elif isinstance(src, GlobalTensor):
        DataCopyPad(dst, src, DataCopyExtParams(1, count * itemsize, 0, 0, 0), DataCopyPadExtParams(False, 0, 0, 0))
    else:
        DataCopyPad(dst, src, DataCopyExtParams(1, count * itemsize, 0, 0, 0))


@kernel
def add_relu_kernel(x, y, z, s: MultiCoreTiling) -> None:
    """This core's range, tile by tile: CopyIn x and y, Add, Relu, CopyOut."""
    T = half
    start, length = s.core_range(GetBlockIdx())
    gx, gy, gz = GlobalTensor(T), GlobalTensor(T), GlobalTensor(T)
    for g, ptr in ((gx, x), (gy, y), (gz, z)):
        g.SetGlobalBuffer(ptr + start, max(length, 1))
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 2), TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 2, s.tile_length * 2)
    # --- SHOW residual-fused: course/04_migration.ipynb cell mig-16
    for off, n in s.tiles(length):
        xl, yl = qx.AllocTensor(T), qy.AllocTensor(T)
        _copy(xl, gx[off], n, 2)
        _copy(yl, gy[off], n, 2)
        qx.EnQue(xl)
        qy.EnQue(yl)
        xl, yl, zl = qx.DeQue(T), qy.DeQue(T), qz.AllocTensor(T)
        Add(zl, xl, yl, n)
        Relu(zl, zl, n)
        qx.FreeTensor(xl)
        qy.FreeTensor(yl)
        qz.EnQue(zl)
        zl = qz.DeQue(T)
        _copy(gz[off], zl, n, 2)
        qz.FreeTensor(zl)
    # --- END SHOW


def add_relu(x: np.ndarray, y: np.ndarray, *, dtype="float16", chip=None,
             **_: object) -> tuple[np.ndarray, LaunchResult]:
    """``max(x + y, 0)`` of two half arrays of one shape, through the fused kernel."""
    if np.dtype(dtype) != np.float16:
        raise ValueError(f"add_relu runs in half here, not {dtype}")
    x, y = np.ascontiguousarray(x, np.float16), np.ascontiguousarray(y, np.float16)
    if x.shape != y.shape:
        raise ValueError(f"add_relu: the residual {y.shape} must have the block output's shape {x.shape}; "
                         "a stride-2 block needs the 1x1 stride-2 downsample on its shortcut")
    s = split_even(x.size, np.float16, chip=chip, tensors=3, buffers=2)
    z = np.zeros_like(x)
    res = launch(add_relu_kernel, s.block_dim, x, y, z, s, chip=chip, gm_names=["x", "y", "z"])
    return z, res


__all__ = ["add_relu_kernel", "add_relu"]
