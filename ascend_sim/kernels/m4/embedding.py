"""Embedding gather (词嵌入查表) on the vector cores: ``x[i] = E[ids[i]] + P[pos0 + i]``, half rows.

The token ids stay in GM; each block reads its tokens' ids on the scalar unit (``GetValue``), copies the
token's row of the embedding table and the position's row of the position table into UB (two row copies,
double-buffered through a VECIN queue), adds them and copies the sum out. Tokens are split over the AIV cores
in whole rows (the first ``tokens % cores`` cores take one more).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Add, DataCopy, GetBlockIdx, GlobalTensor, LaunchResult, TPipe, TPosition, TQue, TilingError,
                        get_chip, half, int32, kernel, launch)


@dataclass(frozen=True)
class EmbeddingTiling:
    """``tokens`` ids, rows of ``width`` halves, the first position ``pos0``, over ``block_dim`` cores."""

    tokens: int
    width: int
    vocab: int
    pos0: int
    block_dim: int

    def core_tokens(self, i: int) -> tuple[int, int]:
        base, extra = divmod(self.tokens, self.block_dim)
        return i * base + min(i, extra), base + (i < extra)


def _gm(ptr, dtype) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr)
    return g


@kernel
def embedding_kernel(ids, table, pos_table, x, t: EmbeddingTiling) -> None:
    """This core's tokens: id from GM (scalar), the two rows in, Add, the row out."""
    first, count = t.core_tokens(GetBlockIdx())
    w = t.width
    gid, ge, gp, gx = _gm(ids, int32), _gm(table, half), _gm(pos_table, half), _gm(x, half)
    pipe = TPipe()
    qin, qout = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    pipe.InitBuffer(qin, 2, 2 * w * 2)
    pipe.InitBuffer(qout, 2, w * 2)
    for i in range(first, first + count):
        token = int(gid.GetValue(i))
        rows = qin.AllocTensor(half)
        DataCopy(rows, ge[token * w], w)
        DataCopy(rows[w], gp[(t.pos0 + i) * w], w)
        qin.EnQue(rows)
        rows = qin.DeQue(half)
        y = qout.AllocTensor(half)
        Add(y, rows, rows[w], w)
        qin.FreeTensor(rows)
        qout.EnQue(y)
        y = qout.DeQue(half)
        DataCopy(gx[i * w], y, w)
        qout.FreeTensor(y)


def embedding(ids: np.ndarray, table: np.ndarray, pos_table: np.ndarray, pos0: int = 0, *, chip=None
              ) -> tuple[np.ndarray, LaunchResult]:
    """half ``[len(ids), width]``: rows of ``table [vocab, width]`` plus rows ``pos0..`` of ``pos_table``."""
    ids = np.ascontiguousarray(ids, np.int32).reshape(-1)
    table, pos_table = (np.ascontiguousarray(a, np.float16) for a in (table, pos_table))
    vocab, w = table.shape
    site = ("<tiling>", 0)
    if w % 16:
        raise TilingError(f"embedding: rows of {w} halves; the row copies move whole 32-byte blocks",
                          fix="pad the embedding width to a multiple of 16", site=site)
    if len(ids) and (ids.min() < 0 or ids.max() >= vocab):
        bad = int(ids[(ids < 0) | (ids >= vocab)][0])
        raise TilingError(f"embedding: token id {bad} is outside the table's {vocab} rows",
                          fix=f"map the tokens into 0..{vocab - 1} first", site=site)
    if pos0 < 0 or pos0 + len(ids) > len(pos_table):
        raise TilingError(f"embedding: positions {pos0}..{pos0 + len(ids) - 1} exceed the {len(pos_table)} "
                          "learned positions", fix=f"keep the sequence within {len(pos_table)} tokens", site=site)
    cores = get_chip(chip)
    cores = cores.aiv_count if cores.separated else cores.aic_count
    t = EmbeddingTiling(len(ids), w, vocab, int(pos0), max(1, min(cores, len(ids))))
    x = np.zeros((len(ids), w), np.float16)
    res = launch(embedding_kernel, t.block_dim, ids, table, pos_table, x, t, chip=chip,
                 gm_names=["ids", "table", "pos_table", "x"])
    return x, res


__all__ = ["EmbeddingTiling", "embedding_kernel", "embedding"]
