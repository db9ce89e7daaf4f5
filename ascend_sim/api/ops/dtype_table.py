"""The Atlas A2 data types of every vector and reduction instruction, in one table, and the check that enforces it.

Source: the Ascend C API pages (hiascend.com "Ascend C API", 基础API > Memory矢量计算; the same pages as
``cannmirror/asc-devkit`` docs/zh/api/SIMD-API/基础API/Memory矢量计算/), the line "针对Atlas A2 训练系列产品/Atlas
A2 推理系列产品，T支持的数据类型为：..." of each page (or its 数据类型 section when the page lists one set for
every product). Cast's (src, dst, RoundMode) triples are a table of their own: ``conversion.py``.
Compare/Compares with int32_t take CMPMODE.EQ only (checked where they are).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascend_sim.engine.errors import DtypeError
from ascend_sim.hw.dtypes import as_dtype, ascend_name

_ARITH = ("int16_t", "half", "int32_t", "float")                          # Add.md, Adds.md ...
_FLOAT = ("half", "float")                                                # Exp.md, ReduceSum.md ...
_FILL = ("int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float")     # Duplicate.md, Brcb.md

A2: dict[str, tuple[str, ...]] = {
    # 基础算术
    "Add": _ARITH, "Sub": _ARITH, "Mul": _ARITH, "Max": _ARITH, "Min": _ARITH,
    "Adds": _ARITH, "Muls": _ARITH, "Maxs": _ARITH, "Mins": _ARITH,
    "Div": _FLOAT, "Exp": _FLOAT, "Ln": _FLOAT, "Sqrt": _FLOAT, "Rsqrt": _FLOAT, "Reciprocal": _FLOAT,
    "Abs": _FLOAT, "LeakyRelu": _FLOAT,
    "Relu": ("half", "int32_t", "float"),
    # 复合计算 (Axpy.md: half/half/half, float/float/float, and half src with a float dst)
    "Axpy": _FLOAT,
    # 逻辑计算
    "And": ("int16_t", "uint16_t"), "Or": ("int16_t", "uint16_t"), "Not": ("int16_t", "uint16_t"),
    "ShiftLeft": ("int16_t", "uint16_t", "int32_t", "uint32_t"),
    "ShiftRight": ("int16_t", "uint16_t", "int32_t", "uint32_t"),
    # 数据填充
    "Duplicate": _FILL, "Brcb": _FILL, "CreateVecIndex": _ARITH,
    # 比较与选择 (int32_t: CMPMODE.EQ only)
    "Compare": ("half", "float", "int32_t"), "Compares": ("half", "float", "int32_t"),
    "Compare (CMPMASK register)": _FLOAT, "Select": _FLOAT,
    # 离散与聚合, GatherMask
    "Gather": _FILL, "GatherMask": _FILL,
    # 数据排布转换 (the 2-byte forms the simulator models)
    "Transpose": ("int16_t", "uint16_t", "half"), "TransDataTo5HD": ("int16_t", "uint16_t", "half"),
    # 归约计算 (ReduceSum.md, ReduceMax.md, ReduceMin.md, ReduceRepeat.md = WholeReduce*, ReduceDataBlock.md =
    # BlockReduce*, ReducePairElem.md = PairReduceSum)
    "ReduceSum": _FLOAT, "ReduceMax": _FLOAT, "ReduceMin": _FLOAT,
    "WholeReduceSum": _FLOAT, "WholeReduceMax": _FLOAT, "WholeReduceMin": _FLOAT,
    "BlockReduceSum": _FLOAT, "BlockReduceMax": _FLOAT, "BlockReduceMin": _FLOAT,
    "PairReduceSum": _FLOAT, "ReduceRepeat": _FLOAT, "ReduceDataBlock": _FLOAT, "ReducePairElem": _FLOAT,
}


@lru_cache(maxsize=None)
def allowed(op: str) -> tuple[np.dtype, ...]:
    """The np.dtypes instruction ``op`` takes on Atlas A2 (KeyError: an instruction missing from the table)."""
    return tuple(as_dtype(n) for n in A2[op])


def require(op: str, dtype: np.dtype, site, dtypes: tuple | None = None, what: str = "") -> None:
    """DtypeError unless ``dtype`` is one of ``op``'s Atlas A2 dtypes (``dtypes``: a list of its own)."""
    dtypes = allowed(op) if dtypes is None else dtypes
    if dtype in dtypes:
        return
    names = ", ".join(ascend_name(d) for d in dtypes)
    raise DtypeError(f"{op}{what} supports {names} on Atlas A2, not {ascend_name(dtype)}",
                     fix=f"Cast the data to one of {names} first (or ReinterpretCast raw bits)", site=site)
