"""The API around the instructions: GM pointers and GlobalTensor, LocalTensor, TPipe/TQue/TBuf,
scalar GetValue/SetValue and their sync, PipeBarrier, chips, dtypes, errors, the trace."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import ascend_sim
from ascend_sim import (PIPE_ALL, PIPE_V, Add, ArgumentError, Ascend310B, Ascend910, Ascend910B, CapacityError,
                        DataCopy, DataCopyPadExtParams, DataCopyPadParams, DeadlockError, Duplicate, FixpipeParams,
                        FixpipeParamsV220, GlobalTensor, HardEvent, KernelError, OutOfBoundsError, PipeBarrier,
                        PositionError, QuePosition, QueueError, RaceError, SyncError, TBuf, TPipe, TPosition, TQue,
                        UninitializedReadError, bfloat16, float32, half, int8, kernel, launch, pipe_t)
from ascend_sim.hw.chips import get_chip
from ascend_sim.hw.dtypes import as_dtype, ascend_name, is_float
from ascend_sim.engine.instr import PIPES
from kernels_util import gm, handoff, raises_rule, scratch


@kernel
def probe(x, action, seen):
    """Run ``action(x_ptr, seen)`` inside a one-block AIV kernel; it records what it observes."""
    action(x, seen)


def observe(action, x=None, **kw) -> dict:
    seen: dict = {}
    launch(probe, 1, np.zeros(64, half) if x is None else x, action, seen, gm_names=["x"], **kw)
    return seen


# ============================================================================ GM
def test_gm_pointer_arithmetic_counts_elements_and_keeps_the_allocation():
    def action(x, seen):
        seen["ptrs"] = (x + 3, 5 + x, (x + 8) - 2, x.cast(float32) + 1)
        seen["addr"] = x.address
    seen = observe(action)
    p3, p5, p6, f1 = seen["ptrs"]
    assert (p3.offset, p5.offset, p6.offset, f1.offset) == (6, 10, 12, 4)
    assert f1.dtype == float32 and seen["addr"] % 4096 == 0 and repr(p3) == "GmPtr(x+6B, half)"


def test_global_tensor_window_size_and_sub_tensors():
    def action(x, seen):
        whole, window, untyped = GlobalTensor(half), GlobalTensor(half), GlobalTensor()
        whole.SetGlobalBuffer(x + 4)                       # no size: up to the end of the allocation
        window.SetGlobalBuffer(x, 16)
        untyped.SetGlobalBuffer(x.cast(int8))              # dtype from the pointer
        sub = window[10]
        seen.update(sizes=(whole.GetSize(), window.GetSize(), sub.GetSize(), untyped.GetSize()),
                    dtype=untyped.dtype, addr=sub.address - window.address, phy=sub.GetPhyAddr().offset,
                    text=repr(sub))
    seen = observe(action)
    assert seen["sizes"] == (60, 16, 6, 128) and seen["dtype"] == int8
    assert seen["addr"] == seen["phy"] == 20 and seen["text"].startswith("GlobalTensor<half>(GmPtr(x+20B")


@pytest.mark.parametrize("action, words", [
    (lambda x, seen: GlobalTensor(half)[4], ["GlobalTensor used before SetGlobalBuffer", "SetGlobalBuffer(x + offset"]),
    (lambda x, seen: GlobalTensor(half).SetGlobalBuffer(np.zeros(4)),
     ["SetGlobalBuffer expects a GM address", "got ndarray"]),
], ids=["unset", "not-a-pointer"])
def test_global_tensor_misuse(action, words):
    with raises_rule(ArgumentError, *words, at=action):
        observe(action)


# ============================================================================ LocalTensor
def test_local_tensor_views():
    def action(x, seen):
        pipe = TPipe()
        q = TQue(TPosition.VECIN, 1)
        pipe.InitBuffer(q, 1, 256)
        t = q.AllocTensor(half)
        sub, cut = t[32], t[16:48]
        as_float = t.ReinterpretCast(float32)
        seen.update(t=(t.GetSize(), t.GetLength(), t.GetPhyAddr(), t.GetPosition()), sub=(sub.GetSize(), sub.addr),
                    cut=(cut.GetSize(), cut.addr), f=(as_float.GetSize(), as_float.dtype), text=repr(sub))
        Duplicate(t, 1.5, 128)
        seen["peek"] = t[120].peek()
        q.FreeTensor(t)
    seen = observe(action)
    assert seen["t"] == (128, 256, 0, TPosition.VECIN)
    assert seen["sub"] == (96, 64) and seen["cut"] == (32, 32) and seen["f"] == (64, float32)
    assert seen["text"] == "LocalTensor<half>(UB@64, size=96, VECIN)"
    assert np.array_equal(seen["peek"], np.full(8, 1.5, half))


@pytest.mark.parametrize("action, error, words", [
    (lambda x, seen: scratch(128, half)[0:64:2], ArgumentError, ["LocalTensor slices must be contiguous (step 1)"]),
    (lambda x, seen: scratch(128, half)[65], OutOfBoundsError,
     ["offset 65 outside LocalTensor of 64 half elements", "UB bytes 0..127"]),
], ids=["strided-slice", "offset-past-end"])
def test_local_tensor_indexing_errors(action, error, words):
    with raises_rule(error, *words, at=action):
        observe(action)


# ============================================================================ TPipe / TQue / TBuf
@kernel
def layout(x):
    pipe = TPipe()
    q, t = TQue(TPosition.VECIN, 2), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(q, 2, 100)                 # 100 bytes round up to 128 per buffer
    pipe.InitBuffer(t, 40)
    a = q.AllocTensor(half)
    b = q.AllocTensor(float32)
    assert (a.addr, a.GetSize(), b.addr, b.GetSize()) == (0, 50, 128, 25)
    assert t.Get(half).addr == 256 and t.Get(half).GetSize() == 32 and t.Get(float32, 3).GetSize() == 3
    q.FreeTensor(a)
    q.FreeTensor(b)


def test_init_buffer_rounds_to_the_tier_alignment_and_packs_buffers():
    result = launch(layout, 1, np.zeros(16, half))
    assert result.buffers[(0, "AIV")]["UB"] == [("q", 0, 256), ("t", 256, 64)]


@kernel(core="AIC")
def l0_layout(x):
    pipe = TPipe()
    qa, qc = TQue(TPosition.A2, 1), TQue(TPosition.CO1, 1)
    pipe.InitBuffer(qa, 1, 100)
    pipe.InitBuffer(qc, 1, 100)


def test_l0_buffers_round_to_512_and_64_bytes():
    result = launch(l0_layout, 1, np.zeros(16, half))
    tiers = result.buffers[(0, "AIC")]
    assert tiers["L0A"] == [("qa", 0, 512)] and tiers["L0C"] == [("qc", 0, 128)]


def test_queue_fifo_depth_dtype_and_event_ids():
    def action(x, seen):
        pipe = TPipe()
        q = TQue(TPosition.VECOUT, 2)
        pipe.InitBuffer(q, 2, 64)
        a, b = q.AllocTensor(half), q.AllocTensor(half)
        Duplicate(a, 1.0, 32)
        Duplicate(b, 2.0, 32)
        q.EnQue(a)
        seen["vacant"] = (q.VacantInQue(), q.GetTensorCountInQue())
        q.EnQue(b)
        seen["full"] = (q.VacantInQue(), q.GetTensorCountInQue())
        first = q.DeQue(float32)                                  # DeQue<float>: the same bytes as float
        seen["first"] = (first.dtype, first.GetSize(), first.addr)
        q.FreeTensor(first)
        q.FreeTensor(q.DeQue(half))
        # FetchEventID.md: "此接口不会申请TEventID，仅提供可用的TEventID" (the same id until AllocEventID holds it)
        fetched = [pipe.FetchEventID(HardEvent.V_MTE3) for _ in range(3)]
        held = [pipe.AllocEventID(HardEvent.V_MTE3) for _ in range(2)]
        pipe.ReleaseEventID(HardEvent.V_MTE3, held[0])
        seen["ids"] = fetched + held + [pipe.FetchEventID(HardEvent.V_MTE3), pipe.AllocEventID(HardEvent.MTE2_V)]
    seen = observe(action)
    assert seen["vacant"] == (True, 1) and seen["full"] == (False, 2)
    assert seen["first"] == (float32, 16, 0)
    assert seen["ids"] == [0, 0, 0, 0, 1, 0, 0]


def test_pipe_reset_releases_the_buffers():
    def action(x, seen):
        pipe = TPipe()
        q = TQue(TPosition.VECIN, 1)
        pipe.InitBuffer(q, 1, 150 * 1024)
        pipe.Reset()
        pipe.InitBuffer(TQue(TPosition.VECIN, 1), 1, 150 * 1024)      # would not fit without the reset
        seen["ok"] = True
    assert observe(action)["ok"]
    with raises_rule(CapacityError, "UB capacity exceeded"):
        observe(lambda x, seen: [TPipe().InitBuffer(TQue(TPosition.VECIN, 1), 1, 150 * 1024) for _ in range(2)])


@pytest.mark.parametrize("action, error, words", [
    (lambda x, seen: TQue(TPosition.VECCALC, 1), PositionError,
     ["TQue cannot live at TPosition.VECCALC", "use TBuf for VECCALC scratch space"]),
    (lambda x, seen: TPipe().InitBuffer(TBuf(TPosition.CO2), 64), PositionError,
     ["TPosition.CO2 has no on-chip buffer in this simulator"]),
    (lambda x, seen: TPipe().InitBuffer(TQue(TPosition.VECIN, 1), 0, 64), QueueError,
     ["need at least one buffer of at least one byte"]),
    (lambda x, seen: TQue(TPosition.VECIN, 1).AllocTensor(half), QueueError, ["AllocTensor on a queue that has no "
                                                                              "buffers", "pipe.InitBuffer(que, num"]),
    (lambda x, seen: TBuf(TPosition.VECCALC).Get(half), QueueError, ["TBuf.Get before pipe.InitBuffer(tbuf, bytes)"]),
], ids=["tque-at-veccalc", "no-buffer-position", "zero-buffers", "queue-not-initialised", "tbuf-not-initialised"])
def test_pipe_and_buffer_misuse(action, error, words):
    with raises_rule(error, *words, at=action):
        observe(action)


def test_wait_merges_the_clocks_in_place_and_leaves_the_event_alone():
    """Core.wait takes the elementwise max into the waiting pipe's own clock (in place): the event keeps its
    clock, and the pipes' clocks stay separate lists, so later work on one pipe shows in no other clock."""
    from ascend_sim.engine import context
    from ascend_sim.engine.core import M, MTE1, MTE2

    def action(x, seen):
        core = context.current
        core.vc[MTE1][MTE1], core.vc[MTE1][MTE2] = 5, 2
        core.vc[M][MTE2] = 9                    # M already knows more of MTE2 than the event does
        ev = core.snapshot(MTE1)
        before = list(ev.vc)
        core.wait(M, ev)
        seen["merged"] = core.vc[M][MTE1], core.vc[M][MTE2]
        core.vc[M][M] += 3                      # M's later work ...
        seen["event"] = ev.vc == before
        seen["mte1"] = core.vc[MTE1][M]         # ... is not in MTE1's clock
        seen["lists"] = len({id(v) for v in core.vc}) == len(core.vc)
        seen["gate"] = core.gate[M] >= ev.time + core.event_latency
    seen = observe(action)
    assert seen == {"merged": (5, 9), "event": True, "mte1": 0, "lists": True, "gate": True}


