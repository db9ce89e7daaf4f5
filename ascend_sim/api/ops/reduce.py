"""Reductions inside a repeat (归约计算): BlockReduceSum/Max/Min (one result per 32-byte DataBlock) and
PairReduceSum (one per pair of adjacent elements).

From the ReduceDataBlock page (the new name of BlockReduce*, same semantics, mask and repeatTime swapped):
"每个迭代会取出8个DataBlock ... 进行计算，输出结果会连续写入目的地址"; dstRepStride counts one repeat's
results (16 bytes for half, 32 for float); the sum is a binary tree ("接口以二叉树的形式计算每个DataBlock内的
结果"), so each pairwise add rounds in the dtype; "若配置mask参数后，存在某个DataBlock里的任何一个元素都不参与
计算，不会有值写入对应目的操作数" (A2). From ReducePairElem: dstRepStride counts 128 bytes; a pair whose two
mask bits are 0 is not written (A2). half and float on Atlas A2; mask or repeatTime 0 is a no-op.
"""
from __future__ import annotations

import enum

import numpy as np

from ascend_sim.api.checks import integer, member
from ascend_sim.api.ops.reduce_rows import binary_tree, check_counter_dst
from ascend_sim.api.ops.dtype_table import allowed
from ascend_sim.api.ops.vector import (Access, ReduceOrder, WholeReduceMax, WholeReduceMin, WholeReduceSum,
                                       issue, reduce_lanes, require_dtype, same_dtype, ub_operand)
from ascend_sim.engine import context
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, kernel_point

_TYPES = allowed("ReduceSum")           # every reduction of this module: half, float (dtype_table.py)
MAX_STRIDE16 = 2**16 - 1        # these reductions' strides: [0, 2^16 - 1]


_IDENTITY = {"Sum": 0.0, "Max": -np.inf, "Min": np.inf}
_FN = {"Sum": np.add, "Max": np.maximum, "Min": np.minimum}


def _operands(op: str, dst, src, repeatTime, mask, strides, isSetMask, site):
    """Check the operands; (repeats, ``on[repeats, lanes]``: the lanes each repeat reads, the src access of those
    lanes in order, dstRepStride) in Normal or Counter mode (reduce_rows.py)."""
    ub_operand(dst, op, "dst", site, align=16 if getattr(dst, "dtype", None) == np.float16 else 32)
    ub_operand(src, op, "src", site)
    same_dtype(op, site, dst, src)
    require_dtype(op, dst, _TYPES, site)
    d_rep, blk, rep = (integer(op, n, v, site, 0, MAX_STRIDE16) for n, v in
                       zip(("dstRepStride", "srcBlkStride", "srcRepStride"), strides))
    lanes, a = reduce_lanes(op, current_core(), src, mask, repeatTime, isSetMask, blk, rep, site)
    return lanes, a, d_rep


def _dst_positions(op: str, dst, lanes, written: np.ndarray, per_repeat: int, d_rep: int, site) -> np.ndarray:
    """The dst element of each written result: repeat i's results from ``i * d_rep * per_repeat`` on."""
    r = lanes.repeats
    pos = (np.arange(r)[:, None] * d_rep * per_repeat + np.arange(per_repeat)[None, :])[written]
    if lanes.key is None and pos.size:              # Counter mode: the count decides how far dst is written
        check_counter_dst(op, dst, lanes.selected, r, f"{per_repeat} results per repeat at dstRepStride {d_rep}",
                          int(pos.max()), site)
    return pos


def _block(kind: str):
    op = f"BlockReduce{kind}"

    def instr(dst, src, repeatTime: int, mask, dstRepStride: int = 1, srcBlkStride: int = 1, srcRepStride: int = 8,
              *, isSetMask: bool = True) -> None:
        site = kernel_point()
        lanes, a, d_rep = _operands(op, dst, src, repeatTime, mask, (dstRepStride, srcBlkStride, srcRepStride),
                                    isSetMask, site)
        r, on = lanes.repeats, lanes.on
        epb = 32 // src.dtype.itemsize
        written = on.reshape(r, 8, epb).any(axis=2)         # a block with no lane selected is not written
        if not written.any():
            return                                          # mask, count or repeatTime 0: a no-op
        d = Access(dst, _dst_positions(op, dst, lanes, written, 8, d_rep, site), op, site)
        issue(op, "reduction", d, [a], r, site)
        if not context.computing():      # launch(..., numerics=False): timing only
            return
        vals = np.full(on.shape, _IDENTITY[kind], src.dtype)
        vals[on] = a.get()
        out = binary_tree(vals.reshape(r, 8, epb), _FN[kind])
        d.put(out[written])
    instr.__name__ = op
    instr.__doc__ = (f"``{op}(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)``: the "
                     f"{kind.lower()} of each 32-byte block of each repeat, 8 results per repeat.")
    return instr


