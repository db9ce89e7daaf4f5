"""A cube core's GM -> L1 rows that miss L2 cost whole HBM packages per 512 B window piece (issue 30), hand-computed.

The bytes of a row that L2 does not serve are cut at the 512 B windows the row touches (GM requests are handled per
512 B window: the guide's 避免同地址访问 page, "地址请求会按照512字节粒度对齐后进行处理"), and each piece takes
packages of 512, 256 and 128 B and one for the rest, each 512 B / 64 B/cycle = 8 cycles (CANN's gemm cycle model,
``GetBandwidthUsageNd2Nz``). Bytes L2 serves cost their bytes at 110 B/cycle (at least the 2-cycle floor). On the
default 910B, one AIC, L2 cold (every first read misses), rows 8 KB apart (each at the same place in its window):
    cycles = 210 x (1 - hit) + (1 - hit) x packages x 8 + hit x rows x (the byte price of a hit row)
(the start paid by the share that misses L2: tests/sim/test_timing_aic_copy_start.py)
The public case: the DataCopy sample (cannmirror/asc-devkit examples/01_simd_cpp_api/05_best_practices/
04_memory_access/data_copy, Atlas A2): 128 B rows bypassing L2 took 7.9 cycles a row, 512 B rows 2 B off their
windows 31.8, against 8 and 32 here. On Atlas A2 L2 hits and misses count per 128 B (that sample's L2Cache counters).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B
from ascend_sim.engine.timing import aic_miss_packages
from nd2nz_copy_support import COLS
from nd2nz_copy_support import copy_cycles as nd2nz_copy_cycles

CHIP = Ascend910B()
START, HIT, FLOOR = CHIP.aic_gm_read_startup, CHIP.aic_gm_l2_hit_bytes_per_cycle, CHIP.aic_gm_row_floor_cycles
PACKAGE = 512 / CHIP.aic_gm_read_bytes_per_cycle       # 8 cycles


def copy_cycles(cols: int, offsets: tuple, chip=CHIP) -> list[float]:
    """Each copy's cycles: one AIC copies a 64-row tile per offset, back to back."""
    return nd2nz_copy_cycles(64, cols, offsets, chip=chip)


def test_the_default_910b_prices_misses_by_packages_and_counts_l2_per_128_bytes():
    assert CHIP.aic_gm_miss_row_packages and CHIP.l2_line_bytes == 128 and PACKAGE == 8.0


@pytest.mark.parametrize("cols, offset, packages", [
    (64, 0, 1),         # a 128 B row: one package, 8 cycles (its bytes at 64 B/cycle: 2, the floor 2)
    (16, 0, 1),         # a 32 B row: one package
    (256, 0, 1),        # a 512 B row on a window: one, its bytes' price as before
    (1024, 0, 4),       # a 2 KB row on windows: four
    (256, 1, 3 + 1),    # a 512 B row 2 B into its window: 510 B (256 + 128 + 126) and 2 B: the sample's N = 12287
    (64, 224, 1 + 1),   # a 128 B row at byte 448: 64 B in one window, 64 B in the next
    (64, 64, 1),        # a 128 B row at byte 128: inside one window, one package (no 0.7 for the copy's start)
])
def test_a_missing_row_costs_the_packages_of_its_window_pieces(cols, offset, packages):
    (cycles,) = copy_cycles(cols, (offset,))
    assert cycles == pytest.approx(START + 64 * packages * PACKAGE)
    assert aic_miss_packages(2 * offset, 64, 2 * cols, 2 * COLS, 512) == 64 * packages


def test_the_package_count_follows_each_row_start():
    # rows of 512 B whose starts step 2 B back per row (a pitch of 24,574 B, the sample's N = 12287): row 0 on a
    # window (1 package), every other row across one (its two pieces: 4 packages, 3 when a piece is 128 or 384 B)
    per_row = [aic_miss_packages((24574 * i) % 512, 1, 512, 24574, 512) for i in range(256)]
    assert per_row[0] == 1 and per_row[1] == 4 and per_row[64] == 3            # 128 B + 384 B (256 + 128)
    assert aic_miss_packages(0, 256, 512, 24574, 512) == sum(per_row)


def test_l2_hits_keep_their_byte_price():
    # the same 64 x 512 B tile twice: a miss (one package a row), then every byte an L2 hit (its bytes at 110)
    first, second = copy_cycles(256, (0, 0))
    assert first == pytest.approx(START + 64 * PACKAGE)
    assert second == pytest.approx(64 * max(FLOOR, 512 / HIT))     # no HBM access: no start


def test_a_tile_next_to_another_hits_only_the_128_byte_line_they_share():
    # two 512 B-row tiles side by side, 2 B into their windows (the sample's N = 12287): the second tile's rows touch
    # five 128 B lines, one of which the first tile brought in: a fifth of its bytes hit, the rest miss (the hit
    # share at its L2 byte price: aic_gm_offblock_hits_as_misses off; on: tests/sim/test_timing_offblock_hits.py)
    first, second = copy_cycles(256, (1, 257), chip=dataclasses.replace(CHIP, aic_gm_offblock_hits_as_misses=False))
    assert first == pytest.approx(START + 64 * 4 * PACKAGE)
    hit = 1 / 5
    hit_row = max(FLOOR, 2 * 512 / HIT) / CHIP.gm_unaligned_efficiency     # off a 32 B block and off a window
    assert second == pytest.approx((1 - hit) * (START + 64 * 4 * PACKAGE) + hit * 64 * hit_row)


def test_without_the_rule_missing_rows_cost_their_bytes():
    old = dataclasses.replace(CHIP, aic_gm_miss_row_packages=False)
    (cycles,) = copy_cycles(64, (0,), chip=old)
    assert cycles == pytest.approx(START + 64 * FLOOR)
    (cycles,) = copy_cycles(256, (1,), chip=old)        # twice the bytes (off 32 B), 70 % (off a window)
    assert cycles == pytest.approx(START + 64 * 2 * 512 / 64 / CHIP.gm_unaligned_efficiency)
