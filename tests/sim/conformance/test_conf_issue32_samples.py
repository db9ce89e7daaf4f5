"""Issue 32: three official-sample behaviours, each written from its API page and sample.

1. Cast to int4b_t in the mask/repeat form (Cast.md; asc-devkit examples/01_simd_cpp_api/03_basic_api/
   01_memory_vector_compute/cast, scenario 0: ``Cast<int4b_t, half>(y, x, CAST_CEIL, 128, 4, {1, 1, 2, 8})``): the
   mask counts lanes of the wider type (half: 128 per repeat); an int4b_t DataBlock holds 64 values, so one
   repeat writes 2 blocks of dst (dstRepStride 2) and reads 8 of src (srcRepStride 8).
2. Compare into the CMPMASK register, read with GetCmpMask (Compare（结果存入寄存器）.md, GetCmpMask(ISASI).md; the
   compare sample, scenario 2): no dst and no repeat (one 256-byte repeat); one bit per lane into the 128-bit
   register, GetCmpMask copies the register (16 bytes) to a UB tensor.
3. ``SetVectorMask<T>(0, n)`` in Counter mode (the reduce sample: ``SetMaskCount(); SetVectorMask<T>(0,
   totalLength);``): the two-word form writes the register as given (kernel_reg.h: ``set_vector_mask(maskHigh,
   maskLow)`` whatever the mode template argument), so in Counter mode maskLow is the element count.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, BinaryRepeatParams, CMPMODE, Add, Cast, Compare, DtypeError, GetCmpMask,
                        MASK_PLACEHOLDER, OutOfBoundsError, RoundMode, SetMaskCount, SetMaskNorm, SetVectorMask,
                        ResetMask, UnaryRepeatParams, WholeReduceSum, float32, half, int4b_t, int8, uint8)
from kernels_util import raises_rule, run_on_ub


def _nibbles(packed: np.ndarray) -> np.ndarray:
    """Packed int4 bytes -> values (element 2k in the low nibble of byte k, sign-extended)."""
    b = packed.view(np.uint8).astype(np.int16)
    v = np.stack([b & 0x0F, b >> 4], axis=1).reshape(-1)
    return np.where(v > 7, v - 16, v)


# ============================================================================ 1. int4b_t, repeat form
def test_cast_half_to_int4_in_the_repeat_form_as_the_cast_sample():
    x = np.random.default_rng(0).uniform(-8.5, 7.5, 512).astype(half)
    y = np.zeros(256, int8)
    run_on_ub(lambda xl, yl: Cast(yl.ReinterpretCast(int4b_t), xl, RoundMode.CAST_CEIL, 128, 4,
                                  UnaryRepeatParams(1, 1, 2, 8)), x, y)
    assert np.array_equal(_nibbles(y), np.clip(np.ceil(x.astype(np.float64)), -8, 7))


def test_cast_int4_repeat_form_masks_lanes_and_keeps_the_others():
    """mask 64 of 128 half lanes: the first 64 values of each repeat; dst nibbles past them keep their bytes."""
    x = np.full(256, 3.0, half)
    y = np.full(128, 0x77, np.uint8).view(int8)          # every nibble 7
    run_on_ub(lambda xl, yl: Cast(yl.ReinterpretCast(int4b_t), xl, RoundMode.CAST_RINT, 64, 2,
                                  UnaryRepeatParams(1, 1, 2, 8)), x, y)
    v = _nibbles(y).reshape(2, 128)
    assert np.all(v[:, :64] == 3) and np.all(v[:, 64:] == 7)


def test_cast_int4_to_half_in_the_repeat_form():
    vals = (np.arange(256) % 16 - 8)
    packed = ((vals[0::2] & 0x0F) | ((vals[1::2] & 0x0F) << 4)).astype(np.uint8).view(int8)
    z = np.zeros(256, half)
    run_on_ub(lambda pl, zl: Cast(zl, pl.ReinterpretCast(int4b_t), RoundMode.CAST_NONE, 128, 2,
                                  UnaryRepeatParams(1, 1, 8, 2)), packed, z)
    assert np.array_equal(z, vals.astype(half))


# ============================================================================ 2. CMPMASK + GetCmpMask
def test_compare_into_the_register_then_get_cmp_mask_as_the_compare_sample():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1e3, 1e3, 64).astype(float32), rng.uniform(-1e3, 1e3, 64).astype(float32)
    out = np.full(32, 0xEE, np.uint8)

    def body(al, bl, ol):
        Compare(al, bl, CMPMODE.LT, 64, BinaryRepeatParams())
        GetCmpMask(ol)
    run_on_ub(body, a, b, out)
    assert np.array_equal(out[:8], np.packbits(a < b, bitorder="little"))
    assert np.all(out[8:16] == 0)                  # register bits past the 64 float lanes: 0
    assert np.all(out[16:] == 0xEE)                # GetCmpMask writes the 128-bit register only


def test_compare_into_the_register_with_a_bit_mask_and_half_data():
    a = np.arange(128).astype(half)
    b = np.full(128, 64, half)
    out = np.zeros(16, np.uint8)
    mask = [0xFFFF_FFFF_FFFF_FFFF, 0x0000_0000_FFFF_FFFF]      # lanes 0..95

    def body(al, bl, ol):
        Compare(al, bl, CMPMODE.GE, mask, BinaryRepeatParams())
        GetCmpMask(ol)
    run_on_ub(body, a, b, out)
    bits = np.unpackbits(out, bitorder="little").astype(bool)
    assert np.array_equal(bits, (np.arange(128) >= 64) & (np.arange(128) < 96))


def test_get_cmp_mask_refuses_a_dst_smaller_than_the_register():
    a = np.ones(64, float32)
    with raises_rule(OutOfBoundsError, "GetCmpMask: dst holds 8 bytes", "128-bit"):
        run_on_ub(lambda al, ol: (Compare(al, al, CMPMODE.EQ, 64, BinaryRepeatParams()),
                                  GetCmpMask(ol[0:8])), a, np.zeros(32, np.uint8))


def test_compare_into_the_register_takes_half_or_float_only():
    with raises_rule(DtypeError, "Compare (CMPMASK register) supports half, float on Atlas A2, not int32_t"):
        run_on_ub(lambda al: Compare(al, al, CMPMODE.EQ, 64, BinaryRepeatParams()), np.ones(64, np.int32))


# ============================================================================ 3. SetVectorMask(0, n) in Counter mode
def test_set_vector_mask_two_words_in_counter_mode_is_the_count_as_the_reduce_sample():
    x = np.arange(256).astype(float32)
    z = np.zeros(256, float32)

    def body(xl, zl):
        SetMaskCount()
        SetVectorMask(0, 100, dtype=float32)         # SetVectorMask<float>(0, 100): mode NORMAL, the default
        Add(zl, xl, xl, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), isSetMask=False)
        SetMaskNorm()
        ResetMask()
    run_on_ub(body, x, z)
    assert np.array_equal(z[:100], 2 * x[:100]) and np.all(z[100:] == 0)


def test_set_vector_mask_counter_mode_still_needs_mask_high_zero():
    with raises_rule(ArgumentError, "maskHigh must be 0 in Counter mode"):
        run_on_ub(lambda xl: (SetMaskCount(), SetVectorMask(1, 100, dtype=float32)), np.zeros(64, float32))


def test_set_vector_mask_one_word_normal_form_in_counter_mode_is_still_refused():
    """``SetVectorMask<T>(len)`` with mode NORMAL makes a lane bit mask (AscendCUtils::SetMask), not a count."""
    with raises_rule(ArgumentError, "SetVectorMask<NORMAL> while the mask mode is Counter"):
        run_on_ub(lambda xl: (SetMaskCount(), SetVectorMask(64, dtype=float32)), np.zeros(64, float32))
