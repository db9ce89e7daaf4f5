"""Which lanes each repeat of a repeat-form reduction reduces, and the documented order it adds them in.

The failure this exists to prevent: a reduction under ``SetMaskCount()`` that reduces a different set of
elements, or sums them in a different order, than the chip, and so gives another answer in the last bits.

Lanes. Normal mode: the mask selects the same lanes of every one of ``repeatTime`` repeats. Counter mode
(SetMaskCount): "Mask寄存器中的值只有低64bit有效，被当做参与计算的元素数量。同时高维切分矢量计算接口的repeatTime
参数会被忽略，由系统内部根据元素数量自动计算" (asc-devkit docs/zh/api, SIMD计算说明/掩码/接口外设置Mask.md,
"高维切分：连续计算"): ``count`` elements are ``ceil(count / lanes)`` repeats, every lane of each but the last,
whose first ``count mod lanes`` lanes (all of them when it divides) take part.

Order. "归约操作类型取SUM时接口以二叉树累加的方式完成每个repeat内的求和" (ReduceRepeat.md, 关键特性说明), and the tree
is the one ReduceDataBlock.md draws: neighbours added two by two, "data1和data2相加得到data01 ... 以此类推". Every add
is an add of the instruction's dtype (half adds round to half). Not stated on the pages, so chosen here: a lane the
mask leaves out enters the tree as +0 (the only difference from skipping it: a sum of -0.0 lanes alone is +0.0).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ascend_sim.api.ops.mask import counter_count, lane_mask, normal_key
from ascend_sim.engine.errors import ArgumentError, OutOfBoundsError
from ascend_sim.hw.dtypes import ascend_name


def binary_tree(v: np.ndarray, fn) -> np.ndarray:
    """Reduce the last axis (a power of two) by neighbour pairs, rounding in the dtype at every level."""
    while v.shape[-1] > 1:
        v = fn(v[..., 0::2], v[..., 1::2]).astype(v.dtype)
    return v[..., 0]


def tree_sum(rows: np.ndarray, on: np.ndarray) -> np.ndarray:
    """Each repeat's sum: its selected values (``rows``, in lane order) at their lanes ``on[r, lanes]``, the other
    lanes +0, added as a binary tree in the dtype."""
    full = np.zeros(on.shape, rows.dtype)
    full[on] = rows.reshape(-1)
    return binary_tree(full, np.add)


def count_lanes(n: int, lanes: int) -> np.ndarray:
    """``on[repeats, lanes]`` of ``n`` elements in whole repeats: every lane of each but the last, its first
    ``n mod lanes`` (all when it divides)."""
    on = np.ones((-(-n // lanes), lanes), bool)
    if n % lanes:
        on[-1, n % lanes:] = False
    return on


def count_sum(vals: np.ndarray):
    """ReduceSum's count form (tensor前n个数据计算) on Atlas A2, "方式一" of the ReduceSum page (关键特性说明):
    "同一repeat内采用二叉树累加，不同repeat的结果按顺序累加". ``vals`` (the ``count`` elements, in order) fill
    ``ceil(count / lanes)`` repeats of 256 bytes; each repeat is the tree of ``tree_sum`` (the last one's missing
    lanes +0), and the repeat results are then added one after another from repeat 0, every add rounding in
    ``vals.dtype`` (the page names no wider accumulator: chosen here, docs/api_mapping.md)."""
    acc, *rest = tree_sum(vals, count_lanes(vals.size, 256 // vals.dtype.itemsize))
    for x in rest:
        acc = (acc + x).astype(vals.dtype)      # a numpy scalar add of the dtype, rounded to it
    return acc


def repeat_tree_sum(vals: np.ndarray, on: np.ndarray):
    """ReduceSum's mask/repeat form (tensor高维切分计算) on Atlas A2, "方式二": "同一repeat内采用二叉树累加，不同repeat的
    结果也按二叉树累加". The repeat results (``tree_sum``) are padded with +0 to a power of two and added as the same
    neighbour-pair tree: the page's second rounds (its sharedTmpBuffer holds one result per repeat, reduced again
    by whole repeats) are that tree, as +0 changes no sum."""
    per = tree_sum(vals, on)
    full = np.zeros(1 << (per.size - 1).bit_length(), per.dtype)
    full[:per.size] = per
    return binary_tree(full, np.add)


def overall_extreme(vals: np.ndarray, on: np.ndarray, pick) -> tuple:
    """ReduceMax/ReduceMin of every selected lane of every repeat: (value, index). Each repeat gives its extreme
    and lane (``extremes``), the repeats' extremes are compared again, and "每次repeat迭代获取的最大值索引是repeat
    内部索引 ... 根据迭代位置和repeat内部索引推导全量数据的最大值索引" (ReduceMax.md): the index is repeat *
    lanes + lane; "如果存在多个最大值，该指令会将最小索引写入目的操作数": the first repeat holding it."""
    value, lane = extremes(vals, on, pick)
    picked = on.any(axis=1)
    best = pick(value[picked])
    hit = picked & ((value == best) | (np.isnan(value) & np.isnan(best)))
    r = int(hit.argmax())
    return best, r * on.shape[1] + int(lane[r])


class Lanes(NamedTuple):
    """The lanes of a repeat-form reduction: ``on[repeats, lanes]``, the Normal-mode mask key (None in Counter
    mode), and ``selected``: the lanes of one repeat (Normal) or the element count (Counter)."""

    repeats: int
    on: np.ndarray
    key: object
    selected: int


def repeat_lanes(op: str, core, mask, src, repeats: int, set_mask: bool, blk: int, rep: int, site) -> Lanes:
    """The lanes each repeat reads in the mask register's current mode.

    ``repeats`` is the checked repeatTime argument; Counter mode ignores it and derives the repeats from the count,
    which must keep the source pattern (strides ``blk``, ``rep``) inside ``src``.
    """
    itemsize = src.dtype.itemsize
    lanes = 256 // itemsize
    if not core.vmode:
        key = normal_key(op, core, mask, itemsize, set_mask, site)
        one = lane_mask(key, lanes)
        return Lanes(repeats, np.broadcast_to(one, (repeats, lanes)), key, int(one.sum()))
    n = counter_count(op, core, mask, itemsize, set_mask, site)
    check_counter_src(op, src, n, blk, rep, site)
    r = -(-n // lanes)
    on = np.ones((r, lanes), bool)
    if r and n % lanes:
        on[-1, n % lanes:] = False
    return Lanes(r, on, None, n)


def counter_reach(itemsize: int, n: int, blk: int, rep: int) -> int:
    """Counter mode: the largest src element offset ``n`` elements reach (repeat and block strides in 32 bytes)."""
    epb, lanes = 32 // itemsize, 256 // itemsize
    r = -(-n // lanes)
    last = n - (r - 1) * lanes                      # lanes of the last repeat, 1..lanes

    def top(repeat: int, k: int) -> int:           # the highest offset of lanes 0..k-1 of one repeat
        lane = ((k - 1) // epb) * blk * epb + (k - 1) % epb if blk else min(k, epb) - 1
        return repeat * rep * epb + lane
    return max(top(r - 1, last), top(r - 2, lanes) if r > 1 else -1)


def check_counter_src(op: str, src, n: int, blk: int, rep: int, site) -> None:
    """A Counter-mode count must stay inside ``src`` (checked before any index array is built)."""
    if not n:
        return
    lanes = 256 // src.dtype.itemsize
    top = counter_reach(src.dtype.itemsize, n, blk, rep)
    if top >= src.size:
        r = -(-n // lanes)
        raise OutOfBoundsError(
            f"{op}: in Counter mode the count {n} is {r} repeat(s) of {lanes} {ascend_name(src.dtype)} lanes "
            f"(srcBlkStride {blk}, srcRepStride {rep}); they reach src element {top} but src holds {src.size}",
            fix="set a count of at most the elements src holds («SetVectorMask(count, mode=MaskMode.COUNTER)|"
                "SetVectorMask<T, MaskMode::COUNTER>(count)»), or a larger src", site=site)


def check_counter_dst(op: str, dst, n: int, r: int, per_repeat: str, top: int, site) -> None:
    """The results of a Counter-mode count must fit ``dst``: ``top`` is the last dst element they write."""
    if r and top >= dst.size:
        raise OutOfBoundsError(
            f"{op}: in Counter mode the count {n} gives {r} repeat(s), so {per_repeat}; the last lands at dst "
            f"element {top} but dst holds {dst.size} {ascend_name(dst.dtype)} elements",
            fix=f"make dst hold element {top} (a larger buffer), or lower the count or dstRepStride", site=site)


def no_elements(op: str, core, selected: int, site) -> None:
    """WholeReduce*: a mask with no lane (Normal) or a count of 0 (Counter) reduces nothing."""
    if selected:
        return
    if core.vmode:
        raise ArgumentError(f"{op}: the Counter-mode count is 0, so there is nothing to reduce",
                            fix="set the element count with «SetVectorMask(count, mode=MaskMode.COUNTER)|"
                                "SetVectorMask<T, MaskMode::COUNTER>(count)», count >= 1", site=site)
    raise ArgumentError(f"{op}: the mask selects no lane, so there is nothing to reduce",
                        fix="set at least one bit of the mask", site=site)


def extremes(vals: np.ndarray, on: np.ndarray, pick) -> tuple[np.ndarray, np.ndarray]:
    """WholeReduceMax/Min: each repeat's extreme (``pick``: np.max or np.min) of its selected values and the lane
    of its first occurrence ("如果存在多个最值，该指令会将最小索引写入目的操作数", ReduceRepeat.md); NaN wins, as
    in numpy."""
    pad = -np.inf if pick is np.max else np.inf
    full = np.full(on.shape, pad, vals.dtype)
    full[on] = vals.reshape(-1)
    value = pick(full, axis=1)
    hit = on & ((full == value[:, None]) | (np.isnan(full) & np.isnan(value)[:, None]))
    return value, hit.argmax(axis=1)
