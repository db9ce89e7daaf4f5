"""Repeat-form reductions under SetMaskCount (Counter mode), against numpy models of the documented behaviour.

Counter mode: the mask register's low 64 bits are the element count and repeatTime is ignored ("由系统内部根据元素
数量自动计算", asc-devkit SIMD计算说明/掩码/接口外设置Mask.md): ``count`` elements are ``ceil(count / lanes)``
repeats, the last holding the remainder. WholeReduceSum (ReduceRepeat<SUM>) adds each repeat as a binary tree of
neighbour pairs in the dtype (ReduceRepeat.md and ReduceDataBlock.md, 关键特性说明). The models below are written
lane by lane in plain Python, independent of the simulator's code; each sum test also checks that its data tells
the tree apart from an fp32 ``np.sum`` rounded once and from a running sum (so a wrong order fails it).

ReduceSum's count form (which runs in Counter mode inside, ReduceSum.md 表1) on Atlas A2 is the page's "方式一":
"同一repeat内采用二叉树累加，不同repeat的结果按顺序累加", every add in the dtype; its mask/repeat form is "方式二":
"同一repeat内采用二叉树累加，不同repeat的结果也按二叉树累加".
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (MASK_PLACEHOLDER, ArgumentError, BlockReduceMax, BlockReduceSum, DtypeError,
                        GetReduceRepeatSumSpr, HardEvent, MaskMode, SetFlag, WaitFlag, OutOfBoundsError, PairReduceSum, ReduceMax, ReduceMin, ReduceRepeat, ReduceSum, ReduceType, ResetMask, SetMaskCount, SetMaskNorm, SetVectorMask,
                        WholeReduceMax, WholeReduceMin, WholeReduceSum, float32, half)
from ascend_sim.api.ops.vector import ReduceOrder
from kernels_util import assert_same, raises_rule, run_on_ub, vector_result

DTYPES = [pytest.param(half, id="half"), pytest.param(float32, id="float")]
#: counts that are not a multiple of the repeat width (128 halves, 64 floats), one that is, and one below it
COUNTS = {np.dtype(half): (1, 100, 130, 300, 640, 1000), np.dtype(float32): (1, 50, 65, 200, 320, 1000)}


def lanes_of(dtype) -> int:
    return 256 // np.dtype(dtype).itemsize


def tree_model(x: np.ndarray, lanes: int) -> np.ndarray:
    """The documented order: each repeat of ``lanes`` values (the last padded with 0) added as a binary tree of
    neighbour pairs, every add rounded to the dtype (numpy scalar arithmetic in that dtype)."""
    dt = x.dtype.type
    out = []
    for start in range(0, x.size, lanes):
        level = [dt(v) for v in x[start:start + lanes]]
        level += [dt(0)] * (lanes - len(level))
        while len(level) > 1:
            level = [dt(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
        out.append(level[0])
    return np.array(out, x.dtype)


def other_orders(x: np.ndarray, lanes: int) -> list[np.ndarray]:
    """Two wrong models: an fp32 np.sum per repeat rounded once (the old Normal-mode code), a running sum in the dtype."""
    chunks = [x[s:s + lanes] for s in range(0, x.size, lanes)]
    once = np.array([np.sum(c, dtype=np.float32) for c in chunks]).astype(x.dtype)
    running = []
    for c in chunks:
        acc = x.dtype.type(0)
        for v in c:
            acc = x.dtype.type(acc + v)
        running.append(acc)
    return [once, np.array(running, x.dtype)]


def sample_data(dtype, count: int, seed: int = 0) -> np.ndarray:
    """Values of mixed sign and magnitude: the order of the adds shows in the last bits."""
    rng = np.random.default_rng(seed + count)
    return (rng.uniform(-1, 1, count) * 2.0 ** rng.integers(-6, 6, count)).astype(dtype)


def counter_whole_sum(x: np.ndarray, count: int, form: str) -> np.ndarray:
    """WholeReduceSum of the first ``count`` elements in Counter mode, the count set three documented ways."""
    dtype, lanes = x.dtype, lanes_of(x.dtype)
    out = np.full(-(-count // lanes) + 3, 7, dtype)              # 3 sentinels past the results

    def body(src, z):
        SetMaskCount()
        if form == "isSetMask=True":                              # the count as the mask argument (接口内设置Mask)
            WholeReduceSum(z, src, [count, 0], 1, 1, 1, 8)
        else:
            if form == "two-word":                                # the sample's SetVectorMask<T>(0, count)
                SetVectorMask(0, count, dtype=dtype)
            else:
                SetVectorMask(count, dtype=dtype, mode=MaskMode.COUNTER)
            WholeReduceSum(z, src, MASK_PLACEHOLDER, 1, 1, 1, 8, isSetMask=False)   # repeatTime 1: ignored
        SetMaskNorm()
        ResetMask()
    return vector_result(body, x, out_like=out)


# ============================================================================ WholeReduceSum
@pytest.mark.parametrize("dtype", DTYPES)
def test_counter_whole_reduce_sum_is_a_binary_tree_per_repeat(dtype):
    lanes = lanes_of(dtype)
    told_apart = [False, False]
    for count in COUNTS[np.dtype(dtype)]:
        x = sample_data(dtype, 1024, count)
        expected = tree_model(x[:count], lanes)
        told_apart = [seen or not np.array_equal(expected, wrong)
                      for seen, wrong in zip(told_apart, other_orders(x[:count], lanes))]
        z = counter_whole_sum(x, count, "len")
        assert_same(z, np.concatenate([expected, np.full(3, 7, dtype)]))
    assert all(told_apart)          # the data tells the documented order from both wrong ones


@pytest.mark.parametrize("form", ["two-word", "isSetMask=True"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_counter_count_set_by_the_two_word_form_or_the_mask_argument(dtype, form):
    count = 3 * lanes_of(dtype) + 5
    x = sample_data(dtype, 1024, 1)
    z = counter_whole_sum(x, count, form)
    assert_same(z, np.concatenate([tree_model(x[:count], lanes_of(dtype)), np.full(3, 7, dtype)]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_mode_whole_reduce_sum_adds_in_the_same_tree(dtype):
    """One instruction, one order: a Normal-mode repeat with a tail mask gives the Counter-mode partial repeat's sum."""
    lanes, repeat = lanes_of(dtype), 3
    x = sample_data(dtype, lanes * repeat, 2)
    mask = lanes - 9
    z = vector_result(lambda src, z: WholeReduceSum(z, src, mask, repeat, 1, 1, 8), x, out_like=np.zeros(8, dtype))
    rows = x.reshape(repeat, lanes)[:, :mask]
    expected = np.concatenate([tree_model(r, lanes) for r in rows])
    assert not np.array_equal(expected, np.sum(rows, axis=1, dtype=np.float32).astype(dtype))
    assert_same(z[:repeat], expected)


