"""When a cube core's GM -> L1 copy pays the 210-cycle Nd2Nz start (issue 30, the large cube launches), hand-computed.

The start is the HBM access's: CANN's auto-tiling cost model (https://github.com/hicann/ge, att
``ascir_api_perf_v1.cc``) prices MoveGmToL1 as bytes / rate + 210 (kNd2NzStartCost) and MoveL2ToL1 as bytes / 110
with no start. So on the default 910B a copy pays the start in proportion to its bytes that miss L2
(``aic_gm_start_on_misses_only``), whether it waited in the MTE2 queue or not; one AIC, L2 cold, 512 B rows on
512 B windows (one 8-cycle package a missing row, 512 / 110 cycles a row L2 serves):
    cycles = 210 x (1 - hit) + rows x ((1 - hit) x 8 + hit x 512 / 110)
(a copy half in L2 pays half the start: tests/sim/test_timing_aic_copy.py).
Two what-ifs stay off (chips.py): a queued copy's start hidden whole (``aic_gm_start_hidden_when_queued``) or
overlapping the previous copy's transfer (``gm_start_overlaps_previous``: max(0, 210 - that transfer)).
"""
from __future__ import annotations

import dataclasses

import pytest

from ascend_sim import Ascend910B
from nd2nz_copy_support import COLS, copy_cycles

CHIP = Ascend910B()
START = CHIP.aic_gm_read_startup                        # 210
MISS_ROW = 512 / CHIP.aic_gm_read_bytes_per_cycle       # a missing 512 B row on its window: one package, 8 cycles
HIT_ROW = 512 / CHIP.aic_gm_l2_hit_bytes_per_cycle      # a 512 B row L2 serves: 4.65 cycles


def test_the_default_910b_starts_only_the_bytes_that_miss_l2():
    assert CHIP.aic_gm_start_on_misses_only and START == 210
    assert not CHIP.aic_gm_start_hidden_when_queued and not CHIP.gm_start_overlaps_previous


@pytest.mark.parametrize("idle_between", [False, True])
def test_a_copy_l2_serves_whole_pays_no_start_queued_or_not(idle_between):
    # the same 32 x 512 B tile twice: the first misses (210 + 32 x 8 = 466), the second is all L2 hits (148.95)
    first, second = copy_cycles(32, 256, offsets=(0, 0), idle_between=idle_between)
    assert first == pytest.approx(START + 32 * MISS_ROW)
    assert second == pytest.approx(32 * HIT_ROW)


@pytest.mark.parametrize("idle_between", [False, True])
def test_copies_that_miss_pay_the_start_even_back_to_back(idle_between):
    # two distinct cold tiles: each goes to HBM and pays 210 + 32 x 8, queued behind the other or not
    first, second = copy_cycles(32, 256, offsets=(0, 32 * COLS), idle_between=idle_between)
    assert (first, second) == (pytest.approx(START + 32 * MISS_ROW), pytest.approx(START + 32 * MISS_ROW))


def test_without_the_rule_every_copy_pays_its_start():
    old = dataclasses.replace(CHIP, aic_gm_start_on_misses_only=False)
    first, second = copy_cycles(32, 256, offsets=(0, 0), chip=old)
    assert (first, second) == (pytest.approx(START + 32 * MISS_ROW), pytest.approx(START + 32 * HIT_ROW))


@pytest.mark.parametrize("rows, second_start", [
    (32, 0.0),                      # the first copy moves for 32 x 8 = 256 cycles: the whole 210 under it
    (8, START - 8 * MISS_ROW),      # 8 x 8 = 64 cycles: 146 of the start left
])
def test_the_overlap_what_if_hides_what_the_previous_transfer_covers(rows, second_start):
    chip = dataclasses.replace(CHIP, gm_start_overlaps_previous=True, aic_gm_start_on_misses_only=False)
    first, second = copy_cycles(rows, 256, offsets=(0, 32 * COLS), chip=chip)      # two cold tiles, back to back
    assert first == pytest.approx(START + rows * MISS_ROW)
    assert second == pytest.approx(second_start + rows * MISS_ROW)
    first, second = copy_cycles(rows, 256, offsets=(0, 32 * COLS), idle_between=True, chip=chip)
    assert second == pytest.approx(START + rows * MISS_ROW)        # MTE2 idle when it is issued: the start is paid
