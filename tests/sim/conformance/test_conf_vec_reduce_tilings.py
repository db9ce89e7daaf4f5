"""Conformance family "ReduceSum tilings": the sum of n elements three ways, as real kernels tile it -- ReduceSum
(count form), WholeReduceSum over full repeats plus a masked tail repeat then over the partial sums, and
BlockReduceSum to 8 sums per repeat then WholeReduceSum -- over lengths with and without tails; BlockReduce*
and PairReduceSum lane by lane (with the documented binary-tree rounding, skipped blocks and pairs)."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, BlockReduceMax, BlockReduceMin, BlockReduceSum, DtypeError, Duplicate,
                        PairReduceSum, ReduceSum, WholeReduceSum, float32, half, int32)
from vec_util import assert_same, raises_rule, vector_result

LENGTHS = [64, 100, 512, 777, 2048 + 13]


def integers(n, dtype, seed=0):
    """Small integers: every partial sum is exact, so each tiling must give numpy's sum bit for bit."""
    return np.random.default_rng(seed).integers(-9, 10, n).astype(dtype)


@pytest.mark.parametrize("n", LENGTHS)
def test_reduce_sum_count_form(n):
    x = integers(n, float32, n)
    work = np.zeros(n, float32)
    z = vector_result(lambda x, w, z: ReduceSum(z, x, w, n), x, work, out_like=np.zeros(8, float32))
    assert z[0] == x.sum() and (z[1:] == 0).all()


def whole_reduce_tiling(x, w, z, n):
    """Full repeats of 64 floats, a masked tail repeat, then one WholeReduceSum over the partial sums."""
    full, tail = divmod(n, 64)
    if full:
        WholeReduceSum(w, x, 64, full, 1, 1, 8)
    if tail:
        WholeReduceSum(w[full:], x[full * 64:], tail, 1, 1, 1, 8)
    parts = full + (1 if tail else 0)
    WholeReduceSum(z, w, parts, 1, 1, 1, 8)


