"""Conformance family "Gather/GatherMask": gather by byte offsets (count and mask/repeat forms), GatherMask with
every built-in pattern, a user pattern tensor, Normal and Counter reduceMode and strides, rsvdCnt -- exact
against numpy fancy indexing and boolean masks; and the documented misuse errors."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (AlignmentError, ArgumentError, DtypeError, Gather, GatherMask, GatherMaskParams,
                        OutOfBoundsError, float32, half, int16, uint16, uint32)
from vec_util import assert_same, raises_rule, run_on_ub, vector_result


@pytest.mark.parametrize("dtype", [half, float32, int16], ids=["half", "float", "int16"])
def test_gather_count_form(dtype):
    rng = np.random.default_rng(1)
    src = rng.integers(-100, 100, 300).astype(dtype)
    index = rng.integers(0, 300, 200)
    offsets = (index * np.dtype(dtype).itemsize).astype(uint32)
    z = vector_result(lambda s, o, z: Gather(z, s, o, 0, 200), src, offsets, out_like=np.zeros(200, dtype))
    assert_same(z, src[index])


def test_gather_base_address_and_repeat_form():
    src = np.arange(256, dtype=float32)
    index = np.arange(128)[::-1] % 200
    offsets = (index * 4).astype(uint32)
    # srcBaseAddr 64 bytes = 16 floats; mask 32 of 64 lanes, 2 repeats, dst repeat stride 8 blocks
    z = vector_result(lambda s, o, z: Gather(z, s, o, 64, 32, 2, 8), src, offsets,
                      out_like=np.full(128, -1, float32))
    expected = np.full(128, -1, float32)
    for r in range(2):
        expected[r * 64:r * 64 + 32] = src[16 + index[r * 64:r * 64 + 32]]
    assert_same(z, expected)


def gather_mask(src, pattern, reduce_mode, mask, params, n_out, dtype, pat_array=None):
    kept = []

    def body(*ts):
        s, z = ts[0], ts[-1]
        pat = ts[1] if pat_array is not None else pattern
        kept.append(GatherMask(z, s, pat, reduce_mode, mask, params))
    arrays = (src,) + ((pat_array,) if pat_array is not None else ()) + (np.zeros(n_out, dtype),)
    out = arrays[-1]
    run_on_ub(body, *arrays)
    return out, kept[0]


BUILTIN = {1: lambda i: i % 2 == 0, 2: lambda i: i % 2 == 1, 3: lambda i: i % 4 == 0, 4: lambda i: i % 4 == 1,
           5: lambda i: i % 4 == 2, 6: lambda i: i % 4 == 3, 7: lambda i: np.ones_like(i, bool)}


@pytest.mark.parametrize("pattern", range(1, 8))
def test_gather_mask_builtin_patterns(pattern):
    src = np.arange(256, dtype=half)
    z, cnt = gather_mask(src, pattern, False, 0, GatherMaskParams(1, 2, 8, 0), 256, half)
    lane = np.arange(256) % 128
    want = src[BUILTIN[pattern](lane)]
    assert cnt == want.size
    assert_same(z[:cnt], want)
    assert (z[cnt:] == 0).all()


def test_gather_mask_user_pattern_with_src1_repeat_stride():
    """The page's figure: pattern 0x99999999... (1001 per nibble: the 1st and 4th of every 4), 32-bit data."""
    src = np.arange(128, dtype=float32)
    pat = np.zeros(16, uint32)                   # two repeats' patterns, 32 bytes apart (src1RepeatStride 1)
    pat[0:2] = 0x99999999
    pat[8:10] = 0x0000FFFF
    z, cnt = gather_mask(src, None, False, 0, GatherMaskParams(1, 2, 8, 1), 128, float32, pat)
    bits0 = np.array([(0x99999999 >> (i % 32)) & 1 for i in range(64)], bool)
    bits1 = np.array([(0x0000FFFF >> (i % 32)) & 1 for i in range(64)], bool)
    want = np.concatenate([src[:64][bits0], src[64:][bits1]])
    assert cnt == want.size == 32 + 32
    assert_same(z[:cnt], want)


def test_gather_mask_counter_mode_mask_per_repeat():
    src = np.arange(512, dtype=uint16)
    z, cnt = gather_mask(src, 2, True, 70, GatherMaskParams(1, 2, 8, 0), 256, uint16)
    want = np.concatenate([src[0:70][1::2], src[128:198][1::2]])           # 70 elements of each repeat, odd ones
    assert cnt == 70
    assert_same(z[:cnt], want)


def test_gather_mask_block_stride():
    src = np.arange(512, dtype=half)
    z, cnt = gather_mask(src, 3, False, 0, GatherMaskParams(2, 1, 16, 0), 128, half)
    blocks = (np.arange(8) * 2)[:, None] * 16 + np.arange(16)[None, :]     # every other 32-byte block
    want = src[blocks.reshape(-1)][::4]
    assert_same(z[:cnt], want)


def test_gather_errors():
    src = np.arange(64, dtype=float32)
    with raises_rule(AlignmentError, "srcOffset[0] = 2 bytes", "sizeof(float) = 4", at="Gather(z, s, o, 0, 8)"):
        vector_result(lambda s, o, z: Gather(z, s, o, 0, 8), src, np.full(8, 2, uint32),
                      out_like=np.zeros(8, float32))
    with raises_rule(OutOfBoundsError, "offset 256 bytes", "past src's 256 bytes", at="Gather(z, s, o, 0, 4)"):
        vector_result(lambda s, o, z: Gather(z, s, o, 0, 4), src, np.full(8, 256, uint32),
                      out_like=np.zeros(8, float32))
    with raises_rule(DtypeError, "srcOffset holds int16_t", "uint32_t", at="Gather(z, s, o, 0, 16)"):
        vector_result(lambda s, o, z: Gather(z, s, o, 0, 16), src, np.zeros(16, int16),
                      out_like=np.zeros(16, float32))
    with raises_rule(ArgumentError, "built-in patterns are 1..7",
                     at="GatherMask(z, s, 8, False, 0, GatherMaskParams())"):
        vector_result(lambda s, z: GatherMask(z, s, 8, False, 0, GatherMaskParams()), src, out_like=src)
    with raises_rule(DtypeError, "LocalTensor<uint32_t>", "uint16_t",
                     at="GatherMask(z, s, p, False, 0, GatherMaskParams())"):
        vector_result(lambda s, p, z: GatherMask(z, s, p, False, 0, GatherMaskParams()), src, np.zeros(16, uint16),
                      out_like=src)
