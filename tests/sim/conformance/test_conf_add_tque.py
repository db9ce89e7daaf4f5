"""Conformance: the add kernel with TPipe/TQue the way the official vector samples write it (multi-core,
double buffered, Init/Process/CopyIn/Compute/CopyOut), written from the TPipe, TQue, DataCopy and Add pages;
exact against numpy, plus the queue rules a wrong variant of it breaks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from ascend_sim import (Add, DataCopy, GetBlockIdx, GetBlockNum, GetTPipePtr, GlobalTensor, QueueError, TPipe,
                        TPosition, TQue, float32, half, kernel, launch)
from kernels_util import raises_rule

BUFFER_NUM = 2


@dataclass
class Tiling:
    totalLength: int
    tileNum: int


class KernelAdd:
    def __init__(self, dtype, free_late: bool):
        self.dtype, self.free_late = dtype, free_late

    def Init(self, x, y, z, t: Tiling) -> None:
        self.blockLength = t.totalLength // GetBlockNum()
        self.tileNum = t.tileNum
        self.tileLength = self.blockLength // t.tileNum // BUFFER_NUM
        base = self.blockLength * GetBlockIdx()
        self.xGm, self.yGm, self.zGm = GlobalTensor(self.dtype), GlobalTensor(self.dtype), GlobalTensor(self.dtype)
        self.xGm.SetGlobalBuffer(x + base, self.blockLength)
        self.yGm.SetGlobalBuffer(y + base, self.blockLength)
        self.zGm.SetGlobalBuffer(z + base, self.blockLength)
        self.inQueueX, self.inQueueY = TQue(TPosition.VECIN, BUFFER_NUM), TQue(TPosition.VECIN, BUFFER_NUM)
        self.outQueueZ = TQue(TPosition.VECOUT, BUFFER_NUM)
        nbytes = self.tileLength * self.dtype.itemsize
        GetTPipePtr().InitBuffer(self.inQueueX, BUFFER_NUM, nbytes)     # GetTPipePtr.md's example
        GetTPipePtr().InitBuffer(self.inQueueY, BUFFER_NUM, nbytes)
        GetTPipePtr().InitBuffer(self.outQueueZ, BUFFER_NUM, nbytes)

    def Process(self) -> None:
        for i in range(self.tileNum * BUFFER_NUM):
            self.CopyIn(i)
            self.Compute(i)
            self.CopyOut(i)

    def CopyIn(self, i: int) -> None:
        x, y = self.inQueueX.AllocTensor(self.dtype), self.inQueueY.AllocTensor(self.dtype)
        DataCopy(x, self.xGm[i * self.tileLength], self.tileLength)
        DataCopy(y, self.yGm[i * self.tileLength], self.tileLength)
        self.inQueueX.EnQue(x)
        self.inQueueY.EnQue(y)

    def Compute(self, i: int) -> None:
        x, y = self.inQueueX.DeQue(self.dtype), self.inQueueY.DeQue(self.dtype)
        z = self.outQueueZ.AllocTensor(self.dtype)
        Add(z, x, y, self.tileLength)
        self.outQueueZ.EnQue(z)
        if not self.free_late:
            self.inQueueX.FreeTensor(x)
            self.inQueueY.FreeTensor(y)

    def CopyOut(self, i: int) -> None:
        z = self.outQueueZ.DeQue(self.dtype)
        DataCopy(self.zGm[i * self.tileLength], z, self.tileLength)
        self.outQueueZ.FreeTensor(z)


@kernel
def add_custom(x, y, z, tiling: Tiling, dtype, free_late):
    TPipe()
    op = KernelAdd(dtype, free_late)
    op.Init(x, y, z, tiling)
    op.Process()


@pytest.mark.parametrize("dtype", (half, float32), ids=("half", "float"))
def test_add_tque_multi_core_double_buffered_is_exact(dtype):
    n, blocks = 8 * 2048, 8
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-100, 100, n).astype(dtype), rng.uniform(-100, 100, n).astype(dtype)
    z = np.zeros_like(x)
    result = launch(add_custom, blocks, x, y, z, Tiling(n, 4), np.dtype(dtype), False)
    np.testing.assert_array_equal(z, x + y)
    assert len({r.core for r in result.trace if r.op == "Add"}) == blocks


def test_add_that_never_frees_its_inputs_deadlocks_like_the_device():
    n = 2048
    x = np.ones(n, np.float32)
    with raises_rule(QueueError, "AllocTensor on inQueueX with all 2 buffer(s) in use", "deadlock",
                     at="x, y = self.inQueueX.AllocTensor"):
        launch(add_custom, 1, x, x, np.zeros_like(x), Tiling(n, 4), np.dtype(np.float32), True)


def test_dependent_vector_instructions_need_no_pipe_barrier_as_with_auto_sync():
    """PipeBarrier(ISASI).md: an Add then a Mul reading its result; "开启自动同步 ... 的情况下，编译器自动插入PIPE_V
    同步，无需开发者手动插入" (auto sync is on by default): the simulator runs one pipe in order, with or without the
    barrier, and reports nothing."""
    from ascend_sim import Mul, PIPE_V, PipeBarrier
    from kernels_util import vector_result
    x, y = np.arange(64, dtype=np.float32), np.full(64, 3, np.float32)

    def body(barrier):
        def k(x, y, t, z):
            Add(t, x, y, 64)
            if barrier:
                PipeBarrier(PIPE_V)
            Mul(z, t, y, 64)
        return k
    plain = vector_result(body(False), x, y, np.zeros(64, np.float32), out_like=np.zeros(64, np.float32))
    fenced = vector_result(body(True), x, y, np.zeros(64, np.float32), out_like=np.zeros(64, np.float32))
    np.testing.assert_array_equal(plain, (x + y) * y)
    np.testing.assert_array_equal(fenced, plain)
