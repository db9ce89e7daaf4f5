"""Conformance: Cast on Atlas A2 (Cast.md, SetDeqScale.md): the conversion table, the mask form, int4b_t, SetDeqScale.

A quantise/dequantise kernel the way the samples write it: float -> half -> int4b_t (packed, two per byte),
then int4b_t -> half, and int32 -> half through the DEQSCALE register; references are numpy.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, Cast, DataCopy, DtypeError, GlobalTensor, HardEvent, RoundMode, SetDeqScale,
                        TBuf, TPipe, TPosition, UnaryRepeatParams, float32, half, int4b_t, int8, int32, kernel, launch)
from kernels_util import handoff, raises_rule, run_on_ub, vector_result

N = 256


@kernel
def quant_int4(x, packed, back, n):
    """x (float) -> half (RINT) -> int4b_t (RINT, saturating) -> packed bytes to GM; and int4b_t -> half back."""
    pipe = TPipe()
    bufs = [TBuf(TPosition.VECCALC) for _ in range(4)]
    for b, nbytes in zip(bufs, (n * 4, n * 2, n // 2, n * 2)):
        pipe.InitBuffer(b, nbytes)
    xf, xh, q, h = bufs[0].Get(float32), bufs[1].Get(half), bufs[2].Get(int4b_t), bufs[3].Get(half)
    xg, pg, bg = GlobalTensor(float32), GlobalTensor(int8), GlobalTensor(half)
    xg.SetGlobalBuffer(x, n)
    pg.SetGlobalBuffer(packed, n // 2)
    bg.SetGlobalBuffer(back, n)
    DataCopy(xf, xg, n)
    handoff(HardEvent.MTE2_V)
    Cast(xh, xf, RoundMode.CAST_RINT, n)
    Cast(q, xh, RoundMode.CAST_RINT, n)             # n int4b_t values in n / 2 bytes
    Cast(h, q, RoundMode.CAST_NONE, n)
    handoff(HardEvent.V_MTE3)
    DataCopy(pg, q.ReinterpretCast(int8), n // 2)
    DataCopy(bg, h, n)


def test_int4_quantise_packs_two_values_per_byte_low_nibble_first():
    x = np.random.default_rng(4).uniform(-11, 11, N).astype(np.float32)
    packed, back = np.zeros(N // 2, np.int8), np.zeros(N, np.float16)
    launch(quant_int4, 1, x, packed, back, N)
    q = np.clip(np.rint(x.astype(np.float16).astype(np.float64)), -8, 7).astype(np.int8)   # saturate to int4
    lo, hi = q[0::2] & 0x0F, (q[1::2] & 0x0F) << 4
    np.testing.assert_array_equal(packed.view(np.uint8), (lo | hi).astype(np.uint8))
    np.testing.assert_array_equal(back, q.astype(np.float16))
    assert (q == 7).any() and (q == -8).any(), "the data must reach both saturation ends"


def test_int32_to_half_scales_by_set_deq_scale_and_needs_it():
    x = np.arange(-512, 512, 4, dtype=np.int32)

    def body(x, z):
        SetDeqScale(0.25)
        Cast(z, x, RoundMode.CAST_TRUNC, x.GetSize())          # "roundMode不生效": the mode does not matter
    z = vector_result(body, x, out_like=np.zeros(x.size, np.float16))
    np.testing.assert_array_equal(z, (x * 0.25).astype(np.float16))
    with raises_rule(ArgumentError, "int32_t -> half multiplies by the DEQSCALE register", "SetDeqScale(1.0)",
                     at="no_deq"):
        run_on_ub(lambda x, z: Cast(z, x, RoundMode.CAST_NONE, 256), x, np.zeros(256, np.float16))  # no_deq


def test_mask_form_selects_lanes_by_the_wider_type():
    # half -> float, mask 40 of the 64 float lanes per repeat, 2 repeats, {dstBlk 1, srcBlk 1, dstRep 8, srcRep 4}
    x = np.random.default_rng(5).uniform(-9, 9, 128).astype(np.float16)
    start = np.full(128, -99, np.float32)
    z = vector_result(lambda x, z: Cast(z, x, RoundMode.CAST_NONE, 40, 2, UnaryRepeatParams(1, 1, 8, 4)), x,
                      out_like=start)
    expect = start.copy()
    for r in range(2):
        expect[r * 64:r * 64 + 40] = x[r * 64:r * 64 + 40]
    np.testing.assert_array_equal(z, expect)


@pytest.mark.parametrize("src, dst, mode, error, words", [
    (float32, int8, RoundMode.CAST_RINT, DtypeError,
     ["Cast: float -> int8_t is not in the Atlas A2 conversion table",
      "float -> half (CAST_NONE/CAST_RINT/CAST_FLOOR/CAST_CEIL/CAST_ROUND/CAST_TRUNC/CAST_ODD), then half -> int8_t"]),
    (half, int32, RoundMode.CAST_NONE, ArgumentError,
     ["Cast: half -> int32_t takes CAST_RINT/CAST_FLOOR/CAST_CEIL/CAST_ROUND/CAST_TRUNC, not CAST_NONE",
      "CAST_RINT rounds half to even"]),
    (half, float32, RoundMode.CAST_RINT, ArgumentError, ["Cast: half -> float takes CAST_NONE, not CAST_RINT"]),
    (int8, int32, RoundMode.CAST_NONE, DtypeError,
     ["int8_t -> int32_t is not in the Atlas A2 conversion table", "int8_t -> half (CAST_NONE), then half -> int32_t"]),
])
def test_pairs_and_modes_outside_the_a2_table_are_refused(src, dst, mode, error, words):
    with raises_rule(error, *words, at="bad_cast"):
        run_on_ub(lambda x, z: Cast(z, x, mode, 64), np.zeros(64, src), np.zeros(64, dst))  # bad_cast


def test_int4_counts_must_be_even():
    with raises_rule(ArgumentError, "count 63 is odd, but int4b_t packs two elements per byte", at="odd_int4"):
        run_on_ub(lambda x, z: Cast(z.ReinterpretCast(int4b_t), x, RoundMode.CAST_RINT, 63),  # odd_int4
                  np.zeros(64, np.float16), np.zeros(32, np.int8))


@kernel
def dequant_int4(w, out, n):
    """Packed int4 weights in GM (an int8 array, two per byte) -> UB as int4b_t -> half, the way W4 kernels load them."""
    wg, og = GlobalTensor(int4b_t), GlobalTensor(half)
    wg.SetGlobalBuffer(w.cast(int4b_t))                     # n int4b_t elements in n / 2 bytes
    og.SetGlobalBuffer(out, n)
    pipe = TPipe()
    qb, hb = TBuf(TPosition.VECCALC), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(qb, n // 2)
    pipe.InitBuffer(hb, n * 2)
    q, h = qb.Get(int4b_t), hb.Get(half)
    DataCopy(q, wg[n // 2], n // 2)                         # the second half of the elements (an element offset)
    handoff(HardEvent.MTE2_V)
    Cast(h[0:n // 2], q, RoundMode.CAST_NONE, n // 2)
    handoff(HardEvent.V_MTE3)
    DataCopy(og, h, n // 2)


def test_int4_global_tensor_offsets_and_copies_count_elements():
    vals = np.random.default_rng(6).integers(-8, 8, 512).astype(np.int8)
    packed = ((vals[0::2] & 0x0F) | ((vals[1::2] & 0x0F) << 4)).astype(np.uint8).view(np.int8)
    out = np.zeros(512, np.float16)
    launch(dequant_int4, 1, packed, out, 512)
    np.testing.assert_array_equal(out[:256], vals[256:].astype(np.float16))
    np.testing.assert_array_equal(out[256:], 0)


def test_other_vector_instructions_refuse_int4():
    from ascend_sim import Adds
    with raises_rule(DtypeError, "Adds: dst holds int4b_t, packed two per byte; of the vector instructions only Cast",
                     at="int4_adds"):
        run_on_ub(lambda z: Adds(z.ReinterpretCast(int4b_t), z.ReinterpretCast(int4b_t), 1, 64),  # int4_adds
                  np.zeros(32, np.int8))
