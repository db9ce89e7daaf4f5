"""Issue 32: every vector and reduction instruction takes only its documented Atlas A2 dtypes.

The cases below are written from the API pages (hiascend.com Ascend C API, 基础API > Memory矢量计算; the line
"针对Atlas A2 训练系列产品/Atlas A2 推理系列产品，T支持的数据类型为：..." of each page), not from
ascend_sim/api/ops/dtype_table.py: a row of the table that drifts from its page fails here.
"""
from __future__ import annotations

import numpy as np
import pytest

import ascend_sim
from ascend_sim.hw.dtypes import as_dtype
from ascend_sim import (Abs, Add, Adds, Axpy, BlockReduceSum, Duplicate, DtypeError, Exp, Relu, ReduceMax, ReduceMin,
                        ReduceSum, WholeReduceSum, bfloat16, float32, half, int16, int32, uint16)
from kernels_util import raises_rule, run_on_ub

N = 128


def _binary(op):
    return lambda d, a, w: op(d, a, a, N)


def _unary(op):
    return lambda d, a, w: op(d, a, N)


def _reduce(op):
    return lambda d, a, w: op(d, a, w, N)


# (instruction, the page's A2 list, one dtype the page leaves out, the call)
CASES = [
    ("Add", "int16_t, half, int32_t, float", bfloat16, _binary(Add)),                  # Add.md
    ("Adds", "int16_t, half, int32_t, float", uint16, lambda d, a, w: Adds(d, a, 1, N)),   # Adds.md
    ("Abs", "half, float", int16, _unary(Abs)),                                        # Abs.md
    ("Relu", "half, int32_t, float", int16, _unary(Relu)),                             # Relu.md
    ("Exp", "half, float", bfloat16, _unary(Exp)),                                     # Exp.md 数据类型
    ("Axpy", "half, float", int32, lambda d, a, w: Axpy(d, a, 2, N)),                  # Axpy.md table
    ("Duplicate", "int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float", np.int8,
     lambda d, a, w: Duplicate(d, 1, N)),                                              # Duplicate.md
    ("ReduceSum", "half, float", int32, _reduce(ReduceSum)),                           # ReduceSum.md
    ("ReduceMax", "half, float", int16, _reduce(ReduceMax)),                           # ReduceMax.md
    ("ReduceMin", "half, float", int32, _reduce(ReduceMin)),                           # ReduceMin.md
    ("WholeReduceSum", "half, float", int32, lambda d, a, w: WholeReduceSum(d, a, 64, 1)),    # ReduceRepeat.md
    ("BlockReduceSum", "half, float", int16, lambda d, a, w: BlockReduceSum(d, a, 1, 64)),    # ReduceDataBlock.md
]


@pytest.mark.parametrize("op, listed, bad, call", CASES, ids=[c[0] for c in CASES])
def test_an_undocumented_dtype_is_refused_with_the_documented_list(op, listed, bad, call):
    z = np.ones(N, bad)
    with raises_rule(DtypeError, f"{op} supports {listed} on Atlas A2, not"):
        run_on_ub(lambda a, w, d: call(d, a, w), np.ones(N, bad), np.zeros(N, bad), z)


@pytest.mark.parametrize("op, listed, bad, call", CASES, ids=[c[0] for c in CASES])
def test_every_documented_dtype_runs(op, listed, bad, call):
    for name in listed.split(", "):
        dt = as_dtype(name)
        run_on_ub(lambda a, w, d: call(d, a, w), np.ones(N, dt), np.zeros(N, dt), np.zeros(N, dt))


def test_every_vector_and_reduction_instruction_has_a_row():
    """The public vector and reduction instructions all appear in the A2 table."""
    names = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "Exp", "Ln", "Sqrt", "Rsqrt",
             "Reciprocal", "Abs", "Relu", "LeakyRelu", "Axpy", "And", "Or", "Not", "ShiftLeft", "ShiftRight",
             "Duplicate", "Brcb", "CreateVecIndex", "Compare", "Compares", "Select", "Gather", "GatherMask",
             "Transpose", "ReduceSum", "ReduceMax", "ReduceMin", "WholeReduceSum", "WholeReduceMax", "WholeReduceMin",
             "BlockReduceSum", "BlockReduceMax", "BlockReduceMin", "PairReduceSum"]
    assert all(hasattr(ascend_sim, n) for n in names)
    from ascend_sim.api.ops.dtype_table import A2
    assert [n for n in names if n not in A2] == []


def test_half_and_float_results_are_unchanged_by_the_table():
    x = np.arange(N, dtype=float32) / 4
    z = np.zeros(N, float32)
    run_on_ub(lambda a, w, d: ReduceSum(d, a, w, N), x, np.zeros(N, float32), z)
    assert z[0] == x.sum()
    h = np.zeros(N, half)
    run_on_ub(lambda a, d: Relu(d, a, N), (np.arange(N) - 64).astype(half), h)
    assert np.array_equal(h, np.maximum(np.arange(N) - 64, 0).astype(half))


def test_axpy_half_source_float_destination_as_the_axpy_table():
    """Axpy.md, the A2 table: src half, scalarValue half, dst float (PAR 64)."""
    x = (np.arange(N) / 8).astype(half)
    acc = np.full(N, 0.25, float32)
    run_on_ub(lambda a, d: Axpy(d, a, 1.5, N), x, acc)
    assert np.array_equal(acc, x.astype(np.float32) * np.float32(1.5) + np.float32(0.25))
