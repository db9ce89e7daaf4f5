"""Conv2d with its output channels split (输出通道切分): the source's ``conv.shard(((1, 1), (t, 1)))``.

A convolution is a matmul on im2col patches: cols (N*OH*OW, Cin*kh*kw) @ W.reshape(Cout, -1)^T. Splitting
the output channels is a column-parallel linear layer on those patches: rank r keeps Cout/t filters and
computes its Cout/t output channels; forward AllGathers them into the full NCHW output, backward AllReduces
the patch gradient (every rank's filters touch every input pixel) and folds it back with col2im.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.tp import Arrays, ColumnParallelLinear


def out_size(size: int, k: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - k) // stride + 1


def im2col(x: np.ndarray, kh: int, kw: int, stride: int = 1, pad: int = 0) -> np.ndarray:
    """(N, C, H, W) -> (N*OH*OW, C*kh*kw) patches, channel-major inside a patch (torch's weight layout)."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, kh, stride, pad), out_size(w, kw, stride, pad)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n * oh * ow, c * kh * kw)


def col2im(cols: np.ndarray, shape: tuple, kh: int, kw: int, stride: int = 1, pad: int = 0) -> np.ndarray:
    """The adjoint of im2col: adds each patch gradient back onto the (N, C, H, W) input."""
    n, c, h, w = shape
    oh, ow = out_size(h, kh, stride, pad), out_size(w, kw, stride, pad)
    g = cols.reshape(n, oh, ow, c, kh, kw).transpose(0, 3, 4, 5, 1, 2)
    xp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), cols.dtype)
    for i in range(kh):
        for j in range(kw):
            xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride] += g[:, :, i, j]
    return xp[:, :, pad:pad + h, pad:pad + w]


class OutputChannelParallelConv2d:
    """Conv2d (stride, zero padding, no dilation or groups) with Cout split over the group."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray, comm: HcclComm, stride: int = 1, pad: int = 0,
                 efficiency: float = 1.0):
        self.cout, self.cin, self.kh, self.kw = weight.shape
        self.stride, self.pad = stride, pad
        self.linear = ColumnParallelLinear(weight.reshape(self.cout, -1), bias, comm, gather_output=True,
                                           efficiency=efficiency)

    @property
    def weights(self) -> Arrays:
        """Each rank's filters, (Cout/t, Cin, kh, kw)."""
        return [w.reshape(-1, self.cin, self.kh, self.kw) for w in self.linear.w]

    def forward(self, x: np.ndarray) -> Arrays:
        """The full (N, Cout, OH, OW) output on every rank."""
        self.shape = x.shape
        n, _, h, w = x.shape
        oh, ow = out_size(h, self.kh, self.stride, self.pad), out_size(w, self.kw, self.stride, self.pad)
        ys = self.linear.forward([im2col(x, self.kh, self.kw, self.stride, self.pad)] * self.linear.t)
        return [y.reshape(n, oh, ow, self.cout).transpose(0, 3, 1, 2).copy() for y in ys]

    def backward(self, dys: Arrays) -> Arrays:
        """Sets ``dw`` (per rank, filter shape) and ``db``; returns the input gradient on every rank."""
        dcols = self.linear.backward([dy.transpose(0, 2, 3, 1).reshape(-1, self.cout) for dy in dys])
        self.dw = [g.reshape(-1, self.cin, self.kh, self.kw) for g in self.linear.dw]
        self.db = self.linear.db
        return [col2im(d, self.shape, self.kh, self.kw, self.stride, self.pad) for d in dcols]
