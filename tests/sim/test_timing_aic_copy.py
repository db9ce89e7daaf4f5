"""The cube core's GM -> L1 copy path (issue 30, deliverable 2), with hand-computed expectations.

Per copy of ``rows`` rows (Nd2Nz bursts) of ``blen`` bytes on the default 910B (path 64 B/cycle for misses, 110 for
L2 hits; a row at least 2 cycles; the 210-cycle start paid by the share that misses L2; a copy of a tile another
core is still filling ends with that fill):
    cycles = start x (1 - hit) + rows x max(2, blen x (hit / HIT + (1 - hit) / 64))
and the Matmul API's kernel head (Matmul.Init) before its first copy.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, GlobalTensor, Nd2NzParams, TPipe, TPosition, TQue, half, kernel, launch
from nd2nz_copy_support import COLS, copy_cycles

CHIP = Ascend910B()
START, FLOOR = CHIP.aic_gm_read_startup, CHIP.aic_gm_row_floor_cycles
MISS, HIT = CHIP.aic_gm_read_bytes_per_cycle, CHIP.aic_gm_l2_hit_bytes_per_cycle


@pytest.mark.parametrize("cols, per_row", [(64, max(FLOOR, 128 / MISS)),      # 128 B rows: 2 cycles, not 8
                                           (16, FLOOR),                        # 32 B rows: the floor
                                           (256, 512 / MISS),                  # 512 B rows: 8 cycles, as before
                                           (512, 1024 / MISS)])
def test_a_row_costs_its_bytes_with_a_floor(cols, per_row):
    # the byte price (what L2 hits pay); cold rows miss, so here with the package rule for misses off (on the
    # default 910B a missing 128 B or 32 B row costs a whole 8-cycle package: test_timing_aic_miss_packages.py)
    (cycles,) = copy_cycles(64, cols, chip=dataclasses.replace(CHIP, aic_gm_miss_row_packages=False))
    assert cycles == pytest.approx(START + 64 * per_row)


def test_whole_packages_when_the_floor_is_off():
    old = dataclasses.replace(CHIP, aic_gm_row_floor_cycles=0)
    (cycles,) = copy_cycles(64, 64, chip=old)
    assert cycles == pytest.approx(START + 64 * 512 / MISS)     # a 128 B row priced as a 512 B package


@pytest.mark.parametrize("hit_rate", [HIT, 128.0])      # the default (CANN's L2 -> L1 rate) and a what-if
def test_l2_hits_move_at_their_own_rate(hit_rate):
    # the same 32 x 512 B tile twice: a miss, then a hit (queued: no start)
    chip = dataclasses.replace(CHIP, aic_gm_l2_hit_bytes_per_cycle=hit_rate)
    first, second = copy_cycles(32, 256, offsets=(0, 0), chip=chip)
    assert first == pytest.approx(START + 32 * 512 / MISS)
    assert second == pytest.approx((0 if CHIP.aic_gm_start_on_misses_only else START) + 32 * 512 / hit_rate)


def test_a_queued_copy_hides_its_start_when_the_chip_says_so():
    hidden = dataclasses.replace(CHIP, aic_gm_start_hidden_when_queued=True)     # the what-if
    a, b = copy_cycles(32, 256, offsets=(0, 32 * COLS), chip=hidden)     # two distinct tiles, back to back
    assert (a, b) == (pytest.approx(START + 256), pytest.approx(256))
    a, b = copy_cycles(32, 256, offsets=(0, 32 * COLS), idle_between=True, chip=hidden)
    assert (a, b) == (pytest.approx(START + 256), pytest.approx(START + 256))      # MTE2 idle: the start is paid
    a, b = copy_cycles(32, 256, offsets=(0, 32 * COLS))                 # the default: every copy pays its start
    assert (a, b) == (pytest.approx(START + 256), pytest.approx(START + 256))


def test_the_vector_path_keeps_whole_packages():
    """An AIV's GM -> UB copy is unchanged: the Add case's calibration holds (tests/sim/test_timing_l2.py)."""
    assert CHIP.gm_read_bytes_per_cycle == 32.0 and CHIP.gm_read_startup == 80


def test_the_matmul_api_kernel_head_delays_the_first_copy_to_3_5_us():
    """Matmul.Init (the tiling copied from the host, then Init's scalar set-up) runs before the first GM -> L1
    copy: 2,499 + 4,042 = 6,541 cycles = 3.536 us at 1.85 GHz, the Tiling-constant document's first MTE2."""
    from ascend_sim import CFG_MDL
    from ascend_sim.kernels.opt.default_matmul import default_matmul_kernel, default_tiling
    t = default_tiling(128, 256, 64, cores=1, out_dtype=np.float32)
    a, b, c = np.zeros((128, 64), np.float16), np.zeros((64, 256), np.float16), np.zeros((128, 256), np.float32)
    res = launch(default_matmul_kernel, 1, a, b, None, c, t, np.dtype(np.float32), CFG_MDL, numerics=False)
    (init,) = [r for r in res.trace if r.op == "Matmul.Init"]
    assert init.pipe == "S" and init.end - init.start == 6541
    first_copy = min(r.start for r in res.trace if r.pipe == "MTE2")
    assert first_copy >= init.end
    assert CHIP.cycles_to_us(init.end) == pytest.approx(3.536, abs=0.01)


def test_an_l2_hit_skips_the_nd2nz_start_when_the_chip_says_so():
    """CANN's auto-tiling cost model prices an L2 -> L1 move as its bytes at the L2 rate, without the Nd2Nz start
    that a GM -> L1 move pays: the start is the HBM access's. A copy half served by L2 pays half the start."""
    chip = dataclasses.replace(CHIP, aic_gm_start_on_misses_only=True, aic_gm_l2_hit_bytes_per_cycle=110.0)
    first, second = copy_cycles(32, 256, offsets=(0, 0), chip=chip)
    assert first == pytest.approx(START + 32 * 512 / MISS)         # the miss: 210 + 256
    assert second == pytest.approx(32 * 512 / 110.0)               # the hit: 149, no start
    # rows 0-31 resident, rows 0-63 asked for: half the bytes hit, half the start is paid
    first, second = _two_tiles(chip)
    assert first == pytest.approx(START + 32 * 512 / MISS)
    assert second == pytest.approx(START / 2 + 32 * 512 / 110.0 + 32 * 512 / MISS)


def _two_tiles(chip) -> list[float]:
    """A 32-row tile, then the 64-row tile that starts with it (the first half resident, the second half not)."""
    x = np.zeros(64 * COLS, np.float16)
    res = launch(grow_copy, 1, x, chip=chip, numerics=False)
    return [r.end - r.start for r in res.trace if r.op == "DataCopy"]


@kernel(core="AIC")
def grow_copy(x):
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, 64 * COLS)
    pipe = TPipe()
    q = TQue(TPosition.A1, 2)
    pipe.InitBuffer(q, 2, 64 * 256 * 2)
    a, b = q.AllocTensor(half), q.AllocTensor(half)
    DataCopy(a, xg, Nd2NzParams(1, 32, 256, 0, COLS, 32, 1, 0))
    DataCopy(b, xg, Nd2NzParams(1, 64, 256, 0, COLS, 64, 1, 0))
    q.FreeTensor(a)
    q.FreeTensor(b)