# ============================================================================ scalar access and its sync
def scalar_round_trip(x, seen):
    t = scratch(128, half)
    DataCopy(t, gm(x), 64)
    handoff(HardEvent.MTE2_S)                  # the scalar unit reads what MTE2 wrote
    seen["before"] = t.GetValue(5)
    t.SetValue(5, 42.5)
    handoff(HardEvent.S_V)                     # the vector unit reads what the scalar wrote
    Add(t, t, t, 64)
    handoff(HardEvent.V_S)
    seen["after"] = (t.GetValue(5), t.GetValue(6))


def test_get_and_set_value_with_their_flags():
    seen = observe(scalar_round_trip, x=np.arange(64, dtype=half))
    assert seen == {"before": 5.0, "after": (85.0, 12.0)}


def get_value_without_sync(x, seen):
    t = scratch(128, half)
    DataCopy(t, gm(x), 64)
    seen["v"] = t.GetValue(5)  # <- scalar reads too early


def vector_reads_set_value_without_sync(x, seen):
    t = scratch(128, half)
    Duplicate(t, 0.0, 64)
    handoff(HardEvent.V_S)
    t.SetValue(0, 1.0)
    Add(t, t, t, 64)  # <- vector reads the scalar's write too early


@pytest.mark.parametrize("action, words, at", [
    (get_value_without_sync, ["GetValue on pipe S reads UB bytes from 0 that pipe MTE2 wrote", "HardEvent.MTE2_S"],
     "<- scalar reads too early"),
    (vector_reads_set_value_without_sync, ["Add on pipe V reads UB bytes from 0 that pipe S wrote", "HardEvent.S_V"],
     "<- vector reads the scalar's write too early"),
], ids=["MTE2-then-GetValue", "SetValue-then-vector"])
def test_scalar_access_needs_sync_with_auto_sync_off(action, words, at):
    """The compiler's auto-sync off (--cce-auto-sync=off): the kernel's own flag is missing (tests/sim/test_auto_sync.py:
    with it on, the default, the same kernels run)."""
    with raises_rule(RaceError, *words, "auto_sync=False", at=at):
        observe(action, auto_sync=False)


