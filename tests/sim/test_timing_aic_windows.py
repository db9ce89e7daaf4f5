"""The 512 B window rule of the cube core's GM -> L1 rows (issue 30; engine/timing.aic_window_rows), hand-computed.

A what-if of hw/chips.py (``aic_gm_row_windows``, off by default: see its comment for the validation table).

GM requests are handled per 512 B window (avoid-same-address guide: "地址请求会按照512字节粒度对齐后进行处理"): a row
inside one window costs its bytes at 64 B/cycle (at least 3 cycles), a row crossing window boundaries a whole
window (8 cycles) per window it touches. 64 rows 8 KB apart (the pitch keeps every row at the same place in its
window), one copy each, plus the 210-cycle Nd2Nz start.
"""
from __future__ import annotations

import dataclasses

import pytest

from test_timing_aic_copy import CHIP, FLOOR, MISS, START, copy_cycles

RULE = dataclasses.replace(CHIP, aic_gm_row_windows=True)
WINDOW = CHIP.gm_burst_align        # 512
W = WINDOW / MISS                   # 8 cycles a window


@pytest.mark.parametrize("cols, offset, per_row", [
    (256, 0, W),                    # 512 B rows on window boundaries: one window each
    (256, 1, 2 * W),                # the same rows 2 B further: each touches two windows (data_copy's N 12287)
    (1024, 0, 4 * W),               # 2 KB rows: four windows
    (1024, 1, 5 * W),               # 2 KB rows 2 B further: five
    (64, 64, max(FLOOR, 128 / MISS)),    # a 128 B row at byte 128 stays in its window: its bytes (the floor)
    (64, 224, 2 * W),               # a 128 B row at byte 448 crosses into the next window: two windows
])
def test_a_row_costs_the_windows_it_touches(cols, offset, per_row):
    (cycles,) = copy_cycles(64, cols, offsets=(offset,), chip=RULE)
    assert cycles == pytest.approx(START + 64 * per_row)


def test_without_the_rule_an_unaligned_copy_pays_the_flat_efficiency():
    old = dataclasses.replace(CHIP, aic_gm_unaligned_row_factor=1.0,    # the rule off, rows off 32 B not doubled,
                              aic_gm_miss_row_packages=False)           # missing bytes at their byte price
    (cycles,) = copy_cycles(64, 256, offsets=(1,), chip=old)
    assert cycles == pytest.approx(START + 64 * W / CHIP.gm_unaligned_efficiency)
    (cycles,) = copy_cycles(64, 64, offsets=(64,), chip=old)          # the whole copy, though no row crosses
    assert cycles == pytest.approx(START + 64 * FLOOR / CHIP.gm_unaligned_efficiency)
