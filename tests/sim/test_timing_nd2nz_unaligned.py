"""A cube core's GM -> L1 (Nd2Nz) rows that start off a 32 B DataBlock (issue 30), with hand-computed expectations.

Each 32 B C0 piece such a row puts in L1 spans two 32 B GM blocks, so the row moves ``aic_gm_unaligned_row_factor``
(2 on the default 910B) times its bytes on the path; a copy whose first row is not 512 B aligned also runs at
``gm_unaligned_efficiency`` (70 %), as before. On the default 910B (path 64 B/cycle, a row at least 2 cycles, a
210-cycle start):
    cycles = start + (aligned rows x max(2, blen / 64) + unaligned rows x max(2, 2 x blen / 64)) [/ 0.7]
The guide's ND2NZ document (B of 1024 x 4095 half: rows 8,190 B apart) is the public case.
This is the byte price of a row: what the bytes L2 serves pay. The bytes that miss L2 cost whole packages per 512 B
window piece instead (``aic_gm_miss_row_packages``, tests/sim/test_timing_aic_miss_packages.py), so the cold copies
here run on the 910B with that rule off.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, GlobalTensor, Nd2NzParams, TPipe, TPosition, TQue, half, kernel, launch
from ascend_sim.engine.timing import unaligned_rows

CHIP = dataclasses.replace(Ascend910B(), aic_gm_miss_row_packages=False)   # every byte at its byte price
START, FLOOR, MISS = CHIP.aic_gm_read_startup, CHIP.aic_gm_row_floor_cycles, CHIP.aic_gm_read_bytes_per_cycle
FACTOR, WINDOW = CHIP.aic_gm_unaligned_row_factor, CHIP.gm_unaligned_efficiency


@kernel(core="AIC")
def one_copy(x, size: int, rows: int, cols: int, row_elems: int, offset: int):
    """One Nd2Nz copy of a rows x cols half tile whose GM rows are ``row_elems`` apart, from element ``offset``."""
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, size)
    pipe = TPipe()
    q = TQue(TPosition.A1, 1)
    pipe.InitBuffer(q, 1, rows * cols * 2)
    t = q.AllocTensor(half)
    DataCopy(t, xg[offset], Nd2NzParams(1, rows, cols, 0, row_elems, rows, 1, 0))
    q.FreeTensor(t)


def copy_cycles(rows: int, cols: int, row_elems: int, offset: int, chip=CHIP) -> float:
    x = np.zeros(rows * row_elems + offset + cols, np.float16)
    res = launch(one_copy, 1, x, x.size, rows, cols, row_elems, offset, chip=chip, numerics=False)
    (copy,) = [r for r in res.trace if r.op == "DataCopy"]
    return copy.end - copy.start


def row(blen: float) -> float:
    return max(FLOOR, blen / MISS)


def test_the_default_910b_takes_every_block_twice():
    assert FACTOR == Ascend910B().aic_gm_unaligned_row_factor == 2.0


@pytest.mark.parametrize("cols", [256, 64])        # 512 B rows (path-bound) and 128 B rows (2 x 128 / 64 = 4 > 3)
def test_rows_off_a_32_byte_block_move_twice_their_bytes(cols):
    # rows 8 KB apart, the copy 2 bytes into the buffer: every row starts off a block, and off a 512 B window
    blen = cols * 2
    assert copy_cycles(64, cols, 4096, 1) == pytest.approx(START + 64 * row(FACTOR * blen) / WINDOW)


def test_rows_on_a_32_byte_block_pay_only_the_window_rule():
    # 32 B into the buffer: every row on a block, the copy off a 512 B window (the 70 % rule, unchanged)
    assert copy_cycles(64, 256, 4096, 16) == pytest.approx(START + 64 * row(512) / WINDOW)


def test_a_row_pitch_off_the_block_makes_most_rows_unaligned():
    # the ND2NZ document's B: rows 8,190 B apart; from an aligned start, row i starts i x 30 mod 32 bytes into a
    # block, so rows 0, 16, 32 and 48 of 64 are on a block and 60 are not
    expected = START + 4 * row(512) + 60 * row(FACTOR * 512)
    assert copy_cycles(64, 256, 4095, 0) == pytest.approx(expected)


def test_the_factor_one_what_if_turns_it_off():
    off = dataclasses.replace(CHIP, aic_gm_unaligned_row_factor=1.0)
    assert copy_cycles(64, 256, 4095, 0, chip=off) == pytest.approx(START + 64 * row(512))


def test_tiny_rows_stay_at_the_floor():
    # 32 B rows: 2 x 32 / 64 = 1 cycle, still under the 2-cycle floor
    assert copy_cycles(64, 16, 4096, 1) == pytest.approx(START + 64 * FLOOR / WINDOW)


@pytest.mark.parametrize("addr, pitch", [(0, 8190), (2, 8190), (0, 8192), (6, 8192), (16, 48), (4, 100), (0, 1)])
@pytest.mark.parametrize("count", [1, 15, 16, 17, 64, 1000])
def test_unaligned_rows_counts_the_starts_off_a_block(addr, pitch, count):
    brute = sum(1 for i in range(count) if (addr + i * pitch) % 32)
    assert unaligned_rows(0x1000_0000 + addr, count, pitch) == brute
