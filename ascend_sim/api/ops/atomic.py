"""Atomic GM writes of the DMA path (原子操作): SetAtomicAdd / SetAtomicMax / SetAtomicMin, DisableDmaAtomic.

SetAtomicAdd page: "对后续目的地址为GM的数据搬运开启原子累加 ... 将待拷贝的内容和GM已有内容进行求和"; SetAtomicMax:
"将待拷贝的内容和GM已有内容进行比较，然后将最大值写入GM" (Min likewise). Types on Atlas A2: int8, int16, half,
bfloat16, int32, float. DisableDmaAtomic: "关闭数据搬运随路原子操作功能，后续执行数据搬运时，GM中原始数据将被新搬运
数据完全覆盖". ``core.atomic`` holds (kind, dtype | None) while a mode is on; the copy-out combines with
:func:`combine`. Atomic writes from several blocks commute, so the GM sanitizer lets them overlap.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.checks import dtype_arg
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import DtypeError, kernel_point
from ascend_sim.hw.dtypes import as_dtype, ascend_name

_TYPES = tuple(as_dtype(n) for n in ("int8_t", "int16_t", "half", "bfloat16_t", "int32_t", "float"))
_FN = {"add": np.add, "max": np.maximum, "min": np.minimum}
_NAME = {"add": "SetAtomicAdd", "max": "SetAtomicMax", "min": "SetAtomicMin"}


_OMITTED = object()     # SetAtomicAdd() with no dtype: the copy's own dtype


def _set(kind: str, dtype) -> None:
    site = kernel_point()
    core = current_core()
    d = None
    if dtype is None:
        raise DtypeError(f"{_NAME[kind]}(None): the dtype argument is None",
                         fix=f"«{_NAME[kind]}(float32) (SetAtomicAdd<float>() in C++), or {_NAME[kind]}() to use "
                             f"the dtype of each copy|{_NAME[kind]}<float>(), the element type of the copies»", site=site)
    if dtype is not _OMITTED:
        d = dtype_arg(_NAME[kind], dtype, site)
        if d not in _TYPES:
            names = ", ".join(ascend_name(t) for t in _TYPES)
            raise DtypeError(f"{_NAME[kind]}<{ascend_name(d)}>: the atomic unit supports {names} on Atlas A2",
                             fix="accumulate in float or int32 and Cast afterwards", site=site)
    core.atomic = (kind, d)
    core.scalar_tick()


def SetAtomicAdd(dtype=_OMITTED) -> None:
    """Following copies to GM add into GM instead of overwriting (``SetAtomicAdd<T>()``)."""
    _set("add", dtype)


def SetAtomicMax(dtype=_OMITTED) -> None:
    """Following copies to GM write max(GM, data) (``SetAtomicMax<T>()``)."""
    _set("max", dtype)


def SetAtomicMin(dtype=_OMITTED) -> None:
    """Following copies to GM write min(GM, data) (``SetAtomicMin<T>()``)."""
    _set("min", dtype)


def DisableDmaAtomic() -> None:
    """Back to plain overwriting copies."""
    core = current_core()
    core.atomic = None
    core.scalar_tick()


SetAtomicNone = DisableDmaAtomic        # the older name of the same switch


def atomic_mode(core, op: str, dtype: np.dtype, site) -> str:
    """The active atomic kind ("add", "max", "min") for a copy of ``dtype`` data; DtypeError on a type mismatch."""
    kind, d = core.atomic
    if d is not None and d != dtype:
        raise DtypeError(f"{op} of {ascend_name(dtype)} data while {_NAME[kind]}({ascend_name(d)}) is active: the "
                         f"atomic unit would combine the bytes as {ascend_name(d)}",
                         fix=f"call {_NAME[kind]}({ascend_name(dtype)}) before this copy, or DisableDmaAtomic() if "
                             "it should overwrite", site=site)
    if dtype not in _TYPES:
        raise DtypeError(f"{op}: atomic {kind} of {ascend_name(dtype)} data; the atomic unit supports "
                         f"{', '.join(ascend_name(t) for t in _TYPES)} on Atlas A2",
                         fix="copy int8/int16/half/bfloat16/int32/float data, or DisableDmaAtomic()", site=site)
    return kind


def combine(kind: str, cur: np.ndarray, new: np.ndarray) -> np.ndarray:
    """What GM holds after an atomic ``kind`` write of ``new`` over ``cur`` (same dtype)."""
    with np.errstate(all="ignore"):     # an fp16 sum past 65504 is inf on the device too
        return _FN[kind](cur, new).astype(cur.dtype)


__all__ = ["SetAtomicAdd", "SetAtomicMax", "SetAtomicMin", "SetAtomicNone", "DisableDmaAtomic"]
