"""Decode's weight-streaming GEMV (矩阵向量乘) on the vector unit: ``y = x @ W``, W fp16 or group-wise int4.

A decode step at batch 1 multiplies one activation row by every weight matrix once: 2 FLOPs per weight read,
so its time is the time to stream the weights from DDR, and INT4 weights should cut it by their byte ratio.
This kernel makes that measurable: the same loop streams either fp16 weights or packed int4 codes (int4b_t,
two per byte, low nibble first) with one fp16 scale per (group of ``group`` input rows, column), as in
migrate/w4a16.py, and dequantises in UB on the fly (the fused form of aclnnWeightQuantBatchMatmulV2's
antiquant step; kernels/m4/antiquant.py is the unfused one that writes fp16 weights back to GM).

Layout (the host packs it, as a weight-prepacking step does): columns in tiles of ``tile``; tile-major,
``W[O / tile, K, tile]`` (codes: ``[O / tile, K, tile / 2]`` bytes) and scales ``[O / tile, K / group, tile]``,
so every chunk of ``rows`` input rows of a tile is one contiguous copy. Each core takes whole tiles (former
cores one more). The activation ``x [K]`` (half) is read once into scalar registers (MTE2, then GetValue).
Per tile: ``acc`` (float32) = 0; per chunk, CopyIn the rows (double-buffered), for int4 one ``Cast(half <-
int4b_t)`` of the chunk, then one ``Axpy`` (half src, float dst) per row with its x value; int4 sums a
group into ``part`` and adds ``part * scale`` to ``acc`` (the scale factored out of the group's sum). The
tile's ``acc`` goes to ``y [O]`` float32.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Add, ArgumentError, Axpy, Cast, DataCopy, Duplicate, GetBlockIdx, GlobalTensor, LaunchResult,
                        Mul, RoundMode, TBuf, TPipe, TPosition, TQue, float32, get_chip, half, int4b_t, int8, kernel,
                        launch)
from ascend_sim.kernels._common import load_scalars

BITS = (16, 4)


@dataclass(frozen=True)
class GemvTiling:
    """``y[O] = x[K] @ W[K, O]``: ``bits`` 16 (fp16) or 4 (int4, one scale per ``group`` rows), column tiles of
    ``tile``, ``rows`` rows per copy, ``tiles`` of them from ``first_tile`` over ``block_dim`` cores."""

    K: int
    O: int
    bits: int
    group: int
    tile: int
    rows: int
    block_dim: int
    tiles: int

    def core_tiles(self, i: int) -> tuple[int, int]:
        """(first tile, tile count) of core ``i``."""
        base, former = divmod(self.tiles, self.block_dim)
        return i * base + min(i, former), base + (i < former)

    @property
    def chunk_elems(self) -> int:
        """Weights of one copy."""
        return self.rows * self.tile

    @property
    def w_elems_per_tile(self) -> int:
        """GM elements (fp16: halves; int4: bytes) of one tile's weights."""
        return self.K * self.tile if self.bits == 16 else self.K * self.tile // 2


