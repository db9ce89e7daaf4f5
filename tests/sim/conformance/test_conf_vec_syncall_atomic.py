"""Conformance family "SyncAll with atomics": many blocks combine their tiles into one GM tile with
SetAtomicAdd / SetAtomicMax / SetAtomicMin, then SyncAll, then every block reads the combined tile back and
uses it -- exact against numpy; plus DisableDmaAtomic and the documented type rules."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (PIPE_MTE3, PipeBarrier, DataCopy, DisableDmaAtomic, DtypeError, GetBlockIdx, GlobalTensor, HardEvent, SetAtomicAdd,
                        SetAtomicMax, SetAtomicMin, SetFlag, Sub, SyncAll, TPipe, TPosition, TQue, WaitFlag, float32,
                        half, int32, kernel, launch, uint8)
from vec_util import raises_rule

N = 256
SETTERS = {"add": SetAtomicAdd, "max": SetAtomicMax, "min": SetAtomicMin}


@kernel
def combine_then_center(x, acc, out, kind, dtype):
    """Phase 1: acc (op)= x[block]; SyncAll; phase 2: out[block] = x[block] - acc."""
    b = GetBlockIdx()
    xGm, accGm, outGm = GlobalTensor(dtype), GlobalTensor(dtype), GlobalTensor(dtype)
    xGm.SetGlobalBuffer(x + b * N, N)
    accGm.SetGlobalBuffer(acc, N)
    outGm.SetGlobalBuffer(out + b * N, N)
    pipe = TPipe()
    qx, qa, qo = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    for q in (qx, qa, qo):
        pipe.InitBuffer(q, 1, N * np.dtype(dtype).itemsize)
    xl = qx.AllocTensor(dtype)
    DataCopy(xl, xGm, N)
    SetFlag(HardEvent.MTE2_MTE3, 0)
    WaitFlag(HardEvent.MTE2_MTE3, 0)
    SETTERS[kind](dtype)
    DataCopy(accGm, xl, N)                      # UB -> GM through the atomic unit
    DisableDmaAtomic()
    SyncAll()
    al = qa.AllocTensor(dtype)
    DataCopy(al, accGm, N)
    qa.EnQue(al)
    qx.EnQue(xl)
    al, xl = qa.DeQue(dtype), qx.DeQue(dtype)
    ol = qo.AllocTensor(dtype)
    Sub(ol, xl, al, N)
    qo.EnQue(ol)
    ol = qo.DeQue(dtype)
    DataCopy(outGm, ol, N)
    for q, t in ((qx, xl), (qa, al), (qo, ol)):
        q.FreeTensor(t)


REDUCE = {"add": np.add.reduce, "max": np.maximum.reduce, "min": np.minimum.reduce}


@pytest.mark.parametrize("kind", ["add", "max", "min"])
@pytest.mark.parametrize("dtype", [float32, int32, half], ids=["float", "int32", "half"])
def test_atomic_combine_across_blocks(kind, dtype):
    blocks = 8
    x = np.random.default_rng(2).integers(-20, 20, blocks * N).astype(dtype)
    start = {"add": 0, "max": -1000, "min": 1000}[kind]          # the host initialises GM: atomics do not clear it
    acc = np.full(N, start, dtype)
    out = np.zeros_like(x)
    launch(combine_then_center, blocks, x, acc, out, kind, dtype)
    total = REDUCE[kind](np.vstack([np.full(N, start, dtype), x.reshape(blocks, N)]), axis=0).astype(dtype)
    np.testing.assert_array_equal(acc, total)
    np.testing.assert_array_equal(out, (x.reshape(blocks, N) - total).astype(dtype).reshape(-1))


@kernel
def copy_out(x, y, setter, dtype, n):
    xGm, yGm = GlobalTensor(dtype), GlobalTensor(dtype)
    xGm.SetGlobalBuffer(x, n)
    yGm.SetGlobalBuffer(y, n)
    pipe = TPipe()
    q = TQue(TPosition.VECIN, 1)
    pipe.InitBuffer(q, 1, n * np.dtype(dtype).itemsize)
    t = q.AllocTensor(dtype)
    DataCopy(t, xGm, n)
    SetFlag(HardEvent.MTE2_MTE3, 0)
    WaitFlag(HardEvent.MTE2_MTE3, 0)
    setter()
    DataCopy(yGm, t, n)
    DisableDmaAtomic()
    PipeBarrier(PIPE_MTE3)                      # two copy-outs of the same bytes: the first must land first
    DataCopy(yGm, t, n)                         # after DisableDmaAtomic: a plain overwrite
    q.FreeTensor(t)


def test_disable_dma_atomic_restores_overwrite():
    x = np.arange(32, dtype=float32)
    y = np.full(32, 100, float32)
    launch(copy_out, 1, x, y, lambda: SetAtomicMax(float32), float32, 32)
    np.testing.assert_array_equal(y, x)


def test_atomic_type_errors():
    x = np.zeros(32, uint8)
    with raises_rule(DtypeError, "SetAtomicMin<uint8_t>", "int8_t, int16_t, half", at="lambda: SetAtomicMin(uint8)"):
        launch(copy_out, 1, x, x.copy(), lambda: SetAtomicMin(uint8), uint8, 32)
    f = np.zeros(32, float32)
    with raises_rule(DtypeError, "while SetAtomicMax(half) is active", "SetAtomicMax(float)",
                     at="DataCopy(yGm, t, n)\n"):
        launch(copy_out, 1, f, f.copy(), lambda: SetAtomicMax(half), float32, 32)
