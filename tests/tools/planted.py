"""Planted bugs the tool tests must catch, each a real simulated kernel or a kernel version:

* ``floor_relu``: ReLU in tiles of 256 whose loop counts ``total // TILE`` tiles, so the tail is never written;
* ``conv2d_half_acc``: the library conv2d without its Cast to float, so the taps accumulate in half;
* ``perturbed_conv2``: the library conv2d with output channel 3 of conv2 scaled by 1.5 (a wrong weight offset).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ascend_sim import DataCopy, GlobalTensor, HardEvent, Relu, SetFlag, TBuf, TPipe, WaitFlag, kernel, launch
from ascend_sim import kernels
from ascend_sim.kernels.conv2d import Conv2dTiling, choose_tiling

TILE = 256


@kernel
def floor_relu_kernel(x, y, total: int, dtype):
    """ReLU in tiles of 256 elements, one block, with the bug: ``total // TILE`` tiles (the tail is dropped)."""
    xg, yg = GlobalTensor(dtype), GlobalTensor(dtype)
    xg.SetGlobalBuffer(x, total)
    yg.SetGlobalBuffer(y, total)
    buf = TBuf()
    TPipe().InitBuffer(buf, TILE * np.dtype(dtype).itemsize)
    t = buf.Get(dtype)
    for i in range(total // TILE):              # bug: should round up and copy the tail with DataCopyPad
        DataCopy(t, xg[i * TILE], TILE)
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        Relu(t, t, TILE)
        SetFlag(HardEvent.V_MTE3, 0)
        WaitFlag(HardEvent.V_MTE3, 0)
        DataCopy(yg[i * TILE], t, TILE)
        SetFlag(HardEvent.MTE3_MTE2, 0)
        WaitFlag(HardEvent.MTE3_MTE2, 0)


def floor_relu(x, *, dtype="float16"):
    """Host wrapper of floor_relu_kernel: one block over the flat tensor; returns (y, LaunchResult)."""
    x = np.ascontiguousarray(x, dtype)
    y = np.zeros_like(x)
    return y, launch(floor_relu_kernel, 1, x, y, x.size, np.dtype(dtype))


def perturbed_conv2(x, w, b, pad=0, **kw):
    """conv2d with a planted bug: output channel 3 scaled by 1.5 (a wrong weight offset, say)."""
    y, res = kernels.conv2d(x, w, b, pad, **kw)
    if w.shape[0] == 16:                       # only conv2 (16 filters); conv1 has 6
        y = y.copy()
        y[:, 3] *= 1.5
    return y, res


class HalfAccTiling(Conv2dTiling):
    """The library conv2d tiling with the planted bug: no Cast to float, so the taps accumulate in half."""

    @property
    def cast(self) -> bool:
        return False


def conv2d_half_acc(x, w, b, pad=0, *, dtype="float16", **kw):
    """A conv2d 'version' that accumulates in fp16 (a real simulated kernel: Axpy on half)."""
    n, C, H, W = x.shape
    O, _, KH, KW = w.shape
    t = choose_tiling(C, H, W, O, KH, KW, pad, n, dtype)
    half_acc = HalfAccTiling(**{f.name: getattr(t, f.name) for f in dataclasses.fields(t)})
    return kernels.conv2d(x, w, b, pad, dtype=dtype, tiling=half_acc, **kw)
