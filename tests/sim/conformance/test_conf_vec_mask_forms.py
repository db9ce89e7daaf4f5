"""Conformance family "mask/repeat forms": Normal and Counter mask modes, SetVectorMask (len and the two-word
form), isSetMask=False with MASK_PLACEHOLDER, the register left by an isSetMask=True call, and the count
form's reset -- each exact against a numpy model of the documented lane selection."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (MASK_PLACEHOLDER, Add, Adds, ArgumentError, Axpy, BinaryRepeatParams, MaskMode, Mul, ResetMask,
                        SetMaskCount, SetMaskNorm, SetVectorMask, Sub, UnaryRepeatParams, float32, half)
from vec_util import assert_same, raises_rule, vector_result

N = 512


def lanes_of(itemsize, per_repeat: np.ndarray, repeats: int, blk: int = 1, rep: int = 8) -> np.ndarray:
    """Element offsets of the selected lanes (``per_repeat``: bool per lane) of ``repeats`` repeats."""
    epb = 32 // itemsize
    out = []
    for r in range(repeats):
        for lane in np.flatnonzero(per_repeat):
            out.append(r * rep * epb + (lane // epb) * blk * epb + lane % epb)
    return np.array(out, int)


def data(dtype):
    rng = np.random.default_rng(7)
    return rng.integers(-50, 50, N).astype(dtype), rng.integers(-50, 50, N).astype(dtype)


@pytest.mark.parametrize("dtype", [half, float32], ids=["half", "float"])
def test_normal_mode_register_len_and_placeholder(dtype):
    x, y = data(dtype)
    lanes = 256 // np.dtype(dtype).itemsize

    def body(a, b, z):
        SetMaskNorm()
        SetVectorMask(lanes // 2 + 3, dtype=dtype)
        Add(z, a, b, MASK_PLACEHOLDER, 2, BinaryRepeatParams(2, 2, 2, 16, 16, 16), isSetMask=False)
        ResetMask()
    z = vector_result(body, x, y, out_like=np.zeros(N, dtype))
    idx = lanes_of(np.dtype(dtype).itemsize, np.arange(lanes) < lanes // 2 + 3, 2, blk=2, rep=16)
    expected = np.zeros(N, dtype)
    expected[idx] = x[idx] + y[idx]
    assert_same(z, expected)


def test_normal_mode_two_word_mask_is_high_word_first():
    x, y = data(half)
    high, low = 0x8000_0000_0000_0001, 0x69A5_69A5_69A5_69A5

    def body(a, b, z):
        SetVectorMask(high, low)
        Mul(z, a, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), isSetMask=False)
        Add(z, z, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), isSetMask=False)     # same register, reused
        ResetMask()
    z = vector_result(body, x, y, out_like=np.zeros(N, half))
    bits = np.array([(low >> i) & 1 for i in range(64)] + [(high >> i) & 1 for i in range(64)], bool)
    idx = lanes_of(2, bits, 1)
    expected = np.zeros(N, half)
    expected[idx] = (x[idx] * y[idx]).astype(half) + y[idx]
    assert_same(z, expected)


@pytest.mark.parametrize("count", [1, 130, 300, 512])
def test_counter_mode_ignores_repeat_times(count):
    x, y = data(half)

    def body(a, b, z):
        SetMaskCount()
        SetVectorMask(count, mode=MaskMode.COUNTER)
        Sub(z, a, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), isSetMask=False)    # repeatTimes 1 has no effect
        SetMaskNorm()
        ResetMask()
    z = vector_result(body, x, y, out_like=np.zeros(N, half))
    expected = np.zeros(N, half)
    expected[:count] = x[:count] - y[:count]
    assert_same(z, expected)


def test_counter_mode_with_strides_and_set_mask_true():
    """The 接口内设置Mask example: Counter mode, mask = [130, 0], block stride 2, repeat stride 16."""
    x, _ = data(half)

    def body(a, z):
        SetMaskCount()
        Adds(z, a, 1.0, [130, 0], 1, UnaryRepeatParams(2, 2, 16, 16))
        SetMaskNorm()
    z = vector_result(body, x, out_like=np.zeros(N, half))
    idx = lanes_of(2, np.ones(128, bool), 2, blk=2, rep=16)[:130]
    expected = np.zeros(N, half)
    expected[idx] = x[idx] + np.asarray(1.0, half)
    assert_same(z, expected)


def test_set_mask_true_leaves_its_mask_in_the_register():
    x, y = data(half)

    def body(a, b, z):
        Add(z, a, b, 16, 1, BinaryRepeatParams())                                     # writes 16 into the register
        Mul(z, z, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), isSetMask=False)      # so this uses 16 lanes too
    z = vector_result(body, x, y, out_like=np.zeros(N, half))
    expected = np.zeros(N, half)
    expected[:16] = (x[:16] + y[:16]) * y[:16]
    assert_same(z, expected)


def test_count_form_resets_the_register():
    x, y = data(half)

    def body(a, b, z):
        SetVectorMask(8, dtype=half)
        Add(z, a, b, N)                                                               # count form: ResetMask after
        Mul(z, z, b, MASK_PLACEHOLDER, 2, BinaryRepeatParams(), isSetMask=False)      # all 128 lanes again
    z = vector_result(body, x, y, out_like=np.zeros(N, half))
    expected = (x + y).astype(half)
    expected[:256] = expected[:256] * y[:256]
    assert_same(z, expected)


def test_count_form_with_register_count_in_counter_mode():
    x, y = data(float32)

    def body(a, b, z):
        SetMaskCount()
        SetVectorMask(0, 100, mode=MaskMode.COUNTER)                                  # maskLow = the count
        Add(z, a, b, 1, isSetMask=False)                                              # "count 建议设置成1"
        SetMaskNorm()
    z = vector_result(body, x, y, out_like=np.zeros(N, float32))
    expected = np.zeros(N, float32)
    expected[:100] = x[:100] + y[:100]
    assert_same(z, expected)


# ----------------------------------------------------------------------------- errors
def run(body, dtype=half):
    x, y = data(dtype)
    return vector_result(body, x, y, out_like=np.zeros(N, dtype))


def test_placeholder_with_set_mask_true_is_an_error():
    with raises_rule(ArgumentError, "MASK_PLACEHOLDER", "isSetMask is True", "isSetMask=False",
                     at="Add(z, a, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams())"):
        run(lambda a, b, z: Add(z, a, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams()))


def test_counter_value_written_in_normal_format_is_an_error():
    def body(a, b, z):
        SetMaskCount()
        SetVectorMask(128)
    with raises_rule(ArgumentError, "SetVectorMask<NORMAL>", "Counter", "mode=MaskMode.COUNTER",
                     at="SetVectorMask(128)"):
        run(body)


def test_counter_mode_without_a_count_is_an_error():
    def body(a, b, z):
        SetMaskCount()
        Mul(b, a, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), isSetMask=False)
    with raises_rule(ArgumentError, "Counter mode", "no element count", at="Mul(b, a, b, MASK_PLACEHOLDER"):
        run(body)


def test_count_form_register_in_normal_mode_is_an_error():
    with raises_rule(ArgumentError, "isSetMask=False", "mode is Normal", "SetMaskCount()",
                     at="Add(b, a, b, 1, isSetMask=False)"):
        run(lambda a, b, z: Add(b, a, b, 1, isSetMask=False))


def test_normal_len_past_the_lanes_is_an_error():
    with raises_rule(ArgumentError, "len 100 > 64 lanes", "float", at="SetVectorMask(100, dtype=float32)"):
        run(lambda a, b, z: SetVectorMask(100, dtype=float32), float32)


def test_axpy_count_form_also_resets_the_register():
    x, y = data(half)

    def body(a, b, z):
        SetMaskCount()
        SetVectorMask(8, mode=MaskMode.COUNTER)
        Axpy(z, a, 2.0, N)                                                            # count form: Normal, reset after
        Mul(z, z, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), isSetMask=False)      # one full repeat of 128 lanes
    z = vector_result(body, x, y, out_like=np.zeros(N, half))
    expected = (x * np.asarray(2.0, half)).astype(half)
    expected[:128] = expected[:128] * y[:128]
    assert_same(z, expected)
