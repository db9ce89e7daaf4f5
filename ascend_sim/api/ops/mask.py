"""The vector mask register (掩码寄存器) and its two modes: SetMaskNorm / SetMaskCount, SetVectorMask, ResetMask.

Every repeat-form vector instruction reads a mask. With ``isSetMask=True`` (the default, 接口内设置Mask)
the instruction writes its ``mask`` argument into the register first; with ``isSetMask=False``
(接口外设置Mask) it uses what ``SetVectorMask`` left there and its mask argument is the placeholder
``MASK_PLACEHOLDER``. In Normal mode the register masks the lanes of each repeat; in Counter mode its
low 64 bits are the number of elements of the whole instruction, and repeatTimes is ignored.
The count form (``Add(dst, a, b, count)``) runs in Counter mode and leaves the register reset and
the mode Normal. The state lives on the core: ``core.vmode`` (True: Counter) and ``core.vmask``
(None: all lanes; an int: the first n lanes, or in Counter mode the element count; (low, high)
bit words).
"""
from __future__ import annotations

import enum

import numpy as np

from ascend_sim.api.checks import dtype_arg, integer, member
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, kernel_point
from ascend_sim.hw.dtypes import ascend_name


class MaskMode(enum.Enum):
    """``MaskMode``: how SetVectorMask writes the register (Normal lanes, or a Counter element count)."""

    NORMAL = 0
    COUNTER = 1


class _Placeholder(int):
    """``MASK_PLACEHOLDER``: the mask argument of an ``isSetMask=False`` call (0, no meaning)."""

    def __repr__(self) -> str:
        return "MASK_PLACEHOLDER"


MASK_PLACEHOLDER = _Placeholder(0)
U64 = 2**64 - 1


# ----------------------------------------------------------------------------- the API
def SetMaskCount() -> None:
    """Counter mode: the register holds the element count of the following ``isSetMask=False`` instructions."""
    core = current_core()
    core.vmode = True
    core.scalar_tick()


def SetMaskNorm() -> None:
    """Normal mode (the default): the register masks the lanes of each repeat."""
    core = current_core()
    core.vmode = False
    core.scalar_tick()


def ResetMask() -> None:
    """The register back to its default, all ones (every lane of every repeat)."""
    core = current_core()
    core.vmask = None
    core.scalar_tick()


def SetVectorMask(*args, dtype=None, mode: MaskMode = MaskMode.NORMAL) -> None:
    """``SetVectorMask<T, mode>(len)`` or ``SetVectorMask<T, mode>(maskHigh, maskLow)``.

    Normal mode: ``len`` = the first len lanes of each repeat, or the bit words (high word first, as in
    C++). Counter mode: ``len`` (or ``maskLow``, with ``maskHigh`` 0) = the element count; the two-word form
    is a raw register write, so it sets the count in Counter mode with either mode argument.
    """
    site = kernel_point()
    core = current_core()
    member("SetVectorMask", "mode", mode, MaskMode, site)
    counter = mode is MaskMode.COUNTER
    # the two-word form writes the register as given whatever the mode argument (kernel_reg.h: set_vector_mask(
    # maskHigh, maskLow)), so SetVectorMask<T>(0, n) after SetMaskCount() sets the count n (the reduce sample)
    raw_count = len(args) == 2 and not counter and core.vmode
    if raw_count:
        counter = True
    elif counter != bool(core.vmode):
        now = "Counter (SetMaskCount)" if core.vmode else "Normal (the default, or SetMaskNorm)"
        raise ArgumentError(f"SetVectorMask<{mode.name}> while the mask mode is {now}: the register would be "
                            f"written in one mode's format and read in the other's",
                            fix="call SetMaskCount() before «SetVectorMask(..., mode=MaskMode.COUNTER)|"
                                "SetVectorMask<T, MaskMode::COUNTER>(...)», or pass "
                                "the mode that matches the current one", site=site)
    lanes = None if dtype is None else 256 // dtype_arg("SetVectorMask", dtype, site).itemsize
    if len(args) == 1:
        n = integer("SetVectorMask", "len", args[0], site, 0, None if counter else 128,
                    fix="len counts elements: at most 128 lanes per repeat in Normal mode")
        if lanes is not None and not counter and n > lanes:
            raise ArgumentError(f"SetVectorMask: len {n} > {lanes} lanes of a 256-byte repeat of "
                                f"{ascend_name(dtype_arg('SetVectorMask', dtype, site))}",
                                fix=f"use a len in 0..{lanes}", site=site)
        core.vmask = n
    elif len(args) == 2:
        hi, lo = (integer("SetVectorMask", name, v, site, 0, U64, fix="each mask word is a uint64")
                  for name, v in zip(("maskHigh", "maskLow"), args))
        if counter and hi:
            raise ArgumentError(f"SetVectorMask: maskHigh must be 0 in Counter mode, got {hi:#x}",
                                fix="pass the element count as maskLow: SetVectorMask(0, count, ...)", site=site)
        if lanes == 64 and hi:
            raise ArgumentError(f"SetVectorMask: 64 lanes for a 4-byte dtype, so maskHigh must be 0, got {hi:#x}",
                                fix="for 32-bit dtypes only maskLow selects lanes", site=site)
        core.vmask = lo if counter else (lo, hi)
    else:
        raise ArgumentError(f"SetVectorMask takes len, or maskHigh and maskLow; got {len(args)} values",
                            fix="SetVectorMask(128) or SetVectorMask(maskHigh, maskLow)", site=site)
    core.scalar_tick()


