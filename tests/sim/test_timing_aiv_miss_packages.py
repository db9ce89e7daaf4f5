"""A vector core's GM -> UB rows that miss L2 cost whole HBM packages per 512 B window piece (issue 30,
``aiv_gm_miss_row_packages``, on by default), hand-computed.

The cube path's rule (tests/sim/test_timing_aic_miss_packages.py) on the AIV's MTE2: the bytes of a row (burst) L2
does not serve are cut at the 512 B windows the row touches (the guide's 避免同地址访问 page: "MTE2、MTE3、Scalar等单元
访问Global Memory数据时，其地址请求会按照512字节粒度对齐后进行处理"), each piece takes packages of 512, 256 and 128 B and
one for the rest, each 512 B / 32 B/cycle = 16 cycles on the AIV; a row that starts off a window and runs into the next
(a split request) at ``gm_unaligned_efficiency`` (0.7: the guide's GM地址尽量512B对齐 page, GM -> UB). That replaces
the old price, the burst's packages at 0.7 whenever the copy starts off a 512 B boundary: a row inside one window
no longer pays the 0.7. Bytes L2 serves keep the old price, at the L2-hit rate (``aiv_gm_l2_hit_bytes_per_cycle``:
32 / 110 of it on the 910B; tests/sim/test_timing_aiv_l2_hits.py). The public case: the DataCopy sample (cannmirror/
asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy, Atlas A2, GM -> UB): 2 KB rows
2 B apart from their windows (N = 12287) took 1.28x the rows on windows; here 10 packages a row against 4, HBM-bound
at 4.
One AIV, L2 cold, a 64-row tile per copy, rows 8 KB apart (each at the same place in its window), back to back:
    cycles = 80 + (1 - hit) x 64 x packages x 16 + hit x (the old price) x 32 / 110
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (Ascend910B, CacheMode, DataCopyExtParams, DataCopyPad, GlobalTensor, LocalTensor, TPosition,
                        half, kernel, launch)
from ascend_sim.engine.timing import aiv_row_packages

COLS = 4096                     # halves per GM row: the tile's rows are 8 KB apart
ROWS = 64
# whole packages for every piece (pieces of whole L2 lines: tests/sim/test_timing_small_copies.py)
ON = dataclasses.replace(Ascend910B(), aiv_gm_miss_line_pieces=False)
OFF = dataclasses.replace(ON, aiv_gm_miss_row_packages=False)
START, PACKAGE, EFF = OFF.gm_read_startup, 512 / OFF.gm_read_bytes_per_cycle, OFF.gm_unaligned_efficiency
HIT = ON.gm_read_bytes_per_cycle / ON.aiv_gm_l2_hit_bytes_per_cycle     # 32 / 110: an L2 hit's share of the price


@kernel(core="AIV")
def gm_to_ub(x, cols: int, offsets: tuple, bypass: bool):
    """One DataCopyPad of a 64 x cols half tile per offset (elements into x), into one UB buffer, back to back."""
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, ROWS * COLS)
    if bypass:
        xg.SetL2CacheHint(CacheMode.CACHE_MODE_DISABLE)
    ub = LocalTensor[half](TPosition.VECIN, 0, ROWS * -(-cols // 16) * 16)     # each row padded to 32 B in UB
    for off in offsets:
        DataCopyPad(ub, xg[off], DataCopyExtParams(ROWS, 2 * cols, 2 * (COLS - cols), 0, 0))


def copy_cycles(cols: int, offsets: tuple, chip, bypass: bool = False) -> list[float]:
    res = launch(gm_to_ub, 1, np.zeros(ROWS * COLS, np.float16), cols, tuple(offsets), bypass, chip=chip,
                 numerics=False)
    return [r.end - r.start for r in res.trace if r.op == "DataCopyPad"]


def test_on_by_default_and_sixteen_cycles_a_package():
    assert ON.aiv_gm_miss_row_packages and PACKAGE == 16.0


SPLIT = (3 + 3 + 1) / EFF      # a 2 KB row 2 B into a window: 510 B (256 + 128 + 126), three windows, 2 B, split


@pytest.mark.parametrize("cols, offset, packages, old", [
    (1024, 0, 4, 4),            # a 2 KB row on windows: four packages either way
    (1024, 1, SPLIT, 4 / EFF),  # the sample's N = 12287
    (1023, 0, 3 + 1 + 1 + 1, (3 + 1 + 1 + 1)),    # 2,046 B from a window's start: 3 windows and 510 B, not split
    (64, 64, 1, 1 / EFF),       # a 128 B row at byte 128: inside one window, one package (no 0.7 for the start)
    (64, 224, (1 + 1) / EFF, 1 / EFF),  # a 128 B row at byte 448: 64 B in one window, 64 B in the next, split
    (256, 0, 1, 1),             # a 512 B row on a window: one
])
def test_a_missing_row_costs_the_packages_of_its_window_pieces(cols, offset, packages, old):
    (on,) = copy_cycles(cols, (offset,), ON)
    (off,) = copy_cycles(cols, (offset,), OFF)
    assert on == pytest.approx(START + ROWS * packages * PACKAGE)
    assert off == pytest.approx(START + ROWS * old * PACKAGE)


def test_bytes_bypassing_l2_always_pay_packages():
    # CACHE_MODE_DISABLE: the same tile twice misses twice (the sample's same-address scenarios)
    first, second = copy_cycles(1024, (1, 1), ON, bypass=True)
    assert first == second == pytest.approx(START + ROWS * SPLIT * PACKAGE)


def test_l2_hits_keep_the_old_price():
    # the same tile twice: a miss (7 packages a row, split), then every byte an L2 hit (4 packages a row at 0.7, at
    # the L2-hit rate: 80 + 64 x 4 x 16 / 0.7 x 32 / 110 = 80 + 1,701.2)
    first, second = copy_cycles(1024, (1, 1), ON)
    assert first == pytest.approx(START + ROWS * SPLIT * PACKAGE)
    assert second == pytest.approx(START + ROWS * 4 * PACKAGE / EFF * HIT)


def test_rows_stepping_through_their_windows_pay_each_its_own_pieces():
    # the sample's N = 12287: 2 KB rows 24,574 B apart, each 2 B further back in its window than the one before:
    # row 0 on a window (4 packages), every other row split (its pieces / 0.7); row 64 starts at byte 384: 128 B
    # (1), three windows, 384 B (256 + 128: 2); the starts repeat every 256 rows
    rows = [aiv_row_packages((24574 * i) % 512, 1, 2048, 24574, 512, EFF) for i in range(256)]
    assert rows[0] == 4 and rows[1] == pytest.approx(SPLIT) and rows[64] == pytest.approx((1 + 3 + 2) / EFF)
    assert aiv_row_packages(0, 512, 2048, 24574, 512, EFF) == pytest.approx(2 * sum(rows))
