"""The blocks of a wave advance together in simulated time (engine/scheduler.py, issue 30).

Where the blocks can oversubscribe the HBM, shared state is decided in the chip's order: in an HBM-bound launch the blocks share the HBM and end
together; the first GM write to a byte in simulated time is the one a later write conflicts with,
whichever block index it has; the trace stays deterministic.
"""
from __future__ import annotations

import dataclasses
import os
import sys

import numpy as np

from ascend_sim import (Ascend910B, GMWriteConflictError, DataCopy, Duplicate, GetBlockIdx, HardEvent, half, kernel, launch)
from ascend_sim.engine import scheduler
from kernels_util import gm, handoff, raises_rule, scratch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import add_case_study  # noqa: E402


def _end_spread(res) -> float:
    ends = [t[3] for t in res.core_times]
    return max(ends) / min(ends) - 1


def test_blocks_of_an_hbm_bound_launch_end_within_5_percent():
    res, _ = add_case_study.run_case(48, numerics=False)    # the Add case study's case 2 (RESULTS 1): HBM-bound
    assert res.profile().bound == "MTE2"
    assert _end_spread(res) < 0.05, [round(t[3]) for t in res.core_times]


def test_blocks_run_one_after_another_end_far_apart(monkeypatch):
    """The check above fails on the old model: with no time slice limit block 0 books the HBM first."""
    monkeypatch.setattr(scheduler, "TIME_SLICE", float("inf"))
    res, _ = add_case_study.run_case(48, numerics=False)
    assert _end_spread(res) > 0.05


@kernel
def late_and_early_writer(z, delay: int):
    """Block 0 writes z[0:16] after ``delay`` Duplicates; block 1 writes the same bytes at once (no sync)."""
    b = GetBlockIdx()
    t = scratch(512, half)
    for _ in range(delay if b == 0 else 0):
        Duplicate(t, float(b), 256)
    Duplicate(t, float(b), 256)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z), t, 16)  # <- the write


SLOW_HBM = dataclasses.replace(Ascend910B(), hbm_bytes_per_cycle=48.0)   # two AIVs can oversubscribe it, and
# z (128 KB) takes longer than a time slice to stream through it: the launch runs in time order


def test_the_first_write_in_simulated_time_is_the_one_conflicted_with():
    with raises_rule(GMWriteConflictError, "block 0 (AIV) writes GM buffer 'z'", "already written by block 1",
                     at="<- the write"):
        launch(late_and_early_writer, 2, np.zeros(65536, half), 200, chip=SLOW_HBM, gm_names=["z"])
    with raises_rule(GMWriteConflictError, "block 1 (AIV) writes GM buffer 'z'", "already written by block 0",
                     at="<- the write"):
        launch(late_and_early_writer, 2, np.zeros(65536, half), 0, chip=SLOW_HBM, gm_names=["z"])


def test_time_ordered_traces_are_deterministic():
    runs = [add_case_study.run_case(48, side=512)[0] for _ in range(2)]
    a, b = (r.trace.records for r in runs)
    assert [x.as_dict() for x in a] == [y.as_dict() for y in b]
    assert len({r.core for r in a[:200]}) > 1       # the blocks' records interleave: they ran together


TINY_HBM = dataclasses.replace(Ascend910B(), hbm_bytes_per_cycle=0.5)    # every launch below runs in time order


def test_syncall_atomics_and_mix_hand_offs_keep_their_semantics_in_time_order(monkeypatch):
    import test_sanitizer_gm as gmk
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "conformance"))
    import test_cube_mix as mix
    ordered = []
    real = scheduler.Launch.time_ordered
    monkeypatch.setattr(scheduler.Launch, "time_ordered", lambda self: ordered.append(real(self)) or ordered[-1])
    x, z, out = np.arange(64, dtype=half), np.zeros(64, half), np.zeros(64, half)
    launch(gmk.two_phase, 4, x, z, out, True, chip=TINY_HBM)                  # SyncAll between two phases
    assert np.array_equal(out, x + 11)                  # the last block read every block's z = x + 1, added 10
    acc = np.zeros(16, half)
    launch(gmk.zero_then_add, 3, np.ones(16, half), acc, chip=TINY_HBM)       # plain write, SyncAll, atomic adds
    assert np.array_equal(acc, np.full(16, 3, half))
    rng = np.random.default_rng(6)
    a = rng.integers(-4, 5, (3 * mix.M, mix.K)).astype(half)
    b = rng.integers(-4, 5, (mix.K, mix.N)).astype(half)
    work, y = np.zeros((3 * mix.M, mix.N), np.float32), np.full((3 * mix.M, mix.N), np.nan, np.float32)
    launch(mix.matmul_leaky_relu, 3, a, b, work, y, chip=TINY_HBM)           # MIX: AIC -> AIV cross-core flags
    c = a.astype(np.float32) @ b.astype(np.float32)
    assert np.array_equal(work, c) and np.array_equal(y, np.where(c > 0, c, c * np.float32(mix.ALPHA)))
    assert ordered == [True, True, True]


def test_the_one_step_turn_makes_the_scheduler_s_choice(monkeypatch):
    """``time_yield``'s usual turn (only blocks waiting for time: one heappushpop) runs the blocks in the order,
    and so with the records and cycles, that the general choice (``_pick`` through ``_suspend``) gives."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
    import trace_hash
    fast = add_case_study.run_case(48, side=512, numerics=False)[0]
    monkeypatch.setattr(scheduler.Launch, "time_yield", scheduler.Launch._wait_for_time)
    general = add_case_study.run_case(48, side=512, numerics=False)[0]
    assert fast.cycles == general.cycles
    assert trace_hash.digest([fast]) == trace_hash.digest([general])
    assert len({r.core for r in fast.trace.records[:200]}) > 1     # the blocks took turns


def test_blocks_in_time_order_each_get_their_own_products(monkeypatch):
    """Mmad's working arrays are the launch's (api/ops/cube._scratch), shared by every block and plan: blocks that
    take turns mid-tile still each get their own exact products, and A's and B's arrays stay apart even where
    their shapes are equal (square L0 tiles: 4 x 4 fractals each)."""
    import catlass_matmul as cm
    ordered = []
    real = scheduler.Launch.time_ordered
    monkeypatch.setattr(scheduler.Launch, "time_ordered", lambda self: ordered.append(real(self)) or ordered[-1])
    t = cm.Tiling(64, 64, 64, 64, 256, 256, 128, 4)        # 16 C tiles over 4 blocks, two K steps each
    rng = np.random.default_rng(30)
    a = rng.integers(-4, 5, (t.m, t.k)).astype(half)
    bt = rng.integers(-4, 5, (t.n, t.k)).astype(half)     # B^T (CATLASS's ColumnMajor B)
    c = np.zeros((t.m, t.n), half)
    res = launch(cm.catlass_matmul, 4, a, bt, c, t, chip=TINY_HBM, gm_names=["a", "b", "c"])
    assert ordered == [True]
    assert len({r.core for r in res.trace.records[:100]}) > 1      # the blocks took turns
    assert np.array_equal(c, (a.astype(np.float32) @ bt.astype(np.float32).T).astype(half))
