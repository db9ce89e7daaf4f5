"""Launches: block indices, waves, SyncAll, cross-core flags in MIX kernels, determinism, launch errors."""
from __future__ import annotations

import os

import numpy as np
import pytest

from ascend_sim import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_FIX, PIPE_MTE2, PIPE_MTE3, PIPE_V, Adds, Duplicate, Ascend910, Ascend910B,
                        ArgumentError, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DeadlockError, GetBlockIdx,
                        GetBlockNum, GetSubBlockIdx, GetSubBlockNum, HardEvent, LaunchError, LaunchResult, Muls, RaceError, SyncError,
                        SyncAll, TPipe, TPosition, float32, half, kernel, launch)
from ascend_sim.kernels.add_custom import run_add_custom
from kernels_util import cube_16x16, assert_same, gm, handoff, line_of, raises_rule, scratch


@kernel(core="MIX")
def who_am_i(log):
    log.append((GetBlockIdx(), GetBlockNum(), GetSubBlockIdx(), GetSubBlockNum(), ASCEND_IS_AIV(), ASCEND_IS_AIC()))


@pytest.mark.parametrize("core", ["AIV", "AIC"])
def test_block_index_and_number(core):
    log = []
    launch(kernel(who_am_i.fn, core=core), 3, log)
    is_aiv = core == "AIV"
    assert log == [(b, 3, 0, 1, is_aiv, not is_aiv) for b in range(3)]


def test_mix_kernel_runs_one_aic_and_two_aiv_per_block():
    log = []
    result = launch(who_am_i, 2, log)
    aic = [(g, 2, 0, 2, False, True) for g in range(2)]
    aiv = [(2 * g + s, 2, s, 2, True, False) for g in range(2) for s in range(2)]     # GetBlockNum() = numBlocks
    assert log == [aic[0], aiv[0], aiv[1], aic[1], aiv[2], aiv[3]]
    assert [(idx, ctype) for idx, ctype, *_ in result.core_times] == [(0, "AIC"), (0, "AIV"), (1, "AIV"),
                                                                      (1, "AIC"), (2, "AIV"), (3, "AIV")]


def test_mix_kernel_on_a_coupled_chip_runs_on_ai_cores():
    log = []
    launch(who_am_i, 2, log, chip=Ascend910())
    assert log == [(b, 2, 0, 1, True, True) for b in range(2)]


def test_bracket_launch_and_chip_names():
    log = []
    result = who_am_i[2, "Ascend910"](log)
    assert isinstance(result, LaunchResult) and result.chip.name == "Ascend910" and len(log) == 2
    launch(kernel(who_am_i.fn), 1, log, chip="Ascend310B")
    assert log[-1] == (0, 1, 0, 1, True, True)                   # coupled chip: an AI Core


# ============================================================================ waves
@kernel
def copy_tile(x, n):
    DataCopy(scratch(n * 2, half), gm(x), n)


def test_blocks_beyond_the_core_count_run_in_waves():
    cores = Ascend910B().aiv_count
    result = launch(copy_tile, cores + 2, np.zeros(256, half), 256)
    start = {b: s for b, _, s, _, _ in result.core_times}
    end = {b: e for b, _, _, e, _ in result.core_times}
    assert all(start[b] == 0 for b in range(cores))
    first_free = sorted(end[b] for b in range(cores))      # block 0 misses in L2, the others hit: it ends last
    assert start[cores] == first_free[0] > 0 and start[cores + 1] == first_free[1]
    assert result.cycles == max(end.values())


@kernel
def first_wave_waits_for_second(x):
    if GetBlockIdx() < 48:
        CrossCoreWaitFlag(1)  # <- the first wave waits
    else:
        CrossCoreSetFlag(0, PIPE_MTE2, 1)


def test_first_wave_waiting_on_the_second_deadlocks():
    """Every core is held by a parked first-wave block, so block 48 never starts (as on the device)."""
    with raises_rule(DeadlockError, "block 0 (AIV) waits for CrossCoreWaitFlag(1)", "block 47 (AIV) waits",
                     at="<- the first wave waits"):
        launch(first_wave_waits_for_second, 49, np.zeros(16, half))


