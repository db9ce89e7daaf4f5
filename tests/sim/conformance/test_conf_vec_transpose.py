"""Transpose (16x16, 2-byte) and TransDataTo5HD (2-byte form, NCHW -> NC1HWC0 and the single-repeat quirk),
exact against numpy transposes."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, DtypeError, TransDataTo5HD, TransDataTo5HDParams, Transpose, float32, half,
                        int16, uint16)
from vec_util import assert_same, raises_rule, vector_result


@pytest.mark.parametrize("dtype", [half, int16, uint16], ids=["half", "int16", "uint16"])
def test_transpose_16x16(dtype):
    x = np.arange(256).astype(dtype)
    z = vector_result(lambda x, z: Transpose(z, x), x, out_like=np.zeros(256, dtype))
    assert_same(z, x.reshape(16, 16).T.reshape(-1))
    z = vector_result(lambda x: Transpose(x, x), out_like=x)                  # in place is allowed
    assert_same(z, x.reshape(16, 16).T.reshape(-1))


def test_nchw_to_nc1hwc0():
    """The page's recipe: C = 16 (one C1), H * W = 64; src addresses one HW plane apart, dst consecutive blocks,
    repeatTimes = H*W/16, srcRepStride 1, dstRepStride 16."""
    C, HW = 16, 64
    x = np.random.default_rng(0).standard_normal(C * HW).astype(half)

    def body(x, z):
        src = [x[c * HW] for c in range(16)]
        dst = [z[c * 16] for c in range(16)]
        TransDataTo5HD(dst, src, TransDataTo5HDParams(False, False, HW // 16, 16, 1))
    z = vector_result(body, x, out_like=np.zeros(C * HW, half))
    assert_same(z, x.reshape(C, HW).T.reshape(-1))                          # (HW, C0): NC1HWC0 with C1 = 1


def test_single_repeat_starts_one_stride_in():
    x = np.arange(512).astype(half)

    def body(x, z):
        TransDataTo5HD([z[16 * i] for i in range(16)], [x[16 * i] for i in range(16)],
                       TransDataTo5HDParams(False, False, 1, 16, 16))
    z = vector_result(body, x, out_like=np.zeros(512, half))
    expected = np.zeros(512, half)
    expected[256:] = x[256:].reshape(16, 16).T.reshape(-1)
    assert_same(z, expected)


def test_transpose_errors():
    f = np.zeros(256, float32)
    with raises_rule(DtypeError, "Transpose supports int16_t, uint16_t, half", "float", at="Transpose(b, a)"):
        vector_result(lambda a, b: Transpose(b, a), f, out_like=f)
    h = np.zeros(256, half)
    with raises_rule(ArgumentError, "srcList must hold 16 LocalTensors",
                     at="TransDataTo5HD([z] * 16, [x] * 8, TransDataTo5HDParams())"):
        vector_result(lambda x, z: TransDataTo5HD([z] * 16, [x] * 8, TransDataTo5HDParams()), h, out_like=h)


def test_address_list_form():
    """The page's NCHW -> NC1HWC0 loop with uint64 address lists from GetPhyAddr(): C = 32 (two C1 slices)."""
    C, HW, C0 = 32, 32, 16
    x = np.random.default_rng(3).standard_normal(C * HW).astype(half)

    def body(x, z):
        for c1 in range(C // C0):
            src = [x[(c1 * C0 + i) * HW].GetPhyAddr() for i in range(16)]
            dst = [z[c1 * HW * C0 + i * 16].GetPhyAddr() for i in range(16)]
            TransDataTo5HD(dst, src, TransDataTo5HDParams(False, False, HW // 16, 16, 1), dtype=half)
    z = vector_result(body, x, out_like=np.zeros(C * HW, half))
    assert_same(z, x.reshape(C // C0, C0, HW).transpose(0, 2, 1).reshape(-1))
    with raises_rule(ArgumentError, "holds addresses", "dtype=half",
                     at="TransDataTo5HD([0] * 16, [64] * 16, TransDataTo5HDParams())"):
        vector_result(lambda x: TransDataTo5HD([0] * 16, [64] * 16, TransDataTo5HDParams()), out_like=x)
