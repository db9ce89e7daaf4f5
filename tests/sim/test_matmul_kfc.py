"""MIX mode of the Matmul API (api/highlevel/matmul_kfc.py): the AIV's calls as KFC messages the AIC serves.

Each test fails when its mechanism is taken out: the numbers equal the pure-Cube path's, each message costs the
server ``kfc_serve_cycles`` on its critical path, a synchronous call returns with the server's flag, IBShare loads
a shared matrix once, and misuse is named.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (CFG_IBSHARE_NORM, CFG_NORM, REGIST_MATMUL_OBJ, GetBlockIdx, GetSysWorkSpacePtr, LayoutMode,
                        Matmul, MatmulType, TPipe, TPosition, float32, half, kernel, launch)
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


def _ibshare_run(cfg, share_a=False, share_b=True):
    """M64 N256 K384 on one AI Core, each AIV 32 rows (Matmul高阶API使能IBShare模板共享B矩阵数据.md's tiling)."""
    M, N, K = 64, 256, 384
    a, b = _inputs(M, N, K, seed=3)
    t = dataclasses.replace(default_tiling(M, N, K, cores=1, out_dtype=F32), usedCoreNum=2, singleCoreM=32,
                            singleCoreN=256, singleCoreK=384, baseM=32, baseN=256, baseK=64, stepM=1, stepN=1,
                            stepKa=6, stepKb=6, depthA1=6, depthB1=6)
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
