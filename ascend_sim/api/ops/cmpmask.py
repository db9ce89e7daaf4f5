"""Compare, in its two forms, and the CmpMask register (比较结果寄存器) with GetCmpMask.

``Compare(dst, src0, src1, CMPMODE, count)`` writes bits to a tensor (vector.py: compare_to_tensor);
``Compare(src0, src1, CMPMODE, mask, BinaryRepeatParams)`` writes them to the register.

Compare（结果存入寄存器）.md: "计算结果存入CmpMask 128bit寄存器中 ... 也可使用GetCmpMask接口获取寄存器保存的数据"; "本接口
没有repeat输入，repeat默认为1，即一条指令计算256B的数据"; half and float. GetCmpMask(ISASI).md: b8/b16/b32 dst, 16-byte
aligned. The register lives on the core (``core.cmpmask``, 16 bytes; None: never written, read as zeros).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.checks import member
from ascend_sim.api.ops.dtype_table import require as require_a2
from ascend_sim.api.ops.mask import lane_mask, normal_key
from ascend_sim.api.ops.vector import (CMPMODE, Access, BinaryRepeatParams, bank_operand, compare_fns,
                                       compare_to_tensor, issue, lane_index, same_dtype, stride, ub_operand)
from ascend_sim.engine import context, timing
from ascend_sim.engine.context import current_core
from ascend_sim.engine.core import V, regions_of
from ascend_sim.engine.errors import ArgumentError, DtypeError, OutOfBoundsError, kernel_point
from ascend_sim.hw.dtypes import ascend_name

CMPMASK_BYTES = 16      # the CmpMask register: 128 bits (Compare（结果存入寄存器）.md)


def Compare(*args, isSetMask: bool = True) -> None:
    """``Compare(dst, src0, src1, CMPMODE, count)``, or ``Compare(src0, src1, CMPMODE, mask, BinaryRepeatParams)``
    into the CmpMask register (read it with GetCmpMask)."""
    if len(args) == 5 and isinstance(args[4], BinaryRepeatParams):
        compare_to_register(*args, isSetMask=isSetMask)
        return
    if len(args) != 5:
        raise ArgumentError(f"Compare takes 5 arguments, got {len(args)}",
                            fix="Compare(dst, src0, src1, CMPMODE, count), or Compare(src0, src1, CMPMODE, mask, "
                                "BinaryRepeatParams) into the CmpMask register", site=kernel_point())
    compare_to_tensor(*args)


def compare_to_register(src0, src1, cmpMode: CMPMODE, mask, repeatParams: BinaryRepeatParams, *,
                        isSetMask: bool = True) -> None:
    """Compare（结果存入寄存器）.md: one 256-byte repeat (no repeatTimes), one bit per lane into the 128-bit CmpMask
    register; lanes the mask leaves out, and bits past the lanes of a 4-byte dtype, are 0 (an assumption: the page
    does not say). Read with GetCmpMask; half and float only."""
    op = "Compare"
    site = kernel_point()
    ub_operand(src0, op, "src0", site)
    ub_operand(src1, op, "src1", site)
    same_dtype(op, site, src0, src1)
    member(op, "cmpMode", cmpMode, CMPMODE, site)
    require_a2("Compare (CMPMASK register)", src0.dtype, site)
    isz = src0.dtype.itemsize
    core = current_core()
    key = normal_key(op, core, mask, isz, isSetMask, site)
    lanes = np.flatnonzero(lane_mask(key, 256 // isz))
    acc = [Access(s, lane_index(isz, key, 1, stride(op, repeatParams, f"{n}BlkStride", site),
                                stride(op, repeatParams, f"{n}RepStride", site)), op, site)
           for n, s in (("src0", src0), ("src1", src1))]
    stride(op, repeatParams, "dstBlkStride", site)
    stride(op, repeatParams, "dstRepStride", site)
    cost = timing.vector(core, 1, "simple", bank_operand(acc[0]), [bank_operand(a) for a in acc])
    core.issue_n(V, op, cost, regions_of([a.region for a in acc]), regions_of(()), 2 * lanes.size * isz, "UB", "UB",
                 lanes.size, "simple", site)
    bits = np.zeros(8 * CMPMASK_BYTES, bool)
    if context.computing():
        bits[lanes] = compare_fns[cmpMode](acc[0].get(), acc[1].get())
    core.cmpmask = np.packbits(bits, bitorder="little")


def GetCmpMask(dst) -> None:
    """``GetCmpMask(dst)`` (GetCmpMask(ISASI).md): the 128-bit CmpMask register into the first 16 bytes of ``dst``
    (b8/b16/b32 data, 16-byte aligned). The page asks for "不少于128字节" but its own sample passes 32 bytes, and the
    register holds 128 bits: 16 bytes are checked."""
    op = "GetCmpMask"
    site = kernel_point()
    ub_operand(dst, op, "dst", site, align=16)
    if dst.dtype.itemsize not in (1, 2, 4):
        raise DtypeError(f"{op}: dst holds {ascend_name(dst.dtype)}; the page allows b8, b16 and b32 data",
                         fix="ReinterpretCast dst to uint8_t", site=site)
    if dst.nbytes < CMPMASK_BYTES:
        raise OutOfBoundsError(f"{op}: dst holds {dst.nbytes} bytes, but the CmpMask register is 128-bit "
                               f"({CMPMASK_BYTES} bytes)", fix="give GetCmpMask a dst of at least 16 bytes", site=site)
    core = current_core()
    d = Access(dst.ReinterpretCast(np.uint8), CMPMASK_BYTES, op, site)
    issue(op, "simple", d, [], 1, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    reg = core.cmpmask
    d.put(np.zeros(CMPMASK_BYTES, np.uint8) if reg is None else reg)


__all__ = ["Compare", "GetCmpMask"]