@pytest.mark.parametrize("n", LENGTHS)
def test_whole_reduce_sum_tiling(n):
    x = integers(n, float32, n + 1)
    pad = -(-n // 64) * 64
    xs = np.zeros(pad, float32)
    xs[:n] = x
    w = np.zeros(64, float32)
    z = vector_result(lambda x, w, z: whole_reduce_tiling(x, w, z, n), xs, w, out_like=np.zeros(8, float32))
    assert z[0] == x.sum()


def block_reduce_tiling(x, w, z, n):
    """BlockReduceSum: 8 block sums per repeat of 128 halves; a tail repeat masked; then WholeReduceSum."""
    full, tail = divmod(n, 128)
    Duplicate(w, 0.0, 128)
    if full:
        BlockReduceSum(w, x, full, 128, 1, 1, 8)
    if tail:
        BlockReduceSum(w[full * 8:], x[full * 128:], 1, tail, 1, 1, 8)
    WholeReduceSum(z, w, 128, 1, 1, 1, 8)


@pytest.mark.parametrize("n", [128, 200, 1024, 1000])
def test_block_reduce_sum_tiling(n):
    x = integers(n, half, n + 2)
    pad = -(-n // 128) * 128
    xs = np.zeros(pad, half)
    xs[:n] = x
    z = vector_result(lambda x, w, z: block_reduce_tiling(x, w, z, n), xs, np.zeros(128, half),
                      out_like=np.zeros(16, half))
    assert z[0] == x.astype(np.float64).sum()


def tree(v: np.ndarray, fn) -> np.ndarray:
    """Pairwise reduction of each row, rounding in the dtype at each level (the page's binary tree)."""
    while v.shape[1] > 1:
        v = np.stack([fn(a, b) for a, b in zip(v[:, 0::2].T, v[:, 1::2].T)], axis=1).astype(v.dtype)
    return v[:, 0]


@pytest.mark.parametrize("instr, fn, fill", [(BlockReduceSum, np.add, 0.0), (BlockReduceMax, np.maximum, -np.inf),
                                             (BlockReduceMin, np.minimum, np.inf)], ids=["sum", "max", "min"])
def test_block_reduce_lanes_and_tree_rounding(instr, fn, fill):
    x = np.random.default_rng(9).uniform(-100, 100, 256).astype(half)    # not exact: the tree order matters
    mask = [0x0000_FFFF_0000_00F0, 0]                                     # block 0: lanes 4-7; block 2,3: all
    z = vector_result(lambda x, z: instr(z, x, 2, mask, 1, 1, 8), x, out_like=np.full(16, 7, half))
    on = np.array([(mask[0] >> i) & 1 for i in range(64)] + [0] * 64, bool)
    v = np.where(on, x.reshape(2, 128), fill).astype(half).reshape(16, 16)
    sums = tree(v, fn).reshape(2, 8)
    written = on.reshape(8, 16).any(axis=1)                               # blocks 1, 4..7 keep dst
    expected = np.full((2, 8), 7, half)
    expected[:, written] = sums[:, written]
    assert_same(z, expected.reshape(-1))


def test_block_reduce_sum_float_dst_rep_stride():
    x = np.arange(128, dtype=float32)
    z = vector_result(lambda x, z: BlockReduceSum(z, x, 2, 64, 2, 1, 8), x, out_like=np.zeros(32, float32))
    expected = np.zeros(32, float32)
    expected[0:8] = x[:64].reshape(8, 8).sum(axis=1)
    expected[16:24] = x[64:].reshape(8, 8).sum(axis=1)
    assert_same(z, expected)


def test_pair_reduce_sum():
    x = np.random.default_rng(5).uniform(-4, 4, 256).astype(half)
    z = vector_result(lambda x, z: PairReduceSum(z, x, 2, 126, 1, 1, 8), x, out_like=np.full(128, 9, half))
    v = x.reshape(2, 128).copy()
    v[:, 126:] = 0
    expected = (v[:, 0::2] + v[:, 1::2]).astype(half)
    expected[:, 63] = 9                                                   # lanes 126, 127 off: pair not written
    assert_same(z, expected.reshape(-1))


def test_reduce_errors():
    i = np.zeros(256, int32)
    with raises_rule(DtypeError, "BlockReduceSum supports half, float", "int32_t",
                     at="BlockReduceSum(z, x, 1, 64, 1, 1, 8)"):
        vector_result(lambda x, z: BlockReduceSum(z, x, 1, 64, 1, 1, 8), i, out_like=i)
    h = np.zeros(256, half)
    with raises_rule(ArgumentError, "continuous mask 129", "1..128", at="PairReduceSum(z, x, 1, 129, 1, 1, 8)"):
        vector_result(lambda x, z: PairReduceSum(z, x, 1, 129, 1, 1, 8), h, out_like=h)


def test_unified_names_are_the_old_instructions():
    """ReduceDataBlock / ReducePairElem / ReduceRepeat (the pages' new names): mask before repeatTime."""
    from ascend_sim import ReduceDataBlock, ReducePairElem, ReduceRepeat, ReduceType
    x = np.random.default_rng(11).integers(-9, 9, 256).astype(half)
    new = vector_result(lambda x, z: ReduceDataBlock(ReduceType.MAX, z, x, 128, 2, 1, 1, 8), x,
                        out_like=np.zeros(16, half))
    assert_same(new, x.reshape(16, 16).max(axis=1))
    new = vector_result(lambda x, z: ReducePairElem(ReduceType.SUM, z, x, 128, 2, 1, 1, 8), x,
                        out_like=np.zeros(128, half))
    assert_same(new, (x[0::2] + x[1::2]).astype(half))
    new = vector_result(lambda x, z: ReduceRepeat(ReduceType.SUM, z, x, 128, 2, 1, 1, 8), x,
                        out_like=np.zeros(2, half))
    assert_same(new, x.reshape(2, 128).astype(np.float32).sum(axis=1).astype(half))
    with raises_rule(ArgumentError, "ReduceType.SUM only", "MAX",
                     at="ReducePairElem(ReduceType.MAX, z, x, 128, 1, 1, 1, 8)"):
        vector_result(lambda x, z: ReducePairElem(ReduceType.MAX, z, x, 128, 1, 1, 1, 8), x,
                      out_like=np.zeros(128, half))
