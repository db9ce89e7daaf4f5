"""ReLU: an elementwise vector kernel over the flattened batch (layout does not matter).

Each block takes a 32-byte-aligned share of the elements and walks it in
double-buffered tiles: CopyIn, ``Relu``, CopyOut. The last tile of the
tensor may end mid-block; it moves with DataCopyPad.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import Relu, TPipe, TPosition, TQue, kernel
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.kernels._common import block_range, copy_flat, default_blocks, gm, resolve_dtype, round_up, run

TILE_BYTES = 32 * 1024      # per tile; 2 in + 2 out buffers = 128 KB of UB
MIN_TILE_BYTES = 2048       # below this, another block costs more than it saves


@dataclass(frozen=True)
class ReluTiling:
    """``total`` elements in tiles of ``tile`` elements (a whole number of DataBlocks)."""

    total: int
    tile: int
    dtype: np.dtype

    @property
    def tiles(self) -> int:
        return -(-self.total // self.tile)


class KernelRelu:
    """One block: its contiguous range of tiles, each CopyIn -> Relu -> CopyOut."""

    def Init(self, x, y, t: ReluTiling) -> None:
        self.t = t
        self.xGm, self.yGm = gm(x, t.dtype, t.total), gm(y, t.dtype, t.total)
        self.pipe = TPipe()
        self.inQueue, self.outQueue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
        self.pipe.InitBuffer(self.inQueue, 2, t.tile * t.dtype.itemsize)
        self.pipe.InitBuffer(self.outQueue, 2, t.tile * t.dtype.itemsize)

    def Process(self) -> None:
        t = self.t
        for i in block_range(t.tiles):
            n = min(t.tile, t.total - i * t.tile)
            self.CopyIn(i, n)
            self.Compute(n)
            self.CopyOut(i, n)

    def CopyIn(self, i: int, n: int) -> None:
        xLocal = self.inQueue.AllocTensor(self.t.dtype)
        copy_flat(xLocal, self.xGm[i * self.t.tile], n)
        self.inQueue.EnQue(xLocal)

    # --- SHOW relu-compute: course/01_basics.ipynb cell basics-21
    def Compute(self, n: int) -> None:
        xLocal = self.inQueue.DeQue(self.t.dtype)
        yLocal = self.outQueue.AllocTensor(self.t.dtype)
        Relu(yLocal, xLocal, n)
        self.outQueue.EnQue(yLocal)
        self.inQueue.FreeTensor(xLocal)
    # --- END SHOW

    def CopyOut(self, i: int, n: int) -> None:
        yLocal = self.outQueue.DeQue(self.t.dtype)
        copy_flat(self.yGm[i * self.t.tile], yLocal, n)
        self.outQueue.FreeTensor(yLocal)


@kernel
def relu_kernel(x, y, tiling: ReluTiling) -> None:
    """y = max(x, 0) elementwise over ``tiling.total`` elements."""
    op = KernelRelu()
    op.Init(x, y, tiling)
    op.Process()


def relu_plan(size: int, dtype="float16", *, block_dim: int | None = None, chip=None,
              tile_bytes: int = TILE_BYTES) -> tuple[ReluTiling, int]:
    """The host tiling of ``relu`` for ``size`` elements: (ReluTiling, blocks to launch)."""
    d = resolve_dtype(dtype)
    if size == 0:
        raise ValueError("relu: the input is empty")
    nbytes = size * d.itemsize
    blocks = default_blocks(-(-nbytes // MIN_TILE_BYTES), "AIV", chip, block_dim)    # blocks worth a tile
    tile = min(round_up(tile_bytes, DATA_BLOCK_BYTES),                          # about one tile per block
               round_up(-(-nbytes // blocks), DATA_BLOCK_BYTES))
    t = ReluTiling(size, max(tile, DATA_BLOCK_BYTES) // d.itemsize, d)
    return t, default_blocks(t.tiles, "AIV", chip, block_dim)


def relu(x: np.ndarray, *, dtype="float16", block_dim: int | None = None, chip=None,
         tile_bytes: int = TILE_BYTES) -> tuple[np.ndarray, LaunchResult]:
    """Simulated ReLU of an array of any shape; returns the result in ``dtype`` and the LaunchResult."""
    d = resolve_dtype(dtype)
    x = np.ascontiguousarray(x, d)
    t, blocks = relu_plan(x.size, d, block_dim=block_dim, chip=chip, tile_bytes=tile_bytes)
    y = np.zeros_like(x)
    res = run(relu_kernel, blocks, x, y, t, chip=chip, names=["x", "y"])
    return y, res


__all__ = ["ReluTiling", "relu", "relu_kernel", "relu_plan"]