@pytest.mark.parametrize("action, error, words", [
    (lambda x, seen: scratch(128, half).GetValue(64), OutOfBoundsError,
     ["GetValue(64) outside the tensor's 64 half", "use an index in 0..63"]),
    (lambda x, seen: scratch(128, half).SetValue(-1, 0), OutOfBoundsError, ["SetValue(-1) outside"]),
    (lambda x, seen: scratch(128, half).GetValue(3), UninitializedReadError, ["GetValue on S reads UB bytes 0..31"]),
], ids=["get-past-end", "set-negative", "get-uninitialised"])
def test_scalar_access_errors(action, error, words):
    with raises_rule(error, *words, at=action):
        observe(action)


def test_pipe_barrier_records():
    def action(x, seen):
        t = scratch(128, half)
        Duplicate(t, 1.0, 64)
        PipeBarrier(PIPE_V)
        PipeBarrier(PIPE_ALL)
        seen["v"] = t.GetValue(0)                  # PIPE_ALL also orders the scalar after V
    result = launch(probe, 1, np.zeros(16, half), action, {})
    barriers = [(r.pipe, r.op) for r in result.trace if r.op == "PipeBarrier"]
    assert barriers == [("V", "PipeBarrier"), ("S", "PipeBarrier")]


def test_hard_events_and_pipes():
    assert (HardEvent.MTE2_V.src, HardEvent.MTE2_V.dst) == (PIPES.index("MTE2"), PIPES.index("V"))
    assert {p.value for p in pipe_t} == set(PIPES) | {"ALL"}
    assert all(e.name == f"{e.value[0]}_{e.value[1]}" for e in HardEvent)


