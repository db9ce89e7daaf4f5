"""Issue 32's reproductions: internal errors from bad calls, and invalid calls that ran silently.

Each call must raise a KernelError naming the parameter, what it takes and the fix, at the learner's line
(before: an AttributeError/TypeError reported as InternalError, or nothing at all).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, DataCopyPad, DataCopyExtParams, DtypeError, KernelError, LoadData2DParams,
                        MmadParams, PositionError, SetAtomicAdd, TBuf, TPipe, TPosition, TQue, Adds, half, kernel,
                        launch)
from ascend_sim.engine.errors import InternalError
from kernels_util import gm, raises_rule, scratch

N = 256


@kernel
def case(x, z, action):
    pipe = TPipe()
    a = scratch(2 * N, half, pipe=pipe)
    action(pipe, a, x, gm(x, size=N))


def run(action):
    launch(case, 1, np.arange(N, dtype=half), np.zeros(N, half), action, gm_names=["x", "z"])


CASES = [
    # InternalError before
    ("non-tensor-dst", lambda p, a, x, g: Adds(5, a, -2.0, 17), PositionError,
     ["Adds: dst is a int; vector instructions work on UB LocalTensors only"]),
    ("gm-pointer-plus-list", lambda p, a, x, g: x + [1], ArgumentError,
     ["GM address arithmetic", "takes an integer number of elements, got list [1]"]),
    ("gm-pointer-plus-str", lambda p, a, x, g: x + "a", ArgumentError, ["got str 'a'"]),
    ("gm-pointer-times", lambda p, a, x, g: x * 2, ArgumentError, ["takes + and - with an integer"]),
    ("local-tensor-plus", lambda p, a, x, g: a + 1, ArgumentError,
     ["LocalTensor + int: Python operators do not compute on tensors", "Add / Adds"]),
    ("global-tensor-times", lambda p, a, x, g: g * 2.0, ArgumentError, ["GlobalTensor * float", "Mul / Muls"]),
    ("mmad-params-arity", lambda p, a, x, g: MmadParams(16, 16, 16, 0), ArgumentError,
     ["MmadParams takes 3, 6 or 8 positional arguments"]),
    # accepted silently before
    ("initbuffer-none", lambda p, a, x, g: p.InitBuffer(TBuf(TPosition.VECCALC), 4, None), ArgumentError,
     ["InitBuffer: bytes must be an integer, got NoneType None"]),
    ("tque-depth-huge", lambda p, a, x, g: TQue(TPosition.VECIN, 10**30), ArgumentError,
     ["TQue: depth = 1000000000000000000000000000000, but it must be in 1..2147483647", "int32_t"]),
    ("initbuffer-num-uint8", lambda p, a, x, g: p.InitBuffer(TQue(TPosition.VECIN, 1), 256, 64), ArgumentError,
     ["InitBuffer: num = 256, but it must be in 1..255", "uint8_t"]),
    ("set-atomic-add-none", lambda p, a, x, g: SetAtomicAdd(None), DtypeError,
     ["SetAtomicAdd(None): the dtype argument is None"]),
    ("load2d-iftranspose-int", lambda p, a, x, g: LoadData2DParams(0, 1, 1, ifTranspose=-1), ArgumentError,
     ["LoadData2DParams: ifTranspose must be True or False (a bool field), got int -1"]),
    ("load2d-repeat-uint8", lambda p, a, x, g: LoadData2DParams(0, 256, 1), ArgumentError,
     ["LoadData2DParams: repeatTimes = 256, but it must be in 0..255", "uint8_t"]),
    ("copy-ext-blocklen-uint32", lambda p, a, x, g: DataCopyExtParams(1, 2**32, 0, 0, 0), ArgumentError,
     ["DataCopyExtParams: blockLen = 4294967296, but it must be in 0..4294967295"]),
    ("datacopypad-none-pad", lambda p, a, x, g: DataCopyPad(a, g, DataCopyExtParams(1, 64, 0, 0, 0), None),
     ArgumentError, ["DataCopyPad: padParams is None"]),
    ("tbuf-get-none-length", lambda p, a, x, g: _tbuf(p).Get(half, None), ArgumentError,
     ["TBuf.Get: length must be an integer, got NoneType None"]),
]


def _tbuf(pipe) -> TBuf:
    b = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(b, 64)
    return b


@pytest.mark.parametrize("name, action, exc, words", CASES, ids=[c[0] for c in CASES])
def test_bad_call_is_a_kernel_error_that_teaches(name, action, exc, words):
    with raises_rule(exc, *words):
        run(action)


def test_none_of_them_is_an_internal_error():
    for name, action, *_ in CASES:
        with pytest.raises(KernelError) as info:
            run(action)
        assert not isinstance(info.value, InternalError), name
