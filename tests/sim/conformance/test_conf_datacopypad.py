"""Conformance: DataCopyPad tails (GMToUB/UBToGM非对齐数据搬运(DataCopyPad).md, SetPadValue(ISASI).md).

A row-wise kernel the way the samples handle a last dimension that is not a multiple of 32 bytes: each row
is one burst, padded in UB with leftPadding/rightPadding, computed on, and written back with DataCopyPad.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (Adds, ArgumentError, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, GlobalTensor,
                        HardEvent, SetFlag, SetPadValue, TBuf, TPipe, TPosition, TQue, UninitializedReadError,
                        WaitFlag, half, kernel, launch)
from kernels_util import raises_rule

ROWS, COLS = 5, 13                                   # 13 halves = 26 bytes per row


@kernel
def rows_plus_one(x, z, left, right, is_pad, pad_value, set_pad):
    """z row r = x row r + 1 (the padded UB rows: left padding, 13 values, right padding, dummy)."""
    pipe = TPipe()
    qi, qo = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(qi, 1, ROWS * 64)
    pipe.InitBuffer(qo, 1, ROWS * 64)
    xg, zg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x)
    zg.SetGlobalBuffer(z)
    t = qi.AllocTensor(half)
    if set_pad:
        SetPadValue(pad_value)
    DataCopyPad(t, xg, DataCopyExtParams(ROWS, COLS * 2, 0, 0, 0),
                DataCopyPadExtParams(is_pad, left, right, pad_value))
    qi.EnQue(t)
    t = qi.DeQue(half)
    o = qo.AllocTensor(half)
    ub_row = -(-(left + COLS + right) * 2 // 32) * 16          # elements per UB row (32-byte bursts)
    Adds(o, t, 1.0, ROWS * ub_row)
    qo.EnQue(o)
    qi.FreeTensor(t)
    o = qo.DeQue(half)
    DataCopyPad(zg, o, DataCopyExtParams(ROWS, ub_row * 2, 0, 0, 0))     # the whole padded rows back
    qo.FreeTensor(o)


def _run(left, right, is_pad, pad_value, set_pad=False):
    x = (np.arange(ROWS * COLS) % 50).astype(half)
    ub_row = -(-(left + COLS + right) * 2 // 32) * 16
    z = np.zeros(ROWS * ub_row, half)
    launch(rows_plus_one, 1, x, z, left, right, is_pad, pad_value, set_pad)
    return x.reshape(ROWS, COLS), z.reshape(ROWS, ub_row)


@pytest.mark.parametrize("left, right", [(3, 0), (2, 5), (16, 0), (0, 3)])
def test_left_and_right_padding_with_is_pad(left, right):
    x, z = _run(left, right, True, -2.0)
    expect = np.full(z.shape, -1.0, half)             # paddingValue -2, plus one
    expect[:, left:left + COLS] = x + np.float16(1)
    np.testing.assert_array_equal(z, expect)


def test_set_pad_value_fills_the_padding_when_is_pad_is_false():
    x, z = _run(1, 2, False, 0.0, set_pad=True)      # SetPadValue(0.0) before the copy, isPad false
    expect = np.full(z.shape, 1.0, half)
    expect[:, 1:1 + COLS] = x + np.float16(1)
    np.testing.assert_array_equal(z, expect)
    x, z = _run(1, 2, False, 7.0, set_pad=True)
    expect = np.full(z.shape, 8.0, half)
    expect[:, 1:1 + COLS] = x + np.float16(1)
    np.testing.assert_array_equal(z, expect)


def test_without_padding_the_dummy_repeats_the_first_element_and_reads_of_it_are_reported():
    # "若leftPadding、rightPadding都为0：dummy会默认填充待搬运数据块的第一个元素值": the values are defined,
    # but a kernel that computes on the dummy is almost surely wrong, so the initcheck reports the read
    with raises_rule(UninitializedReadError, "the padding of a DataCopyPad burst", at="Adds(o, t, 1.0, ROWS * ub_row)"):
        _run(0, 0, False, 0.0)


@kernel
def nop_copies(x, z):
    xg, zg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x)
    zg.SetGlobalBuffer(z)
    buf = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(buf, 64)
    t = buf.Get(half)
    DataCopyPad(t, xg, DataCopyExtParams(0, 26, 0, 0, 0))     # blockCount 0: nothing moves
    DataCopyPad(t, xg, DataCopyExtParams(2, 0, 0, 0, 0))      # blockLen 0: nothing moves
    DataCopyPad(zg, t, DataCopyExtParams(0, 64, 0, 0, 0))


def test_block_count_or_len_zero_is_a_nop():
    z = np.full(32, 3, half)
    result = launch(nop_copies, 1, np.ones(32, half), z)
    np.testing.assert_array_equal(z, np.full(32, 3, half))
    assert not [r for r in result.trace if r.op == "DataCopyPad"]


def test_padding_wider_than_32_bytes_is_refused():
    def k(x):
        xg = GlobalTensor(half)
        xg.SetGlobalBuffer(x)
        buf = TBuf(TPosition.VECCALC)
        TPipe().InitBuffer(buf, 128)
        DataCopyPad(buf.Get(half), xg, DataCopyExtParams(1, 26, 0, 0, 0), DataCopyPadExtParams(True, 17, 0, 0))  # wide
    with raises_rule(ArgumentError, "leftPadding = 17 elements = 34 bytes, but each padding may take at most 32 bytes",
                     "pad at most 16 elements", at="# wide"):
        launch(kernel(k), 1, np.ones(32, half))