@kernel
def weight_gemv_kernel(x, w, scales, y, t: GemvTiling) -> None:
    """This core's column tiles: stream their weights chunk by chunk, Axpy each row into the tile's sum."""
    first, count = t.core_tiles(GetBlockIdx())
    int4 = t.bits == 4
    pipe = TPipe()
    xs = load_scalars(pipe, x, t.K, np.float16)
    gw, gy = GlobalTensor(int8 if int4 else half), GlobalTensor(float32)
    gw.SetGlobalBuffer(w, t.tiles * t.w_elems_per_tile)
    gy.SetGlobalBuffer(y, t.O)
    chunk_gm = t.chunk_elems // 2 if int4 else t.chunk_elems
    qw, qo = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(qw, 2, t.chunk_elems // 2 if int4 else t.chunk_elems * 2)
    pipe.InitBuffer(qo, 1, t.tile * 4)
    if int4:
        gs = GlobalTensor(half)
        gs.SetGlobalBuffer(scales, t.tiles * (t.K // t.group) * t.tile)
        qs = TQue(TPosition.VECIN, 2)
        pipe.InitBuffer(qs, 2, t.tile * 2)
        bh, bp, bf = TBuf(), TBuf(), TBuf()
        pipe.InitBuffer(bh, t.chunk_elems * 2)
        pipe.InitBuffer(bp, t.tile * 4)
        pipe.InitBuffer(bf, t.tile * 4)
        wh, part, sf = bh.Get(half), bp.Get(float32), bf.Get(float32)
    for i in range(first, first + count):
        acc = qo.AllocTensor(float32)
        Duplicate(acc, 0.0, t.tile)
        for g in range(t.K // t.group):
            dst = part if int4 else acc
            if int4:
                Duplicate(part, 0.0, t.tile)
            for c in range(t.group // t.rows):
                k0 = g * t.group + c * t.rows
                wt = qw.AllocTensor(int8 if int4 else half)
                DataCopy(wt, gw[i * t.w_elems_per_tile + k0 * t.tile // (2 if int4 else 1)], chunk_gm)
                qw.EnQue(wt)
                wt = qw.DeQue(int8 if int4 else half)
                src = wt
                if int4:
                    Cast(wh, wt.ReinterpretCast(int4b_t), RoundMode.CAST_NONE, t.chunk_elems)  # exact: -8..7
                    src = wh
                for r in range(t.rows):
                    Axpy(dst[0], src[r * t.tile], xs[k0 + r], t.tile)
                qw.FreeTensor(wt)
            if int4:
                sc = qs.AllocTensor(half)
                DataCopy(sc, gs[(i * (t.K // t.group) + g) * t.tile], t.tile)
                qs.EnQue(sc)
                sc = qs.DeQue(half)
                Cast(sf, sc, RoundMode.CAST_NONE, t.tile)
                qs.FreeTensor(sc)
                Mul(part, part, sf, t.tile)
                Add(acc, acc, part, t.tile)
        qo.EnQue(acc)
        acc = qo.DeQue(float32)
        DataCopy(gy[i * t.tile], acc, t.tile)
        qo.FreeTensor(acc)


def gemv_tiling(K: int, O: int, bits: int, *, group: int = 128, tile: int = 1024, rows: int = 32,
                tiles: int | None = None, chip=None) -> GemvTiling:
    """The tiling of ``[K] x [K, O]`` on the chip's vector cores; ``tiles`` < O / tile times only the first ones."""
    site = ("<host weight_gemv>", 0)
    if bits not in BITS:
        raise ArgumentError(f"weight_gemv: {bits}-bit weights; the kernel streams fp16 (16) or int4 (4)",
                            fix="pass bits=16 or bits=4", site=site)
    if O % tile or tile % 64 or group % rows or K % group:
        raise ArgumentError(f"weight_gemv: K {K}, O {O}, tile {tile}, group {group}, rows {rows}: O must be whole "
                            "tiles, a tile a multiple of 64 (one float repeat), K whole groups, a group whole "
                            "row chunks", fix="pad O and K, or choose tile | O, rows | group | K", site=site)
    c = get_chip(chip)
    n = O // tile if tiles is None else tiles
    cores = c.aiv_count if c.separated else c.aic_count
    return GemvTiling(K, O, bits, group, tile, rows, min(cores, n), n)


def pack_weights(w: np.ndarray, bits: int, t: GemvTiling) -> tuple[np.ndarray, np.ndarray]:
    """(weights, scales) of ``w [K, O]`` in the kernel's tile-major layout; int4: symmetric RTN per (group, col)."""
    K, O = w.shape
    w = np.asarray(w, np.float32)
    if bits == 16:
        return np.ascontiguousarray(w.astype(np.float16).reshape(K, O // t.tile, t.tile).transpose(1, 0, 2)), \
            np.zeros(16, np.float16)
    g = w.reshape(K // t.group, t.group, O)
    scale = (np.abs(g).max(axis=1) / 7).astype(np.float16)                       # [K / group, O]
    safe = np.where(scale == 0, np.float16(1), scale).astype(np.float32)
    q = np.clip(np.rint(g / safe[:, None, :]), -8, 7).astype(np.int8).reshape(K, O)
    q = q.reshape(K, O // t.tile, t.tile).transpose(1, 0, 2)                     # [tiles, K, tile]
    lo, hi = q[..., 0::2] & 0xF, q[..., 1::2] & 0xF
    packed = (lo | (hi << 4)).astype(np.uint8).view(np.int8)
    s = scale.reshape(K // t.group, O // t.tile, t.tile).transpose(1, 0, 2)
    return np.ascontiguousarray(packed), np.ascontiguousarray(s)


def dequantised(w: np.ndarray, t: GemvTiling) -> np.ndarray:
    """The float32 weights ``[K, O]`` that the int4 codes and scales of ``pack_weights`` stand for."""
    K, O = w.shape
    g = np.asarray(w, np.float32).reshape(K // t.group, t.group, O)
    scale = (np.abs(g).max(axis=1) / 7).astype(np.float16).astype(np.float32)
    safe = np.where(scale == 0, 1, scale)
    return (np.clip(np.rint(g / safe[:, None, :]), -8, 7) * scale[:, None, :]).reshape(K, O)


def weight_gemv(x: np.ndarray, w: np.ndarray, bits: int, *, numerics: bool = True, tiles: int | None = None,
                chip=None, **tiling) -> tuple[np.ndarray, LaunchResult]:
    """``x [K] @ w [K, O]`` (float32 out) with ``w`` streamed as fp16 or int4; ``numerics=False`` times only."""
    K, O = w.shape
    t = gemv_tiling(K, O, bits, tiles=tiles, chip=chip, **tiling)
    wp, sp = pack_weights(w, bits, t) if numerics else _blank(t)
    y = np.zeros(O, np.float32)
    res = launch(weight_gemv_kernel, t.block_dim, np.asarray(x, np.float16), wp, sp, y, t, chip=chip,
                 gm_names=["x", "w", "scales", "y"], numerics=numerics)
    return y, res


def _blank(t: GemvTiling) -> tuple[np.ndarray, np.ndarray]:
    """Zero weights and scales of the right sizes, for a timing-only launch."""
    w = np.zeros(t.tiles * t.w_elems_per_tile, np.int8 if t.bits == 4 else np.float16)
    s = np.zeros(t.tiles * (t.K // t.group) * t.tile if t.bits == 4 else 16, np.float16)
    return w, s


__all__ = ["load_scalars", "GemvTiling", "weight_gemv_kernel", "gemv_tiling", "pack_weights", "dequantised", "weight_gemv"]