BlockReduceSum = _block("Sum")
BlockReduceMax = _block("Max")
BlockReduceMin = _block("Min")


def PairReduceSum(dst, src, repeatTime: int, mask, dstRepStride: int = 1, srcBlkStride: int = 1,
                  srcRepStride: int = 8, *, isSetMask: bool = True) -> None:
    """``PairReduceSum(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)``: the sum of each
    pair of adjacent lanes, 128 bytes of results per repeat."""
    op = "PairReduceSum"
    site = kernel_point()
    lanes, a, d_rep = _operands(op, dst, src, repeatTime, mask, (dstRepStride, srcBlkStride, srcRepStride),
                                isSetMask, site)
    r, on = lanes.repeats, lanes.on
    half_lanes = on.shape[1] // 2
    written = on.reshape(r, half_lanes, 2).any(axis=2)      # a pair with both bits 0 is not written
    if not written.any():
        return
    d = Access(dst, _dst_positions(op, dst, lanes, written, half_lanes, d_rep, site), op, site)
    issue(op, "reduction", d, [a], r, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    vals = np.zeros(on.shape, src.dtype)
    vals[on] = a.get()
    pairs = np.add(vals[:, 0::2], vals[:, 1::2]).astype(src.dtype)
    d.put(pairs[written])


class ReduceType(enum.Enum):
    """``ReduceType``: the template parameter of the unified reductions (the new names of the pages)."""

    SUM = 0
    MAX = 1
    MIN = 2


_BLOCK = {ReduceType.SUM: BlockReduceSum, ReduceType.MAX: BlockReduceMax, ReduceType.MIN: BlockReduceMin}
_WHOLE = {ReduceType.SUM: WholeReduceSum, ReduceType.MAX: WholeReduceMax, ReduceType.MIN: WholeReduceMin}


def ReduceDataBlock(reduceType: ReduceType, dst, src, mask, repeatTime: int, dstRepStride: int = 1,
                    srcBlkStride: int = 1, srcRepStride: int = 8, *, isSetMask: bool = True) -> None:
    """``ReduceDataBlock<reduceType, T>(dst, src, mask, repeatTime, ...)``: BlockReduce* with mask before repeatTime."""
    member("ReduceDataBlock", "reduceType", reduceType, ReduceType, kernel_point())
    _BLOCK[reduceType](dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, isSetMask=isSetMask)


def ReducePairElem(reduceType: ReduceType, dst, src, mask, repeatTime: int, dstRepStride: int = 1,
                   srcBlkStride: int = 1, srcRepStride: int = 8, *, isSetMask: bool = True) -> None:
    """``ReducePairElem<ReduceType::SUM, T>(dst, src, mask, repeatTime, ...)``: PairReduceSum, mask first."""
    site = kernel_point()
    member("ReducePairElem", "reduceType", reduceType, ReduceType, site)
    if reduceType is not ReduceType.SUM:
        raise ArgumentError(f"ReducePairElem supports ReduceType.SUM only, got {reduceType.name}",
                            fix="pair sums: ReduceType.SUM", site=site)
    PairReduceSum(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, isSetMask=isSetMask)


def ReduceRepeat(reduceType: ReduceType, dst, src, mask, repeatTime: int, dstRepStride: int = 1,
                 srcBlkStride: int = 1, srcRepStride: int = 8, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX,
                 *, isSetMask: bool = True) -> None:
    """``ReduceRepeat<reduceType, T>(dst, src, mask, repeatTime, ...)``: WholeReduceSum/Max/Min."""
    member("ReduceRepeat", "reduceType", reduceType, ReduceType, kernel_point())
    extra = () if reduceType is ReduceType.SUM else (order,)
    _WHOLE[reduceType](dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, *extra,
                       isSetMask=isSetMask)


__all__ = ["BlockReduceSum", "BlockReduceMax", "BlockReduceMin", "PairReduceSum", "ReduceType", "ReduceDataBlock",
           "ReducePairElem", "ReduceRepeat"]