# ============================================================================ SyncAll
@kernel
def neighbour_exchange(x, out, n):
    """Block i doubles its slice of x in place, SyncAll, then copies block (i+1)'s slice to out."""
    i, blocks = GetBlockIdx(), GetBlockNum()
    t, xg, outg = scratch(n * 2, half), gm(x), gm(out)
    for _ in range(i + 1):                       # unequal work: later blocks arrive later
        DataCopy(t, xg[i * n], n)
    handoff(HardEvent.MTE2_V)
    Muls(t, t, 2.0, n)
    handoff(HardEvent.V_MTE3)
    DataCopy(xg[i * n], t, n)  # <- last write before the barrier
    SyncAll()
    DataCopy(t, xg[(i + 1) % blocks * n], n)  # <- first read after the barrier
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(outg[i * n], t, n)


def records_at(result, marker: str) -> dict[int, object]:
    """Per core, the first trace record issued by the line of this file marked ``marker``."""
    line = f"{os.path.basename(__file__)}:{line_of(__file__, marker)}"
    found: dict[int, object] = {}
    for r in result.trace:
        if r.line == line:
            found.setdefault(r.core, r)
    return found


def all_at(result, marker: str) -> list:
    """Every trace record issued by the line of this file marked ``marker``."""
    line = f"{os.path.basename(__file__)}:{line_of(__file__, marker)}"
    return [r for r in result.trace if r.line == line]


def test_sync_all_orders_gm_writes_before_reads_and_releases_every_block_together():
    blocks, n = 4, 64
    x = np.arange(blocks * n, dtype=half)
    out = np.zeros_like(x)
    result = launch(neighbour_exchange, blocks, x.copy(), out, n)
    assert_same(out, np.roll(x * 2, -n))
    arrive = {b: r.end for b, r in records_at(result, "<- last write before the barrier").items()}
    resume = {b: r.start for b, r in records_at(result, "<- first read after the barrier").items()}
    assert arrive[0] < arrive[blocks - 1]
    release = max(arrive.values()) + result.chip.sync_all_cycles
    assert all(resume[b] >= release for b in range(blocks))
    assert resume[0] == resume[blocks - 1]


# ============================================================================ SyncAll<isAIVOnly> in MIX kernels
@kernel(core="MIX")
def aic_busy_then_sync(x, aiv_only):
    """The AIC loads eight distinct 512 B pieces of x into L1 (it arrives late: each misses L2 and pays its copy
    start; a piece L2 already holds would pay none); every core then calls SyncAll(isAIVOnly=aiv_only)."""
    if ASCEND_IS_AIC():
        a1 = scratch(512, half, TPosition.A1)
        for i in range(8):
            DataCopy(a1, gm(x)[i * 256], 256)
        SyncAll(isAIVOnly=aiv_only)  # <- AIC arrives
        return
    SyncAll(isAIVOnly=aiv_only)
    t = scratch(512, half)
    DataCopy(t, gm(x), 256)  # <- AIV goes on


def sync_points(aiv_only: bool) -> tuple[float, list[float], float]:
    result = launch(aic_busy_then_sync, 2, np.zeros(8 * 256, half), aiv_only)
    aic_arrive = max(r.end for r in result.trace if r.core_type == "AIC")
    resumes = [r.start for r in records_at(result, "<- AIV goes on").values()]
    return aic_arrive, resumes, result.chip.sync_all_cycles


def test_sync_all_false_joins_the_cube_and_vector_cores_of_a_mix_kernel():
    aic_arrive, resumes, cost = sync_points(aiv_only=False)
    assert len(resumes) == 4 and min(resumes) >= aic_arrive + cost


def test_sync_all_default_joins_only_the_vector_cores_of_a_mix_kernel():
    """SyncAll() is SyncAll<true>(): the AIV barrier does not wait for the AIC (the SyncAll API page, isAIVOnly)."""
    aic_arrive, resumes, _ = sync_points(aiv_only=True)
    assert len(resumes) == 4 and max(resumes) < aic_arrive


@kernel(core="MIX")
def only_aiv_sync(x):
    if ASCEND_IS_AIV():
        SyncAll()
        t = scratch(512, half)
        DataCopy(t, gm(x), 256)


@kernel(core="MIX")
def only_aiv_sync_all_cores(x):
    if ASCEND_IS_AIV():
        SyncAll(isAIVOnly=False)


def test_a_mix_kernel_whose_aic_skips_sync_all():
    launch(only_aiv_sync, 2, np.zeros(256, half))                 # the AIC is not part of SyncAll<true>()
    with raises_rule(DeadlockError, "SyncAll at", "(2 block(s) have not arrived)"):
        launch(only_aiv_sync_all_cores, 2, np.zeros(256, half))


