"""MaxPool2D (k x k windows, stride s, no padding) on the vector unit with the mask/repeat form.

A chunk is one 32-byte DataBlock of lanes (16 half or 8 float images; GM
holds the chunked layout of ``_common``), so a pixel of all the chunk's
images is exactly one DataBlock, and block strides address pixels. Per tile of
``cg`` channels, loaded with one contiguous DataCopy:

1. horizontal ``h[r, x] = max_dx in[r, s*x + dx]``: ``Max`` in the repeat
   form, 8 output pixels in the DataBlocks of a repeat (block stride ``s``),
   one repeat per row (repeat stride ``W``);
2. vertical ``out[c, y, x] = max_dy h[c, s*y + dy, x]``: the same with the
   rows ``s`` rows apart.

Exact in any dtype.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import BinaryRepeatParams, DataCopy, Max, TBuf, TPipe, TPosition, TQue, kernel
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES, get_chip
from ascend_sim.kernels._common import (MAX_STRIDE, block_range, check_batch, default_blocks, from_chunks,
                                        gm, data_block_lanes, resolve_dtype, run, to_chunks, ub_bytes)


@dataclass(frozen=True)
class MaxPoolTiling:
    """Host-side tiling: shapes, window, lanes and channels per tile ``cg``."""

    C: int
    H: int
    W: int
    k: int
    s: int
    lanes: int
    cg: int
    dtype: np.dtype

    @property
    def OH(self) -> int:
        return (self.H - self.k) // self.s + 1

    @property
    def OW(self) -> int:
        return (self.W - self.k) // self.s + 1

    @property
    def nb(self) -> int:
        return data_block_lanes(self.dtype)


def choose_tiling(C: int, H: int, W: int, k: int, s: int, n: int, dtype, chip=None) -> MaxPoolTiling:
    """The most channels per tile that fit UB with double-buffered input and output."""
    dtype = resolve_dtype(dtype)
    if k < 2 or s < 1 or H < k or W < k:
        raise ValueError(f"maxpool2d: window {k} (>= 2) and stride {s} (>= 1) must fit the {H}x{W} input")
    g = data_block_lanes(dtype)
    OH, OW = (H - k) // s + 1, (W - k) // s + 1
    cap = get_chip(chip).ub_usable_bytes
    cg = next((c for c in range(C, 0, -1)
               if ub_bytes(*[c * H * W * DATA_BLOCK_BYTES] * 2, c * H * OW * DATA_BLOCK_BYTES,
                           *[c * OH * OW * DATA_BLOCK_BYTES] * 2) <= cap), 0)
    if not cg:
        raise ValueError(f"maxpool2d: one {H}x{W} channel does not fit the {cap}-byte UB; pool smaller images")
    return MaxPoolTiling(C, H, W, k, s, -(-n // g) * g, cg, dtype)


def max_2d(dst, a, b, rows: int, cols: int, d: tuple[int, int], sa: tuple[int, int], sb: tuple[int, int]) -> None:
    """``dst[r*d0 + x*d1] = max(a[r*sa0 + x*sa1], b[r*sb0 + x*sb1])``; indices and strides in DataBlocks.

    8 items go in the DataBlocks of one repeat, repeats step over the other axis
    (at most 255 per instruction); the arrangement with fewer instructions
    whose strides fit the 8-bit fields is used.
    """
    lanes = DATA_BLOCK_BYTES // dst.dtype.itemsize
    options = []
    for inner, outer, k_in, k_out in ((cols, rows, 1, 0), (rows, cols, 0, 1)):
        strides = [(t[k_in], t[k_out]) for t in (d, sa, sb)]
        if all(blk <= MAX_STRIDE and rep <= MAX_STRIDE for blk, rep in strides):
            options.append((-(-inner // 8) * -(-outer // 255), inner, outer, strides))
    if not options:                        # strides too long for the fields: one row at a time
        if rows == 1:
            raise ValueError(f"max_2d: column strides {d[1]}, {sa[1]}, {sb[1]} exceed {MAX_STRIDE} blocks")
        for r in range(rows):
            max_2d(dst[r * d[0] * lanes], a[r * sa[0] * lanes], b[r * sb[0] * lanes], 1, cols,
                   (0, d[1]), (0, sa[1]), (0, sb[1]))
        return
    _, inner, outer, ((db, dr), (ab, ar), (bb, br)) = min(options, key=lambda o: o[0])
    params = BinaryRepeatParams(db, ab, bb, dr, ar, br)
    for i0 in range(0, inner, 8):
        k = min(8, inner - i0)
        for o0 in range(0, outer, 255):
            rep = min(255, outer - o0)
            Max(dst[(i0 * db + o0 * dr) * lanes], a[(i0 * ab + o0 * ar) * lanes], b[(i0 * bb + o0 * br) * lanes],
                k * lanes, rep, params)


class KernelMaxPool:
    """One block: for each of its chunks and each tile of ``cg`` channels: load, two max passes, store."""

    def Init(self, x, y, t: MaxPoolTiling) -> None:
        self.t = t
        self.xGm = gm(x, t.dtype, t.C * t.H * t.W * t.lanes)
        self.yGm = gm(y, t.dtype, t.C * t.OH * t.OW * t.lanes)
        self.pipe = TPipe()
        self.inQueue, self.outQueue, self.hBuf = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2), TBuf()
        self.pipe.InitBuffer(self.inQueue, 2, t.cg * t.H * t.W * DATA_BLOCK_BYTES)
        self.pipe.InitBuffer(self.hBuf, t.cg * t.H * t.OW * DATA_BLOCK_BYTES)
        self.pipe.InitBuffer(self.outQueue, 2, t.cg * t.OH * t.OW * DATA_BLOCK_BYTES)

    def Process(self) -> None:
        t = self.t
        for chunk in block_range(t.lanes // t.nb):
            n0 = chunk * t.nb
            for c0 in range(0, t.C, t.cg):
                cg = min(t.cg, t.C - c0)
                self.CopyIn(n0, c0, cg)
                self.Compute(cg)
                self.CopyOut(n0, c0, cg)

    def CopyIn(self, n0: int, c0: int, cg: int) -> None:
        t = self.t
        xLocal = self.inQueue.AllocTensor(t.dtype)
        DataCopy(xLocal, self.xGm[n0 * t.C * t.H * t.W + c0 * t.H * t.W * t.nb], cg * t.H * t.W * t.nb)
        self.inQueue.EnQue(xLocal)

    # --- SHOW maxpool-compute: course/01_basics.ipynb cell basics-19
    def Compute(self, cg: int) -> None:
        t = self.t
        lanes = t.nb
        xLocal = self.inQueue.DeQue(t.dtype)
        h = self.hBuf.Get(t.dtype)
        yLocal = self.outQueue.AllocTensor(t.dtype)
        hd, xs = (t.OW, 1), (t.W, t.s)                         # h rows / input rows, in pixels
        max_2d(h, xLocal, xLocal[lanes], cg * t.H, t.OW, hd, xs, xs)
        for dx in range(2, t.k):
            max_2d(h, h, xLocal[dx * lanes], cg * t.H, t.OW, hd, hd, xs)
        uniform = t.H == t.s * t.OH                           # out row c*OH + y reads h row s*(c*OH + y)
        groups = [(0, cg * t.OH)] if uniform else [(c * t.OH, t.OH) for c in range(cg)]
        hv, ov = (t.s * t.OW, 1), (t.OW, 1)
        for r0, rows in groups:
            src = (0 if uniform else r0 // t.OH * t.H) * t.OW
            dst = yLocal[r0 * t.OW * lanes]
            max_2d(dst, h[src * lanes], h[(src + t.OW) * lanes], rows, t.OW, ov, hv, hv)
            for dy in range(2, t.k):
                max_2d(dst, dst, h[(src + dy * t.OW) * lanes], rows, t.OW, ov, ov, hv)
        self.outQueue.EnQue(yLocal)
        self.inQueue.FreeTensor(xLocal)
    # --- END SHOW

    def CopyOut(self, n0: int, c0: int, cg: int) -> None:
        t = self.t
        yLocal = self.outQueue.DeQue(t.dtype)
        DataCopy(self.yGm[n0 * t.C * t.OH * t.OW + c0 * t.OH * t.OW * t.nb], yLocal, cg * t.OH * t.OW * t.nb)
        self.outQueue.FreeTensor(yLocal)


@kernel
def maxpool2d_kernel(x, y, tiling: MaxPoolTiling) -> None:
    """x ``[chunk][C, H, W, nb]`` -> y ``[chunk][C, OH, OW, nb]`` (chunked layout, one block of lanes per chunk)."""
    op = KernelMaxPool()
    op.Init(x, y, tiling)
    op.Process()


def maxpool2d(x: np.ndarray, k: int = 2, s: int = 2, *, dtype="float16", block_dim: int | None = None,
              chip=None, kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Simulated max pooling: ``x [N, C, H, W]`` -> ``[N, C, (H-k)//s+1, (W-k)//s+1]``.

    ``kernel`` launches another kernel with the same arguments (``x, y, tiling``) in place of
    ``maxpool2d_kernel``, e.g. its C++ twin ``kernels/cpp/maxpool.cpp``.
    """
    d = resolve_dtype(dtype)
    x = check_batch(x, 4, "maxpool2d")
    n, C, H, W = x.shape
    t = choose_tiling(C, H, W, int(k), int(s), n, d, chip)
    y = np.zeros(C * t.OH * t.OW * t.lanes, d)
    blocks = default_blocks(t.lanes // t.nb, "AIV", chip, block_dim)
    res = run(kernel or maxpool2d_kernel, blocks, to_chunks(x, d, t.nb), y, t, chip=chip, names=["x", "y"])
    return from_chunks(y, n, t.nb, (C, t.OH, t.OW)), res


__all__ = ["MaxPoolTiling", "choose_tiling", "max_2d", "maxpool2d", "maxpool2d_kernel"]
