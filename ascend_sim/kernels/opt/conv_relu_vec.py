"""Conv2D + ReLU fused on the vector unit (算子融合): Module 1's conv kernel with a Relu before each copy out.

Module 1 runs ReLU as its own launch: the conv output goes to GM and comes back. Here the band a
block has just computed gets ``Relu`` in UB (one vector instruction over the band) before the copy
out, so the activation costs no GM traffic and no launch. The rest is ``kernels.conv2d`` (weights
cached on chip per block, batch innermost, double-buffered chunks).
"""
from __future__ import annotations

import numpy as np

from ascend_sim import Relu, kernel
from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.conv2d import KernelConv2d
from ascend_sim.kernels.opt.vector_conv import run_vector_conv


class _ReluThenEnQue:
    """The VECOUT queue of the conv, with ``Relu`` over the band issued just before each EnQue.

    Compute ends with ``outQueue.EnQue(band)``; this wrapper puts the Relu (pipe V) right before that
    hand-off, so the copy out (MTE3) waits for it through the queue as for any vector result.
    """

    def __init__(self, queue, kernel_op: "KernelConv2dRelu"):
        self.queue, self.op = queue, kernel_op

    def EnQue(self, tensor) -> None:
        Relu(tensor, tensor, self.op.band_count)
        self.queue.EnQue(tensor)

    def __getattr__(self, name):
        return getattr(self.queue, name)


class KernelConv2dRelu(KernelConv2d):
    """``kernels.conv2d`` with ReLU applied in UB to each output band before it leaves."""

    def Init(self, x, w, b, y, t) -> None:
        super().Init(x, w, b, y, t)
        self.outQueue = _ReluThenEnQue(self.outQueue, self)

    def Compute(self, src, o: int, y0: int, rows: int, nb: int) -> None:
        self.band_count = ((rows - 1) * self.t.Wp + self.t.OW) * nb    # the band, garbage columns included
        super().Compute(src, o, y0, rows, nb)


@kernel
def conv2d_relu_kernel(x, w, b, y, tiling) -> None:
    op = KernelConv2dRelu()
    op.Init(x, w, b, y, tiling)
    op.Process()


def conv2d_relu(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0, *, dtype="float16",
                chip=None) -> tuple[np.ndarray, LaunchResult]:
    """Simulated ``relu(conv2d(x, w, b, pad))`` in one vector kernel; NCHW in and out."""
    return run_vector_conv(conv2d_relu_kernel, "conv2d_relu", x, w, b, pad, dtype, chip)


__all__ = ["KernelConv2dRelu", "conv2d_relu_kernel", "conv2d_relu"]