def test_sync_all_false_in_a_vector_only_kernel_hangs_the_chip():
    with raises_rule(DeadlockError, "SyncAll<false>() in a vector-only (AIV) kernel", "use SyncAll()",
                     at="SyncAll(isAIVOnly=False)  # vector"):
        launch(kernel(lambda: SyncAll(isAIVOnly=False)  # vector
                      ), 2)
    with raises_rule(ArgumentError, "isAIVOnly is 1, not a bool"):
        launch(kernel(lambda: SyncAll(1)), 1)


# ============================================================================ cross-core flags (MIX)
@kernel(core="MIX")
def vector_feeds_cube(x, work, c):
    """AIV 0 stages x (16x16 half) into GM, flags the AIC; the AIC computes x @ I and writes c (float)."""
    if ASCEND_IS_AIV():
        if GetSubBlockIdx() == 0:
            t = scratch(512, half)
            DataCopy(t, gm(x), 256)
            handoff(HardEvent.MTE2_MTE3)
            DataCopy(gm(work), t, 256)  # <- AIV writes the workspace
            CrossCoreSetFlag(2, PIPE_MTE3, 4)
        else:
            CrossCoreSetFlag(2, PIPE_MTE3, 4)   # mode 2: the AIC's counter rises when BOTH AIVs have reported
        return
    CrossCoreWaitFlag(4)
    pipe = TPipe()
    a1, b1 = scratch(512, half, TPosition.A1, pipe), scratch(512, half, TPosition.B1, pipe)
    DataCopy(a1, gm(work), 256)  # <- AIC reads the workspace
    DataCopy(b1, gm(work + 256), 256)                                 # the identity matrix
    cube_16x16(a1, b1, c, pipe)


def run_vector_feeds_cube():
    x = (np.arange(256) % 13 - 6).astype(half)
    work = np.concatenate([np.zeros(256), np.eye(16).ravel()]).astype(half)
    c = np.zeros(256, np.float32)
    return x, c, launch(vector_feeds_cube, 1, x, work, c)


def test_cross_core_flag_hands_gm_data_from_aiv_to_aic():
    x, c, result = run_vector_feeds_cube()
    assert_same(c, x.astype(np.float32))
    (write,) = records_at(result, "<- AIV writes the workspace").values()
    (read,) = records_at(result, "<- AIC reads the workspace").values()
    assert (write.core_type, read.core_type) == ("AIV", "AIC")
    assert read.start >= write.end + result.chip.cross_core_flag_cycles


@kernel(core="MIX")
def one_aiv_reports(x, work):
    """Only AIV 0 reports flag 4 in mode 2 (AIV 1 has nothing to hand over): the AIC waits for ever on the chip."""
    if ASCEND_IS_AIV():
        if GetSubBlockIdx() == 0:
            CrossCoreSetFlag(2, PIPE_MTE3, 4)
        return
    CrossCoreWaitFlag(4)  # <- the AIC waits for both AIVs


def test_mode_2_raises_the_aic_only_when_every_aiv_of_its_core_has_reported():
    """The API reference (核间同步/关键特性说明): "two AIVs have both set -> the AIC's counter +1"."""
    with raises_rule(DeadlockError, "block 0 (AIC) waits for CrossCoreWaitFlag(4)",
                     "mode 2 (an AIC and the AIVs of its AI Core) raises it only when 2 cores have all reported: "
                     "block 0 (AIV) did, block 1 (AIV) (it ended) did not", "on every AIV of the AI Core",
                     at="<- the AIC waits for both AIVs"):
        launch(one_aiv_reports, 1, np.zeros(16, half), np.zeros(16, half))


@kernel(core="MIX")
def aic_waits_once_for_two_aivs(x, ends):
    """AIV 1 reports late (after a long vector loop): the AIC's one wait ends after the LATER report; a second
    wait on the same flag would need a second round of both AIVs."""
    if ASCEND_IS_AIV():
        t = scratch(512, half)
        Duplicate(t, 0.0, 256)
        if GetSubBlockIdx() == 1:
            for _ in range(40):
                Adds(t, t, 1.0, 256)  # <- AIV 1 works
        CrossCoreSetFlag(2, PIPE_V, 6)
        return
    CrossCoreWaitFlag(6)
    a1 = scratch(512, half, TPosition.A1)
    DataCopy(a1, gm(x), 256)  # <- AIC goes on