# ============================================================================ chips, dtypes, aliases
def test_chip_profiles():
    b, c, e = Ascend910B(), Ascend910(), Ascend310B()
    assert (b.separated, b.aic_count, b.aiv_count, b.ub_usable_bytes, b.l1_bytes) == (True, 24, 48, 184 * 1024,
                                                                                      512 * 1024)
    assert not c.separated and c.ub_usable_bytes == 248 * 1024 and e.cores_for("AIV") == 1
    assert get_chip(None) == b and get_chip("Ascend910") == c and get_chip(e) is e
    assert b.cycles_to_us(b.clock_ghz * 1e3) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown chip 'Ascend999'"):
        get_chip("Ascend999")


def test_custom_chip_capacity():
    small = dataclasses.replace(Ascend910B(), ub_usable_bytes=1024)
    with raises_rule(CapacityError, "1024 bytes are usable"):
        observe(lambda x, seen: scratch(2048, half), chip=small)


def test_dtype_names():
    assert as_dtype("half") == half and as_dtype("float") == float32 and as_dtype("bfloat16_t") == bfloat16
    assert as_dtype("int8_t") == int8 and as_dtype(np.float16) == half
    assert [ascend_name(d) for d in (half, float32, bfloat16, int8)] == ["half", "float", "bfloat16_t", "int8_t"]
    assert is_float(bfloat16) and not is_float(int8)


