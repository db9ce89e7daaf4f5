"""Conformance family "scalar GetValue/SetValue Add": z = x + y by a scalar loop over GlobalTensor.GetValue/SetValue
and by the vector Add, both exact against numpy; the scalar loop's cost sits on PIPE_S (GetValue/SetValue are
``__inout_pipe__(S)``); and the GM hazards of scalar access reported like those of copies."""
from __future__ import annotations

import numpy as np

from ascend_sim import (Add, DataCopy, GetBlockIdx, GlobalTensor, GMWriteConflictError, HardEvent, OutOfBoundsError,
                        RaceError, SetFlag, TPipe, TPosition, TQue, WaitFlag, float32, kernel, launch)
from ascend_sim.trace.table import as_table, pipe_stats
from vec_util import raises_rule

N = 64


def gms(x, y, z, n):
    b = GetBlockIdx()
    out = []
    for p in (x, y, z):
        g = GlobalTensor(float32)
        g.SetGlobalBuffer(p + b * n, n)
        out.append(g)
    return out


@kernel
def scalar_add(x, y, z, n):
    xGm, yGm, zGm = gms(x, y, z, n)
    for i in range(n):
        zGm.SetValue(i, xGm.GetValue(i) + yGm.GetValue(i))


@kernel
def vector_add(x, y, z, n):
    xGm, yGm, zGm = gms(x, y, z, n)
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 1, n * 4)
    xl, yl = qx.AllocTensor(float32), qy.AllocTensor(float32)
    DataCopy(xl, xGm, n)
    DataCopy(yl, yGm, n)
    qx.EnQue(xl)
    qy.EnQue(yl)
    xl, yl, zl = qx.DeQue(float32), qy.DeQue(float32), qz.AllocTensor(float32)
    Add(zl, xl, yl, n)
    qz.EnQue(zl)
    zl = qz.DeQue(float32)
    DataCopy(zGm, zl, n)
    for q, t in ((qx, xl), (qy, yl), (qz, zl)):
        q.FreeTensor(t)


def test_scalar_and_vector_add_agree_with_numpy():
    blocks = 4
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(blocks * N).astype(float32), rng.standard_normal(blocks * N).astype(float32)
    zs, zv = np.zeros_like(x), np.zeros_like(x)
    rs = launch(scalar_add, blocks, x, y, zs, N)
    rv = launch(vector_add, blocks, x, y, zv, N)
    np.testing.assert_array_equal(zs, x + y)
    np.testing.assert_array_equal(zv, x + y)
    stats = {p.pipe: p for p in pipe_stats(as_table(rs))}
    gm_scalar = [r for r in rs.trace if r.op in ("GetValue(GM)", "SetValue(GM)")]
    assert len(gm_scalar) == 3 * N * blocks and {r.pipe for r in gm_scalar} == {"S"}
    assert stats["S"].busy >= 3 * N * blocks * rs.chip.scalar_gm_cycles     # 3 GM scalar accesses per element
    assert rs.cycles > 10 * rv.cycles


@kernel
def read_own_copy_out(x, z, sync):
    xGm, _, zGm = gms(x, x, z, N)
    pipe = TPipe()
    q = TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(q, 1, N * 4)
    t = q.AllocTensor(float32)
    DataCopy(t, xGm, N)
    SetFlag(HardEvent.MTE2_MTE3, 0)
    WaitFlag(HardEvent.MTE2_MTE3, 0)
    DataCopy(zGm, t, N)
    if sync:
        SetFlag(HardEvent.MTE3_S, 0)
        WaitFlag(HardEvent.MTE3_S, 0)
    zGm.SetValue(0, zGm.GetValue(1))
    q.FreeTensor(t)


def test_get_value_after_own_copy_out_needs_a_flag_with_auto_sync_off():
    x = np.arange(N, dtype=float32)
    z = np.zeros(N, float32)
    launch(read_own_copy_out, 1, x, z, True, auto_sync=False)
    assert z[0] == 1 and (z[1:] == x[1:]).all()
    with raises_rule(RaceError, "GlobalTensor.GetValue on pipe S", "pipe MTE3", "MTE3_S", "auto_sync=False",
                     at="zGm.SetValue(0, zGm.GetValue(1))"):
        launch(read_own_copy_out, 1, x, np.zeros(N, float32), False, auto_sync=False)


def test_get_value_after_own_copy_out_is_auto_synced_by_default():
    """MTE3 -> S is one of the compiler's auto-synced pairs (关键特性说明.md 表1): the GetValue waits for the copy-out."""
    x = np.arange(N, dtype=float32)
    z = np.zeros(N, float32)
    res = launch(read_own_copy_out, 1, x, z, False)
    assert z[0] == 1 and (z[1:] == x[1:]).all()
    out = next(r for r in res.trace if r.op == "DataCopy" and r.pipe == "MTE3")
    get = next(r for r in res.trace if r.op == "GetValue(GM)")
    assert get.start >= out.end + res.chip.event_latency_cycles


@kernel
def all_blocks_set(z):
    zGm = GlobalTensor(float32)
    zGm.SetGlobalBuffer(z, N)
    zGm.SetValue(3, float(GetBlockIdx()))


def test_two_blocks_setting_one_element_conflict():
    with raises_rule(GMWriteConflictError, at="zGm.SetValue(3, float(GetBlockIdx()))"):
        launch(all_blocks_set, 2, np.zeros(N, float32))


@kernel
def past_the_end(z):
    zGm = GlobalTensor(float32)
    zGm.SetGlobalBuffer(z, N)
    zGm.GetValue(N)


def test_get_value_out_of_bounds():
    with raises_rule(OutOfBoundsError, f"GetValue({N})", f"0..{N - 1}", at="zGm.GetValue(N)"):
        launch(past_the_end, 1, np.zeros(N, float32))


@kernel
def per_block_slot(z, stride):
    zGm = GlobalTensor(float32)
    zGm.SetGlobalBuffer(z, 4 * 16)
    zGm.SetValue(GetBlockIdx() * stride, float(GetBlockIdx() + 1))


def test_set_value_slots_need_their_own_cache_line():
    z = np.zeros(64, float32)
    launch(per_block_slot, 4, z, 16)                                      # 64-byte slots: fine
    assert (z[::16] == [1, 2, 3, 4]).all()
    with raises_rule(GMWriteConflictError, "same 64-byte cache line", "block 0", "64-byte-aligned slot",
                     at="zGm.SetValue(GetBlockIdx() * stride"):
        launch(per_block_slot, 4, np.zeros(64, float32), 1)              # adjacent floats share a line
