"""Bitwise vector instructions (逻辑计算): And, Or, Not on 16-bit integers; ShiftLeft, ShiftRight by a scalar.

Count form and mask/repeat form as every vector instruction (ops/vector.py). The shifts follow the
ShiftLeft / ShiftRight pages: unsigned types shift logically; signed types shift arithmetically,
a left shift keeping the sign bit ("次高位被丢弃": the bit below the sign falls off) and a right
shift copying it; the shift count is in 0..16 for 16-bit and 0..32 for 32-bit types on Atlas A2.
ShiftRight's ``roundEn`` (mask/repeat form, signed types) adds the last bit shifted out.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.checks import integer
from ascend_sim.api.tensor import LocalTensor
from ascend_sim.api.ops.dtype_table import allowed
from ascend_sim.api.ops.vector import binary_instr, scalar_instr, unary_instr
from ascend_sim.engine.errors import ArgumentError, kernel_point

_B16 = allowed("And")                    # And/Or/Not pages, Atlas A2 (dtype_table.py)
_SHIFT = allowed("ShiftLeft")             # ShiftLeft/ShiftRight pages

And = binary_instr("And", np.bitwise_and, dtypes=_B16)
Or = binary_instr("Or", np.bitwise_or, dtypes=_B16)
Not = unary_instr("Not", np.invert, dtypes=_B16)


def shift_left(x: np.ndarray, s) -> np.ndarray:
    """``x << s`` as the vector unit does it: logical for unsigned, sign-keeping arithmetic for signed."""
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    shifted = (u << np.uint64(int(s))) & np.uint64((1 << bits) - 1)
    if x.dtype.kind == "i":
        sign = np.uint64(1 << (bits - 1))
        shifted = (u & sign) | (shifted & (sign - np.uint64(1)))
    return shifted.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


def shift_right(x: np.ndarray, s) -> np.ndarray:
    """``x >> s``: logical for unsigned, arithmetic (copies of the sign bit) for signed."""
    if x.dtype.kind == "i":
        return (x.astype(np.int64) >> np.int64(int(s))).astype(x.dtype)
    return (x.astype(np.uint64) >> np.uint64(int(s))).astype(x.dtype)


def shift_right_round(x: np.ndarray, s) -> np.ndarray:
    """ShiftRight with roundEn: "如果src_ele二进制数中的第5位为1，则dst_ele值为对src_ele算术右移5后加1" (signed only)."""
    out = shift_right(x, s)
    s = int(s)
    if x.dtype.kind != "i" or s == 0:
        return out                      # "仅当src为int16_t/int32_t类型时开启有效"
    carry = (x.astype(np.int64) >> np.int64(s - 1)) & 1
    return (out.astype(np.int64) + carry).astype(x.dtype)


_shl = scalar_instr("ShiftLeft", shift_left, dtypes=_SHIFT)
_shr = scalar_instr("ShiftRight", shift_right, dtypes=_SHIFT)
_shr_round = scalar_instr("ShiftRight", shift_right_round, dtypes=_SHIFT)


def _shift_count(op: str, dst, scalarValue, site) -> None:
    """The shift count is in 0..16 (16-bit data) or 0..32 (32-bit data) on Atlas A2."""
    if isinstance(dst, LocalTensor):        # anything else: the instruction's own operand check says
        top = 8 * dst.dtype.itemsize
        integer(op, "scalarValue (the shift count)", scalarValue, site, 0, top,
                fix=f"shift {top}-bit data by 0..{top} bits")


def ShiftLeft(dst, src, scalarValue, *args, isSetMask: bool = True) -> None:
    """``ShiftLeft(dst, src, scalarValue, count)`` (or mask, repeatTimes, UnaryRepeatParams)."""
    _shift_count("ShiftLeft", dst, scalarValue, kernel_point())
    _shl(dst, src, scalarValue, *args, isSetMask=isSetMask)


def ShiftRight(dst, src, scalarValue, *args, roundEn: bool = False, isSetMask: bool = True) -> None:
    """``ShiftRight(dst, src, scalarValue, count)`` (or mask, repeatTimes, UnaryRepeatParams, roundEn=False)."""
    site = kernel_point()
    _shift_count("ShiftRight", dst, scalarValue, site)
    if roundEn.__class__ is not bool:
        raise ArgumentError(f"ShiftRight: roundEn must be «True» or «False», got {roundEn!r}",
                            fix="«roundEn=True|roundEn true» adds the last bit shifted out (signed types)", site=site)
    if roundEn and len(args) == 1:
        raise ArgumentError("ShiftRight: roundEn belongs to the mask/repeat form; the count form has no rounding",
                            fix="«ShiftRight(dst, src, n, mask, repeatTime, UnaryRepeatParams(...), roundEn=True)|"
                                "ShiftRight(dst, src, n, mask, repeatTime, UnaryRepeatParams{...}, true)»",
                            site=site)
    (_shr_round if roundEn else _shr)(dst, src, scalarValue, *args, isSetMask=isSetMask)


__all__ = ["And", "Or", "Not", "ShiftLeft", "ShiftRight"]