def test_mode_2_aic_goes_on_at_the_later_aiv_report():
    result = launch(aic_waits_once_for_two_aivs, 1, np.zeros(256, half), np.zeros(16, half))
    work = all_at(result, "<- AIV 1 works")
    (go,) = records_at(result, "<- AIC goes on").values()
    last = max(r.end for r in work)                 # AIV 1's V pipe is done: its report goes out
    assert len(work) == 40 and last > 800           # AIV 0 reported near cycle 0
    assert go.start >= last + result.chip.cross_core_flag_cycles


@kernel(core="MIX")
def aics_meet(x):
    """Mode 0 on the AICs: each AIC copies its tile in (AIC 1 seven times), then all AICs meet. The AIVs run their
    own mode-0 round on the same flag id, which does not involve the AICs."""
    if ASCEND_IS_AIV():
        CrossCoreSetFlag(0, PIPE_V, 3)
        CrossCoreWaitFlag(3)
        return
    i = GetBlockIdx()
    t = scratch(512, half, TPosition.A1)
    for _ in range(1 + 6 * i):
        DataCopy(t, gm(x)[i * 256], 256)  # <- AIC copies
    CrossCoreSetFlag(0, PIPE_MTE2, 3)
    CrossCoreWaitFlag(3)
    DataCopy(t, gm(x)[i * 256], 256)  # <- AIC passes the barrier


def test_mode_0_is_a_barrier_of_the_cores_of_one_type():
    result = launch(aics_meet, 2, (np.arange(512) % 7).astype(half))
    copies = all_at(result, "<- AIC copies")
    goes = records_at(result, "<- AIC passes the barrier")
    last = max(r.end for r in copies)               # AIC 1's seventh copy
    assert len(copies) == 8 and len(goes) == 2 and {r.core_type for r in goes.values()} == {"AIC"}
    assert all(g.start >= last + result.chip.cross_core_flag_cycles for g in goes.values())


@kernel(core="MIX")
def aiv_reuses_ub_after_the_aic_answers(x, work, answered):
    """Each AIV fills t (V), copies it out (MTE3), reports on PIPE_MTE3 (mode 2) and waits for the AIC's answer
    (mode 2 back), then copies new data into t (MTE2). With ``answered`` false the AIC answers at once, without
    waiting for the AIVs' reports: then nothing orders the MTE2 copy after the AIV's own V and MTE3 work."""
    if ASCEND_IS_AIV():
        t = scratch(512, half)
        Duplicate(t, 1.0, 256)
        handoff(HardEvent.V_MTE3)
        DataCopy(gm(work)[GetSubBlockIdx() * 256], t, 256)
        CrossCoreSetFlag(2, PIPE_MTE3, 4)
        CrossCoreWaitFlag(5)
        DataCopy(t, gm(x), 256)  # <- the AIV reuses t
        handoff(HardEvent.MTE2_MTE3)
        DataCopy(gm(work)[GetSubBlockIdx() * 256], t, 256)
        return
    if answered:
        CrossCoreWaitFlag(4)
    CrossCoreSetFlag(2, PIPE_MTE2, 5)
    if not answered:
        CrossCoreWaitFlag(4)


def test_a_wait_orders_the_waiters_own_work_that_the_rise_saw_finished():
    """The AIV's report (after its MTE3 copy, itself after V) reaches the AIC before the AIC's answer, and on Atlas A2
    CrossCoreWaitFlag blocks all the waiter's pipes: its MTE2 copy into t follows its V and MTE3 work (the official
    cross_core_set_wait_flag sample's AIVs rely on it)."""
    x = (np.arange(256) % 5).astype(half)
    work = np.zeros(512, half)
    launch(aiv_reuses_ub_after_the_aic_answers, 1, x, work, True)
    assert_same(work, np.concatenate([x, x]))


def test_a_wait_is_no_barrier_of_the_waiters_own_unreported_work():
    with raises_rule(RaceError, "DataCopy on pipe MTE2 overwrites UB bytes from 0 that pipe V wrote",
                     at="<- the AIV reuses t"):
        launch(aiv_reuses_ub_after_the_aic_answers, 1, np.zeros(256, half), np.zeros(512, half), False)


def test_mode_1_and_2_need_a_mix_kernel():
    with raises_rule(ArgumentError, "mode 2 syncs an AIC and the AIVs of its AI Core, but this kernel has one core "
                     "type", "MIX", at="CrossCoreSetFlag(2, PIPE_MTE2, 0)"):
        launch(kernel(lambda: CrossCoreSetFlag(2, PIPE_MTE2, 0)), 1)


