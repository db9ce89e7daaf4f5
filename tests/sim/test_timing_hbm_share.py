"""Fair HBM sharing (issue 14, item 3), hand-computed: cores copying at once split the HBM bandwidth evenly;
a core alone gets all of it, up to its own MTE2 rate. And the fixed launch overhead of the host's view."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, GetBlockIdx, half, kernel, launch
from ascend_sim.trace.table import as_table
from kernels_util import gm, scratch

N = 16384                       # halves: 32 KB per copy = 64 packages of 512 B
NB = N * 2
COPIES = 12
# HBM of 48 B/cycle against a 32 B/cycle MTE2 per core: one core is capped by its MTE2, two share 48. An L2 of
# 256 KB cannot hold the 768 KB the two blocks stream (so even the first block knows it streams from HBM).
CHIP = dataclasses.replace(Ascend910B(), hbm_bytes_per_cycle=48.0, gm_read_bytes_per_cycle=32.0,
                           l2_bytes=256 * 1024)


@kernel
def stream_in(x):
    """Each block copies its own COPIES x 32 KB of GM into UB, back to back (every byte an L2 miss)."""
    xg = gm(x)
    t = scratch(NB, half)
    base = GetBlockIdx() * COPIES * N
    for i in range(COPIES):
        DataCopy(t, xg[base + i * N], N)


def _copies(blocks: int) -> dict[int, list[float]]:
    table = as_table(launch(stream_in, blocks, np.zeros(blocks * COPIES * N, half), chip=CHIP))
    out: dict[int, list[float]] = {}
    for core, op, s, e in zip(table.core.tolist(), table.op.tolist(), table.start.tolist(), table.end.tolist()):
        if op == "DataCopy":
            out.setdefault(core, []).append(e - s)
    return out


def test_a_core_alone_streams_at_its_own_mte2_rate():
    (alone,) = _copies(1).values()
    expected = CHIP.gm_read_startup + NB / CHIP.gm_read_bytes_per_cycle        # 80 + 1024: HBM (48) is not the limit
    assert alone == pytest.approx([expected] * COPIES, rel=1e-9)


def test_two_cores_copying_at_once_get_half_the_hbm_each():
    per = _copies(2)
    half_share = CHIP.gm_read_startup + NB / (CHIP.hbm_bytes_per_cycle / 2)     # 80 + 32768 / 24 = 1445.3
    for core in (0, 1):
        steady = per[core][2:]           # after the first copies, when the core's own duty cycle is known
        assert steady == pytest.approx([half_share] * len(steady), rel=0.03), core
    # and both end together: neither core is served first (the old booking gave the first block all it could take)
    ends = [sum(per[c]) for c in (0, 1)]
    assert ends[0] == pytest.approx(ends[1], rel=0.02)


def test_the_launch_overhead_is_added_to_the_host_time_not_to_the_kernel():
    res = launch(stream_in, 2, np.zeros(2 * COPIES * N, half), chip=CHIP)
    assert float(as_table(res).start.min()) < CHIP.launch_overhead_cycles      # the blocks start at once
    assert res.launch_us - res.us == pytest.approx(CHIP.launch_overhead_cycles / (CHIP.clock_ghz * 1e3))
    assert CHIP.launch_overhead_cycles > 0


def test_the_task_head_what_if_adds_to_the_task_duration_only():
    # task_head_cycles (off by default): a Task Duration's head overhead, 20.5 us on a full-core A2 launch
    # (asc-devkit guide, 分析性能数据, 方法四) = 37,925 cycles at 1.85 GHz; the cores' own times do not move
    x = np.zeros(2 * COPIES * N, half)
    off = launch(stream_in, 2, x, chip=CHIP)
    on = launch(stream_in, 2, x, chip=dataclasses.replace(CHIP, task_head_cycles=37925))
    assert CHIP.task_head_cycles == 0
    assert on.us - off.us == pytest.approx(37925 / 1850.0)              # 20.5 us
    assert on.cycles == off.cycles and on.core_times == off.core_times
    assert on.launch_us - on.us == pytest.approx(CHIP.launch_overhead_cycles / 1850.0)
