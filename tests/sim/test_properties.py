"""Property-based tests (hypothesis): exact results over shapes, strides, offsets and dtypes."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ascend_sim import (Add, BinaryRepeatParams, Cast, DataCopy, DataCopyExtParams, DataCopyPad,
                        DataCopyPadExtParams, DataCopyParams, GMWriteConflictError, HardEvent, Max, Min, Mul,
                        RoundMode, Sub, TPipe, bfloat16, float32, half, int8, int16, int32, kernel, launch)
from ascend_sim.api.ops.conversion import CAST_TABLE
from kernels_util import (assert_same, burst_index, exact_reference, gm, handoff, random_array, repeat_lanes, round_to,
                          run_block_writes, run_on_cube, run_staged, scratch, vector_result)

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPS = {"Add": (Add, np.add), "Sub": (Sub, np.subtract), "Mul": (Mul, np.multiply), "Max": (Max, np.maximum),
       "Min": (Min, np.minimum)}
DTYPES = [half, float32, int16, int32]           # what Add, Sub, Mul, Max, Min take on Atlas A2 (Add.md ...)


# ============================================================================ count form at GM offsets
@kernel
def binary_at_offsets(x, y, z, cfg):
    instr, dtype, n, offsets = cfg
    pipe = TPipe()
    gms = [gm(ptr + off) for ptr, off in zip((x, y, z), offsets)]
    ubs = [scratch(n * dtype.itemsize, dtype, pipe=pipe) for _ in range(3)]
    for g, t in zip(gms[:2], ubs[:2]):
        DataCopyPad(t, g, DataCopyExtParams(1, n * dtype.itemsize, 0, 0, 0))
    handoff(HardEvent.MTE2_V)
    instr(ubs[2], ubs[0], ubs[1], n)
    handoff(HardEvent.V_MTE3)
    DataCopyPad(gms[2], ubs[2], DataCopyExtParams(1, n * dtype.itemsize, 0, 0, 0))


@PROPERTY
@given(op=st.sampled_from(sorted(OPS)), dtype=st.sampled_from(DTYPES), n=st.integers(1, 700),
       offsets=st.tuples(*[st.integers(0, 40)] * 3), seed=st.integers(0, 2**16))
def test_binary_op_at_any_count_and_gm_offset(op, dtype, n, offsets, seed):
    instr, ref = OPS[op]
    rng = np.random.default_rng(seed)
    x, y = (random_array(rng, dtype, n + 40, -100, 100) for _ in range(2))
    z = np.full(n + 40, 7, dtype)
    launch(binary_at_offsets, 1, x, y, z, (instr, np.dtype(dtype), n, offsets))
    xo, yo, zo = offsets
    expected = np.full(n + 40, 7, dtype)
    expected[zo:zo + n] = exact_reference(ref, dtype, x[xo:xo + n], y[yo:yo + n])
    assert_same(z, expected)


# ============================================================================ mask / repeat form
@st.composite
def repeat_cases(draw):
    dtype = draw(st.sampled_from([half, float32]))
    lanes = 256 // np.dtype(dtype).itemsize
    if draw(st.booleans()):
        mask = draw(st.integers(1, lanes))
    else:
        mask = [draw(st.integers(0, 2**64 - 1)), draw(st.integers(0, 2**64 - 1)) if lanes == 128 else 0]
    repeat = draw(st.integers(0, 12))
    strides = [(draw(st.integers(0, 4)), draw(st.integers(0, 20))) for _ in range(3)]     # dst, src0, src1
    return dtype, mask, repeat, strides


@PROPERTY
@given(case=repeat_cases(), op=st.sampled_from(sorted(OPS)), seed=st.integers(0, 2**16))
def test_repeat_form_matches_the_lane_reference(case, op, seed):
    dtype, mask, repeat, ((db, dr), (ab, ar), (bb, br)) = case
    isz = np.dtype(dtype).itemsize
    d_idx, a_idx, b_idx = (repeat_lanes(isz, mask, repeat, b, r) for b, r in ((db, dr), (ab, ar), (bb, br)))
    assume(np.unique(d_idx).size == d_idx.size)            # overlapping destination lanes have no defined winner
    rng = np.random.default_rng(seed)
    size = max([16] + [int(i.max()) + 1 for i in (d_idx, a_idx, b_idx) if i.size])
    x, y = random_array(rng, dtype, size), random_array(rng, dtype, size)
    instr, ref = OPS[op]
    z = vector_result(lambda x, y, z: instr(z, x, y, mask, repeat, BinaryRepeatParams(db, ab, bb, dr, ar, br)),
                      x, y, out_like=np.full(size, -3, dtype))
    expected = np.full(size, -3, dtype)
    expected[d_idx] = exact_reference(ref, dtype, x[a_idx], y[b_idx])
    assert_same(z, expected)


# ============================================================================ Cast
MODES = {RoundMode.CAST_NONE: "rint", RoundMode.CAST_RINT: "rint", RoundMode.CAST_FLOOR: "floor",
         RoundMode.CAST_CEIL: "ceil", RoundMode.CAST_ROUND: "round", RoundMode.CAST_TRUNC: "trunc",
         RoundMode.CAST_ODD: "odd"}


@PROPERTY
@given(x=arrays(np.float32, st.integers(1, 300), elements=st.floats(width=32, allow_nan=False)),
       dtype=st.sampled_from([half, bfloat16]), mode=st.sampled_from(list(RoundMode)))
def test_cast_float32_narrowing_is_one_correct_rounding(x, dtype, mode):
    assume(mode in CAST_TABLE[(np.dtype(np.float32), dtype)])     # the A2 table: tests/sim/conformance
    n = x.size
    z = vector_result(lambda x, z: Cast(z, x, mode, n), x, out_like=np.zeros(n, dtype))
    assert_same(z, round_to(x, dtype, MODES[mode]))


# ============================================================================ DataCopy
@PROPERTY
@given(dtype=st.sampled_from([half, float32, int8]), count=st.integers(1, 8), blen=st.integers(1, 4),
       gaps=st.tuples(st.integers(0, 4), st.integers(0, 4)), offset=st.integers(0, 3), to_gm=st.booleans())
def test_strided_datacopy_moves_exactly_the_bursts(dtype, count, blen, gaps, offset, to_gm):
    e = 32 // np.dtype(dtype).itemsize                              # elements per 32-byte block
    sgap, dgap = gaps
    src_n, dst_n = (offset + count * (blen + sgap)) * e, (offset + count * (blen + dgap)) * e
    src = random_array(np.random.default_rng(count), dtype, src_n, -100, 100)
    out = np.full(dst_n, -1, dtype)
    strided = (lambda d, s: DataCopy(d[offset * e], s[offset * e], DataCopyParams(count, blen, sgap, dgap)))
    if to_gm:       # contiguous in, strided UB -> GM out
        run_staged(src, out, lambda ub, gm: DataCopy(ub, gm, src_n), strided, n_ub=max(src_n, dst_n))
    else:           # strided GM -> UB in, contiguous out
        run_staged(src, out, strided, lambda gm, ub: DataCopy(gm, ub, dst_n), n_ub=dst_n, fill=-1)
    expected = np.full(dst_n, -1, dtype)
    expected[burst_index(count, blen * e, (blen + dgap) * e, offset * e)] = \
        src[burst_index(count, blen * e, (blen + sgap) * e, offset * e)]
    assert_same(out, expected)


@PROPERTY
@given(dtype=st.sampled_from([int8, half, float32]), count=st.integers(1, 4), n=st.integers(1, 40),
       gm_gap=st.integers(0, 12), ub_gap=st.integers(0, 2), offset=st.integers(0, 9), pad=st.booleans(),
       to_gm=st.booleans())
def test_datacopypad_moves_exact_bytes_and_pads_ub_bursts(dtype, count, n, gm_gap, ub_gap, offset, pad, to_gm):
    isz = np.dtype(dtype).itemsize
    burst_ub = -(-n * isz // 32) * 32 // isz                                # a UB burst: whole 32-byte blocks
    ub_pitch, gm_pitch = burst_ub + ub_gap * 32 // isz, n + gm_gap
    ub_n, gm_n = count * ub_pitch, offset + count * gm_pitch
    params = DataCopyExtParams(count, n * isz, gm_gap * isz if not to_gm else ub_gap,
                               ub_gap if not to_gm else gm_gap * isz, 0)
    rng = np.random.default_rng(n)
    if to_gm:
        src, out = random_array(rng, dtype, ub_n, -100, 100), np.full(gm_n, -1, dtype)
        run_staged(src, out, lambda ub, gm: DataCopy(ub, gm, ub_n) if ub_n * isz % 32 == 0 else
                   DataCopyPad(ub, gm, DataCopyExtParams(1, ub_n * isz, 0, 0, 0)),
                   lambda gm, ub: DataCopyPad(gm[offset], ub, params), n_ub=ub_n)
        expected = np.full(gm_n, -1, dtype)
        expected[burst_index(count, n, gm_pitch, offset)] = src[burst_index(count, n, ub_pitch)]
    else:
        src, out = random_array(rng, dtype, gm_n, -100, 100), np.zeros(ub_n, dtype)
        pad_params = (DataCopyPadExtParams(True, 0, burst_ub - n, 5),) if pad else ()    # no pad: left out
        run_staged(src, out, lambda ub, gm: DataCopyPad(ub, gm[offset], params, *pad_params),
                   lambda gm, ub: DataCopy(gm, ub, ub_n), n_ub=ub_n, fill=-1)
        expected = np.full(ub_n, -1, dtype)
        data = src[burst_index(count, n, gm_pitch, offset)]
        first = np.repeat(data.reshape(count, n)[:, 0], burst_ub - n)     # no padding: the dummy repeats element 0
        expected[burst_index(count, burst_ub - n, ub_pitch, n)] = 5 if pad else first
        expected[burst_index(count, n, ub_pitch)] = data
    assert_same(out, expected)


# ============================================================================ cube
@PROPERTY
@given(dtype=st.sampled_from([half, bfloat16, int8]), m=st.integers(1, 40), n=st.integers(1, 40),
       k_fractals=st.integers(1, 3), steps=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_mmad_any_m_n_and_k_steps_is_exact(dtype, m, n, k_fractals, steps, seed):
    k = k_fractals * (32 if dtype == int8 else 16)
    rng = np.random.default_rng(seed)
    lo, hi = (-128, 128) if dtype == int8 else (-8, 8)
    a_steps = [rng.integers(lo, hi, (m, k)).astype(dtype) for _ in range(steps)]
    b_steps = [rng.integers(lo, hi, (k, n)).astype(dtype) for _ in range(steps)]
    acc = np.int32 if dtype == int8 else np.float32
    c = run_on_cube(a_steps, b_steps, acc)
    assert_same(c, sum(x.astype(np.int64) @ y.astype(np.int64) for x, y in zip(a_steps, b_steps)).astype(acc))


# ============================================================================ GM write conflicts
@PROPERTY
@given(ranges=st.lists(st.tuples(st.integers(0, 100), st.integers(1, 100)), min_size=2, max_size=2))
def test_gm_write_conflict_iff_two_blocks_write_a_common_byte(ranges):
    (s0, n0), (s1, n1) = ranges
    overlap = max(s0, s1) < min(s0 + n0, s1 + n1)

    def write(z, t, block):
        start, length = ranges[block]
        DataCopyPad(z[start], t, DataCopyExtParams(1, length, 0, 0, 0))
    try:
        run_block_writes(np.arange(128, dtype=np.int8), np.zeros(256, np.int8), write)
        conflict = False
    except GMWriteConflictError:
        conflict = True
    assert conflict == overlap
