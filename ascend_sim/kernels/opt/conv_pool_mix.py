"""Conv2D + ReLU + 2x2 max pool in one MIX kernel (AIC -> AIV): the pool reads the conv output from L2.

Two launches (``conv_l3d`` then Module 1's ``maxpool2d``) move the conv output through HBM twice: the
pool, a launch later, finds nothing in L2 and is memory-bound. Here each AIC runs ``conv_l3d`` on whole
images and writes them as NC1HWC0 (Fixpipe ``CFG_NZ``) into a GM workspace, then, per image,
``CrossCoreSetFlag(2, PIPE_FIX, flag)``; both AIVs of its group ``CrossCoreWaitFlag(flag)``, read their
half of the image (just written: L2 hits) and pool it on the vector unit, with no scalar loops:

* ``spatial``: a 2x2 stride-2 pool over ``[C1][H][W][16]``: every pixel of a C1 block is one 32-byte
  DataBlock, so it is Module 1's ``maxpool`` compute (``Max`` with block strides over pixels); the AIVs
  take alternate C1 blocks;
* ``groups``: the output channels come in 4 groups (the space-to-depth conv1, ``conv_s2d.pool_order``:
  the 4 members of each pooling window are the same channel of the 4 groups), so the pool is the
  element-wise ``Max`` of 4 contiguous runs; the AIVs take one half of the run each.

Each image has its own workspace slot: the AIC never overwrites what an AIV still reads.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (ASCEND_IS_AIC, PIPE_FIX, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DataCopyParams,
                        GetBlockIdx, GetBlockNum, GetSubBlockIdx, GetTaskRatio, GlobalTensor, Max, TPipe, TPosition,
                        TQue, half, kernel, launch)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.kernels.maxpool import KernelMaxPool, MaxPoolTiling
from ascend_sim.kernels.opt.conv_l3d import (C0, ConvL3DTiling, KernelConvL3D, choose_conv_tiling, choose_pack,
                                             pack_images, to_5hd, weights_fractal_z)

FLAG = 4


def image_range(n: int, groups: int, g: int) -> tuple[int, int]:
    """Images [lo, hi) of AIC group ``g``: the same split on the AIC and on its AIVs."""
    return n * g // groups, n * (g + 1) // groups


class ConvToWorkspace(KernelConvL3D):
    """The AIC: ``conv_l3d`` on whole images, NC1HWC0 into the workspace, one flag per image."""

    def ItemRange(self, chunks: int) -> tuple[int, int]:
        lo, hi = image_range(self.t.N, GetBlockNum(), GetBlockIdx())
        return lo * chunks, hi * chunks

    def ImageDone(self, img: int) -> None:
        CrossCoreSetFlag(2, PIPE_FIX, FLAG)         # mode 2: AIC -> both AIVs of its group


@dataclass(frozen=True)
class PoolPlan:
    """The AIV side: ``mode`` 'spatial' (2x2 over [C1][OH][OW][16]) or 'groups' (max of 4 channel groups)."""

    mode: str
    C1: int              # channel blocks of the conv output
    OH: int
    OW: int

    @property
    def per_image(self) -> int:
        return self.C1 * self.OH * self.OW * C0

    @property
    def out_per_image(self) -> int:
        return self.per_image // 4

    def share(self, sub: int) -> tuple[int, int]:
        """(first, count) of this AIV: C1 blocks (spatial) or 16-element blocks of the output run (groups)."""
        total = self.C1 if self.mode == "spatial" else self.out_per_image // C0
        first = -(-total // 2) if sub else 0
        return first, (-(-total // 2) if sub == 0 else total - first)


class PoolFromWorkspace(KernelMaxPool):
    """One AIV: per image of its group, wait for the flag, pool its share from the workspace."""

    def InitMix(self, ws, y, n: int, p: PoolPlan) -> None:
        self.p, self.n = p, n
        self.wsGm, self.yGm = GlobalTensor(half), GlobalTensor(half)
        self.wsGm.SetGlobalBuffer(ws, n * p.per_image)
        self.yGm.SetGlobalBuffer(y, n * p.out_per_image)
        self.first, self.count = p.share(GetSubBlockIdx())
        if p.mode == "spatial":     # Module 1's pool compute on ``count`` C1 blocks (16 channels = one block)
            self.t = MaxPoolTiling(p.C1, p.OH, p.OW, 2, 2, C0, max(1, self.count), np.dtype(np.float16))
            super().Init(ws, y, self.t)
        else:
            self.pipe = TPipe()
            self.inQueue, self.outQueue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
            self.pipe.InitBuffer(self.inQueue, 2, 4 * max(1, self.count) * DATA_BLOCK_BYTES)
            self.pipe.InitBuffer(self.outQueue, 2, max(1, self.count) * DATA_BLOCK_BYTES)

    def Process(self) -> None:
        lo, hi = image_range(self.n, GetBlockNum(), GetBlockIdx() // GetTaskRatio())
        for img in range(lo, hi):
            CrossCoreWaitFlag(FLAG)                 # each image: both AIVs wait for its flag
            if self.count == 0:
                continue
            if self.p.mode == "spatial":
                self.CopyInBlocks(img)
                self.Compute(self.count)            # KernelMaxPool: horizontal then vertical Max passes
            else:
                self.CopyInGroups(img)
                self.MaxGroups()
            self.CopyOutShare(img)

    def CopyInBlocks(self, img: int) -> None:
        p = self.p
        x = self.inQueue.AllocTensor(half)
        DataCopy(x, self.wsGm[img * p.per_image + self.first * p.OH * p.OW * C0], self.count * p.OH * p.OW * C0)
        self.inQueue.EnQue(x)

    def CopyInGroups(self, img: int) -> None:
        """The same share of each of the 4 channel groups: 4 bursts, one group (a quarter of the image) apart."""
        p = self.p
        x = self.inQueue.AllocTensor(half)
        gap = p.out_per_image // C0 - self.count
        # {blockCount, blockLen, srcStride, dstStride} in 32-byte blocks
        DataCopy(x, self.wsGm[img * p.per_image + self.first * C0], DataCopyParams(4, self.count, gap, 0))
        self.inQueue.EnQue(x)

    def MaxGroups(self) -> None:
        n = self.count * C0
        x = self.inQueue.DeQue(half)
        y = self.outQueue.AllocTensor(half)
        Max(y, x, x[n], n)
        Max(y, y, x[2 * n], n)
        Max(y, y, x[3 * n], n)
        self.outQueue.EnQue(y)
        self.inQueue.FreeTensor(x)

    def CopyOutShare(self, img: int) -> None:
        p = self.p
        y = self.outQueue.DeQue(half)
        per = p.OH // 2 * (p.OW // 2) * C0 if p.mode == "spatial" else C0
        DataCopy(self.yGm[img * p.out_per_image + self.first * per], y, self.count * per)
        self.outQueue.FreeTensor(y)


@kernel(core="MIX")
def conv_pool_mix_kernel(x, w, bias, ws, y, tiling: ConvL3DTiling, plan: PoolPlan) -> None:
    if ASCEND_IS_AIC():
        op = ConvToWorkspace()
        op.Init(x, w, bias, ws, tiling)
        op.Process()
    else:
        pool = PoolFromWorkspace()
        pool.InitMix(ws, y, tiling.N, plan)
        pool.Process()


def conv_pool_mix(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, pad: int = 0, *, mode: str = "spatial",
                  cores: int | None = None, chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``maxpool(relu(conv2d(x, w) + b))`` in one MIX launch; x ``[N, C, H, W]`` with C <= 16 (one C0 group),
    laid out as NC1HWC0 on the host (``to_5hd``) first: see ``conv_pool_mix_5hd``."""
    x = np.asarray(x)
    return conv_pool_mix_5hd(to_5hd(x.astype(np.float16), -(-x.shape[1] // C0) * C0), w, b, pad, mode=mode,
                             cores=cores, chip=chip)


def conv_pool_mix_5hd(x5: np.ndarray, w: np.ndarray, b: np.ndarray | None, pad: int = 0, *, mode: str = "spatial",
                      cores: int | None = None, chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``maxpool(relu(conv2d(x, w) + b))`` in one MIX launch on the NC1HWC0 array ``x5 [N, C1, H, W, 16]`` in GM
    as it is (the previous kernel's output: no host conversion); ``w [O, C <= C1 * 16, KH, KW]``.

    Returns the pooled NC1HWC0 result ``[N, Op/16, OH/2, OW/2, 16]`` (spatial) or ``[N, Op/64, OH, OW, 16]``
    (groups: the caller's channel order, ``conv_s2d.pool_order``), a view of the kernel's GM output, and the
    LaunchResult.
    """
    x5, w = np.asarray(x5), np.asarray(w)
    if x5.ndim != 5 or x5.shape[4] != C0 or x5.dtype != np.float16 or w.shape[1] > x5.shape[1] * C0:
        raise ValueError(f"conv_pool_mix_5hd: x5 {x5.dtype} {x5.shape} must be float16 [N, C1, H, W, {C0}] and "
                         f"w {w.shape} [O, C <= C1 * {C0}, KH, KW]")
    n, c1, h, wd, _ = x5.shape
    o, _, kh, kw = w.shape
    t = choose_conv_tiling(n, c1 * C0, h, wd, o, kh, kw, pad, relu=True, cores=cores, nz_out=True, chip=chip)
    if mode == "spatial" and (t.OH % 2 or t.OW % 2):
        raise ValueError(f"conv_pool_mix: the {t.OH}x{t.OW} conv output must have even sides for the 2x2 pool")
    if mode == "groups" and t.Op % (4 * C0):
        raise ValueError(f"conv_pool_mix: {t.Op} output channels do not split into 4 groups of whole C0 blocks")
    t = ConvL3DTiling(**{**t.__dict__, "cores": min(t.cores, n)})
    plan = PoolPlan(mode, t.Op // C0, t.OH, t.OW)
    bias = np.zeros(t.Op, np.float32)
    if b is not None:
        bias[:o] = np.asarray(b, np.float32).reshape(o)
    ws = np.zeros(n * plan.per_image, np.float16)
    y = np.zeros(n * plan.out_per_image, np.float16)
    res = launch(conv_pool_mix_kernel, min(t.cores, n), np.ascontiguousarray(x5), weights_fractal_z(w, t.Cp, t.Op),
                 bias, ws, y, t, plan, chip=chip, gm_names=["x", "w", "bias", "workspace", "y"])
    shape = (n, t.Op // C0, t.OH // 2, t.OW // 2, C0) if mode == "spatial" else (n, t.Op // (4 * C0), t.OH, t.OW, C0)
    return y.reshape(shape), res


def conv_relu_pool(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, pad: int = 0, *,
                   pack: int | None = None, chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``maxpool2x2(relu(conv2d(x, w) + b))`` NCHW in, NCHW out: ``pack`` images per C0 group (default
    ``conv_l3d.choose_pack``), the conv on the AICs and the spatial pool on the AIVs of one MIX launch."""
    x, w = np.asarray(x), np.asarray(w)
    n0, c, _, _ = x.shape
    o = w.shape[0]
    g = pack or choose_pack(c, o, w.shape[2], w.shape[3], np.float16, chip)
    xp, wp, bp = pack_images(x, w, b, g) if g > 1 else (x, w, b)
    yp, res = conv_pool_mix(xp, wp, bp, pad, mode="spatial", chip=chip)
    n, c1, ph, pw, _ = yp.shape
    y = yp.transpose(0, 1, 4, 2, 3).reshape(n, c1 * C0, ph, pw)[:, :g * o].reshape(n * g, o, ph, pw)
    return np.ascontiguousarray(y[:n0]), res


__all__ = ["conv_pool_mix", "conv_pool_mix_5hd", "conv_relu_pool", "conv_pool_mix_kernel", "ConvToWorkspace", "PoolFromWorkspace",
           "PoolPlan", "image_range"]