# ----------------------------------------------------------------------------- the masks instructions read
def lane_mask(mask_key, lanes: int) -> np.ndarray:
    """The lanes of one repeat a mask key selects (an int: the first n; (low, high): the set bits)."""
    if isinstance(mask_key, int):
        return np.arange(lanes) < mask_key
    lo, hi = mask_key
    bits = np.array([(lo >> i) & 1 for i in range(64)] + [(hi >> i) & 1 for i in range(64)], bool)
    return bits[:lanes]


def mask_key(op: str, mask, itemsize: int, site):
    """A mask argument (an int: continuous mode; a list of two uint64 [low, high]: bit mode), checked."""
    lanes = 256 // itemsize
    if isinstance(mask, (list, tuple)):
        if len(mask) != 2:
            raise ArgumentError(f"{op}: a bit mask is a list of two uint64, got {len(mask)} values",
                                fix="mask=[low64, high64]", site=site)
        if lanes > 128:
            raise ArgumentError(f"{op}: {lanes} lanes per repeat for {itemsize}-byte elements, but a bit mask "
                                f"[low64, high64] selects at most 128",
                                fix=f"use a continuous mask (an int in 1..{lanes}) or the count form", site=site)
        lo, hi = (integer(op, "mask word", m, site, 0, U64, fix="each mask word is a uint64") for m in mask)
        if lanes == 64 and hi:
            raise ArgumentError(f"{op}: {lanes} lanes for a {itemsize}-byte dtype, so mask[1] must be 0, got {hi:#x}",
                                fix="for 32-bit dtypes only mask[0] selects lanes", site=site)
        return (lo, hi)
    _no_placeholder(op, mask, site)
    m = integer(op, "mask", mask, site)
    if not 1 <= m <= lanes:
        raise ArgumentError(f"{op}: continuous mask {m} outside 1..{lanes} (lanes per 256-byte repeat for "
                            f"{itemsize}-byte elements)", fix=f"use a mask in 1..{lanes}", site=site)
    return m


def _no_placeholder(op: str, mask, site) -> None:
    """An isSetMask=True call writes its mask argument: MASK_PLACEHOLDER there would write 0 (in either mode)."""
    if mask.__class__ is _Placeholder:
        raise ArgumentError(f"{op}: mask is MASK_PLACEHOLDER but isSetMask is True, so the instruction would write "
                            "0 into the mask register and compute nothing",
                            fix=f"«pass isSetMask=False ({op}<T, false> in C++)|call {op}<T, false>(...)» to use the mask "
                                "SetVectorMask set, "
                                "or pass the mask itself", site=site)


def count_form_done(core) -> None:
    """After a count-form (isSetMask true) instruction: "计算完成后调用ResetMask、SetMaskNorm恢复系统默认Normal模式"."""
    if core.vmode or core.vmask is not None:
        core.vmode = False
        core.vmask = None


def register_key(core, itemsize: int):
    """The Normal-mode lanes the register selects for ``itemsize``-byte elements (bits past the lanes ignored)."""
    lanes = 256 // itemsize
    m = core.vmask
    if m is None:
        return lanes
    if isinstance(m, int):
        return min(m, lanes)
    lo, hi = m
    return (lo, hi if lanes == 128 else 0)


def counter_count(op: str, core, mask, itemsize: int, set_mask: bool, site) -> int:
    """Counter mode: the element count of a repeat-form instruction (from ``mask``, or the register)."""
    if set_mask:
        if isinstance(mask, (list, tuple)):
            if len(mask) != 2 or mask[1]:
                raise ArgumentError(f"{op}: in Counter mode a mask array is [count, 0], got {list(mask)!r}",
                                    fix="pass mask=[count, 0] or an int count", site=site)
            mask = mask[0]
        _no_placeholder(op, mask, site)
        n = integer(op, "mask (the element count in Counter mode)", mask, site, 0, U64)
        core.vmask = n
        return n
    m = core.vmask
    if m is None:       # ResetMask in Counter mode: all ones, an element count no UB holds
        raise ArgumentError(f"{op}: Counter mode with the register at its reset value (all ones): no element "
                            "count was set", fix="call «SetVectorMask(count, mode=MaskMode.COUNTER)|"
                                                 "SetVectorMask<T, MaskMode::COUNTER>(count)» after "
                                                 "SetMaskCount()", site=site)
    return m if isinstance(m, int) else m[0]


def require_normal(op: str, core, site) -> None:
    """Instructions modelled in Normal mode only raise in Counter mode."""
    if core.vmode:
        raise ArgumentError(f"{op} in Counter mode (SetMaskCount is active): the simulator models {op} with Normal "
                            "masks only", fix="call SetMaskNorm() before it", site=site)


def normal_key(op: str, core, mask, itemsize: int, set_mask: bool, site):
    """The Normal-mode lane mask of an instruction: its ``mask`` argument (written to the register) or the register."""
    require_normal(op, core, site)
    if set_mask:
        key = mask_key(op, mask, itemsize, site)
        core.vmask = key
        return key
    return register_key(core, itemsize)


__all__ = ["MASK_PLACEHOLDER", "MaskMode", "SetMaskCount", "SetMaskNorm", "SetVectorMask", "ResetMask"]
