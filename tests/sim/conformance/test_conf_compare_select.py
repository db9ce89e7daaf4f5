"""Conformance: Compare then Select in all three SELMODEs, count and repeat forms (Compare.md, Select.md).

References are numpy written from the doc sentences: mode 0 reuses the first 256/sizeof(T) selMask bits in every
repeat, modes 1 and 2 consume the bits consecutively, masked-off lanes keep dst, Compare skips the unaligned tail.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (CMPMODE, SELMODE, BinaryRepeatParams, Compare, DtypeError, OutOfBoundsError, Select, float32,
                        half, int32, uint8)
from kernels_util import raises_rule, run_on_ub, vector_result

RNG = np.random.default_rng(1313)


def _bits(mask: np.ndarray) -> np.ndarray:
    return np.unpackbits(mask.view(np.uint8), bitorder="little").astype(bool)


@pytest.mark.parametrize("dtype", (half, float32), ids=("half", "float"))
@pytest.mark.parametrize("mode", list(SELMODE), ids=lambda m: m.name)
def test_compare_then_select_count_form(dtype, mode):
    lanes = 256 // np.dtype(dtype).itemsize
    n = 3 * lanes
    x, y = (RNG.integers(-3, 4, n).astype(dtype) for _ in range(2))

    def body(x, y, m, z):
        Compare(m, x, y, CMPMODE.GT, n)
        if mode is SELMODE.VSEL_TENSOR_SCALAR_MODE:
            Select(z, m, x, -7.0, mode, n)
        else:
            Select(z, m, x, y, mode, n)
    z = vector_result(body, x, y, np.zeros(n // 8, uint8), out_like=np.zeros(n, dtype))
    gt = x > y
    if mode is SELMODE.VSEL_CMPMASK_SPR:        # every repeat reuses the first `lanes` bits
        sel = np.tile(gt[:lanes], 3)
    else:
        sel = gt
    other = np.full(n, -7, dtype) if mode is SELMODE.VSEL_TENSOR_SCALAR_MODE else y
    np.testing.assert_array_equal(z, np.where(sel, x, other))
    if mode is SELMODE.VSEL_CMPMASK_SPR:
        assert not np.array_equal(sel, gt), "the data must tell mode 0 from mode 2"


@pytest.mark.parametrize("mode", list(SELMODE), ids=lambda m: m.name)
def test_select_repeat_form_with_a_mask_keeps_the_masked_off_lanes(mode):
    lanes, repeat, active = 64, 3, 40                   # float: 64 lanes per repeat, mask 40
    n = lanes * repeat
    x, y = RNG.uniform(-5, 5, n).astype(float32), RNG.uniform(-5, 5, n).astype(float32)
    sel = RNG.integers(0, 256, n // 8).astype(np.uint8)
    start = np.full(n, 99, np.float32)
    params = BinaryRepeatParams(1, 1, 1, 8, 8, 8)

    def body(m, x, y, z):
        Select(z, m, x, 0.5 if mode is SELMODE.VSEL_TENSOR_SCALAR_MODE else y, mode, active, repeat, params)
    z = vector_result(body, sel, x, y, out_like=start)
    bits = _bits(sel)
    expect = start.copy()
    for r in range(repeat):
        for j in range(active):
            e = r * lanes + j
            b = bits[j] if mode is SELMODE.VSEL_CMPMASK_SPR else bits[e]
            expect[e] = x[e] if b else (np.float32(0.5) if mode is SELMODE.VSEL_TENSOR_SCALAR_MODE else y[e])
    np.testing.assert_array_equal(z, expect)


def test_compare_skips_the_unaligned_tail_and_count_zero_is_a_nop():
    n = 300                                             # 600 bytes: two whole 256-byte repeats (256 halves) + a tail
    x = RNG.integers(-2, 3, n).astype(half)
    y = RNG.integers(-2, 3, n).astype(half)
    start = np.full(64, 0xAA, np.uint8)
    m = vector_result(lambda x, y, m: Compare(m, x, y, CMPMODE.LE, n), x, y, out_like=start)
    np.testing.assert_array_equal(m[:32], np.packbits(x[:256] <= y[:256], bitorder="little"))
    np.testing.assert_array_equal(m[32:], start[32:])   # "未对齐部分元素不参与计算"
    m0 = vector_result(lambda x, y, m: Compare(m, x, y, CMPMODE.LE, 0), x, y, out_like=start)
    np.testing.assert_array_equal(m0, start)


def test_compare_int32_only_eq():
    x = np.arange(64, dtype=np.int32)
    y = x.copy()
    y[::3] = -1
    m = vector_result(lambda x, y, m: Compare(m, x, y, CMPMODE.EQ, 64), x, y, out_like=np.zeros(8, uint8))
    np.testing.assert_array_equal(m, np.packbits(x == y, bitorder="little"))
    with raises_rule(DtypeError, "Compare: int32_t with CMPMODE.LT is not in the Atlas A2 table", at="CMPMODE.LT, 64"):
        run_on_ub(lambda x, y, m: Compare(m, x, y, CMPMODE.LT, 64), x, y, np.zeros(8, uint8))


def test_bad_select_calls_name_the_rule():
    x = np.ones(128, half)
    with raises_rule(DtypeError, "Select supports half, float on Atlas A2, not int32_t", at="int_select"):
        run_on_ub(lambda m, a, z: Select(z, m, a, a, SELMODE.VSEL_TENSOR_TENSOR_MODE, 64),  # int_select
                  np.zeros(8, uint8), np.ones(64, int32), np.zeros(64, int32))
    with raises_rule(OutOfBoundsError, "VSEL_TENSOR_TENSOR_MODE reads selMask bits 0..127 (16 bytes) but selMask "
                     "holds 8 bytes", at="short_mask"):
        run_on_ub(lambda m, a, z: Select(z, m, a, a, SELMODE.VSEL_TENSOR_TENSOR_MODE, 128),  # short_mask
                  np.zeros(8, uint8), x, np.zeros(128, half))
