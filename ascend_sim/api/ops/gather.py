"""Gather (by byte offsets) and GatherMask (by a bit pattern) (离散与聚合 / 比较与选择).

Gather page: dst[i] = the element at byte ``srcBaseAddr + srcOffset[i]`` from the start of ``src``; the offsets
are uint32 byte offsets "取值应保证src元素类型位宽对齐" (a misaligned offset is an error here: on the device the
data shifts silently); count form and mask/repeat form (8 blocks per repeat on A2, ``dstRepStride`` in blocks).

GatherMask page: the set bits of a pattern pick elements of ``src0`` and pack them into ``dst``; ``rsvdCnt``
(returned here, an output reference in C++) is how many. Built-in patterns 1-7 ("1: 每个repeat取偶数索引元素",
2 odd, 3-6 the 1st..4th of every 4, 7 all) are the same in every repeat; a user pattern tensor (uint16 for
2-byte data, uint32 for 4-byte) is consumed bit by bit inside a repeat, ``src1RepeatStride`` blocks between
repeats. reduceMode False: each repeat takes 256 bytes, ``repeatTimes`` repeats, mask unused; True (Counter,
A2 "配置方式一"): each repeat takes ``mask`` elements. "接口内部执行结束后会设置为Normal模式".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.api.checks import check_fields, field_spec, integer
from ascend_sim.api.ops.mask import lane_mask, normal_key
from ascend_sim.api.ops.dtype_table import allowed
from ascend_sim.api.ops.vector import (Access, check_repeat, issue, require_dtype, same_dtype,
                                       ub_operand)
from ascend_sim.api.tensor import LocalTensor
from ascend_sim.engine import timing
from ascend_sim.engine import context
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import AlignmentError, ArgumentError, DtypeError, OutOfBoundsError, kernel_point
from ascend_sim.hw.dtypes import ascend_name

_TYPES = allowed("Gather")          # A2, both pages (dtype_table.py)


# ----------------------------------------------------------------------------- Gather
def Gather(dst, src, srcOffset, srcBaseAddr: int, *args) -> None:
    """``Gather(dst, src, srcOffset, srcBaseAddr, count)`` or ``(..., mask, repeatTime, dstRepStride)``."""
    op = "Gather"
    site = kernel_point()
    ub_operand(dst, op, "dst", site)
    ub_operand(src, op, "src", site)
    ub_operand(srcOffset, op, "srcOffset", site)
    same_dtype(op, site, dst, src)
    require_dtype(op, dst, _TYPES, site)
    if srcOffset.dtype != np.uint32:
        raise DtypeError(f"Gather: srcOffset holds {ascend_name(srcOffset.dtype)}, but it is a LocalTensor<uint32_t> "
                         "of byte offsets", fix="build the offsets as uint32 bytes (index * sizeof(T))", site=site)
    if dst.tier is src.tier and dst.addr == src.addr:
        raise ArgumentError("Gather: src and dst are the same memory, which the Gather page does not allow",
                            fix="gather into another buffer", site=site)
    base = integer(op, "srcBaseAddr", srcBaseAddr, site, 0, 2**32 - 1)
    isz = dst.dtype.itemsize
    lanes = 256 // isz
    if len(args) == 1:
        n = integer(op, "count", args[0], site, 0, min(dst.size, srcOffset.size),
                    fix="count is at most the elements dst and srcOffset hold")
        d_pos, o_pos, reps = n, n, timing.vector_repeats(n, isz)
    elif len(args) == 3:
        mask, repeat, dst_rep = args
        key = normal_key(op, current_core(), mask, isz, True, site)
        r = check_repeat(op, repeat, site, current_core().chip.vec_max_repeat)
        dst_rep = integer(op, "dstRepStride", dst_rep, site, 0, 2**16 - 1)
        on = np.flatnonzero(lane_mask(key, lanes))
        d_pos = (np.arange(r)[:, None] * dst_rep * (32 // isz) + on[None, :]).reshape(-1)
        o_pos = (np.arange(r)[:, None] * lanes + on[None, :]).reshape(-1)
        reps = max(r, 1)
    else:
        raise ArgumentError("Gather: pass a count, or mask, repeatTime and dstRepStride",
                            fix="Gather(dst, src, srcOffset, srcBaseAddr, count)", site=site)
    _data_dependent(op, "srcOffset", site)
    o = Access(srcOffset, o_pos, op, site)
    offsets = o.get().astype(np.int64) + base              # read before the instruction: they decide what it reads
    bad = np.flatnonzero(offsets % isz)
    if bad.size:
        i = int(bad[0])
        raise AlignmentError(f"Gather: srcBaseAddr + srcOffset[{i}] = {int(offsets[i])} bytes is not a multiple of "
                             f"sizeof({ascend_name(dst.dtype)}) = {isz}",
                             fix=f"offsets are bytes: element index * {isz}", site=site)
    out = np.flatnonzero((offsets < 0) | (offsets + isz > src.nbytes))
    if out.size:
        i = int(out[0])
        raise OutOfBoundsError(f"Gather: offset {int(offsets[i])} bytes (element {i}) is past src's {src.nbytes} bytes "
                               f"({src.size} {ascend_name(src.dtype)} elements)",
                               fix="keep every srcBaseAddr + srcOffset[i] inside src", site=site)
    a = Access(src, offsets // isz, op, site)
    d = Access(dst, d_pos, op, site)
    issue(op, "simple", d, [a, o], reps, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d.put(a.get())


def _data_dependent(op: str, what: str, site) -> None:
    """numerics=False skips the values that would decide this instruction's addresses: refuse, do not guess."""
    if not context.computing():
        raise ArgumentError(f"{op} under launch(..., numerics=False): its {what} comes from data the timing-only "
                            "launch does not compute, so its addresses (and the trace) would be wrong",
                            fix="time kernels with data-dependent addressing with numerics on", site=site)


