"""Conformance family "Duplicate and Brcb": fill a tile with Duplicate (count and mask/repeat forms), broadcast
per-row scalars with Brcb (consecutive and strided destination blocks), then use them -- exact against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, Brcb, BrcbRepeatParams, DtypeError, Duplicate, Mul, BinaryRepeatParams,
                        float32, half, int8, int32)
from vec_util import assert_same, raises_rule, vector_result


@pytest.mark.parametrize("dtype", [half, float32, int32], ids=["half", "float", "int32"])
def test_brcb_consecutive_blocks(dtype):
    epb = 32 // np.dtype(dtype).itemsize
    src = np.arange(1, 25).astype(dtype)                      # 3 repeats x 8 elements
    z = vector_result(lambda s, z: Brcb(z, s, 3, BrcbRepeatParams(1, 8)), src, out_like=np.zeros(24 * epb, dtype))
    assert_same(z, np.repeat(src, epb))


def test_brcb_strided_blocks_leave_gaps():
    src = np.arange(1, 17).astype(half)                       # 2 repeats
    z = vector_result(lambda s, z: Brcb(z, s, 2, BrcbRepeatParams(2, 16)), src, out_like=np.full(512, -1, half))
    expected = np.full(512, -1, half)
    for r in range(2):
        for k in range(8):
            start = (r * 16 + k * 2) * 16
            expected[start:start + 16] = src[8 * r + k]
    assert_same(z, expected)


def test_row_scaling_with_duplicate_and_brcb():
    """A (16 x 16) half tile times a per-row scale: Brcb makes one block per row, then Mul with src1 block stride 0
    reads the row's block for every block of the row."""
    rng = np.random.default_rng(4)
    x = rng.integers(-8, 8, 256).astype(half)
    scale = rng.integers(1, 4, 16).astype(half)

    def body(x, s, z):
        Duplicate(z, 0.0, 256)
        Brcb(z, s, 2, BrcbRepeatParams(1, 8))                 # z[0:256] = each scale repeated 16 times
        # each row is one repeat of 16 lanes: dst/src0 rep stride 1 block, src1 block stride 0
        Mul(z, x, z, 16, 16, BinaryRepeatParams(1, 1, 0, 1, 1, 1))
    z = vector_result(body, x, scale, out_like=np.zeros(256, half))
    assert_same(z, (x.reshape(16, 16) * scale[:, None]).astype(half).reshape(-1))


def test_duplicate_repeat_form():
    z = vector_result(lambda z: Duplicate(z, 3.0, 64, 2, 1, 8), out_like=np.zeros(256, float32))
    assert_same(z, np.where(np.arange(256) < 128, 3, 0).astype(float32))          # 2 repeats of 64 lanes
    z = vector_result(lambda z: Duplicate(z, 5.0, 16, 2, 1, 8), out_like=np.zeros(256, half))
    assert_same(z, np.where((np.arange(256) % 128) < 16, 5, 0).astype(half))      # 16 of 128 lanes, twice


def test_brcb_errors():
    s = np.zeros(8, int8)
    with raises_rule(DtypeError, "Brcb supports", "int8_t", at="Brcb(z, s, 1, BrcbRepeatParams())"):
        vector_result(lambda s, z: Brcb(z, s, 1, BrcbRepeatParams()), s, out_like=np.zeros(256, int8))
    h = np.zeros(128, half)
    with raises_rule(ArgumentError, "dstBlkStride", "1..255", at="Brcb(z, s, 1, BrcbRepeatParams(0, 8))"):
        vector_result(lambda s, z: Brcb(z, s, 1, BrcbRepeatParams(0, 8)), h, out_like=h)
    with raises_rule(ArgumentError, "same memory", at="Brcb(s, s, 1, BrcbRepeatParams())"):
        vector_result(lambda s: Brcb(s, s, 1, BrcbRepeatParams()), out_like=h)


@pytest.mark.parametrize("dtype", [half, float32, int32, np.int16], ids=["half", "float", "int32", "int16"])
def test_create_vec_index(dtype):
    from ascend_sim import CreateVecIndex
    z = vector_result(lambda z: CreateVecIndex(z, 5, 300), out_like=np.full(320, -1, dtype))
    expected = np.full(320, -1, dtype)
    expected[:300] = np.arange(5, 305, dtype=dtype)
    assert_same(z, expected)
    with raises_rule(DtypeError, "CreateVecIndex supports", "int8_t", at="CreateVecIndex(z, 0, 32)"):
        vector_result(lambda z: CreateVecIndex(z, 0, 32), out_like=np.zeros(32, int8))
