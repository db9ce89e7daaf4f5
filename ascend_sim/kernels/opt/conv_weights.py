"""Conv2D weights cached on chip (卷积核缓存) against re-read per chunk of images (vector path).

Module 1's ``kernels.conv2d`` already keeps each block's filter taps on chip: it copies them to UB
once and holds them in scalar registers (``_common.load_scalars``) for every chunk of images it
computes. This module is the "before" of that step, for the lesson and the benchmark: the same kernel
re-reading the taps from GM (DataCopyPad -> UB, MTE2_S flag, GetValue per tap) for every chunk, as
a straightforward port does when the weights load sits inside the loop. Same numbers, more MTE2 and
scalar work; ``conv2d_weights(..., cache=True)`` is Module 1's kernel.
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (DataCopyExtParams, DataCopyPad, HardEvent, SetFlag, TBuf, WaitFlag, kernel)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.kernels import conv2d
from ascend_sim.kernels.conv2d import KernelConv2d
from ascend_sim.kernels._common import gm, round_up
from ascend_sim.kernels.opt.vector_conv import run_vector_conv


class KernelConv2dReread(KernelConv2d):
    """Module 1's conv kernel, but the filter taps come from GM again before every chunk."""

    def Init(self, x, w, b, y, t) -> None:
        super().Init(x, w, b, y, t)
        taps = t.C * t.KH * t.KW
        self.wPtr, self.count = w + self.outs.start * taps, len(self.outs) * taps
        self.wBuf = TBuf()
        self.pipe.InitBuffer(self.wBuf, round_up(max(self.count, 1) * t.dtype.itemsize, DATA_BLOCK_BYTES))

    def CopyIn(self, n0: int, nb: int) -> None:
        t = self.t
        local = self.wBuf.Get(t.dtype)
        nbytes = self.count * t.dtype.itemsize
        SetFlag(HardEvent.S_MTE2, 0)              # the previous chunk's GetValue reads are done
        WaitFlag(HardEvent.S_MTE2, 0)
        DataCopyPad(local, gm(self.wPtr, t.dtype, self.count), DataCopyExtParams(1, nbytes, 0, 0, 0))
        SetFlag(HardEvent.MTE2_S, 0)
        WaitFlag(HardEvent.MTE2_S, 0)
        self.wv = [local.GetValue(i) for i in range(self.count)]        # the taps again, for this chunk
        super().CopyIn(n0, nb)


@kernel
def conv2d_reread_kernel(x, w, b, y, tiling) -> None:
    op = KernelConv2dReread()
    op.Init(x, w, b, y, tiling)
    op.Process()


def conv2d_weights(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0, *, cache: bool = True,
                   dtype="float16", chip=None, kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Module 1's vector Conv2D with the weights cached per block (``cache=True``) or re-read per chunk.

    ``kernel`` launches another kernel with the same arguments (``x, w, b, y, tiling``) in place of the library's,
    e.g. the C++ twins ``kernels/cpp/conv2d.cpp`` (cached) and ``kernels/cpp/conv_weights.cpp`` (re-read).
    """
    if cache:
        return conv2d(x, w, b, pad, dtype=dtype, chip=chip, kernel=kernel)
    return run_vector_conv(kernel or conv2d_reread_kernel, "conv2d_weights", x, w, b, pad, dtype, chip)


__all__ = ["KernelConv2dReread", "conv2d_reread_kernel", "conv2d_weights"]
