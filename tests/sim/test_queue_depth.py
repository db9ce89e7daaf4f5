"""Bounded instruction queues: the scalar stalls while the queue of the pipe it issues to is full.

The scalar unit issues every vector, cube and copy instruction into its pipe's queue (G 编程模型/AI-Core-SIMD编程/
抽象硬件架构.md); on Atlas A2 the MTE1 and M queues hold 32 instructions and, when full, block the issue of every
other instruction (HW 硬件约束/NPU架构版本2201.md). An entry leaves its queue when its instruction starts, so with a
queue of depth D the scalar issues instruction n of a pipe only once instruction n - D has started.

Hand-computed case: a queue of depth 2 on V. A copy fills x; three Adds wait for it on V (none can start before the
copy's flag, at cycle G = the first Add's start). The first two fill the queue; the third is issued when the first
starts, at G + tick; the scalar's next instruction, a copy on MTE2, is issued one tick later, at G + 2 ticks, where
an unbounded queue lets the scalar issue it at once (it then starts when MTE2 is free, at the first copy's end).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Add, Ascend910B, DataCopy, GlobalTensor, TPipe, TPosition, TQue, half, kernel, launch
from ascend_sim.hw.chips import ATLAS_A2_QUEUE_DEPTH

CHIP = Ascend910B()
N = 4096


@kernel(core="AIV")
def three_adds_then_a_copy(x, y):
    xg, yg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x, N)
    yg.SetGlobalBuffer(y, N)
    pipe = TPipe()
    qx, qy = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1)
    pipe.InitBuffer(qx, 1, N * 2)
    pipe.InitBuffer(qy, 1, N * 2)
    xl, yl = qx.AllocTensor(half), qy.AllocTensor(half)
    DataCopy(xl, xg, N)
    qx.EnQue(xl)
    xl = qx.DeQue(half)
    for _ in range(3):
        Add(xl, xl, xl, N)
    DataCopy(yl, yg, N)             # MTE2: the scalar's next issue after the third Add
    qy.EnQue(yl)
    yl = qy.DeQue(half)
    qx.FreeTensor(xl)
    qy.FreeTensor(yl)


def records(chip):
    x = np.ones(N, np.float16)
    res = launch(three_adds_then_a_copy, 1, x, x.copy(), chip=chip, numerics=False)
    adds = [r for r in res.trace if r.op == "Add"]
    copies = [r for r in res.trace if r.op == "DataCopy"]
    return adds, copies


def test_a_full_queue_stalls_the_scalar_and_the_next_issue_to_another_pipe_waits():
    chip = dataclasses.replace(CHIP, pipe_queue_depth={"V": 2})
    adds, (first, second) = records(chip)
    g, tick = adds[0].start, chip.scalar_issue_cycles
    assert g > first.end                                # the Adds wait for the copy's flag
    assert second.ready == g + 2 * tick                 # issued once the first Add left the queue, then one tick
    assert second.start == g + 2 * tick


def test_an_unbounded_queue_never_stalls_the_scalar():
    chip = dataclasses.replace(CHIP, pipe_queue_depth={})
    adds, (first, second) = records(chip)
    assert second.ready == first.end                    # issued long before; waits only for MTE2
    assert second.ready < adds[0].start


def test_a_queue_deep_enough_for_the_three_adds_changes_nothing():
    deep = records(dataclasses.replace(CHIP, pipe_queue_depth={"V": 3}))
    none = records(dataclasses.replace(CHIP, pipe_queue_depth={}))
    assert [(r.ready, r.start, r.end) for r in deep[0] + deep[1]] == \
        [(r.ready, r.start, r.end) for r in none[0] + none[1]]


def test_atlas_a2_mte1_and_m_queues_hold_32_as_a_what_if():
    assert ATLAS_A2_QUEUE_DEPTH == {"MTE1": 32, "M": 32}
    assert CHIP.pipe_queue_depth == {}          # off by default (chips.py: the table gets worse with it)


@pytest.mark.parametrize("depth", [1, 2])
def test_the_third_add_waits_for_the_add_depth_places_back(depth):
    """Depth 1: the third Add is issued when the second starts; depth 2: when the first starts."""
    chip = dataclasses.replace(CHIP, pipe_queue_depth={"V": depth})
    adds, (_, second) = records(chip)
    assert second.ready == adds[2 - depth].start + 2 * chip.scalar_issue_cycles
