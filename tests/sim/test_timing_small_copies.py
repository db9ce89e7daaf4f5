"""Many small copies streamed back to back (issue 30, the DataCopy sample's tile sizes): a rule and a what-if.

``aiv_gm_miss_line_pieces`` (on) / ``aic_gm_miss_line_pieces`` (what-if, off): with the miss-package rules
(``aiv_gm_miss_row_packages``, ``aic_gm_miss_row_packages``), a piece of a GM row that starts on an L2 line (Atlas
A2: 128 B) and covers whole lines costs its share of a 512 B package (a 128 B row: 1/4), when the copy goes through
L2; other pieces, and copies that bypass L2 (CACHE_MODE_DISABLE), keep whole packages. Hand-computed: one AIV, L2
cold, one DataCopyPad of a 64-row tile, rows 8 KB apart:
    cycles = 80 + 64 x packages x 16

``gm_read_queued_head_cycles`` (what-if, off): a vector core's GM -> UB copy queued behind the previous one (MTE2
busy when it is placed) pays this instruction head instead of the 80-cycle start (CANN's auto-tiling cost model of
DataCopy GM -> UB, ``LoadApi`` in hicann/ge ``ascir_api_perf_v1.cc``: per call h = 27.01, the pipe head once). Two
copies of one 128 B row each (one line: 4 cycles), distinct windows:
    back to back: 80 + 4, then 27.01 + 4;   the scalar waiting between them: 80 + 4 both
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (Ascend910B, CacheMode, DataCopyExtParams, DataCopyPad, GlobalTensor, HardEvent, LocalTensor,
                        SetFlag, TPosition, WaitFlag, half, kernel, launch)
from ascend_sim.engine.timing import aic_miss_packages

COLS = 4096                     # halves per GM row: rows 8 KB apart
ROWS = 64
CHIP = Ascend910B()
LINES = CHIP
WHOLE = dataclasses.replace(CHIP, aiv_gm_miss_line_pieces=False)
HEAD = dataclasses.replace(CHIP, gm_read_queued_head_cycles=27.01)
START, PACKAGE = CHIP.gm_read_startup, 512 / CHIP.gm_read_bytes_per_cycle      # 80, 16


@kernel(core="AIV")
def gm_to_ub(x, rows: int, cols: int, offsets: tuple, bypass: bool, idle_between: bool):
    """One DataCopyPad of a rows x cols half tile per offset (elements into x), into one UB buffer."""
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, ROWS * COLS)
    if bypass:
        xg.SetL2CacheHint(CacheMode.CACHE_MODE_DISABLE)
    ub = LocalTensor[half](TPosition.VECIN, 0, rows * -(-cols // 16) * 16)
    for off in offsets:
        DataCopyPad(ub, xg[off], DataCopyExtParams(rows, 2 * cols, 2 * (COLS - cols), 0, 0))
        if idle_between:            # the scalar waits for the copy: MTE2 is idle when the next one is placed
            SetFlag(HardEvent.MTE2_S, 0)
            WaitFlag(HardEvent.MTE2_S, 0)


def copy_cycles(chip, cols: int, offsets: tuple, rows: int = ROWS, bypass: bool = False,
                idle_between: bool = False) -> list[float]:
    res = launch(gm_to_ub, 1, np.zeros(ROWS * COLS, np.float16), rows, cols, tuple(offsets), bypass, idle_between,
                 chip=chip, numerics=False)
    return [r.end - r.start for r in sorted((r for r in res.trace if r.op == "DataCopyPad"), key=lambda r: r.start)]


def test_the_vector_rule_on_the_what_ifs_off_on_the_default_910b():
    assert CHIP.aiv_gm_miss_line_pieces and not CHIP.aic_gm_miss_line_pieces and not CHIP.gm_read_queued_head_cycles
    assert CHIP.l2_line_bytes == 128 and PACKAGE == 16.0


@pytest.mark.parametrize("cols, offset, packages", [
    (64, 64, 1 / 4),            # a 128 B row at byte 128 of its window: one whole line, 4 cycles (16 without)
    (128, 0, 2 / 4),            # a 256 B row on a window: two lines, 8 cycles (16 without)
    (192, 64, 3 / 4),           # 384 B at byte 128: three lines, 12 cycles (16 + 16 without: 256 B + 128 B)
    (1024, 0, 4),               # a 2 KB row on windows: four whole packages either way
    (64, 1, 1),                 # a 128 B row at byte 2: off the lines, one whole package as before
])
def test_a_piece_of_whole_lines_costs_its_lines(cols, offset, packages):
    (lines,) = copy_cycles(LINES, cols, (offset,))
    assert lines == pytest.approx(START + ROWS * packages * PACKAGE)


def test_without_the_rule_the_same_rows_cost_whole_packages():
    assert copy_cycles(WHOLE, 64, (64,)) == [pytest.approx(START + ROWS * PACKAGE)]
    assert copy_cycles(WHOLE, 192, (64,)) == [pytest.approx(START + ROWS * 2 * PACKAGE)]


def test_bytes_bypassing_l2_keep_whole_packages():
    (bypass,) = copy_cycles(LINES, 64, (64,), bypass=True)
    assert bypass == pytest.approx(START + ROWS * PACKAGE)


def test_the_cube_path_counts_the_same_pieces():
    # aic_miss_packages: 64 rows of 128 B at byte 128 of their windows, rows 8 KB apart: 64 x 1/4 with lines
    assert aic_miss_packages(128, 64, 128, 8192, 512, 128) == pytest.approx(16.0)
    assert aic_miss_packages(128, 64, 128, 8192, 512) == 64
    assert aic_miss_packages(130, 64, 128, 8192, 512, 128) == 64         # off the lines: whole packages


def test_a_queued_copy_pays_the_instruction_head():
    # two one-row copies (128 B on a line: 4 cycles) 8 KB apart, back to back: the second is queued behind the first
    line = PACKAGE / 4
    assert copy_cycles(HEAD, 64, (0, 4096), rows=1) == [pytest.approx(START + line), pytest.approx(27.01 + line)]
    assert copy_cycles(CHIP, 64, (0, 4096), rows=1) == [pytest.approx(START + line)] * 2


def test_a_copy_placed_on_an_idle_mte2_pays_the_whole_start():
    assert copy_cycles(HEAD, 64, (0, 4096), rows=1, idle_between=True) == [pytest.approx(START + PACKAGE / 4)] * 2


def in_flight(k: int):
    return dataclasses.replace(CHIP, gm_read_requests_in_flight=k)


@pytest.mark.parametrize("k, expected", [
    # one-row copies (128 B on a line: 4 cycles), 8 KB apart, issued 2 cycles apart while the first still moves.
    # 1 in flight (the model before): each waits for the previous one's end, then pays 80 + 4.
    (1, [84, 84, 84, 84]),
    # 2: copy 1's request leaves at its issue, its 80 under copy 0's; copy 2's request waits for copy 0's end D0
    # and starts D0 + 4 (after copy 1): 80 - 4 = 76 left + 4; copy 3 leaves at copy 1's end D0 + 4, data from
    # D0 + 84 = copy 2's end: 0 left + 4
    (2, [84, 4, 80, 4]),
    # 8: every request leaves at its issue, each latency under copy 0's
    (8, [84, 4, 4, 4]),
])
def test_reads_in_flight_pay_only_the_latency_left_after_earlier_reads(k, expected):
    assert copy_cycles(in_flight(k), 64, (0, 4096, 8192, 12288), rows=1) == pytest.approx(expected)


def test_a_read_issued_after_the_previous_one_ended_pays_its_whole_latency():
    # the scalar waits for each copy (MTE2_S): each request leaves after the previous read's end: 80 + 4 each
    assert copy_cycles(in_flight(8), 64, (0, 4096), rows=1, idle_between=True) == [pytest.approx(84)] * 2


def test_reads_in_flight_off_on_the_default_910b():
    assert CHIP.gm_read_requests_in_flight == 1
