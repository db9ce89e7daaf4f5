"""MIX mode of the Matmul API (api/highlevel/matmul_kfc.py): the AIV's calls as KFC messages the AIC serves.

Each test fails when its mechanism is taken out: the numbers equal the pure-Cube path's, each message costs the
server ``kfc_serve_cycles`` on its critical path, a synchronous call returns with the server's flag, IBShare loads
a shared matrix once, and misuse is named.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (CFG_IBSHARE_NORM, CFG_NORM, REGIST_MATMUL_OBJ, DataCopy, Duplicate, GetBlockIdx,
                        GetSubBlockIdx, GetSysWorkSpacePtr, HardEvent, LayoutMode, Matmul, MatmulType, PIPE_ALL,
                        PipeBarrier, SetFlag, TBuf, TPipe, TPosition, WaitFlag, float32, half, kernel, launch)
from ascend_sim import matmul_tiling as mt
from ascend_sim.engine.errors import ArgumentError, PositionError
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.opt.default_matmul import _gm, default_matmul_kernel, default_tiling

ND = mt.CubeFormat.ND
F32 = np.dtype(np.float32)
mix_kernel = kernel(core="MIX")(default_matmul_kernel.fn)      # the pure-Cube kernel's body, run as MIX
aiv_kernel = kernel(core="AIV")(default_matmul_kernel.fn)


def _inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)


def _table(res):
    tab = res.trace.table()
    return list(zip(tab.core.tolist(), tab.core_type.tolist(), tab.pipe.tolist(), tab.op.tolist(),
                    tab.start.tolist(), tab.end.tolist()))


def test_mix_matmul_gives_the_pure_cube_numbers():
    """48 AIV-style split on 2 AI Cores (4 AIV, one C block each) against 2 AIC (two blocks each): same C, bit for
    bit, and the AIC did the cube work (Mmad on the AIC only)."""
    M, N, K = 128, 1024, 64
    a, b = _inputs(M, N, K)
    t_mix = dataclasses.replace(default_tiling(M, N, K, cores=2, out_dtype=F32), singleCoreN=256, usedCoreNum=4)
    c_mix = np.zeros((M, N), F32)
    res = launch(mix_kernel, 2, a, b, None, c_mix, t_mix, F32, CFG_NORM)
    t = default_tiling(M, N, K, cores=2, out_dtype=F32)
    c = np.zeros((M, N), F32)
    launch(default_matmul_kernel, t.usedCoreNum, a, b, None, c, t, F32, CFG_NORM)
    assert np.array_equal(c_mix, c)
    assert np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-3
    rows = _table(res)
    assert {ct for _, ct, _, op, _, _ in rows if op == "Mmad"} == {"AIC"}
    assert sum(op == "KfcPostMessage" for _, ct, _, op, _, _ in rows) == 4 * 3     # INIT, ITERATE_ALL, END per AIV


@kernel(core="MIX")
def first_aiv_kernel(a, b, c, t: mt.TCubeTiling) -> None:
    """The samples' shape of a MIX kernel: every AIV registers, those past usedCoreNum return at once."""
    mm = Matmul(MatmulType(TPosition.GM, ND, half), MatmulType(TPosition.GM, ND, half),
                MatmulType(TPosition.GM, ND, float32))
    REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
    if GetBlockIdx() >= t.usedCoreNum:
        return
    mm.SetTensorA(_gm(a, half))
    mm.SetTensorB(_gm(b, half))
    mm.IterateAll(_gm(c, float32))
    mm.End()


def _one_job(serve: int):
    """One AI Core, only AIV 0 has work (usedCoreNum 1): messages INIT x2, QUIT of AIV 1, ITERATE_ALL, END, QUIT."""
    M, N, K = 64, 256, 64
    a, b = _inputs(M, N, K)
    t = dataclasses.replace(default_tiling(M, N, K, cores=1, out_dtype=F32), usedCoreNum=1)
    chip = dataclasses.replace(get_chip(None), kfc_serve_cycles=serve)
    c = np.zeros((M, N), F32)
    return launch(first_aiv_kernel, 1, a, b, c, t, chip=chip), c, a, b


