"""Two what-ifs of the HBM side, with hand-computed expectations (issue 30, the Add sample's CACHE_MODE_DISABLE step).

``l2_warm_launch``: a launch measured as a profiler measures it, after the same kernel ran on the same buffers
(msopprof's warm-up and replay, the official atomic_add_perf README), starts with the L2 that run left.
``hbm_streams_by_pipe``: the streams sharing HBM are each GM pipe's duty times that pipe's own HBM share (its
transfers' HBM bytes, write-backs they caused included, over its bytes).
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, HardEvent, half, kernel, launch
from ascend_sim.engine.instr import PIPE_INDEX
from ascend_sim.engine.l2 import L2Cache
from ascend_sim.engine.timing import hbm_streams
from kernels_util import gm, handoff, scratch

N = 32768                       # halves: 64 KB per copy
NB = N * 2
# path rates far above the bandwidths (a single core sees the bandwidths themselves) and a 64 KB L2: one copy fills it
SMALL = dataclasses.replace(Ascend910B(), gm_read_bytes_per_cycle=1e9, gm_write_bytes_per_cycle=1e9,
                            aiv_gm_l2_hit_bytes_per_cycle=1e9, l2_bytes=NB)
WARM = dataclasses.replace(SMALL, l2_warm_launch=True)


@kernel
def read_then_write(x, z):
    """Read 64 KB of x into UB, then write it to z: the Add sample's read-then-write stream in miniature."""
    t = scratch(NB, half)
    DataCopy(t, gm(x), N)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(z), t, N)


def _copies(res) -> list[float]:
    return [r.end - r.start for r in res.trace if r.op == "DataCopy"]


def test_a_warm_launch_pays_for_the_dirty_lines_its_previous_run_left():
    """Cold: x misses (64 KB from HBM) and fills the 64 KB L2; z's write evicts x, clean: no write-back; z is left
    dirty. Warm: the previous run left z dirty, so x's miss evicts it and writes it back first: 128 KB through HBM.
    Cycles: read 80 + 65,536 / 865 = 155.76 cold, 80 + 131,072 / 865 = 231.53 warm; the write 80 + 65,536 / 3,784
    = 97.32 either way (it lands in L2)."""
    x, z = np.zeros(N, half), np.zeros(N, half)
    cold, warm = launch(read_then_write, 1, x, z, chip=SMALL), launch(read_then_write, 1, x, z, chip=WARM)
    read, write = _copies(cold)
    assert read == pytest.approx(80 + 65536 / 865) and write == pytest.approx(80 + 65536 / 3784)
    assert cold.l2["writeback_bytes"] == 0 and cold.l2["dirty_bytes_left"] == NB
    read, write = _copies(warm)
    assert read == pytest.approx(80 + 131072 / 865) and write == pytest.approx(80 + 65536 / 3784)
    assert warm.l2["writeback_bytes"] == NB and warm.l2["hbm_write_bytes"] == NB   # counters: this run's only
    assert warm.l2["hbm_read_bytes"] == NB and warm.l2["dirty_bytes_left"] == NB


@kernel
def read_twice(x):
    t = scratch(NB, half)
    DataCopy(t, gm(x), N)
    DataCopy(t, gm(x), N)


def test_a_warm_launch_finds_what_its_previous_run_left_in_l2():
    """64 KB read twice with a 128 KB L2: cold, a miss (80 + 65,536 / 865) then a hit (80 + 65,536 / 3,784); warm,
    two hits: the tile is still in L2 from the previous run."""
    chip = dataclasses.replace(SMALL, l2_bytes=2 * NB)
    cold = launch(read_twice, 1, np.zeros(N, half), chip=chip)
    warm = launch(read_twice, 1, np.zeros(N, half), chip=dataclasses.replace(chip, l2_warm_launch=True))
    hit = 80 + 65536 / 3784
    assert _copies(cold) == [pytest.approx(80 + 65536 / 865), pytest.approx(hit)]
    assert _copies(warm) == [pytest.approx(hit), pytest.approx(hit)]
    assert warm.l2["l2_hit_rate"] == 1.0 and warm.l2["hbm_read_bytes"] == 0


def test_warm_keeps_lines_and_dirt_and_clears_the_counters():
    l2 = L2Cache(512, 2 * 512, 8 * 512)         # two lines
    assert l2.transfer(True, 0, 1, 512, 512, 512, 1) == (512, 0)             # line 0 written: dirty
    assert l2.transfer(False, 512, 1, 512, 512, 512, 1) == (0.0, 512)        # line 1 read: a miss
    l2.warm()
    assert l2.stats()["l2_bytes"] == 0 and l2.stats()["hbm_read_bytes"] == 0
    assert l2.stats()["dirty_bytes_left"] == 512
    assert l2.transfer(False, 512, 1, 512, 512, 512, 1) == (512.0, 0.0)      # line 1 still there
    assert l2.transfer(False, 1024, 1, 512, 512, 512, 1) == (0.0, 1024)      # line 2 evicts line 0: written back


_MTE2, _MTE3, _FIX = PIPE_INDEX["MTE2"], PIPE_INDEX["MTE3"], PIPE_INDEX["FIX"]


def test_streams_count_each_pipe_by_its_own_hbm_share():
    """48 cores; this one 4,000 cycles in with 1,000 MTE2 and 500 MTE3 cycles busy, 2,000 cycles of prior MTE2 duty:
    elapsed 6,000. MTE2 moved 100 B of which 133 through HBM (its misses and the write-backs they caused): share 1
    (at most); MTE3 100 B, 25 through HBM: 0.25. Streams 48 x (3,000 x 1 + 500 x 0.25) / 6,000 = 25.0 (every pipe
    at full share: 48 x 3,500 / 6,000 = 28)."""
    busy = [0.0] * (max(PIPE_INDEX.values()) + 1)
    busy[_MTE2], busy[_MTE3] = 1000.0, 500.0
    launch_ = SimpleNamespace(pipe_bytes={_MTE2: 100.0, -1 - _MTE2: 133.0, _MTE3: 100.0, -1 - _MTE3: 25.0})
    core = SimpleNamespace(busy=busy, start_time=0.0, launch=launch_)
    assert hbm_streams(core, None, 48, 4000.0, 2000.0) == pytest.approx(25.0)
    launch_.pipe_bytes[-1 - _MTE3] = 0.0                    # z's writes all land in L2: the reads' streams only
    assert hbm_streams(core, None, 48, 4000.0, 2000.0) == pytest.approx(48 * 3000 / 6000)
