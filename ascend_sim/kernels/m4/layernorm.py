"""LayerNorm (层归一化) over the last axis of half rows ``[A, R]`` on the vector cores, with a float32 inside.

The steps of the high-level LayerNorm API's rstd version (LayerNorm.md, "对shape为[A，R]的输入数据"), per tile
of rows: "计算均值" (Muls by 1/R, then WholeReduceSum per row), "用Sub计算出输入x与均值的差值，再用Mul计算，计算该
差值的平方 ... 方差与防除零系数ε相加，通过Rsqrt计算，得到输出rstd", and "计算输出：用Sub计算出输入x与均值的差值，
再与rstd相乘，得到的结果与gamma相乘，与beta相加". One row of R <= 64 floats is one 256-byte repeat, so every step
is one repeat-form instruction over the tile's rows; a per-row value (mean, rstd) is spread over its row with
Brcb and a source block stride of 0, gamma and beta with a source repeat stride of 0.

Rows are split over the AIV cores in whole rows (the first ``rows % cores`` cores take one more), tiles of
at most ``TILE_ROWS`` rows inside a core; input and output queues are double-buffered.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Add, BinaryRepeatParams, Brcb, BrcbRepeatParams, Cast, DataCopy, GetBlockIdx, GlobalTensor,
                        LaunchResult, Mul, Muls, RoundMode, Rsqrt, Sub, TBuf, TilingError, TPipe, TPosition, TQue,
                        WholeReduceSum, Adds, float32, get_chip, half, kernel, launch)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES

TILE_ROWS = 64              # rows per tile: Brcb spreads 8 per repeat, WholeReduceSum takes up to 255 repeats
FLOATS_PER_REPEAT = 256 // 4


@dataclass(frozen=True)
class RowTiling:
    """``rows`` rows of ``width`` elements split over ``block_dim`` cores in whole rows, tiles of ``tile_rows``."""

    rows: int
    width: int
    block_dim: int
    tile_rows: int
    eps: float = 1e-5

    def core_rows(self, i: int) -> tuple[int, int]:
        """(first row, row count) of core ``i``: the first ``rows % block_dim`` cores take one row more."""
        base, extra = divmod(self.rows, self.block_dim)
        return i * base + min(i, extra), base + (i < extra)

    def tiles(self, count: int) -> list[tuple[int, int]]:
        return [(r, min(self.tile_rows, count - r)) for r in range(0, count, self.tile_rows)]


def row_tiling(rows: int, width: int, *, chip=None, eps: float = 1e-5) -> RowTiling:
    """The host tiling for ``rows`` half rows of ``width`` (a multiple of 16 up to 64)."""
    if width % 16 or not 16 <= width <= FLOATS_PER_REPEAT:
        raise TilingError(f"layer_norm: a row of {width} values; this kernel takes 16, 32, 48 or 64 (one half row "
                          "is whole 32-byte blocks, one float row one 256-byte repeat)",
                          fix="pad the feature axis to a multiple of 16 up to 64", site=("<tiling>", 0))
    if rows < 1:
        raise TilingError(f"layer_norm: {rows} rows", fix="pass at least one row", site=("<tiling>", 0))
    chip = get_chip(chip)
    cores = chip.aiv_count if chip.separated else chip.aic_count
    return RowTiling(rows, width, min(cores, rows), TILE_ROWS, float(eps))


def spread_rows(op, dst, src, per_row, blk, n: int, width: int) -> None:
    """``dst[r, :] = op(src[r, :], per_row[r])`` for ``n`` float rows of ``width``: Brcb, then src1 block stride 0."""
    Brcb(blk, per_row, -(-n // 8), BrcbRepeatParams(1, 8))
    rep = width * 4 // DATA_BLOCK_BYTES
    op(dst, src, blk, width, n, BinaryRepeatParams(1, 1, 0, rep, rep, 1))


def same_row(op, dst, src, row, n: int, width: int) -> None:
    """``dst[r, :] = op(src[r, :], row)`` for ``n`` float rows: the row read with repeat stride 0."""
    rep = width * 4 // DATA_BLOCK_BYTES
    op(dst, src, row, width, n, BinaryRepeatParams(1, 1, 1, rep, rep, 0))


@kernel
def layer_norm_kernel(x, gamma, beta, y, t: RowTiling) -> None:
    """This core's rows, tile by tile: CopyIn, Cast, mean, x - mean, rstd, * rstd * gamma + beta, Cast, CopyOut."""
    r0, count = t.core_rows(GetBlockIdx())
    w = t.width
    gx, gy = GlobalTensor(half), GlobalTensor(half)
    gx.SetGlobalBuffer(x + r0 * w, max(count, 1) * w)
    gy.SetGlobalBuffer(y + r0 * w, max(count, 1) * w)
    gg, gb = GlobalTensor(float32), GlobalTensor(float32)
    gg.SetGlobalBuffer(gamma, w)
    gb.SetGlobalBuffer(beta, w)
    pipe = TPipe()
    qx, qy, qp = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2), TQue(TPosition.VECIN, 1)
    pipe.InitBuffer(qx, 2, t.tile_rows * w * 2)
    pipe.InitBuffer(qy, 2, t.tile_rows * w * 2)
    pipe.InitBuffer(qp, 1, 2 * w * 4)
    bufs = {}
    for name, nbytes in (("xf", t.tile_rows * w * 4), ("sq", t.tile_rows * w * 4), ("red", t.tile_rows * 4),
                         ("blk", t.tile_rows * DATA_BLOCK_BYTES)):
        b = TBuf()
        pipe.InitBuffer(b, nbytes)
        bufs[name] = b.Get(float32)
    xf, sq, red, blk = bufs["xf"], bufs["sq"], bufs["red"], bufs["blk"]
    params = qp.AllocTensor(float32)                 # gamma in [0, w), beta in [w, 2w): loaded once per core
    DataCopy(params, gg, w)
    DataCopy(params[w], gb, w)
    qp.EnQue(params)
    params = qp.DeQue(float32)
    rep = w * 4 // DATA_BLOCK_BYTES
    for off, n in t.tiles(count):
        xl = qx.AllocTensor(half)
        DataCopy(xl, gx[off * w], n * w)
        qx.EnQue(xl)
        xl = qx.DeQue(half)
        Cast(xf, xl, RoundMode.CAST_NONE, n * w)
        qx.FreeTensor(xl)
        Muls(sq, xf, 1.0 / w, n * w)
        WholeReduceSum(red, sq, w, n, 1, 1, rep)                         # mean = sum(x / R)
        spread_rows(Sub, xf, xf, red, blk, n, w)                         # x - mean
        Mul(sq, xf, xf, n * w)
        Muls(sq, sq, 1.0 / w, n * w)
        WholeReduceSum(red, sq, w, n, 1, 1, rep)                         # variance = sum((x - mean)^2 / R)
        Adds(red, red, t.eps, n)
        Rsqrt(red, red, n)                                               # rstd = 1 / sqrt(var + eps)
        spread_rows(Mul, xf, xf, red, blk, n, w)
        same_row(Mul, xf, xf, params, n, w)                              # * gamma
        same_row(Add, xf, xf, params[w], n, w)                           # + beta
        yl = qy.AllocTensor(half)
        Cast(yl, xf, RoundMode.CAST_RINT, n * w)
        qy.EnQue(yl)
        yl = qy.DeQue(half)
        DataCopy(gy[off * w], yl, n * w)
        qy.FreeTensor(yl)
    qp.FreeTensor(params)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, *, eps: float = 1e-5, chip=None,
               **_: object) -> tuple[np.ndarray, LaunchResult]:
    """LayerNorm over the last axis of half ``x [..., R]`` with float32 ``gamma``/``beta [R]``; half out."""
    x = np.ascontiguousarray(x, np.float16)
    w = x.shape[-1] if x.ndim else 0
    if np.shape(gamma) != (w,) or np.shape(beta) != (w,):
        raise ValueError(f"layer_norm: gamma {np.shape(gamma)} and beta {np.shape(beta)} must both be [{w}], the "
                         "length of x's last axis")
    t = row_tiling(x.size // max(w, 1), w, chip=chip, eps=eps)
    y = np.zeros_like(x)
    res = launch(layer_norm_kernel, t.block_dim, x, np.asarray(gamma, np.float32), np.asarray(beta, np.float32), y,
                 t, chip=chip, gm_names=["x", "gamma", "beta", "y"])
    return y, res


__all__ = ["TILE_ROWS", "RowTiling", "row_tiling", "spread_rows", "same_row", "layer_norm_kernel", "layer_norm"]
