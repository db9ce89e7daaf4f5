"""unitFlag: Mmad and Fixpipe hand over per 512 B of L0C (api/ops/unitflag.py), and the Matmul API's enUnitFlag.

UnitFlag.md (Mmad API page, 关键特性说明): a Mmad with unitFlag 3 sets each 512 B block's flag when it is written,
a Fixpipe with unitFlag 3 reads a block once its flag is 1 and clears it. Matmul高阶API使能UnitFlag.md: "每当完成一个
512B数据结果的计算，FIXPIPE立即开始搬出该512B的数据". Hand-computed: a Mmad of C 16 x 128 (fp32, 8 KB = 16 blocks) over
K = 256 costs cube_startup + 1 x 8 x 16 fractals; its first block is done after the start-up and 1/16 of the rest.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (DataCopy, Fixpipe, FixpipeParams, LoadData, LoadData2DParams, Mmad, MmadParams, TPipe,
                        TPosition, float32, get_chip, half, kernel, launch)
from ascend_sim.api.highlevel.matmul import CFG_MDL, GetMDLConfig, GetNormalConfig
from ascend_sim.api.sync import HardEvent
from ascend_sim.engine.errors import SyncError
from kernels_util import gm, handoff, raises_rule, scratch

M_, N_, K_ = 16, 128, 256           # C 16 x 128 fp32 = 8 KB of L0C: 16 blocks of 512 B


def _operands(a, b):
    """A (16 x 256) and B (256 x 128) through L1 into L0A/L0B, and the L0C tile C goes to: (a2, b2, co1)."""
    pipe = TPipe()
    a1, b1 = scratch(M_ * K_ * 2, half, TPosition.A1, pipe), scratch(K_ * N_ * 2, half, TPosition.B1, pipe)
    DataCopy(a1, gm(a), M_ * K_)
    DataCopy(b1, gm(b), K_ * N_)
    handoff(HardEvent.MTE2_MTE1)
    a2, b2 = scratch(M_ * K_ * 2, half, TPosition.A2, pipe), scratch(K_ * N_ * 2, half, TPosition.B2, pipe)
    LoadData(a2, a1, LoadData2DParams(0, M_ * K_ // 256, 1))
    LoadData(b2, b1, LoadData2DParams(0, K_ * N_ // 256, 1))
    handoff(HardEvent.MTE1_M)
    return a2, b2, scratch(M_ * N_ * 4, float32, TPosition.CO1, pipe)


@kernel(core="AIC")
def mmad_fixpipe(a, b, c, mmad_flag: int, fix_flag: int, sync: bool) -> None:
    """A (16 x 256) and B (256 x 128) to L1, L0A/L0B, one Mmad, one Fixpipe; ``sync``: SetFlag/WaitFlag M_FIX."""
    a2, b2, co1 = _operands(a, b)
    Mmad(co1, a2, b2, MmadParams(M_, N_, K_, mmad_flag, False, True))
    if sync:
        handoff(HardEvent.M_FIX)
    Fixpipe(gm(c), co1, FixpipeParams(N_, M_, M_, N_, unitFlag=fix_flag))


@kernel(core="AIC")
def two_mmads(a, b, c) -> None:
    """Mmad (unitFlag 3), Fixpipe (3), then a second Mmad (3) into the same L0C and its Fixpipe (3)."""
    a2, b2, co1 = _operands(a, b)
    for _ in range(2):
        Mmad(co1, a2, b2, MmadParams(M_, N_, K_, 3, False, True))
        Fixpipe(gm(c), co1, FixpipeParams(N_, M_, M_, N_, unitFlag=3))


def _inputs():
    rng = np.random.default_rng(0)
    return (rng.integers(-2, 3, M_ * K_).astype(np.float16), rng.integers(-2, 3, K_ * N_).astype(np.float16),
            np.zeros((M_, N_), np.float32))


def _run(kern, *args):
    a, b, c = _inputs()
    res = launch(kern, 1, a, b, c, *args)
    recs = [r for r in res.trace if r.op in ("Mmad", "Fixpipe")]
    return res, recs


def test_fixpipe_with_unit_flag_starts_after_the_first_512_bytes_and_ends_after_the_mmad():
    chip = get_chip(None)
    _, (mm, fx) = _run(mmad_fixpipe, 3, 3, False)           # no SetFlag/WaitFlag: the unit flags synchronise
    _, (mm0, fx0) = _run(mmad_fixpipe, 0, 0, True)          # the same without unitFlag: flag after the Mmad
    fractals = (M_ // 16) * (N_ // 16) * (K_ // 16)         # 128
    assert mm.end - mm.start == chip.cube_startup + fractals        # 158 cycles
    first_block = chip.cube_startup + fractals * 512 / (M_ * N_ * 4)   # 30 + 128 / 16 = 38 cycles
    assert fx.start == pytest.approx(mm.start + first_block)
    assert fx0.start >= mm0.end + chip.event_latency_cycles     # without: after the whole Mmad (and the flag)
    plain = fx0.end - fx0.start                             # the Fixpipe's own cost (168 cycles: 40 + 16 x 8)
    last_out = M_ * N_ * 4 * 512 / (M_ * N_ * 4) / chip.fix_gm_bytes_per_cycle   # one block's 512 B of fp32: 8
    assert fx.end == pytest.approx(max(fx.start + plain, mm.end + last_out))
    assert fx.end < fx0.end                                 # the overlap: the gain of the feature


def test_unit_flag_only_on_the_fixpipe_waits_forever():
    with raises_rule(SyncError, "unit flag 0", "give the last Mmad of the K loop unitFlag 3",
                     at="Fixpipe(gm(c), co1, FixpipeParams(N_, M_, M_, N_, unitFlag=fix_flag))"):
        _run(mmad_fixpipe, 0, 3, True)


def test_a_mmad_with_unit_flag_waits_for_the_fixpipe_that_frees_its_blocks():
    chip = get_chip(None)
    res, (mm1, fx1, mm2, fx2) = _run(two_mmads)
    mmad = mm1.end - mm1.start
    # the second Mmad starts once the Fixpipe has moved out its first block, and ends no earlier than the
    # Fixpipe's end plus one block of its own compute
    fix_first = fx1.start + chip.fix_startup + (fx1.end - fx1.start - chip.fix_startup) / 16
    assert mm2.start == pytest.approx(max(mm1.end, fix_first))
    assert mm2.end == pytest.approx(max(mm2.start + mmad, fx1.end + (mmad - chip.cube_startup) / 16))
    assert fx2.start == pytest.approx(max(fx1.end, mm2.start + chip.cube_startup + (mmad - chip.cube_startup) / 16))


def test_matmul_api_unit_flag_overlaps_fixpipe_and_keeps_the_result():
    from ascend_sim.kernels.opt.default_matmul import default_matmul
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (128, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 1024)).astype(np.float16)
    want = a.astype(np.float32) @ b.astype(np.float32)
    c_off, off = default_matmul(a, b, out_dtype=np.float32, mm_cfg=CFG_MDL, cores=1)
    c_on, on = default_matmul(a, b, out_dtype=np.float32, mm_cfg=GetMDLConfig(enUnitFlag=True), cores=1)
    np.testing.assert_allclose(c_on, want, atol=1e-3)
    np.testing.assert_array_equal(c_on, c_off)
    assert on.cycles < off.cycles
    mm = [r for r in on.trace if r.op == "Mmad"]
    fx = [r for r in on.trace if r.op == "Fixpipe"]
    assert fx[0].start < mm[0].end          # the first block goes out while its Mmad still runs


def test_matmul_config_defaults_follow_the_docs():
    assert GetNormalConfig().enUnitFlag and not CFG_MDL.enUnitFlag and GetMDLConfig(enUnitFlag=True).enUnitFlag