@kernel
def own_flag_and_syncall(x):
    CrossCoreSetFlag(0, PIPE_MTE2, 12)  # <- flag 12 is SyncAll's
    CrossCoreWaitFlag(12)
    SyncAll()


def test_flags_11_to_14_clash_with_syncall():
    with raises_rule(SyncError, "cross-core flag 12", "SyncAll uses flags 11..14 itself", "use flag ids 0..10 or 15",
                     at="<- flag 12 is SyncAll's"):
        launch(own_flag_and_syncall, 2, np.zeros(16, half))


def test_cross_core_set_flag_mode_must_be_0_1_or_2():
    with raises_rule(ArgumentError, "mode 3 is not 0, 1 or 2", at="CrossCoreSetFlag(3, PIPE_MTE2, 0)"):
        launch(kernel(lambda: CrossCoreSetFlag(3, PIPE_MTE2, 0)), 1)


# ============================================================================ determinism
def test_same_kernel_and_inputs_give_identical_results_and_traces():
    runs = [run_add_custom(seed=3) for _ in range(2)] + [run_add_custom(seed=3)]
    assert all(np.array_equal(r[2], runs[0][2]) for r in runs)
    assert len({r[3].trace.signature() for r in runs}) == 1
    mixed = [run_vector_feeds_cube() for _ in range(2)]
    assert mixed[0][2].trace.signature() == mixed[1][2].trace.signature()
    assert mixed[0][2].trace.signature() != runs[0][3].trace.signature()


# ============================================================================ launch errors
@pytest.mark.parametrize("block_dim", [0, 65536, 2.0, "4"])
def test_block_dim_must_be_an_int_in_range(block_dim):
    with raises_rule(LaunchError, "block_dim must be an integer in [1, 65535]"):
        launch(copy_tile, block_dim, np.zeros(16, half), 16)


def test_launch_wants_a_kernel_and_kernels_are_not_called_directly():
    with raises_rule(LaunchError, "launch expects a function marked @kernel, got function"):
        launch(copy_tile.fn, 1, np.zeros(16, half), 16)
    with raises_rule(LaunchError, "kernel copy_tile cannot be called directly", "copy_tile[block_dim](*args)",
                     at="copy_tile(np.zeros(16, half), 16)  # direct call"):
        copy_tile(np.zeros(16, half), 16)  # direct call
    with pytest.raises(ValueError, match="core must be 'AIV'"):
        kernel(core="GPU")(copy_tile.fn)


def test_kernel_api_needs_a_running_kernel():
    with raises_rule(LaunchError, "can only be called inside a kernel that is running", at="GetBlockIdx()  # host"):
        GetBlockIdx()  # host
    inner = kernel(lambda: launch(copy_tile, 1, np.zeros(16, half), 16))
    with raises_rule(LaunchError, "launch called from inside a running kernel"):
        launch(inner, 1)


def test_gm_arguments_must_be_contiguous():
    with raises_rule(ArgumentError, "launch argument 'x' is not C-contiguous", "np.ascontiguousarray",
                     at="np.zeros((16, 16), half)[:, ::2]"):
        launch(copy_tile, 1, np.zeros((16, 16), half)[:, ::2], 16, gm_names=["x"])


@kernel
def fails_in_block_2(x):
    if GetBlockIdx() == 2:
        raise RuntimeError("boom in block 2")
    SyncAll()


def test_an_exception_in_one_block_ends_the_launch_while_others_wait():
    with pytest.raises(RuntimeError, match="boom in block 2"):
        launch(fails_in_block_2, 4, np.zeros(16, half))
    launch(copy_tile, 1, np.zeros(16, half), 16)                 # the runtime is usable afterwards


def test_kernel_points_resolve_to_the_line_the_frame_reports():
    """Trace sites are kept as (code, byte offset) and made into lines later: the same lines as f_lineno."""
    import sys

    from ascend_sim.engine.errors import resolve_site

    def probe():
        f = sys._getframe(1)
        return (f.f_code, f.f_lasti), (f.f_code.co_filename, f.f_lineno)

    def caller():
        seen = [probe()]
        for _ in range(2):
            seen.append(
                probe()
            )
        seen.append({"k": [probe() for _ in range(1)]}["k"][0])
        return seen

    seen = caller()
    assert len({site for _, site in seen}) == 3
    for point, site in seen:
        assert resolve_site(point) == site
    assert resolve_site(site) == site and resolve_site(None) is None
