"""Softmax over classes, numerically stable, in the lane layout ``[K, Np]`` on the vector unit.

A chunk is ``[K, nb]`` (K classes, nb <= 64 images) in float32, so one class
row is one 256-byte repeat. Per chunk: row max by a halving tree of ``Max``
over whole rows, ``Sub`` of the max from every row in one repeat-form
instruction (the max row is read with repeat stride 0), ``Exp``, row sum by
an ``Add`` tree, and ``Div`` by the sum (again repeat stride 0). float16
inputs are Cast to float first and the result Cast back once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Add, BinaryRepeatParams, Cast, Div, Exp, Max, RoundMode, Sub, TBuf, TPipe, TPosition, TQue,
                        float32, kernel)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.kernels._common import (block_range, check_batch, copy_lanes, default_blocks, from_lanes, gm,
                                        resolve_dtype, run, to_lanes)

CHUNK = 64                  # images per chunk: 64 floats = one 256-byte repeat per class row
MAX_ROWS = 255              # classes per repeat-form instruction


@dataclass(frozen=True)
class SoftmaxTiling:
    """``K`` classes of ``lanes`` images (lane layout), chunks of ``nb`` images."""

    K: int
    lanes: int
    nb: int
    dtype: np.dtype


def tree_reduce(op, scratch, src, rows: int, nb: int):
    """Reduce ``rows`` rows of ``nb`` lanes with ``op`` by halving; the result is row 0 of the returned tensor."""
    if rows == 1:
        return src
    h = rows // 2
    op(scratch, src, src[(rows - h) * nb], h * nb)          # rows i and rows-h+i into scratch row i
    if rows % 2:
        op(scratch, scratch, src[h * nb], nb)                # the middle row of an odd count
    rows = h
    while rows > 1:                                          # in scratch; an odd middle row stays put
        h = rows // 2
        op(scratch, scratch, scratch[(rows - h) * nb], h * nb)
        rows -= h
    return scratch


def broadcast_rows(op, dst, src, row, rows: int, nb: int) -> None:
    """``dst[k] = op(src[k], row)`` for every row k: repeat form, the row read with repeat stride 0."""
    rep = nb * dst.dtype.itemsize // DATA_BLOCK_BYTES
    for k0 in range(0, rows, MAX_ROWS):
        r = min(MAX_ROWS, rows - k0)
        op(dst[k0 * nb], src[k0 * nb], row, nb, r, BinaryRepeatParams(1, 1, 1, rep, rep, 0))


class KernelSoftmax:
    """One block: for each of its chunks, CopyIn, max / sub / exp / sum / div, CopyOut."""

    def Init(self, x, y, t: SoftmaxTiling) -> None:
        self.t = t
        self.xGm, self.yGm = gm(x, t.dtype, t.K * t.lanes), gm(y, t.dtype, t.K * t.lanes)
        self.pipe = TPipe()
        self.inQueue, self.outQueue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
        self.work, self.scratch = TBuf(), TBuf()
        isz = t.dtype.itemsize
        self.pipe.InitBuffer(self.inQueue, 2, t.K * t.nb * isz)
        self.pipe.InitBuffer(self.outQueue, 2, t.K * t.nb * isz)
        self.pipe.InitBuffer(self.work, t.K * t.nb * 4)
        self.pipe.InitBuffer(self.scratch, max(1, t.K // 2) * t.nb * 4)

    def Process(self) -> None:
        t = self.t
        for chunk in block_range(-(-t.lanes // t.nb)):
            n0 = chunk * t.nb
            nb = min(t.nb, t.lanes - n0)
            self.CopyIn(n0, nb)
            self.Compute(nb)
            self.CopyOut(n0, nb)

    def CopyIn(self, n0: int, nb: int) -> None:
        xLocal = self.inQueue.AllocTensor(self.t.dtype)
        copy_lanes(xLocal, self.xGm[n0], self.t.K, nb, self.t.lanes)
        self.inQueue.EnQue(xLocal)

    def Compute(self, nb: int) -> None:
        t = self.t
        cast = t.dtype != float32
        xLocal = self.inQueue.DeQue(t.dtype)
        yLocal = self.outQueue.AllocTensor(t.dtype)
        xf, scratch = self.work.Get(float32), self.scratch.Get(float32)
        src = xLocal
        if cast:
            Cast(xf, xLocal, RoundMode.CAST_NONE, t.K * nb)
            src = xf
        m = tree_reduce(Max, scratch, src, t.K, nb)
        broadcast_rows(Sub, xf, src, m, t.K, nb)
        Exp(xf, xf, t.K * nb)
        s = tree_reduce(Add, scratch, xf, t.K, nb)
        broadcast_rows(Div, xf if cast else yLocal, xf, s, t.K, nb)
        if cast:
            Cast(yLocal, xf, RoundMode.CAST_NONE, t.K * nb)
        self.outQueue.EnQue(yLocal)
        self.inQueue.FreeTensor(xLocal)

    def CopyOut(self, n0: int, nb: int) -> None:
        yLocal = self.outQueue.DeQue(self.t.dtype)
        copy_lanes(self.yGm[n0], yLocal, self.t.K, nb, self.t.lanes, to_gm=True)
        self.outQueue.FreeTensor(yLocal)


@kernel
def softmax_kernel(x, y, tiling: SoftmaxTiling) -> None:
    """x ``[K, Np]`` -> y ``[K, Np]``: softmax over K for every lane."""
    op = KernelSoftmax()
    op.Init(x, y, tiling)
    op.Process()


def softmax(x: np.ndarray, *, dtype="float16", block_dim: int | None = None, chip=None, kernel=None
            ) -> tuple[np.ndarray, LaunchResult]:
    """Simulated softmax over the last axis of ``x [N, K]``; returns ``[N, K]`` in ``dtype`` and the LaunchResult.

    ``kernel`` launches another kernel with the same arguments (``x, y, tiling``) in place of ``softmax_kernel``,
    e.g. its C++ twin ``kernels/cpp/softmax.cpp``.
    """
    d = resolve_dtype(dtype)
    x = check_batch(x, 2, "softmax")
    n, K = x.shape
    xl = to_lanes(x, d)
    t = SoftmaxTiling(K, xl.shape[-1], min(CHUNK, xl.shape[-1]), d)
    y = np.zeros_like(xl)
    res = run(kernel or softmax_kernel, default_blocks(-(-t.lanes // t.nb), "AIV", chip, block_dim), xl, y, t,
              chip=chip, names=["x", "y"])
    return from_lanes(y, n), res


__all__ = ["SoftmaxTiling", "softmax", "softmax_kernel", "tree_reduce", "broadcast_rows"]