def test_half_sum_rounds_at_every_level_of_the_tree():
    """2048 + 1 is 2048 in half, so the tree in half loses both ones that an fp32 accumulator would keep."""
    x = np.zeros(128, half)
    x[:3] = [2048, 1, 1]
    z = counter_whole_sum(x, 128, "len")
    assert z[0] == 2048


def test_two_passes_like_the_reduce_sample():
    """ReduceRepeat<SUM, float, float, false>: 4096 floats to 64 repeat sums, then those 64 to one (Compute3)."""
    x = sample_data(float32, 4096, 5)
    part, out = np.zeros(4096, np.float32), np.zeros(32, np.float32)

    def body(src, tmp, z):
        SetMaskCount()
        SetVectorMask(0, 4096, dtype=float32)
        ReduceRepeat(ReduceType.SUM, tmp, src, MASK_PLACEHOLDER, 1, 1, 1, 8, isSetMask=False)
        SetVectorMask(0, 64, dtype=float32)
        ReduceRepeat(ReduceType.SUM, z, tmp, MASK_PLACEHOLDER, 1, 1, 1, 8, isSetMask=False)
        SetMaskNorm()
    run_on_ub(body, x, part, out, out=(1, 2))
    first = tree_model(x, 64)
    assert_same(part[:64], first)
    assert_same(out[:1], tree_model(first, 64))
    assert out[0] not in (np.sum(x, dtype=np.float32), np.cumsum(x, dtype=np.float32)[-1])    # other orders, other answers


