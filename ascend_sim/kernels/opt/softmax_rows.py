"""Softmax over short rows (the logits of a batch) in the layout the cube wrote: one 32-byte block per row.

Module 1's ``softmax`` puts the images on the vector lanes (``[K, N]``: a host transpose before and after).
Here the rows stay where ``mlp_cube`` put them (``pad_out``: 16 half per row, the padded classes' logits 0)
and every step works per 32-byte DataBlock, ``rows`` blocks per step, the classes selected by a bit mask:

* ``BlockReduceMax`` (one result per DataBlock: "每个迭代会取出8个DataBlock ... 进行计算，输出结果会连续写入
  目的地址") with the mask of the first ``K`` lanes of each block gives each row's max;
* ``Brcb`` broadcasts each max over its block, ``Sub`` and ``Exp`` on all lanes;
* ``BlockReduceSum`` (same mask), ``Brcb``, ``Div``: the padded lanes hold junk nobody reads.

Each AIV takes a contiguous share of the rows (multiples of 8: one repeat); a ragged last step zeroes
the rows it does not load first, so every lane read was written.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (BlockReduceMax, BlockReduceSum, Brcb, BrcbRepeatParams, DataCopy, Div, Duplicate, Exp,
                        GetBlockIdx, GetBlockNum, GlobalTensor, Sub, TBuf, TPipe, TPosition, TQue, half, kernel,
                        launch)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.opt.conv_l3d import C0


@dataclass(frozen=True)
class SoftmaxRowsTiling:
    """``M`` rows of ``C0`` half, the first ``K`` of them real; ``step`` rows (a multiple of 8) per iteration."""

    M: int
    K: int
    step: int


def class_mask(k: int) -> list[int]:
    """The bit mask ``[low64, high64]`` of the first ``k`` lanes of each of the 8 half blocks of a repeat."""
    word = sum(((1 << k) - 1) << (C0 * i) for i in range(4))
    return [word, word]


class KernelSoftmaxRows:
    """One AIV: its rows, ``step`` at a time, double-buffered."""

    def Init(self, x, y, t: SoftmaxRowsTiling) -> None:
        self.t = t
        self.xGm, self.yGm = GlobalTensor(half), GlobalTensor(half)
        self.xGm.SetGlobalBuffer(x, t.M * C0)
        self.yGm.SetGlobalBuffer(y, t.M * C0)
        self.pipe = TPipe()
        self.inQ, self.outQ = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
        self.pipe.InitBuffer(self.inQ, 2, t.step * C0 * 2)
        self.pipe.InitBuffer(self.outQ, 2, t.step * C0 * 2)
        self.red, self.bcast = TBuf(), TBuf()
        self.pipe.InitBuffer(self.red, t.step * 2)
        self.pipe.InitBuffer(self.bcast, t.step * C0 * 2)
        self.mask = class_mask(t.K)

    def Process(self) -> None:
        t = self.t
        groups, me, cores = t.M // 8, GetBlockIdx(), GetBlockNum()
        lo, hi = groups * me // cores * 8, groups * (me + 1) // cores * 8
        if me == cores - 1:
            hi = t.M                                 # the last core also takes the rows past the last group of 8
        for r0 in range(lo, hi, t.step):
            rows = min(t.step, hi - r0)
            self.CopyIn(r0, rows)
            self.Compute(-(-rows // 8))
            self.CopyOut(r0, rows)

    def CopyIn(self, r0: int, rows: int) -> None:
        x = self.inQ.AllocTensor(half)
        if rows % 8:                                 # the rest of the last repeat: zeros, not stale bytes
            Duplicate(x[rows * C0], 0.0, (8 - rows % 8) * C0)
        DataCopy(x, self.xGm[r0 * C0], rows * C0)
        self.inQ.EnQue(x)

    def Compute(self, reps: int) -> None:
        x = self.inQ.DeQue(half)
        y = self.outQ.AllocTensor(half)
        red, b = self.red.Get(half), self.bcast.Get(half)
        n = reps * 8 * C0
        BlockReduceMax(red, x, reps, self.mask, 1, 1, 8)
        Brcb(b, red, reps, BrcbRepeatParams(1, 8))
        Sub(y, x, b, n)
        Exp(y, y, n)
        BlockReduceSum(red, y, reps, self.mask, 1, 1, 8)
        Brcb(b, red, reps, BrcbRepeatParams(1, 8))
        Div(y, y, b, n)
        self.outQ.EnQue(y)
        self.inQ.FreeTensor(x)

    def CopyOut(self, r0: int, rows: int) -> None:
        y = self.outQ.DeQue(half)
        DataCopy(self.yGm[r0 * C0], y, rows * C0)
        self.outQ.FreeTensor(y)


@kernel
def softmax_rows_kernel(x, y, tiling: SoftmaxRowsTiling) -> None:
    op = KernelSoftmaxRows()
    op.Init(x, y, tiling)
    op.Process()


def softmax_rows(x: np.ndarray, k: int, *, step: int = 64, cores: int | None = None,
                 chip=None) -> tuple[np.ndarray, LaunchResult]:
    """Softmax over the first ``k`` of the 16 columns of ``x [M, 16]`` half, in one vector launch; returns the
    ``[M, k]`` probabilities (a view of the kernel's ``[M, 16]`` GM output) and the LaunchResult."""
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != C0 or x.dtype != np.float16 or not 1 <= k <= C0:
        raise ValueError(f"softmax_rows: x {x.dtype} {x.shape} must be float16 [M, {C0}] with 1 <= k = {k} <= {C0}")
    m = x.shape[0]
    cores = max(1, min(cores or get_chip(chip).aiv_count, m // 8))
    t = SoftmaxRowsTiling(m, k, step)
    y = np.zeros_like(x)
    res = launch(softmax_rows_kernel, cores, np.ascontiguousarray(x), y, t, chip=chip, gm_names=["x", "y"])
    return y[:, :k], res


__all__ = ["SoftmaxRowsTiling", "softmax_rows", "softmax_rows_kernel", "class_mask"]
