"""Space-to-depth as a simulated TransData kernel on the AIVs: NCHW images in GM -> the NC1HWC0 s2d map.

``conv_s2d`` feeds the cube a ``[N, 1, IH, IW, 16]`` map whose 16 channels are a ``b x b`` block of pixels
(``space_to_depth`` then ``to_5hd``). On a device that rearrangement is an operator of its own; here it is
one vector kernel, timed like every other launch. Each AIV takes a contiguous share of the images, ``batch``
at a time:

* one DataCopy of the ``batch`` NCHW images into UB, 16 elements after a zeroed block (``Duplicate``);
* one ``Gather`` by byte offsets (Gather page: "dst[i] = src[srcBaseAddr + srcOffset[i]]", offsets
  "取值应保证src元素类型位宽对齐") builds the s2d map: padding pixels and the channels past ``C * b * b`` read
  the zero block;
* one DataCopy of the result to GM.

The offset table (uint32 bytes, the same for every step) is a constant the host builds once from the shapes,
like the weights' fractal layout; each core copies it into UB once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (DataCopy, Duplicate, Gather, GetBlockIdx, GetBlockNum, GlobalTensor, TPipe, TPosition, TQue,
                        half, kernel, launch, uint32)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.opt.conv_l3d import C0
from ascend_sim.kernels.opt.conv_pool_mix import image_range
from ascend_sim.kernels.opt.conv_s2d import space_to_depth


@dataclass(frozen=True)
class S2DTiling:
    """``N`` images of ``per_in`` elements each -> ``per_out`` elements each, ``batch`` images per step."""

    N: int
    per_in: int
    per_out: int
    batch: int
    cores: int


class KernelS2D:
    """One AIV: its images, ``batch`` per step, double-buffered in and out."""

    def Init(self, x, table, y, t: S2DTiling) -> None:
        self.t = t
        self.xGm, self.yGm, self.tGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(uint32)
        self.xGm.SetGlobalBuffer(x, t.N * t.per_in)
        self.yGm.SetGlobalBuffer(y, t.N * t.per_out)
        self.tGm.SetGlobalBuffer(table, t.batch * t.per_out)
        self.pipe = TPipe()
        self.inQ, self.outQ, self.tabQ = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2), TQue(TPosition.VECIN, 1)
        self.pipe.InitBuffer(self.inQ, 2, (C0 + t.batch * t.per_in) * 2)
        self.pipe.InitBuffer(self.outQ, 2, t.batch * t.per_out * 2)
        self.pipe.InitBuffer(self.tabQ, 1, t.batch * t.per_out * 4)

    def Process(self) -> None:
        t = self.t
        lo, hi = image_range(t.N, GetBlockNum(), GetBlockIdx())
        if lo >= hi:
            return
        tab = self.tabQ.AllocTensor(uint32)
        DataCopy(tab, self.tGm, t.batch * t.per_out)
        self.tabQ.EnQue(tab)
        tab = self.tabQ.DeQue(uint32)
        for i0 in range(lo, hi, t.batch):
            k = min(t.batch, hi - i0)
            self.CopyIn(i0, k)
            self.Compute(tab, k)
            self.CopyOut(i0, k)
        self.tabQ.FreeTensor(tab)

    def CopyIn(self, i0: int, k: int) -> None:
        t = self.t
        x = self.inQ.AllocTensor(half)
        Duplicate(x, 0.0, C0)                              # the zero block the padding offsets point at
        DataCopy(x[C0], self.xGm[i0 * t.per_in], k * t.per_in)
        self.inQ.EnQue(x)

    def Compute(self, tab, k: int) -> None:
        x = self.inQ.DeQue(half)
        y = self.outQ.AllocTensor(half)
        Gather(y, x, tab, 0, k * self.t.per_out)
        self.outQ.EnQue(y)
        self.inQ.FreeTensor(x)

    def CopyOut(self, i0: int, k: int) -> None:
        y = self.outQ.DeQue(half)
        DataCopy(self.yGm[i0 * self.t.per_out], y, k * self.t.per_out)
        self.outQ.FreeTensor(y)


@kernel
def s2d_kernel(x, table, y, tiling: S2DTiling) -> None:
    op = KernelS2D()
    op.Init(x, table, y, tiling)
    op.Process()


def s2d_offsets(c: int, h: int, w: int, pad: int, b: int, kh: int, kw: int, batch: int) -> np.ndarray:
    """The Gather table: for each element of ``batch`` s2d NC1HWC0 maps, the byte offset of its source pixel
    in UB (images after one zero block of 16), or 0 (the zero block) for padding and unused channels."""
    src = space_to_depth(np.arange(1, c * h * w + 1, dtype=np.int64).reshape(1, c, h, w), pad, b, kh, kw)[0]
    cells = np.zeros((C0,) + src.shape[1:], np.int64)
    cells[:src.shape[0]] = src
    cells = cells.transpose(1, 2, 0).ravel()                         # [IH, IW, 16]: C1 = 1
    per_img = np.where(cells > 0, C0 + cells - 1, 0)
    tab = [np.where(cells > 0, per_img + i * c * h * w, 0) for i in range(batch)]
    return (np.concatenate(tab) * 2).astype(np.uint32)


def s2d_transdata(x: np.ndarray, pad: int, b: int, kh: int, kw: int, *, batch: int = 8, cores: int | None = None,
                  chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``x [N, C, H, W]`` half -> ``[N, 1, IH, IW, 16]`` half (``to_5hd(space_to_depth(x, pad, b, kh, kw), 16)``)
    in one vector launch."""
    x = np.asarray(x)
    n, c, h, w = x.shape
    if x.dtype != np.float16:
        raise ValueError(f"s2d_transdata: x is {x.dtype}; the images in GM are float16")
    if c * b * b > C0 or (c * h * w) % C0:
        raise ValueError(f"s2d_transdata: {c} channels x block {b}^2 must fit one C0 group of {C0}, and an image "
                         f"({c * h * w} elements) must be whole 32-byte blocks")
    cores = min(cores or get_chip(chip).aiv_count, n)
    batch = max(1, min(batch, -(-n // cores)))
    tab = s2d_offsets(c, h, w, pad, b, kh, kw, batch)
    per_out = tab.size // batch
    ih, iw = space_to_depth(np.zeros((1, c, h, w), np.float16), pad, b, kh, kw).shape[2:]
    t = S2DTiling(n, c * h * w, per_out, batch, cores)
    y = np.zeros((n, 1, ih, iw, C0), np.float16)
    res = launch(s2d_kernel, cores, np.ascontiguousarray(x), tab, y, t, chip=chip, gm_names=["x", "offsets", "y"])
    return y, res


__all__ = ["S2DTiling", "s2d_kernel", "s2d_offsets", "s2d_transdata"]