# ----------------------------------------------------------------------------- GatherMask
@dataclass
class GatherMaskParams:
    """``GatherMaskParams{src0BlockStride, repeatTimes, src0RepeatStride, src1RepeatStride}`` (C++ field order)."""

    src0BlockStride: int = 1
    repeatTimes: int = 1
    src0RepeatStride: int = 8
    src1RepeatStride: int = 8

    def __post_init__(self):
        check_fields(self, _GM_SPEC)


_GM_SPEC = field_spec(src0BlockStride="uint8_t", repeatTimes="uint16_t", src0RepeatStride="uint16_t",
                      src1RepeatStride="uint8_t")       # kernel_struct_gather.h


_PATTERNS = {1: (1, 0), 2: (1, 1), 3: (3, 0), 4: (3, 1), 5: (3, 2), 6: (3, 3)}     # (period - 1 mask, phase)


def _builtin(pattern: int, n: int) -> np.ndarray:
    """Built-in pattern ``pattern`` over the ``n`` elements of one repeat (7: all of them)."""
    if pattern == 7:
        return np.ones(n, bool)
    period, phase = _PATTERNS[pattern]
    return (np.arange(n) & period) == phase


def GatherMask(dst, src0, src1Pattern, reduceMode: bool, mask: int, gatherMaskParams: GatherMaskParams,
               rsvdCnt=None) -> int:
    """``GatherMask(dst, src0, src1Pattern, reduceMode, mask, GatherMaskParams)``: returns rsvdCnt, the count kept."""
    op = "GatherMask"
    site = kernel_point()
    core = current_core()
    ub_operand(dst, op, "dst", site)
    ub_operand(src0, op, "src0", site)
    same_dtype(op, site, dst, src0)
    require_dtype(op, dst, _TYPES, site)
    p = gatherMaskParams
    if not isinstance(p, GatherMaskParams):
        raise ArgumentError(f"GatherMask takes a GatherMaskParams, got {type(p).__name__}",
                            fix="«GatherMaskParams(src0BlockStride, repeatTimes, src0RepeatStride, src1RepeatStride)»",
                            site=site)
    if reduceMode.__class__ is not bool:
        raise ArgumentError(f"GatherMask: reduceMode must be «True» (Counter) or «False» (Normal), got {reduceMode!r}",
                            fix="pass «False» to gather whole 256-byte repeats", site=site)
    isz = dst.dtype.itemsize
    epb = 32 // isz
    r = check_repeat(op, p.repeatTimes, site, core.chip.vec_max_repeat)
    blk, rep, prep = (integer(op, n, getattr(p, n), site, 0, 2**16 - 1)
                      for n in ("src0BlockStride", "src0RepeatStride", "src1RepeatStride"))
    per = integer(op, "mask", mask, site, 1, 2**32 - 1, fix="in Counter mode mask is the elements per repeat") \
        if reduceMode else 256 // isz
    e = np.arange(per)
    idx = (np.arange(r)[:, None] * rep * epb + (e // epb * blk * epb + e % epb)[None, :])      # (r, per)
    reads = []
    if isinstance(src1Pattern, LocalTensor):
        ub_operand(src1Pattern, op, "src1Pattern", site)
        _data_dependent(op, "src1Pattern tensor", site)
        want = np.dtype(np.uint16) if isz == 2 else np.dtype(np.uint32)
        if src1Pattern.dtype != want:
            raise DtypeError(f"GatherMask: a user pattern for {ascend_name(dst.dtype)} data is a LocalTensor<"
                             f"{ascend_name(want)}>, got {ascend_name(src1Pattern.dtype)}",
                             fix=f"allocate the pattern as {ascend_name(want)}", site=site)
        nbytes = -(-per // 8)
        bpos = (np.arange(r)[:, None] * prep * 32 + np.arange(nbytes)[None, :]).reshape(-1)
        pat = Access(src1Pattern.ReinterpretCast(np.uint8), bpos, op, site)
        reads.append(pat)
        keep = np.unpackbits(pat.get().reshape(r, nbytes), axis=1, bitorder="little")[:, :per].astype(bool)
    else:
        pattern = integer(op, "src1Pattern (a built-in pattern)", src1Pattern, site, 1, 7,
                          fix="built-in patterns are 1..7 (1 even, 2 odd, 3-6 one of every 4, 7 all), or pass a "
                              "pattern tensor")
        keep = np.broadcast_to(_builtin(pattern, per), (r, per))
    sel = idx[keep]
    cnt = int(sel.size)
    if cnt > dst.size:
        raise OutOfBoundsError(f"GatherMask: the pattern keeps {cnt} elements but dst holds {dst.size}",
                               fix="allocate dst for the elements kept", site=site)
    a = Access(src0, idx.reshape(-1), op, site)
    d = Access(dst, cnt, op, site)
    issue(op, "simple", d, [a] + reads, max(r, 1), site)
    if cnt and context.computing():     # numerics=False: timing only
        vals = a.get().reshape(idx.shape)
        d.put(vals[keep])
    core.vmode = False                  # the instruction ends in Normal mask mode
    return cnt


__all__ = ["Gather", "GatherMask", "GatherMaskParams"]