def test_each_message_costs_the_server_on_its_critical_path():
    """The AIC serves six messages one after another, each waiting for the one before: 1,000 more cycles a
    message make the AIC 6,000 cycles longer (0 without the per-message cost)."""
    r1, c, a, b = _one_job(500)
    r2, _, _, _ = _one_job(1500)
    aic = [ct for ct in r1.core_times if ct[1] == "AIC"][0], [ct for ct in r2.core_times if ct[1] == "AIC"][0]
    assert aic[1][3] - aic[0][3] == pytest.approx(6 * 1000)
    served = [r for r in _table(r1) if r[1] == "AIC" and r[3] == "KfcServer"]
    assert len(served) == 6 and all(e - s == 500 for *_, s, e in served)
    assert np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-3


def test_synchronous_iterate_all_returns_with_the_servers_flag():
    """IterateAll on the AIV waits until the AIC's last Fixpipe is done plus the cross-core flag's latency."""
    res, *_ = _one_job(500)
    rows = _table(res)
    fix_end = max(e for _, ct, p, _, _, e in rows if ct == "AIC" and p == "FIX")
    wait = [s for core, ct, p, op, s, _ in rows if ct == "AIV" and core == 0 and op == "CrossCoreWaitFlag"]
    # the flag is there cross_core_flag_cycles after the Fixpipe; the wait record issues one scalar slot later
    assert wait == [fix_end + res.chip.cross_core_flag_cycles + res.chip.scalar_issue_cycles]


@kernel(core="MIX")
def shared_kernel(a, b, c, t: mt.TCubeTiling, cfg, share_a: bool, share_b: bool) -> None:
    """Each AIV: its rows of A (the same rows when ``share_a``) and all of B."""
    mm = Matmul(MatmulType(TPosition.GM, ND, half, False, LayoutMode.NONE, share_a),
                MatmulType(TPosition.GM, ND, half, False, LayoutMode.NONE, share_b),
                MatmulType(TPosition.GM, ND, float32), None, cfg)
    REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
    mi = 0 if share_a else GetBlockIdx()
    mm.SetTensorA(_gm(a, half)[mi * t.singleCoreM * t.Ka])
    mm.SetTensorB(_gm(b, half))
    mm.IterateAll(_gm(c, float32)[mi * t.singleCoreM * t.N])
    mm.End()


def _ibshare_tiling() -> mt.TCubeTiling:
    """M64 N256 K384 on one AI Core, each AIV 32 rows, B (and A) whole in L1 (the IBShare document's tiling)."""
    M, N, K = 64, 256, 384
    return dataclasses.replace(default_tiling(M, N, K, cores=1, out_dtype=F32), usedCoreNum=2, singleCoreM=32,
                               singleCoreN=256, singleCoreK=384, baseM=32, baseN=256, baseK=64, stepM=1, stepN=1,
                               stepKa=6, stepKb=6, depthA1=6, depthB1=6)


def _ibshare_run(cfg, share_a=False, share_b=True):
    """M64 N256 K384 on one AI Core, each AIV 32 rows (Matmul高阶API使能IBShare模板共享B矩阵数据.md's tiling)."""
    M, N, K = 64, 256, 384
    a, b = _inputs(M, N, K, seed=3)
    t = _ibshare_tiling()
    c = np.zeros((M, N), F32)
    res = launch(shared_kernel, 1, a, b, c, t, cfg, share_a, share_b)
    return res, c, a, b


def _copies(res, op="DataCopy", pipe="MTE2"):
    return sum(1 for _, ct, p, o, _, _ in _table(res) if ct == "AIC" and p == pipe and o == op)