def test_counter_mode_costs_the_repeats_the_count_makes():
    """Timing: a Counter count of k whole repeats costs what k Normal repeats of every lane cost."""
    x = sample_data(float32, 640, 4)

    def counter(src, z):
        SetMaskCount()
        SetVectorMask(640, dtype=float32, mode=MaskMode.COUNTER)
        WholeReduceSum(z, src, MASK_PLACEHOLDER, 1, 1, 1, 8, isSetMask=False)
        SetMaskNorm()

    def normal(src, z):
        SetMaskNorm()
        WholeReduceSum(z, src, 64, 10, 1, 1, 8)
        SetMaskNorm()

    cycles = []
    for body in (counter, normal):
        rec = [r for r in run_on_ub(body, x, np.zeros(16, np.float32)).trace.records if r.op == "WholeReduceSum"]
        assert len(rec) == 1
        cycles.append(rec[0].end - rec[0].start)
    assert cycles[0] == cycles[1]


# ============================================================================ WholeReduceMax / Min
@pytest.mark.parametrize("instr, pick", [(WholeReduceMax, np.argmax), (WholeReduceMin, np.argmin)],
                         ids=["Max", "Min"])
def test_counter_whole_reduce_max_min_value_and_lane(instr, pick):
    count, lanes = 300, 128                                   # two whole repeats and 44 lanes
    x = np.random.default_rng(5).integers(-1000, 1000, 384).astype(half)
    x[256 + 44:] = 5000 if pick is np.argmax else -5000       # past the count: must not win
    x[256 + 10] = x[256 + 30] = 3000 if pick is np.argmax else -3000   # a tie: the lower lane wins

    def body(src, z):
        SetMaskCount()
        SetVectorMask(count, dtype=half, mode=MaskMode.COUNTER)
        instr(z, src, MASK_PLACEHOLDER, 1, 1, 1, 8, ReduceOrder.ORDER_VALUE_INDEX, isSetMask=False)
        SetMaskNorm()
    z = vector_result(body, x, out_like=np.zeros(8, half))
    rows = [x[0:128], x[128:256], x[256:300]]
    lane = np.array([pick(r) for r in rows])
    assert lane[2] == 10
    expected = np.stack([[r[i] for r, i in zip(rows, lane)], lane.astype(np.uint16).view(half)], axis=1).reshape(-1)
    assert_same(z[:6], expected)


# ============================================================================ BlockReduce*, PairReduceSum
def block_model(x: np.ndarray, fn) -> np.ndarray:
    """Per 32-byte block of the count: a binary tree (blocks past the count are not written)."""
    epb = 32 // x.dtype.itemsize
    out = []
    for s in range(0, x.size, epb):
        level = list(x[s:s + epb])
        pad = 0 if fn is np.add else -np.inf
        level += [x.dtype.type(pad)] * (epb - len(level))
        while len(level) > 1:
            level = [x.dtype.type(fn(level[i], level[i + 1])) for i in range(0, len(level), 2)]
        out.append(level[0])
    return np.array(out, x.dtype)


