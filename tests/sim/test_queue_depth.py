"""Bounded instruction queues: the scalar stalls while the queue of the pipe it issues to is full.

The scalar unit issues every vector, cube and copy instruction into its pipe's queue (G 编程模型/AI-Core-SIMD编程/
抽象硬件架构.md); on Atlas A2 the MTE1 and M queues hold 32 instructions and, when full, block the issue of every
other instruction (HW 硬件约束/NPU架构版本2201.md). An entry leaves its queue when its instruction starts, so with a
queue of depth D the scalar issues instruction n of a pipe only once instruction n - D has started.

Hand-computed case: a queue of depth 2 on V. A copy fills x; three Adds wait for it on V (none can start before the
copy's flag, at cycle G = the first Add's start). The first two fill the queue; the third is issued when the first
starts, at G + tick; the scalar's next instruction, a copy on MTE2, is issued one tick later, at G + 2 ticks, where
an unbounded queue lets the scalar issue it at once (it then starts when MTE2 is free, at the first copy's end).
These cases count the instructions alone (``sync_queue_entries`` off).

The queue calls' Set and Wait take entries too (``sync_queue_entries``, on by default; TPipe-TQue框架编程原理.md:
EnQue/FreeTensor 发射 a Set, DeQue/AllocTensor a Wait, into the instruction queues). Hand-computed: the same kernel
with depth 2 on V. DeQue's Wait is V's first entry; it leaves when its event comes, at G. The first Add takes the
second slot (starts at G); the second Add needs the Wait's slot: issued at G + tick; the third needs the first
Add's slot (left at G): issued at G + 2 ticks; the copy one tick later, G + 3 ticks (G + 2 without the Wait's entry).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Add, Ascend910B, DataCopy, GlobalTensor, TPipe, TPosition, TQue, half, kernel, launch
from ascend_sim.hw.chips import ATLAS_A2_QUEUE_DEPTH

CHIP = dataclasses.replace(Ascend910B(), sync_queue_entries=False)     # the instructions alone
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
    assert Ascend910B().pipe_queue_depth == ATLAS_A2_QUEUE_DEPTH     # on in the default profile (RESULTS 1c)
    assert Ascend910B().sync_queue_entries          # with the queue calls' Set/Wait entries


def test_the_dequeue_wait_takes_a_queue_entry():
    """Depth 2 on V with the queue calls' entries: the copy after the three Adds is issued at G + 3 ticks."""
    chip = dataclasses.replace(CHIP, pipe_queue_depth={"V": 2}, sync_queue_entries=True)
    adds, (first, second) = records(chip)
    g, tick = adds[0].start, chip.scalar_issue_cycles
    assert g > first.end
    assert adds[1].ready == adds[0].end and adds[2].ready == adds[1].end     # the Adds run back to back as before
    assert second.ready == g + 3 * tick


def test_the_entries_change_nothing_without_a_bounded_queue():
    on = records(dataclasses.replace(CHIP, pipe_queue_depth={}, sync_queue_entries=True))
    off = records(dataclasses.replace(CHIP, pipe_queue_depth={}))
    assert [(r.ready, r.start, r.end) for r in on[0] + on[1]] == [(r.ready, r.start, r.end) for r in off[0] + off[1]]


@pytest.mark.parametrize("depth", [1, 2])
def test_the_third_add_waits_for_the_add_depth_places_back(depth):
    """Depth 1: the third Add is issued when the second starts; depth 2: when the first starts."""
    chip = dataclasses.replace(CHIP, pipe_queue_depth={"V": depth})
    adds, (_, second) = records(chip)
    assert second.ready == adds[2 - depth].start + 2 * chip.scalar_issue_cycles