def _ibshare_matmul(share_a: bool) -> Matmul:
    """An IBShare Matmul (CFG_IBSHARE_NORM) with B shared, and A too when ``share_a``."""
    return Matmul(MatmulType(TPosition.GM, ND, half, False, LayoutMode.NONE, share_a),
                  MatmulType(TPosition.GM, ND, half, False, LayoutMode.NONE, True),
                  MatmulType(TPosition.GM, ND, float32), None, CFG_IBSHARE_NORM)


def test_ibshare_b_loads_b_once_for_both_aiv():
    """Norm: each AIV's job copies 6 A blocks and 6 B blocks (24); IBShare B: the second job finds B in L1 (18).
    C is the same."""
    before, c0, a, b = _ibshare_run(CFG_NORM)
    after, c1, _, _ = _ibshare_run(CFG_IBSHARE_NORM)
    assert (_copies(before), _copies(after)) == (24, 18)
    assert np.array_equal(c0, c1)
    assert np.abs(c1 - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-3
    assert after.cycles < before.cycles


def test_ibshare_a_and_b_computes_once_for_both_aiv():
    """A and B shared, both AIV asking for the same C: the cube runs one job (6 Mmad, one Fixpipe), both get C."""
    res, c, a, b = _ibshare_run(CFG_IBSHARE_NORM, share_a=True, share_b=True)
    assert _copies(res, "Mmad", "M") == 6 and _copies(res, "Fixpipe", "FIX") == 1
    ref = a[:32].astype(np.float32) @ b.astype(np.float32)
    assert np.abs(c[:32] - ref).max() < 1e-3


def test_iterate_with_a_and_b_shared_is_named():
    @kernel(core="MIX")
    def k(a, b, c, t):
        mm = _ibshare_matmul(share_a=True)
        REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
        mm.SetTensorA(_gm(a, half))
        mm.SetTensorB(_gm(b, half))
        mm.Iterate()
    a, b = _inputs(32, 256, 64)
    t = default_tiling(32, 256, 64, cores=1, out_dtype=F32)
    with pytest.raises(ArgumentError, match="only IterateAll") as err:
        launch(k, 1, a, b, np.zeros((32, 256), F32), t)
    assert "IterateAll(cGlobal)" in str(err.value)


def test_matmul_on_a_vector_kernel_is_named():
    """A kernel launched on the AIVs alone has no AIC to serve its Matmul: the fix says core='MIX'."""
    a, b = _inputs(32, 256, 64)
    t = default_tiling(32, 256, 64, cores=1, out_dtype=F32)
    with pytest.raises(PositionError, match="no AIC to serve it") as err:
        launch(aiv_kernel, 1, a, b, None, np.zeros((32, 256), F32), t, F32, CFG_NORM)
    assert "@kernel(core='MIX')" in str(err.value)


def test_ibshare_without_two_aiv_is_named():
    """IBShare in a pure-Cube kernel (core='AIC'): no second AIV to share with."""
    @kernel(core="AIC")
    def k(a, b, c, t):
        mm = _ibshare_matmul(share_a=False)
        REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
    a, b = _inputs(32, 256, 64)
    t = default_tiling(32, 256, 64, cores=1, out_dtype=F32)
    with pytest.raises(ArgumentError, match="IBShare in a kernel without two AIV") as err:
        launch(k, 1, a, b, np.zeros((32, 256), F32), t)
    assert "@kernel(core='MIX')" in str(err.value)


def test_ibshare_needs_the_shared_matrix_whole_in_l1():
    """IBShare on B with stepKb x baseK = 128 < singleCoreK 384: B is not loaded whole, named at REGIST."""
    M, N, K = 64, 256, 384
    a, b = _inputs(M, N, K)
    t = dataclasses.replace(default_tiling(M, N, K, cores=1, out_dtype=F32), usedCoreNum=2, singleCoreM=32,
                            singleCoreN=256, singleCoreK=384, baseM=32, baseN=256, baseK=64, stepM=1, stepN=1,
                            stepKa=2, stepKb=2, depthA1=2, depthB1=2)
    with pytest.raises(ArgumentError, match="loaded whole into L1") as err:
        launch(shared_kernel, 1, a, b, np.zeros((M, N), F32), t, CFG_IBSHARE_NORM, False, True)
    assert "stepKb x baseK >= singleCoreK" in str(err.value)


def _served(res) -> int:
    return sum(1 for _, ct, _, op, _, _ in _table(res) if ct == "AIC" and op == "KfcServer")


def _posted(res, core: int) -> int:
    return sum(1 for c, ct, _, op, _, _ in _table(res) if ct == "AIV" and c == core and op == "KfcPostMessage")


def test_a_and_b_shared_the_second_aiv_sends_no_message():
    """A and B shared (matmul_client.h: Init returns on sub-block 1, PostMessage "Do not send v1's message to
    cube"): AIV 0 posts INIT, ITERATE_ALL and END (3), AIV 1 none; the AIC serves those 3 and the two
    SERVICE_QUITs (5, not 8). B only shared: both AIV post their 3 and the AIC serves 8."""
    ab, c, a, b = _ibshare_run(CFG_IBSHARE_NORM, share_a=True, share_b=True)
    assert (_posted(ab, 0), _posted(ab, 1), _served(ab)) == (3, 0, 5)
    assert np.abs(c[:32] - a[:32].astype(np.float32) @ b.astype(np.float32)).max() < 1e-3
    only_b, *_ = _ibshare_run(CFG_IBSHARE_NORM)
    assert (_posted(only_b, 0), _posted(only_b, 1), _served(only_b)) == (3, 3, 8)


def _busy_mte3(pipe: TPipe, scratch, times: int) -> None:
    """This AIV's MTE3 busy: 64 KB of UB filled once, written to GM ``times`` times (2,128 cycles each)."""
    buf = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(buf, 65536)
    Duplicate(buf.Get(half), 0.0, 32768)
    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    for i in range(times):
        DataCopy(_gm(scratch, half)[i * 32768], buf.Get(half), 32768)


@kernel(core="MIX")
def late_second_aiv_kernel(a, b, c, scratch, t: mt.TCubeTiling) -> None:
    """A and B shared; AIV 1 first fills 64 KB of UB and writes it to GM 8 times (its MTE3 busy), then calls
    IterateAll."""
    mm = Matmul(MatmulType(TPosition.GM, ND, half, False, LayoutMode.NONE, True),
                MatmulType(TPosition.GM, ND, half, False, LayoutMode.NONE, True),
                MatmulType(TPosition.GM, ND, float32), None, CFG_IBSHARE_NORM)
    pipe = TPipe()
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t)
    if GetSubBlockIdx() == 1:
        _busy_mte3(pipe, scratch, 8)
    mm.SetTensorA(_gm(a, half))
    mm.SetTensorB(_gm(b, half))
    mm.IterateAll(_gm(c, float32))
    mm.End()


