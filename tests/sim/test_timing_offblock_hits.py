"""The rule ``aic_gm_offblock_hits_as_misses`` (on for the default 910B), hand-computed: a cube core's GM -> L1 copy
whose rows start off a 32 B block gets no faster path from L2; the bytes L2 serves cost what missing bytes do, the
HBM packages of each row's 512 B window pieces (8 cycles each), while the copy's start stays with the share that
misses (none for a copy L2 serves whole). Rows on 32 B blocks keep the L2 byte price. One AIC, L2 cold, 64-row tiles
copied back to back, rows 8 KB apart (tests/sim/nd2nz_copy_support).
"""
from __future__ import annotations

import dataclasses

import pytest

from ascend_sim import Ascend910B
from nd2nz_copy_support import copy_cycles

CHIP = Ascend910B()
OFF = dataclasses.replace(CHIP, aic_gm_offblock_hits_as_misses=False)
START, HIT, FLOOR = CHIP.aic_gm_read_startup, CHIP.aic_gm_l2_hit_bytes_per_cycle, CHIP.aic_gm_row_floor_cycles
PACKAGE = 512 / CHIP.aic_gm_read_bytes_per_cycle       # 8 cycles


def test_on_for_the_default_chip():
    assert CHIP.aic_gm_offblock_hits_as_misses is True


def test_an_off_block_tile_read_again_costs_its_packages():
    # 64 rows of 512 B, 2 B into their windows (the DataCopy sample's N = 12287 rows): 4 packages a row.
    # First copy, all misses: 210 + 64 x 4 x 8 = 2,258. Second, all hits:
    #   rule on:  64 x 4 x 8 = 2,048 (no start: nothing misses)
    #   rule off: 64 x max(2, 2 x 512 / 110) / 0.7 = 64 x 9.309 / 0.7 = 851.1 (twice the bytes off a 32 B block,
    #             70 % off a window)
    first, second = copy_cycles(64, 256, (1, 1), chip=CHIP)
    assert first == pytest.approx(START + 64 * 4 * PACKAGE)
    assert second == pytest.approx(64 * 4 * PACKAGE)
    _, second_off = copy_cycles(64, 256, (1, 1), chip=OFF)
    assert second_off == pytest.approx(64 * max(FLOOR, 2 * 512 / HIT) / CHIP.gm_unaligned_efficiency)


def test_a_partly_hit_off_block_tile_costs_its_packages_and_the_missing_share_of_the_start():
    # the tile next to the first (both 2 B into their windows): a fifth of its bytes hit the 128 B line they share
    # (tests/sim/test_timing_aic_miss_packages.py); on: 0.8 x 210 + 64 x 4 x 8 = 168 + 2,048 = 2,216
    _, second = copy_cycles(64, 256, (1, 257), chip=CHIP)
    assert second == pytest.approx(0.8 * START + 64 * 4 * PACKAGE)


def test_an_on_block_tile_read_again_keeps_the_l2_price():
    # the same tile on its windows: the second copy 64 x max(2, 512 / 110) = 297.9 with the rule on or off
    for chip in (CHIP, OFF):
        first, second = copy_cycles(64, 256, (0, 0), chip=chip)
        assert first == pytest.approx(START + 64 * PACKAGE)
        assert second == pytest.approx(64 * max(FLOOR, 512 / HIT))
