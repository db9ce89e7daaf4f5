"""The canonical Ascend C add_custom kernel (z = x + y), line for line in Python.

Constants as in Huawei's sample: 8 blocks x 2048 half, TILE_NUM 8,
BUFFER_NUM 2 (double buffering (双缓冲)), so each tile is 128 elements.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (DataCopy, GetBlockIdx, GetBlockNum, GlobalTensor, TPipe, TPosition, TQue, Add, half, kernel,
                        launch)

USE_CORE_NUM = 8
BLOCK_LENGTH = 2048
TOTAL_LENGTH = USE_CORE_NUM * BLOCK_LENGTH
TILE_NUM = 8


@dataclass
class AddCustomTilingData:
    """Host-side tiling (BEGIN_TILING_DATA_DEF(AddCustomTilingData) ...)."""

    totalLength: int
    tileNum: int
    bufferNum: int = 2
    dtype: np.dtype = half          # the template parameter T of KernelAdd<T>


class KernelAdd:
    # --- SHOW add-init: course/01_basics.ipynb cell basics-08
    def Init(self, x, y, z, totalLength: int, tileNum: int, bufferNum: int, dtype=half) -> None:
        self.T = T = dtype
        self.blockLength = totalLength // GetBlockNum()
        self.tileNum = tileNum
        self.bufferNum = bufferNum
        self.tileLength = self.blockLength // tileNum // bufferNum
        self.xGm, self.yGm, self.zGm = GlobalTensor(T), GlobalTensor(T), GlobalTensor(T)
        self.xGm.SetGlobalBuffer(x + self.blockLength * GetBlockIdx(), self.blockLength)
        self.yGm.SetGlobalBuffer(y + self.blockLength * GetBlockIdx(), self.blockLength)
        self.zGm.SetGlobalBuffer(z + self.blockLength * GetBlockIdx(), self.blockLength)
        self.pipe = TPipe()
        self.inQueueX = TQue(TPosition.VECIN, bufferNum)
        self.inQueueY = TQue(TPosition.VECIN, bufferNum)
        self.outQueueZ = TQue(TPosition.VECOUT, bufferNum)
        self.pipe.InitBuffer(self.inQueueX, bufferNum, self.tileLength * T.itemsize)
        self.pipe.InitBuffer(self.inQueueY, bufferNum, self.tileLength * T.itemsize)
        self.pipe.InitBuffer(self.outQueueZ, bufferNum, self.tileLength * T.itemsize)
    # --- END SHOW

    def Process(self) -> None:
        for i in range(self.tileNum * self.bufferNum):
            self.CopyIn(i)
            self.Compute(i)
            self.CopyOut(i)

    def CopyIn(self, progress: int) -> None:
        xLocal = self.inQueueX.AllocTensor(self.T)
        yLocal = self.inQueueY.AllocTensor(self.T)
        DataCopy(xLocal, self.xGm[progress * self.tileLength], self.tileLength)
        DataCopy(yLocal, self.yGm[progress * self.tileLength], self.tileLength)
        self.inQueueX.EnQue(xLocal)
        self.inQueueY.EnQue(yLocal)

    # --- SHOW add-compute: course/01_basics.ipynb cell basics-08
    def Compute(self, progress: int) -> None:
        xLocal = self.inQueueX.DeQue(self.T)
        yLocal = self.inQueueY.DeQue(self.T)
        zLocal = self.outQueueZ.AllocTensor(self.T)
        Add(zLocal, xLocal, yLocal, self.tileLength)
        self.outQueueZ.EnQue(zLocal)
        self.inQueueX.FreeTensor(xLocal)
        self.inQueueY.FreeTensor(yLocal)
    # --- END SHOW

    def CopyOut(self, progress: int) -> None:
        zLocal = self.outQueueZ.DeQue(self.T)
        DataCopy(self.zGm[progress * self.tileLength], zLocal, self.tileLength)
        self.outQueueZ.FreeTensor(zLocal)


@kernel
def add_custom(x, y, z, tiling: AddCustomTilingData) -> None:
    """``extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)``."""
    op = KernelAdd()
    op.Init(x, y, z, tiling.totalLength, tiling.tileNum, tiling.bufferNum, tiling.dtype)
    op.Process()


def run_add_custom(seed: int = 0, block_dim: int = USE_CORE_NUM, chip=None):
    """Host side: make inputs, launch <<<8>>>, return (x, y, z, result)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, TOTAL_LENGTH).astype(np.float16)
    y = rng.uniform(-1, 1, TOTAL_LENGTH).astype(np.float16)
    z = np.zeros_like(x)
    result = launch(add_custom, block_dim, x, y, z, AddCustomTilingData(TOTAL_LENGTH, TILE_NUM), chip=chip,
                    gm_names=["x", "y", "z"])
    return x, y, z, result