def test_a_and_b_shared_job_waits_for_both_aiv():
    """SyncCubeWithVec (matmul_utils.h): each AIV's IterateAll reports flag 9 (NotifyEvent<PIPE_MTE3>, so after
    its MTE3 work) and the AIC's job starts once both have. AIV 1's eight 64 KB UB -> GM copies end at
    E = 305 + 8 x 2,128 = 17,329; its flag reaches the AIC at E + cross_core_flag_cycles (100) = 17,429; the AIC's
    first MTE2 copy of A starts two scalar ticks later (2 x scalar_issue_cycles = 4, as it does right after the
    ITERATE_ALL's serve when nothing waits: 9,729 -> 9,733): 17,433. Without the wait it starts at 9,733."""
    M, N, K = 64, 256, 384          # each AIV asks for C's first 32 rows (shared_kernel's tiling)
    a, b = _inputs(M, N, K, seed=5)
    t = _ibshare_tiling()
    c = np.zeros((M, N), F32)
    res = launch(late_second_aiv_kernel, 1, a, b, c, np.zeros(8 * 32768, np.float16), t)
    rows = _table(res)
    copy_end = max(e for core, ct, p, _, _, e in rows if ct == "AIV" and core == 1 and p == "MTE3")
    first_mte2 = min(s for _, ct, p, _, s, _ in rows if ct == "AIC" and p == "MTE2")
    assert (copy_end, first_mte2) == (17329, 17433)
    assert first_mte2 == copy_end + res.chip.cross_core_flag_cycles + 2 * res.chip.scalar_issue_cycles
    assert np.abs(c[:32] - a[:32].astype(np.float32) @ b.astype(np.float32)).max() < 1e-3


