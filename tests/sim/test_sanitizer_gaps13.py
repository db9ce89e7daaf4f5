"""Sanitizer gaps of docs/sanitizer.md, closed (issue 13): use after free through a view made before
FreeTensor, a GM write-after-read inside one block, and two overlapping copy-outs on one MTE3 pipe. Each test shows the bad kernel reported and the
correct one running clean and exact.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (PIPE_MTE3, Adds, DataCopy, HardEvent, PipeBarrier, QueueError, RaceError, TPipe, TPosition,
                        TQue, half, int16, kernel, launch)
from kernels_util import gm, handoff, raises_rule, scratch


@kernel
def stale_view(x, z, how):
    pipe = TPipe()
    q = TQue(TPosition.VECIN, 1)
    pipe.InitBuffer(q, 1, 512)
    t = q.AllocTensor(half)
    DataCopy(t, gm(x), 256)
    q.EnQue(t)
    t = q.DeQue(half)
    view = t[128:256] if how == "slice" else t.ReinterpretCast(int16)
    q.FreeTensor(t)
    if how == "slice":
        Adds(view, view, 1.0, 128)  # <- the slice outlives FreeTensor
    else:
        view.GetValue(0)  # <- the ReinterpretCast outlives FreeTensor


@pytest.mark.parametrize("how, at", [("slice", "<- the slice outlives"), ("cast", "<- the ReinterpretCast outlives")])
def test_a_view_made_before_free_tensor_is_reported_after_it(how, at):
    with raises_rule(QueueError, "is a tensor that was given back with FreeTensor (use after free)", at=at):
        launch(stale_view, 1, np.ones(256, half), np.zeros(256, half), how)


@kernel
def in_place(x, synced):
    """x[0:256] = x[256:512] + 1 ... but first x[256:512] is read, then x[0:512] written."""
    t = scratch(1024, half)
    DataCopy(t, gm(x), 512)  # <- MTE2 reads all of x
    if synced:
        handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(x), t, 512)  # <- MTE3 writes x back


def test_gm_write_after_read_in_one_block_needs_a_flag():
    x = np.arange(512).astype(half)
    with raises_rule(RaceError, "pipe MTE3 writes GM buffer 'x' bytes 0..1023; byte 0 was read by pipe MTE2 of "
                     "this block at test_sanitizer_gaps13.py:", "SetFlag(HardEvent.MTE2_MTE3, id)",
                     at="<- MTE3 writes x back"):
        launch(in_place, 1, x.copy(), False, gm_names=["x"])
    y = x.copy()
    launch(in_place, 1, y, True)
    np.testing.assert_array_equal(y, x)


@kernel
def in_place_through_vector(x, n):
    """The usual in-place kernel: MTE2 read, V (waits on MTE2), MTE3 (waits on V) writes the same bytes."""
    t = scratch(n * 2, half)
    for i in range(2):
        DataCopy(t, gm(x)[i * n], n)
        handoff(HardEvent.MTE2_V)
        Adds(t, t, 1.0, n)
        handoff(HardEvent.V_MTE3)
        DataCopy(gm(x)[i * n], t, n)
        handoff(HardEvent.MTE3_MTE2)


def test_a_write_ordered_after_the_read_through_another_pipe_is_clean():
    x = np.arange(512).astype(half)
    y = x.copy()
    launch(in_place_through_vector, 1, y, 256)
    np.testing.assert_array_equal(y, x + np.float16(1))


@kernel
def copy_out_twice(x, z, fence):
    """Two MTE3 copies to overlapping GM bytes (z[0:256] then z[128:384])."""
    t = scratch(1024, half)
    DataCopy(t, gm(x), 512)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(z), t, 256)
    if fence == "barrier":
        PipeBarrier(PIPE_MTE3)
    elif fence == "flags":                  # MTE3 -> V -> MTE3: V saw the first copy finish
        handoff(HardEvent.MTE3_V)
        handoff(HardEvent.V_MTE3)
    DataCopy(gm(z)[128], t[256:512], 256)  # <- overlaps the first copy-out


def test_overlapping_copies_on_one_mte_pipe_need_a_pipe_barrier():
    """PipeBarrier(ISASI).md: "搬运的目的GM地址存在重叠，两条搬运指令之间需要通过调用PipeBarrier<PIPE_MTE3>()添加
    MTE3搬出流水的同步"."""
    x = np.arange(512).astype(half)
    with raises_rule(RaceError, "pipe MTE3 writes GM buffer 'z' bytes 256..767; byte 256 was written by an earlier "
                     "copy on the same pipe", "PipeBarrier(PIPE_MTE3)", at="<- overlaps the first copy-out"):
        launch(copy_out_twice, 1, x, np.zeros(384, half), None, gm_names=["x", "z"])
    for fence in ("barrier", "flags"):
        z = np.zeros(384, half)
        launch(copy_out_twice, 1, x, z, fence)
        np.testing.assert_array_equal(z, np.concatenate([x[:128], x[256:512]]))
