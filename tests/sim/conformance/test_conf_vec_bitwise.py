"""Conformance family "bitwise": And/Or/Not on 16-bit integers and the shifts on 16/32-bit integers (logical for
unsigned, sign-keeping for signed, as the ShiftLeft/ShiftRight pages describe), exact against numpy bit operations."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (And, ArgumentError, DtypeError, Not, Or, ShiftLeft, ShiftRight, UnaryRepeatParams,
                        BinaryRepeatParams, half, int16, int32, uint16, uint32)
from vec_util import assert_same, raises_rule, vector_result

N = 300


def ints(dtype, seed=0):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max, N, endpoint=True, dtype=np.int64).astype(dtype)


@pytest.mark.parametrize("dtype", [int16, uint16], ids=["int16", "uint16"])
def test_and_or_not(dtype):
    x, y = ints(dtype, 1), ints(dtype, 2)
    z = vector_result(lambda x, y, z: And(z, x, y, N), x, y, out_like=np.zeros(N, dtype))
    assert_same(z, x & y)
    z = vector_result(lambda x, y, z: Or(z, x, y, N), x, y, out_like=np.zeros(N, dtype))
    assert_same(z, x | y)
    z = vector_result(lambda x, z: Not(z, x, N), x, out_like=np.zeros(N, dtype))
    assert_same(z, ~x)


def test_and_repeat_form_with_a_bit_mask():
    x, y = ints(uint16, 3)[:256], ints(uint16, 4)[:256]
    z = vector_result(lambda x, y, z: And(z, x, y, [0xFF00FF, 0], 2, BinaryRepeatParams()), x, y,
                      out_like=np.zeros(256, uint16))
    lane = np.arange(256) % 128
    on = ((0xFF00FF >> np.minimum(lane, 63)) & 1).astype(bool) & (lane < 64)
    assert_same(z, np.where(on, x & y, 0).astype(uint16))


def reference_shl(x: np.ndarray, s: int) -> np.ndarray:
    """The page's rule written out per element with Python ints: unsigned drops the top bits; signed keeps the sign."""
    bits = x.dtype.itemsize * 8
    out = []
    for v in x.tolist():
        u = v & ((1 << bits) - 1)
        r = (u << s) & ((1 << bits) - 1)
        if x.dtype.kind == "i":
            r = (u & (1 << (bits - 1))) | (r & ((1 << (bits - 1)) - 1))
        out.append(r)
    return np.array(out, np.uint64).astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


@pytest.mark.parametrize("dtype", [int16, uint16, int32, uint32], ids=["int16", "uint16", "int32", "uint32"])
@pytest.mark.parametrize("s", [0, 1, 3, 15])
def test_shifts(dtype, s):
    x = ints(dtype, 5)
    z = vector_result(lambda x, z: ShiftLeft(z, x, s, N), x, out_like=np.zeros(N, dtype))
    assert_same(z, reference_shl(x, s))
    z = vector_result(lambda x, z: ShiftRight(z, x, s, N), x, out_like=np.zeros(N, dtype))
    assert_same(z, x >> s)                      # numpy: arithmetic for signed, logical for unsigned


def test_the_pages_examples():
    """1010101010101010 (int16) << 1 = 1101010101010100, << 3 = 1101010101010000; >> 1 = 1101010101010101."""
    x = np.full(128, 0b1010101010101010, np.uint16).view(int16)
    for s, want in ((1, 0b1101010101010100), (3, 0b1101010101010000)):
        z = vector_result(lambda x, z: ShiftLeft(z, x, s, 128), x, out_like=np.zeros(128, int16))
        assert (z.view(np.uint16) == want).all()
    z = vector_result(lambda x, z: ShiftRight(z, x, 1, 128), x, out_like=np.zeros(128, int16))
    assert (z.view(np.uint16) == 0b1101010101010101).all()
    z = vector_result(lambda x, z: ShiftLeft(z, x, 2, 64, 1, UnaryRepeatParams()), x.view(uint16),
                      out_like=np.zeros(128, uint16))
    assert (z[:64] == (0b1010101010101010 << 2) & 0xFFFF).all() and (z[64:] == 0).all()


def test_bitwise_errors():
    x = np.zeros(128, int32)
    with raises_rule(DtypeError, "And supports int16_t, uint16_t", "int32_t", at="And(z, x, x, 128)"):
        vector_result(lambda x, z: And(z, x, x, 128), x, out_like=x)
    h = np.zeros(128, half)
    with raises_rule(DtypeError, "ShiftLeft supports", "half", at="ShiftLeft(z, x, 1, 128)"):
        vector_result(lambda x, z: ShiftLeft(z, x, 1, 128), h, out_like=h)
    s = np.zeros(128, int16)
    with raises_rule(ArgumentError, "shift count", "17", "0..16", at="ShiftRight(z, x, 17, 128)"):
        vector_result(lambda x, z: ShiftRight(z, x, 17, 128), s, out_like=s)


def test_shift_right_round_en():
    """The page's example: 17 >> 5 with roundEn: bit 4 of 17 is 1, so the result is 0 + 1; unsigned ignores roundEn."""
    x = np.array([17, -17, 15, 16, 47, -1, 32767, -32768] * 16, int16)
    z = vector_result(lambda x, z: ShiftRight(z, x, 5, 128, 1, UnaryRepeatParams(), roundEn=True), x,
                      out_like=np.zeros(128, int16))
    expected = (x.astype(np.int64) >> 5) + ((x.astype(np.int64) >> 4) & 1)
    assert_same(z, expected.astype(int16))
    assert z[0] == 1
    u = x.view(uint16)
    z = vector_result(lambda x, z: ShiftRight(z, x, 5, 128, 1, UnaryRepeatParams(), roundEn=True), u,
                      out_like=np.zeros(128, uint16))
    assert_same(z, u >> 5)
    with raises_rule(ArgumentError, "roundEn belongs to the mask/repeat form",
                     at="ShiftRight(z, x, 5, 128, roundEn=True)"):
        vector_result(lambda x, z: ShiftRight(z, x, 5, 128, roundEn=True), x, out_like=x)