@kernel(core="MIX")
def org_shape_kernel(a, b, c, t: mt.TCubeTiling, set_org: bool) -> None:
    """first_aiv_kernel with SetOrgShape(M, N, K) before the job when ``set_org``."""
    mm = Matmul(MatmulType(TPosition.GM, ND, half), MatmulType(TPosition.GM, ND, half),
                MatmulType(TPosition.GM, ND, float32))
    REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
    if GetBlockIdx() >= t.usedCoreNum:
        return
    if set_org:
        mm.SetOrgShape(t.M, t.N, t.Ka)
    mm.SetTensorA(_gm(a, half))
    mm.SetTensorB(_gm(b, half))
    mm.IterateAll(_gm(c, float32))
    mm.End()


def test_set_org_shape_is_a_message_on_atlas_a2():
    """matmul_client.h (arch 2201 builds USE_WORKSPACE, not USE_SSBUF): SetOrgShape posts MMFUN_SET_ORG_SHAPE.
    AIV 0: INIT, SET_ORG_SHAPE, ITERATE_ALL, END (4 posts, 3 without); the AIC serves 7 (6 without: _one_job)."""
    M, N, K = 64, 256, 64
    a, b = _inputs(M, N, K)
    t = dataclasses.replace(default_tiling(M, N, K, cores=1, out_dtype=F32), usedCoreNum=1)
    runs = []
    for set_org in (False, True):
        c = np.zeros((M, N), F32)
        runs.append(launch(org_shape_kernel, 1, a, b, c, t, set_org))
        assert np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-3
    assert [(_posted(r, 0), _served(r)) for r in runs] == [(3, 6), (4, 7)]


def test_a_and_b_shared_without_the_second_aivs_iterate_all_is_named():
    """A+B shared, AIV 1 returns before IterateAll: the AIC would wait for its flag 9 for ever (a hang on the chip)."""
    @kernel(core="MIX")
    def k(a, b, c, t):
        mm = _ibshare_matmul(share_a=True)
        REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
        if GetSubBlockIdx() == 1:
            return
        mm.SetTensorA(_gm(a, half))
        mm.SetTensorB(_gm(b, half))
        mm.IterateAll(_gm(c, float32))
        mm.End()
    M, N, K = 64, 256, 384
    a, b = _inputs(M, N, K)
    t = _ibshare_tiling()
    with pytest.raises(ArgumentError, match="AIV 1 ended without calling IterateAll") as err:
        launch(k, 1, a, b, np.zeros((M, N), F32), t)
    assert "IterateAll(cGlobal)» on both AIV" in str(err.value) or "IterateAll(cGlobal) on both AIV" in str(err.value)


