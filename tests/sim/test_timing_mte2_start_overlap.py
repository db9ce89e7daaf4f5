"""The what-if ``gm_start_overlaps_previous`` on a vector core's GM -> UB copies (issue 30, small copies), hand-computed.

One mechanism for both MTE2 paths (engine/timing.overlapped_start; the cube's GM -> L1 side:
tests/sim/test_timing_aic_copy_start.py): a copy queued behind the previous one (MTE2 busy when it is issued) runs
its start under that copy's transfer and pays max(0, start - that transfer); a copy issued to an idle MTE2 pays the
whole start. One AIV, distinct cold rows on 512 B windows, 16 cycles per 512 B package (a 128 B row: one package):
    first copy  = 80 + transfer
    second copy = max(0, 80 - first transfer) + transfer      (with the what-if; 80 + transfer without it)
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (Ascend910B, DataCopy, GlobalTensor, HardEvent, SetFlag, TPipe, TPosition, TQue, WaitFlag,
                        half, kernel, launch)

CHIP = dataclasses.replace(Ascend910B(), aiv_gm_miss_line_pieces=False)    # whole 16-cycle packages for 128 B rows
START = CHIP.gm_read_startup                            # 80
PACKAGE = 512 / CHIP.gm_read_bytes_per_cycle            # 16 cycles a 512 B package (or a 128 B / 256 B piece)
SPAN = 8192                                             # halves between two copies' sources: distinct windows


@kernel
def ub_copies(x, n: int, copies: int, idle_between: bool):
    """``copies`` DataCopy of ``n`` halves from GM rows SPAN halves apart, each into its own UB buffer."""
    g = GlobalTensor(half)
    g.SetGlobalBuffer(x, copies * SPAN)
    pipe = TPipe()
    q = TQue(TPosition.VECIN, copies)
    pipe.InitBuffer(q, copies, n * 2)
    held = []
    for i in range(copies):
        held.append(q.AllocTensor(half))
        DataCopy(held[-1], g[i * SPAN], n)
        if idle_between:            # the scalar waits for the copy: MTE2 is idle when the next one is issued
            SetFlag(HardEvent.MTE2_S, 0)
            WaitFlag(HardEvent.MTE2_S, 0)
    for t in held:
        q.FreeTensor(t)


def copy_cycles(n: int, copies: int = 2, idle_between: bool = False, chip=None) -> list[float]:
    x = np.zeros(copies * SPAN, np.float16)
    res = launch(ub_copies, 1, x, n, copies, idle_between, chip=chip or CHIP, numerics=False)
    return [r.end - r.start for r in sorted((r for r in res.trace if r.op == "DataCopy"), key=lambda r: r.start)]


OVERLAP = dataclasses.replace(CHIP, gm_start_overlaps_previous=True)


def test_off_on_the_default_910b_every_copy_pays_its_start():
    assert not CHIP.gm_start_overlaps_previous
    assert copy_cycles(64) == [pytest.approx(START + PACKAGE)] * 2          # 96 each: 128 B rows


@pytest.mark.parametrize("n, transfer", [
    (64, PACKAGE),                  # a 128 B row: 16 cycles under the 80-cycle start, 64 of it left
    (1024, 4 * PACKAGE),            # 2,048 B: 64 cycles, 16 left
    (4096, 16 * PACKAGE),           # 8 KB (the Add case's size): 256 cycles, the whole start under it
])
def test_a_queued_copy_pays_what_the_previous_transfer_leaves_of_its_start(n, transfer):
    first, second, third = copy_cycles(n, 3, chip=OVERLAP)
    assert first == pytest.approx(START + transfer)
    assert second == pytest.approx(max(0.0, START - transfer) + transfer)
    assert third == pytest.approx(second)


def test_a_copy_issued_to_an_idle_mte2_pays_the_whole_start():
    assert copy_cycles(64, idle_between=True, chip=OVERLAP) == [pytest.approx(START + PACKAGE)] * 2
