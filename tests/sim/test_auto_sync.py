"""The compiler's auto-sync (自动同步) of scalar hazards: on by default, off with ``launch(..., auto_sync=False)``.

The guide (技术附录/概念原理和术语/内存访问原理/Scalar读写数据.md, "Scalar读写数据时的同步"): GetValue/SetValue on UB and GM
are PIPE_S operations and need no manual flag while the project's auto-sync is on; the API page 同步控制/核内同步/
关键特性说明.md (表1) lists PIPE_S with PIPE_V, PIPE_MTE2 and PIPE_MTE3, both ways, as "编译器自动同步". Each
hazard below runs with the default (the value is right and the consumer waits for the producer in time, as the
inserted SetFlag/WaitFlag would make it) and fails with auto-sync off (the check is not just switched off).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (Add, DataCopy, Duplicate, HardEvent, LaunchError, RaceError, TPipe, TPosition, TQue, half,
                        kernel, launch)
from kernels_util import gm, handoff, raises_rule, scratch

N = 64


@kernel
def copy_then_get(x, z):
    t = scratch(128, half)
    DataCopy(t, gm(x), N)
    gm(z).SetValue(0, t.GetValue(5))  # <- MTE2 then GetValue


@kernel
def set_then_vector(x, z):
    t = scratch(128, half)
    Duplicate(t, 1.0, N)
    handoff(HardEvent.V_S)          # the kernel's own flags around the one hazard under test
    t.SetValue(0, 3.0)
    Add(t, t, t, N)  # <- SetValue then Add
    handoff(HardEvent.V_S)
    gm(z).SetValue(0, t.GetValue(0))


@kernel
def get_then_vector_overwrites(x, z):
    t = scratch(128, half)
    DataCopy(t, gm(x), N)
    handoff(HardEvent.MTE2_S)
    v = t.GetValue(3)
    handoff(HardEvent.MTE2_V)
    Duplicate(t, 7.0, N)  # <- Duplicate over what GetValue read
    handoff(HardEvent.V_S)
    gm(z).SetValue(0, v + t.GetValue(3))


@kernel
def set_then_copy_out(x, z):
    """reduce_computation's scenario 5 in small: SetValue into a VECOUT tensor, EnQue/DeQue, DataCopy on MTE3."""
    pipe = TPipe()
    q = TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(q, 1, 128)
    t = q.AllocTensor(half)
    Duplicate(t, 1.0, N)
    handoff(HardEvent.V_S)
    t.SetValue(1, 5.0)
    q.EnQue(t)
    t = q.DeQue(half)
    DataCopy(gm(z), t, N)  # <- MTE3 copies the scalar's write
    q.FreeTensor(t)


@kernel
def vector_then_copy_out_without_queue(x, z):
    t = scratch(128, half)
    Duplicate(t, 1.0, N)
    DataCopy(gm(z), t, N)  # <- V then MTE3, no queue


@kernel
def round_trip_with_own_flags(x, z):
    t = scratch(128, half)
    DataCopy(t, gm(x), N)
    handoff(HardEvent.MTE2_S)
    t.SetValue(5, t.GetValue(5) + 1.0)
    handoff(HardEvent.S_V)
    Add(t, t, t, N)
    handoff(HardEvent.V_S)
    gm(z).SetValue(0, t.GetValue(5))


def run(k, auto_sync=True):
    x = np.arange(N, dtype=half)
    z = np.zeros(N, half)
    res = launch(k, 1, x, z, auto_sync=auto_sync) if not auto_sync else launch(k, 1, x, z)
    return res, z


def first(res, op, pipe=None, after=-1):
    """The first record of ``op`` (on ``pipe``) after record ``after``, with its index."""
    for i, r in enumerate(res.trace.records):
        if i > after and r.op == op and (pipe is None or r.pipe == pipe):
            return i, r
    raise AssertionError(f"no {op} in the trace")


def test_get_value_waits_for_the_copy_in():
    res, z = run(copy_then_get)
    assert z[0] == 5
    _, copy = first(res, "DataCopy", "MTE2")
    _, get = first(res, "GetValue", "S")
    assert get.start >= copy.end + res.chip.event_latency_cycles        # MTE2_S, as the compiler inserts it


def test_vector_waits_for_the_scalar_write():
    res, z = run(set_then_vector)
    assert z[0] == 6
    i, st = first(res, "SetValue", "S")
    _, add = first(res, "Add", "V")
    assert add.start >= st.end + res.chip.event_latency_cycles          # S_V
    assert add.wait_on == i                                            # the stall is the scalar's, in the trace


def test_vector_write_waits_for_the_scalar_read_before_it():
    res, z = run(get_then_vector_overwrites)
    assert z[0] == 3 + 7
    _, get = first(res, "GetValue", "S")
    _, dup = first(res, "Duplicate", "V")
    assert dup.start >= get.end + res.chip.event_latency_cycles         # S_V before a write over what S read


def test_copy_out_waits_for_the_scalar_write():
    res, z = run(set_then_copy_out)
    assert z[1] == 5 and z[0] == 1 and (z[2:] == 1).all()
    _, st = first(res, "SetValue", "S")
    _, out = first(res, "DataCopy", "MTE3")
    assert out.start >= st.end + res.chip.event_latency_cycles          # S_MTE3


@pytest.mark.parametrize("k, words, at", [
    (copy_then_get, ["GetValue on pipe S reads UB", "pipe MTE2 wrote", "HardEvent.MTE2_S"], "<- MTE2 then GetValue"),
    (set_then_vector, ["Add on pipe V reads UB", "pipe S wrote", "HardEvent.S_V"], "<- SetValue then Add"),
    (get_then_vector_overwrites, ["Duplicate on pipe V overwrites UB", "pipe S read", "HardEvent.S_V"],
     "<- Duplicate over what GetValue read"),
    (set_then_copy_out, ["DataCopy on pipe MTE3 reads UB", "pipe S wrote", "HardEvent.S_MTE3"],
     "<- MTE3 copies the scalar's write"),
], ids=["MTE2_S", "S_V", "S_V-war", "S_MTE3"])
def test_each_hazard_is_a_race_with_auto_sync_off(k, words, at):
    with raises_rule(RaceError, *words, "auto_sync=False", at=at):
        run(k, auto_sync=False)


def test_hazards_auto_sync_does_not_cover_stay_races():
    """V -> MTE3 is the TPipe-TQue framework's to sync (EnQue/DeQue), not the compiler's: a RaceError either way,
    and its message does not blame auto_sync."""
    with raises_rule(RaceError, "DataCopy on pipe MTE3 reads UB", "pipe V wrote", at="<- V then MTE3, no queue") as r:
        run(vector_then_copy_out_without_queue)
    assert "auto_sync=False" not in str(r.value)


def test_a_kernel_with_its_own_flags_runs_the_same_either_way():
    on, z_on = run(round_trip_with_own_flags)
    off, z_off = run(round_trip_with_own_flags, auto_sync=False)
    assert z_on[0] == z_off[0] == 12
    fields = lambda res: [(r.pipe, r.op, r.ready, r.start, r.end, r.wait_on) for r in res.trace.records]  # noqa: E731
    assert fields(on) == fields(off) and on.cycles == off.cycles


def test_auto_sync_must_be_a_bool():
    with raises_rule(LaunchError, "auto_sync must be True or False", "--cce-auto-sync=off"):
        launch(copy_then_get, 1, np.zeros(N, half), np.zeros(N, half), auto_sync="off")