def test_a_and_b_shared_with_different_jobs_is_named():
    """A+B shared but each AIV asks for its own rows of C: only AIV 0's message reaches the AIC, so AIV 1's C would
    stay unwritten on the chip."""
    @kernel(core="MIX")
    def k(a, b, c, t):
        mm = _ibshare_matmul(share_a=True)
        REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
        mm.SetTensorA(_gm(a, half)[GetBlockIdx() * t.singleCoreM * t.Ka])
        mm.SetTensorB(_gm(b, half))
        mm.IterateAll(_gm(c, float32)[GetBlockIdx() * t.singleCoreM * t.N])
        mm.End()
    M, N, K = 64, 256, 384
    a, b = _inputs(M, N, K)
    with pytest.raises(ArgumentError, match="asked for different jobs") as err:
        launch(k, 1, a, b, np.zeros((M, N), F32), _ibshare_tiling())
    assert "same A, B and C" in str(err.value)


@kernel(core="MIX")
def iterate_then_work_kernel(a, b, c, scratch, t: mt.TCubeTiling) -> None:
    """Each AIV: its 32 rows of C block by block (Iterate / GetTensorC); AIV 0 then writes 64 KB of UB to GM four
    times before End."""
    mm = Matmul(MatmulType(TPosition.GM, ND, half), MatmulType(TPosition.GM, ND, half),
                MatmulType(TPosition.GM, ND, float32), None, CFG_NORM)
    pipe = TPipe()
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t)
    mi = GetBlockIdx()
    mm.SetTensorA(_gm(a, half)[mi * t.singleCoreM * t.Ka])
    mm.SetTensorB(_gm(b, half))
    cg = _gm(c, float32)[mi * t.singleCoreM * t.N]
    while mm.Iterate():
        mm.GetTensorC(cg)
    if GetSubBlockIdx() == 0:
        _busy_mte3(pipe, scratch, 4)
        PipeBarrier(PIPE_ALL)
    mm.End()


def test_an_iterate_sequence_holds_the_server_until_its_end():
    """kernel_kfc.h Run switches queue only after a message whose Process returns true: a synchronous
    MMFUN_ITERATE and MMFUN_GET_TENSOR_C return false, MMFUN_END true. So AIV 1's first ITERATE (posted at once)
    waits until AIV 0 has posted END after its UB -> GM work: the server's serves run INIT, INIT, then AIV 0's
    ITERATE / GET_C / END in one run, and AIV 1's ITERATE starts kfc_serve_cycles after AIV 0's END is served."""
    M, N, K = 64, 256, 64
    a, b = _inputs(M, N, K, seed=9)
    t = dataclasses.replace(default_tiling(M, N, K, cores=1, out_dtype=F32), usedCoreNum=2, singleCoreM=32,
                            singleCoreN=256, singleCoreK=64, baseM=32, baseN=256, baseK=64)
    c = np.zeros((M, N), F32)
    res = launch(iterate_then_work_kernel, 1, a, b, c, np.zeros(4 * 32768, np.float16), t)
    rows = _table(res)
    end_post = max(e for core, ct, _, op, _, e in rows if ct == "AIV" and core == 0 and op == "KfcPostMessage")
    serves = sorted((s, e) for _, ct, _, op, s, e in rows if ct == "AIC" and op == "KfcServer")
    # INIT, INIT (+ its tiling copy), AIV 0's ITERATE and GET_C, then nothing until AIV 0's END is in GM at
    # end_post (= 24,997: its four 2,128-cycle copies end at 24,792, a barrier, a 200-cycle post): END is served
    # one scalar slot later, [end_post + 2, end_post + 2 + 1,490]; only then AIV 1's ITERATE (after the END's
    # L1 release, a few scalar ticks), GET_C and END, and the two quits: 10 serves
    assert end_post == 24997 and len(serves) == 10
    assert serves[4] == (end_post + 2, end_post + 2 + res.chip.kfc_serve_cycles)
    assert 0 <= serves[5][0] - serves[4][1] <= 3 * res.chip.scalar_issue_cycles
    first_copy_job2 = min(s for _, ct, p, _, s, _ in rows if ct == "AIC" and p == "MTE2" and s > serves[3][1])
    assert first_copy_job2 > serves[5][1]
    assert np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-3