def test_ascend_c_aliases():
    assert QuePosition is TPosition and DataCopyPadParams is DataCopyPadExtParams
    assert FixpipeParamsV220 is FixpipeParams and TPipe.Destroy is TPipe.Reset
    assert TPipe.Destroy is TPipe.Reset


# ============================================================================ errors
def test_kernel_error_message_layout():
    with pytest.raises(OutOfBoundsError) as info:
        observe(lambda x, seen: scratch(128, half).GetValue(99))
    err = info.value
    lines = str(err).splitlines()
    assert lines[0].startswith("[memcheck] test_core_api.py:") and "`observe(lambda x, seen:" in lines[0]
    assert lines[1] == f"  {err.rule_message}" and lines[2] == f"  Fix: {err.fix}"
    assert err.line == lines[0].removeprefix("[memcheck] ")


def test_error_classes():
    assert all(issubclass(getattr(ascend_sim, n), KernelError) for n in ascend_sim.__dict__
               if n.endswith("Error") and isinstance(getattr(ascend_sim, n), type))
    assert issubclass(DeadlockError, SyncError)
    assert {c.check for c in (UninitializedReadError, RaceError, SyncError, OutOfBoundsError)} == {
        "initcheck", "racecheck", "synccheck", "memcheck"}


# ============================================================================ the trace
def test_trace_records_and_exports(tmp_path):
    result = launch(probe, 1, np.arange(64, dtype=half), scalar_round_trip, {})
    recs = list(result.trace)
    assert [r.index for r in recs] == list(range(len(recs))) == list(range(len(result.trace)))
    assert all(r.pipe in PIPES and r.ready <= r.start <= r.end and r.core == 0 for r in recs)
    copy = recs[0]
    assert (copy.op, copy.pipe, copy.src, copy.dst, copy.nbytes) == ("DataCopy", "MTE2", "GM", "UB", 128)
    assert copy.source == "DataCopy(t, gm(x), 64)" and copy.as_dict()["line"] == copy.line
    assert copy.cycles == copy.end - copy.start and copy.stall == copy.start - copy.ready
    assert result.trace.for_core(0, "AIV") == recs and result.trace.for_core(1) == []
    assert result.cycles == max(r.end for r in recs) and result.us == result.chip.cycles_to_us(result.cycles)
    assert "no pipe saturated; busiest MTE2" in str(result.profile())     # 12 instructions: nothing saturates
    path = tmp_path / "t.json"
    result.to_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == len(recs)