@pytest.mark.parametrize("instr, fn", [(BlockReduceSum, np.add), (BlockReduceMax, np.maximum)], ids=["Sum", "Max"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_counter_block_reduce_writes_one_result_per_touched_block(dtype, instr, fn):
    """The reduce sample's Compute2: ReduceDataBlock of count elements, results contiguous (dstRepStride 1)."""
    count = 300
    epb = 32 // np.dtype(dtype).itemsize
    blocks = -(-count // epb)
    x = sample_data(dtype, 512, 6)

    def body(src, z):
        SetMaskCount()
        SetVectorMask(0, count, dtype=dtype)
        instr(z, src, 1, MASK_PLACEHOLDER, 1, 1, 8, isSetMask=False)
        SetMaskNorm()
    z = vector_result(body, x, out_like=np.full(64, 7, dtype))
    expected = np.full(64, 7, dtype)
    expected[:blocks] = block_model(x[:count], fn)
    assert_same(z, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_counter_pair_reduce_sum_halves_the_count(dtype):
    count = lanes_of(dtype) + 7                         # a whole repeat and a tail ending in a lone element
    x = sample_data(dtype, 512, 7)

    def body(src, z):
        SetMaskCount()
        SetVectorMask(count, dtype=dtype, mode=MaskMode.COUNTER)
        PairReduceSum(z, src, 1, MASK_PLACEHOLDER, 1, 1, 8, isSetMask=False)
        SetMaskNorm()
    z = vector_result(body, x, out_like=np.full(256, 7, dtype))
    padded = np.concatenate([x[:count], np.zeros(1, dtype)])
    expected = np.full(256, 7, dtype)
    expected[:(count + 1) // 2] = (padded[0::2] + padded[1::2]).astype(dtype)
    assert_same(z, expected)


# ============================================================================ errors
def test_counter_count_past_the_source_names_the_count_and_the_fix():
    def body(src, z):
        SetMaskCount()
        SetVectorMask(300, dtype=float32, mode=MaskMode.COUNTER)
        WholeReduceSum(z, src, MASK_PLACEHOLDER, 1, 1, 1, 8, isSetMask=False)   # <- count past src
    with raises_rule(OutOfBoundsError, "Counter mode the count 300 is 5 repeat(s) of 64 float lanes",
                     "reach src element 299 but src holds 256", "set a count of at most", at="<- count past src"):
        run_on_ub(body, np.zeros(256, np.float32), np.zeros(16, np.float32))


def test_counter_results_past_the_destination():
    def body(src, z):
        SetMaskCount()
        SetVectorMask(0, 1000, dtype=float32)
        WholeReduceSum(z, src, MASK_PLACEHOLDER, 1, 2, 1, 8, isSetMask=False)   # <- results past dst
    with raises_rule(OutOfBoundsError, "the count 1000 gives 16 repeat(s)", "one value per repeat at dstRepStride 2",
                     "dst element 30 but dst holds 16", at="<- results past dst"):
        run_on_ub(body, np.zeros(1024, np.float32), np.zeros(16, np.float32))


def test_counter_count_zero_reduces_nothing():
    def body(src, z):
        SetMaskCount()
        SetVectorMask(0, dtype=half, mode=MaskMode.COUNTER)
        WholeReduceSum(z, src, MASK_PLACEHOLDER, 1, 1, 1, 8, isSetMask=False)   # <- count 0
    with raises_rule(ArgumentError, "the Counter-mode count is 0", at="<- count 0"):
        run_on_ub(body, np.zeros(128, half), np.zeros(16, half))


def test_counter_mode_without_a_count():
    def body(src, z):
        SetMaskCount()
        ResetMask()
        BlockReduceSum(z, src, 1, MASK_PLACEHOLDER, 1, 1, 8, isSetMask=False)   # <- no count
    with raises_rule(ArgumentError, "Counter mode with the register at its reset value", at="<- no count"):
        run_on_ub(body, np.zeros(128, half), np.zeros(16, half))


def test_counter_mode_placeholder_needs_is_set_mask_false():
    def body(src, z):
        SetMaskCount()
        SetVectorMask(128, dtype=half, mode=MaskMode.COUNTER)
        WholeReduceSum(z, src, MASK_PLACEHOLDER, 1, 1, 1, 8)   # <- placeholder, isSetMask true
    with raises_rule(ArgumentError, "mask is MASK_PLACEHOLDER but isSetMask is True", at="<- placeholder"):
        run_on_ub(body, np.zeros(128, half), np.zeros(16, half))


# ============================================================================ ReduceSum, count form
def in_order_model(x: np.ndarray, lanes: int):
    """ReduceSum.md 方式一 (Atlas A2, tensor前n个数据计算): the per-repeat trees, then the repeat results added one
    after another from repeat 0, each add rounded to the dtype."""
    acc, *rest = tree_model(x, lanes)
    for v in rest:
        acc = x.dtype.type(acc + v)
    return acc


def count_form_wrong_orders(x: np.ndarray, lanes: int) -> list:
    """The old code (an fp32 sum rounded once), 方式二 (a tree over the repeat results too: the mask/repeat form's
    order), and a running sum of every element in the dtype."""
    tree_of_repeats = tree_model(tree_model(x, lanes), lanes)[0]
    running = x.dtype.type(0)
    for v in x:
        running = x.dtype.type(running + v)
    return [np.sum(x, dtype=np.float32).astype(x.dtype), tree_of_repeats, running]


def reduce_sum(x: np.ndarray, count: int) -> np.ndarray:
    """``ReduceSum(z, src, work, count)`` into a dst of 16 sevens (only z[0] may change)."""
    return vector_result(lambda src, w, z: ReduceSum(z, src, w, count), x, np.zeros(x.size, x.dtype),
                         out_like=np.full(16, 7, x.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_sum_count_form_adds_the_repeat_trees_in_order(dtype):
    lanes = lanes_of(dtype)
    told_apart = [False, False, False]
    for count in COUNTS[np.dtype(dtype)] + (4000,):
        x = sample_data(dtype, 4096, count)
        expected = in_order_model(x[:count], lanes)
        told_apart = [seen or expected != wrong
                      for seen, wrong in zip(told_apart, count_form_wrong_orders(x[:count], lanes))]
        assert_same(reduce_sum(x, count), np.concatenate([[expected], np.full(15, 7)]).astype(dtype))
    assert all(told_apart)          # the data tells the documented order from all three wrong ones


@pytest.mark.parametrize("dtype, big", [(half, 2048), (float32, 2 ** 24)], ids=["half", "float"])
def test_reduce_sum_count_form_three_orders_three_answers(dtype, big):
    """Four repeats whose sums are big, 1, 1, 1 (1 is half the spacing at big, a tie that rounds to big): in order
    big + 1 + 1 + 1 stays big; a tree of the repeats gives big + 2; one rounding of the exact big + 3 gives big + 4."""
    lanes = lanes_of(dtype)
    x = np.zeros(4 * lanes, dtype)
    x[::lanes] = [big, 1, 1, 1]
    once = x.dtype.type(np.sum(x, dtype=np.float64))             # the exact sum, rounded once
    tree_of_repeats = count_form_wrong_orders(x, lanes)[1]
    assert [in_order_model(x, lanes), tree_of_repeats, once] == [big, big + 2, big + 4]
    assert reduce_sum(x, x.size)[0] == big


@pytest.mark.parametrize("instr", [ReduceMax, ReduceMin], ids=["ReduceMax", "ReduceMin"])
def test_reduce_max_min_count_form_ties_give_the_smallest_index(instr):
    """"如果存在多个最大值，该指令会将最小索引写入目的操作数" (ReduceMax.md, ReduceMin.md): the extreme sits in three
    repeats, the index is its first place; the value is exact in any order."""
    x = sample_data(half, 512, 5)
    extreme = 99.0 if instr is ReduceMax else -99.0    # sample_data stays inside +-32
    x[[300, 130, 400]] = extreme
    z = vector_result(lambda src, w, z: instr(z, src, w, 500, True), x, np.zeros(512, half),
                      out_like=np.zeros(16, half))
    assert z[0] == extreme and int(z[1:2].view(np.uint16)[0]) == 130


# ============================================================================ ReduceSum/Max/Min, mask/repeat form
def tree_of_trees_model(rows: list[np.ndarray], lanes: int):
    """ReduceSum.md 方式二: each repeat's selected values as a tree (tree_model), then the repeat results as a tree."""
    per_repeat = np.concatenate([tree_model(r, lanes) for r in rows])
    return tree_model(per_repeat, 1 << (per_repeat.size - 1).bit_length())[0]


def masked_rows(x: np.ndarray, lanes: int, mask: int, repeat: int, rep_stride: int) -> list[np.ndarray]:
    """The first ``mask`` lanes of each repeat, repeats ``rep_stride`` DataBlocks apart."""
    step = rep_stride * 32 // x.dtype.itemsize
    return [x[r * step:r * step + mask] for r in range(repeat)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_sum_mask_form_is_a_tree_of_the_repeat_trees(dtype):
    lanes = lanes_of(dtype)
    told_apart = [False, False, False]
    for mask, repeat, stride in [(lanes, 40, 8), (lanes - 9, 5, 10), (lanes // 2 + 1, 3, 9), (lanes - 1, 33, 8)]:
        x = sample_data(dtype, repeat * stride * 32 // np.dtype(dtype).itemsize, mask + repeat)
        rows = masked_rows(x, lanes, mask, repeat, stride)
        expected = tree_of_trees_model(rows, lanes)
        picked = np.concatenate(rows)
        in_order = in_order_model(picked, lanes) if mask == lanes else expected
        wrong = [np.sum(picked, dtype=np.float32).astype(dtype), in_order, count_form_wrong_orders(picked, lanes)[2]]
        told_apart = [seen or expected != w for seen, w in zip(told_apart, wrong)]
        z = vector_result(lambda src, w, z: ReduceSum(z, src, w, mask, repeat, stride), x, np.zeros(x.size, dtype),
                          out_like=np.full(16, 7, dtype))
        assert_same(z, np.concatenate([[expected], np.full(15, 7)]).astype(dtype))
    assert all(told_apart)          # fp32 once, in order (方式一) and a running sum each differ somewhere


@pytest.mark.parametrize("instr, extreme", [(ReduceMax, 99.0), (ReduceMin, -99.0)], ids=["ReduceMax", "ReduceMin"])
def test_reduce_max_min_mask_form_index_is_repeat_times_lanes_plus_lane(instr, extreme):
    """"根据迭代位置和repeat内部索引推导全量数据的最大值索引" (ReduceMax.md): repeat 1 lane 3 -> 1 * 128 + 3 = 131 (its
    element offset is 163 with srcRepStride 10); the same extreme in repeat 3 loses (the smallest index); lanes past
    the mask (lane 100 of repeat 0) do not take part."""
    x = sample_data(half, 4 * 160, 9)
    x[160 + 3] = x[3 * 160] = extreme
    x[100] = 2 * extreme
    z = vector_result(lambda src, w, z: instr(z, src, w, 64, 4, 10, True), x, np.zeros(x.size, half),
                      out_like=np.zeros(16, half))
    assert z[0] == extreme and int(z[1:2].view(np.uint16)[0]) == 131


def test_reduce_mask_form_repeat_time_zero_is_a_nop():
    """"当参数count或repeatTime取值为0时，不会执行计算操作，不会对目的操作数进行写入" (Atlas A2)."""
    z = vector_result(lambda src, w, z: ReduceSum(z, src, w, 128, 0, 8), np.ones(128, half), np.zeros(128, half),
                      out_like=np.full(16, 7, half))
    assert_same(z, np.full(16, 7, half))


def test_reduce_max_half_index_past_65535_is_refused():
    def body(src, z):
        ReduceMax(z, src, src, 128, 513, 8, True)               # <- 65664 lanes
    with raises_rule(ArgumentError, "reach index 65663", "65535", at="<- 65664 lanes"):
        run_on_ub(body, np.zeros(513 * 128, half), np.zeros(16, half))

    def count_form(n):
        return lambda src, z: ReduceMin(z, src, src, n, True)  # <- count form
    run_on_ub(count_form(65536), np.zeros(65537, half), np.zeros(16, half))      # index 65535 at most: fine
    with raises_rule(ArgumentError, "reach index 65536", at="<- count form"):
        run_on_ub(count_form(65537), np.zeros(65537, half), np.zeros(16, half))


# ============================================================================ GetReduceRepeatSumSpr
@pytest.mark.parametrize("dtype", DTYPES)
def test_get_reduce_repeat_sum_spr_returns_the_last_count_form_sum(dtype):
    x = sample_data(dtype, 1000, 3)

    def body(src, w, z):
        ReduceSum(z, src, w, 1000)
        ReduceSum(z[8:], src, w, lanes_of(dtype), 2, 8)         # the mask/repeat form leaves the register alone
        SetFlag(HardEvent.V_S, 0)                               # as the reduce_computation sample: V before S
        WaitFlag(HardEvent.V_S, 0)
        z.SetValue(1, GetReduceRepeatSumSpr(dtype))
        SetFlag(HardEvent.S_MTE3, 0)                            # the scalar write before the copy-out
        WaitFlag(HardEvent.S_MTE3, 0)
    z = vector_result(body, x, np.zeros(1000, dtype), out_like=np.zeros(16, dtype))
    assert z[0] == z[1] == in_order_model(x, lanes_of(dtype))


def test_get_reduce_repeat_sum_spr_needs_a_count_form_reduce_sum_before():
    def body(src, w, z):
        ReduceSum(z, src, w, 128, 1, 8)
        z.SetValue(1, GetReduceRepeatSumSpr(half))              # <- nothing summed in the count form
    with raises_rule(ArgumentError, "no count-form ReduceSum ran on this core", at="<- nothing summed"):
        run_on_ub(body, np.ones(128, half), np.zeros(128, half), np.zeros(16, half))


def test_get_reduce_repeat_sum_spr_reads_the_dtype_summed():
    def body(src, w, z):
        ReduceSum(z, src, w, 128)
        GetReduceRepeatSumSpr(float32)                          # <- half was summed
    with raises_rule(DtypeError, "the last ReduceSum summed half", at="<- half was summed"):
        run_on_ub(body, np.ones(128, half), np.zeros(128, half), np.zeros(16, half))
