"""Conformance: the cube path written from the Ascend C docs in C++ field order, exact against numpy.

Families: Mmad matmul with Nd2Nz, LoadData and Fixpipe (fp16, int8 -> int32, int8 -> half with
DEQF16, int8 -> int8 with REQ8, ReLU; M, N, K not multiples of 16); the Nz -> Zz / Nz -> Zn LoadData
loops; bias through the BT buffer; and layout mistakes (wrong numbers as on the device, or the
sanitizer's explanation when the simulator knows the bytes are not fractals).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, CubeFormatError, DataCopy, DataCopyParams, DtypeError, Fixpipe,
                        FixpipeParamsV220, GetBlockIdx, HardEvent, LoadData, LoadData2DParams, Mmad, MmadParams,
                        Nd2NzParams, OutOfBoundsError, QuantMode_t, TPipe, TPosition, float32, half, kernel, launch)
from ascend_sim.api.ops.fractal import nd_to_nz, nz_to_nd, zn_to_nd, zz_to_nd
from cube_kernels import deq_word, gm, handoff, local, run_matmul_nz

SHAPES = [(16, 16, 16), (32, 48, 64), (30, 40, 70), (1, 17, 33), (128, 64, 96)]


def ints(rng, shape, dtype, lo=-4, hi=5):
    """Small integers: every product and sum is exact in fp32, so the comparison is bit for bit."""
    return rng.integers(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize("M, N, K", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
def test_fp16_matmul_nd2nz_loaddata_fixpipe_is_exact(M, N, K):
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    a, b = ints(rng, (M, K), np.float16), ints(rng, (K, N), np.float16)
    c = run_matmul_nz(a, b, np.float32)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_fp16_matmul_random_values_round_once_through_f322f16():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (48, 80)).astype(np.float16), rng.uniform(-1, 1, (80, 40)).astype(np.float16)
    fp32 = run_matmul_nz(a, b, np.float32)
    np.testing.assert_allclose(fp32, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(run_matmul_nz(a, b, np.float16, QuantMode_t.F322F16), fp32.astype(np.float16))


@pytest.mark.parametrize("M, N, K", [(16, 16, 32), (20, 30, 50), (64, 32, 128)])
def test_int8_matmul_accumulates_exactly_in_int32(M, N, K):
    rng = np.random.default_rng(K)
    a, b = ints(rng, (M, K), np.int8, -128, 128), ints(rng, (K, N), np.int8, -128, 128)
    np.testing.assert_array_equal(run_matmul_nz(a, b, np.int32), a.astype(np.int32) @ b.astype(np.int32))


def test_int8_matmul_dequantises_to_half_with_deqf16():
    rng = np.random.default_rng(2)
    a, b = ints(rng, (20, 64), np.int8, -100, 100), ints(rng, (64, 24), np.int8, -100, 100)
    acc = a.astype(np.int32) @ b.astype(np.int32)
    got = run_matmul_nz(a, b, np.float16, QuantMode_t.DEQF16, deq_word(0.0078125))
    np.testing.assert_array_equal(got, (acc.astype(np.float32) * np.float32(0.0078125)).astype(np.float16))
    relu = run_matmul_nz(a, b, np.float16, QuantMode_t.DEQF16, deq_word(0.0078125), relu=True)
    np.testing.assert_array_equal(relu, np.maximum(got, 0))     # negatives take M2 = 0 with ReLU


def test_int8_matmul_dequantises_per_column_with_vdeqf16():
    rng = np.random.default_rng(7)
    a, b = ints(rng, (20, 64), np.int8, -100, 100), ints(rng, (64, 24), np.int8, -100, 100)
    scales = (2.0 ** -rng.integers(4, 10, 24)).astype(np.float32)          # one scale per output column
    words = np.array([deq_word(float(s)) for s in scales], np.int64)
    got = run_matmul_nz(a, b, np.float16, QuantMode_t.VDEQF16, scales=words)
    acc = (a.astype(np.int32) @ b.astype(np.int32)).astype(np.float32)
    np.testing.assert_array_equal(got, (acc * scales).astype(np.float16))
    assert len(set(scales.tolist())) > 1


def test_int8_matmul_requantises_to_int8_with_req8_offset_and_saturation():
    rng = np.random.default_rng(3)
    a, b = ints(rng, (16, 32), np.int8, -128, 128), ints(rng, (32, 16), np.int8, -128, 128)
    acc = a.astype(np.int32) @ b.astype(np.int32)
    got = run_matmul_nz(a, b, np.int8, QuantMode_t.REQ8, deq_word(1 / 256, offset=3, signed=True))
    want = np.clip(np.rint(acc.astype(np.float32) / 256) + 3, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(got, want)
    assert (got == 127).any() and (got == -128).any()          # the saturation is exercised


def test_fp16_matmul_quantises_to_uint8_with_qf322b8_pre():
    rng = np.random.default_rng(10)
    a, b = ints(rng, (16, 32), np.float16, -8, 9), ints(rng, (32, 16), np.float16, -8, 9)
    acc = a.astype(np.float32) @ b.astype(np.float32)
    got = run_matmul_nz(a, b, np.uint8, QuantMode_t.QF322B8_PRE, deq_word(0.5, offset=100, signed=False))
    np.testing.assert_array_equal(got, np.clip(np.rint(acc * 0.5) + 100, 0, 255).astype(np.uint8))
    with pytest.raises(DtypeError, match="sign flag"):           # the word says uint8, the tensor is int8
        run_matmul_nz(a, b, np.int8, QuantMode_t.QF322B8_PRE, deq_word(0.5, offset=100, signed=False))


def test_deq_scale_keeps_only_the_1_8_10_float_bits():
    """QUANT_PRE bits 0..31 are read as (1, 8, 10): a scale with more mantissa bits is truncated."""
    from ascend_sim.api.ops.cube import deq_scale
    m1, off, signed = deq_scale(deq_word(1 / 3, offset=-5, signed=True))
    assert m1 == np.float32(np.array([np.float32(1 / 3).view(np.uint32) & 0xFFFFE000], np.uint32).view(np.float32))
    assert m1 != np.float32(1 / 3) and (off, signed) == (-5, 1)


@pytest.mark.parametrize("bias_dtype", [np.float32, np.float16], ids=["float-bias", "half-bias"])
def test_bias_through_the_bt_buffer_is_added_to_every_row(bias_dtype):
    rng = np.random.default_rng(4)
    a, b = ints(rng, (30, 48), np.float16), ints(rng, (48, 40), np.float16)
    bias = ints(rng, 40, bias_dtype, -50, 50)
    got = run_matmul_nz(a, b, np.float32, bias=bias)
    np.testing.assert_array_equal(got, a.astype(np.float32) @ b.astype(np.float32) + bias.astype(np.float32))


# ============================================================================ the LoadData loops themselves
@kernel(core="AIC")
def nz_loops(x, seen, cfg):
    """x (rows x cols half) -> L1 NZ -> L0A by the Nz -> Zz loop and L0B by the Nz -> Zn loop; peek both."""
    rows, cols = cfg
    pipe = TPipe()
    l1 = local(pipe, TPosition.A1, half, rows * cols)
    l0a, l0b = local(pipe, TPosition.A2, half, rows * cols), local(pipe, TPosition.B2, half, rows * cols)
    DataCopy(l1, gm(x, half), Nd2NzParams(1, rows, cols, 0, cols, rows, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    rb, cb = rows // 16, cols // 16
    for i in range(rb):     # Nz -> Zz: row block i's cb fractals, rb fractals apart in L1
        LoadData(l0a[i * cols * 16], l1[i * 256], LoadData2DParams(0, cb, rb, 0, 0, False, 0))
    for i in range(rb):     # Nz -> Zn (x as the right matrix, rows = K): each fractal transposed
        LoadData(l0b[i * cols * 16], l1[i * 256], LoadData2DParams(0, cb, rb, 0, 0, True, 0))
    handoff(HardEvent.MTE1_M)
    seen.extend([l1.peek(), l0a.peek(), l0b.peek()])


def test_nz_to_zz_and_nz_to_zn_loops_lay_out_the_documented_formats():
    x = np.arange(48 * 64, dtype=np.float32).astype(np.float16).reshape(48, 64)    # every value distinct
    seen: list[np.ndarray] = []
    launch(nz_loops, 1, x, seen, (48, 64))
    l1, l0a, l0b = seen
    np.testing.assert_array_equal(l1, nd_to_nz(x))
    np.testing.assert_array_equal(zz_to_nd(l0a, 48, 64), x)
    np.testing.assert_array_equal(zn_to_nd(l0b, 48, 64), x)
    np.testing.assert_array_equal(nz_to_nd(l1, 48, 64), x)


# ============================================================================ layout mistakes
@kernel(core="AIC")
def nd_mistakes(a, b, c, mode):
    """A (32 x 32 half) copied into L1 without Nd2Nz (``count``: one plain copy; ``rows``: row by row), or B
    loaded into L0B without the transpose (``no-transpose``); the rest of the path is right."""
    pipe = TPipe()
    a1, b1 = local(pipe, TPosition.A1, half, 1024), local(pipe, TPosition.B1, half, 1024)
    a2, b2 = local(pipe, TPosition.A2, half, 1024), local(pipe, TPosition.B2, half, 1024)
    co1 = local(pipe, TPosition.CO1, float32, 1024)
    aGm = gm(a, half)
    if mode == "count":
        DataCopy(a1, aGm, 1024)
    elif mode == "rows":
        DataCopy(a1, aGm, DataCopyParams(32, 2, 0, 0))      # 32 rows of 64 bytes: ND, not fractals
    else:
        DataCopy(a1, aGm, Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
    DataCopy(b1, gm(b, half), Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    for i in range(2):
        LoadData(a2[i * 512], a1[i * 256], LoadData2DParams(0, 2, 2, 0, 0, False, 0))
        LoadData(b2[i * 512], b1[i * 256], LoadData2DParams(0, 2, 2, 0, 0, mode != "no-transpose", 0))
    handoff(HardEvent.MTE1_M)
    Mmad(co1, a2, b2, MmadParams(32, 32, 32, 0, False, True))
    handoff(HardEvent.M_FIX)
    Fixpipe(gm(c, float32), co1, FixpipeParamsV220(32, 32, 32, 32))


def run_mistake(mode: str):
    rng = np.random.default_rng(5)
    a, b = ints(rng, (32, 32), np.float16), ints(rng, (32, 32), np.float16)
    c = np.zeros((32, 32), np.float32)
    launch(nd_mistakes, 1, a, b, c, mode)
    return a.astype(np.float32), b.astype(np.float32), c


def test_nd_bytes_read_as_fractals_give_the_devices_wrong_numbers():
    """A plain copy of an ND matrix into L1: the cube reads its bytes as NZ fractals, silently."""
    a, b, c = run_mistake("count")
    scrambled = nz_to_nd(a.astype(np.float16).ravel(), 32, 32).astype(np.float32)     # what the NZ reading sees
    np.testing.assert_array_equal(c, scrambled @ b)
    assert np.abs(c - a @ b).max() > 1


def test_b_loaded_without_the_transpose_multiplies_by_transposed_fractals():
    a, b, c = run_mistake("no-transpose")
    bt = b.reshape(2, 16, 2, 16).transpose(0, 3, 2, 1).reshape(32, 32)     # each 16 x 16 fractal transposed
    np.testing.assert_array_equal(c, a @ bt)
    assert not np.array_equal(c, a @ b)


def test_the_right_path_is_exact_on_the_same_harness():
    a, b, c = run_mistake("nz")
    np.testing.assert_array_equal(c, a @ b)


def test_mmad_on_fractals_loaded_from_nd_rows_names_the_copy():
    with pytest.raises(CubeFormatError) as info:
        run_mistake("rows")
    msg = str(info.value)
    for words in ("Mmad reads L0A (the left matrix) as fractals", "test_cube_path.py:",
                  "DataCopy(a1, aGm, DataCopyParams(32, 2, 0, 0))", "wrote as ND rows", "Nd2NzParams(1, rows, cols",
                  "on the device: wrong numbers, no error"):
        assert words in msg, msg


@kernel(core="AIC")
def nd2nz_call(a, params):
    pipe = TPipe()
    DataCopy(local(pipe, TPosition.A1, half, 2048), gm(a, half), params)


@pytest.mark.parametrize("params, error, words", [
    (Nd2NzParams(1, 32, 64, 0, 64, 16, 1, 0), CubeFormatError,
     ["dstNzC0Stride 16 < nValue 32", "column block 1 would overwrite rows 16..", "rounded up to 16 = 32"]),
    (Nd2NzParams(1, 32, 64, 0, 64, 48, 1, 0), OutOfBoundsError,
     ["writes 5632 bytes into an L1 tensor of 4096 (ND matrix 0, column block 3 of 4, 32 rows)"]),
    (Nd2NzParams(1, 32, 64, 0, 0, 32, 1, 0), ArgumentError, ["srcDValue is 0"]),
], ids=["c0stride-overlap", "past-l1", "srcdvalue-0"])
def test_nd2nz_rules(params, error, words):
    with pytest.raises(error) as info:
        launch(nd2nz_call, 1, np.zeros(64 * 64, np.float16), params)
    for w in words:
        assert w in str(info.value), str(info.value)


def test_nd2nz_with_a_zero_count_is_a_nop():
    result = launch(nd2nz_call, 1, np.zeros(64 * 64, np.float16), Nd2NzParams(0, 32, 64, 0, 64, 32, 1, 0))
    assert not [r for r in result.trace if r.op == "DataCopy"]


@kernel(core="AIC")
def mmad_two_cores(a, b, c, cfg):
    """The basic-API matmul walk-through's shape: each of 2 AIC blocks computes singleCoreM rows of C in one
    base tile (baseM = singleCoreM, baseK = K, baseN = N) with the Nz -> Zz and Nz -> Zn LoadData loops."""
    M, K, N, single_m = cfg
    m_idx = GetBlockIdx() % (M // single_m)
    aGm, bGm, cGm = gm(a, half)[m_idx * single_m * K], gm(b, half), gm(c, half)[m_idx * single_m * N]
    pipe = TPipe()
    a1, b1 = local(pipe, TPosition.A1, half, single_m * K), local(pipe, TPosition.B1, half, K * N)
    a2, b2 = local(pipe, TPosition.A2, half, single_m * K), local(pipe, TPosition.B2, half, K * N)
    c_local = local(pipe, TPosition.CO1, float32, single_m * N)
    DataCopy(a1, aGm, Nd2NzParams(1, single_m, K, 0, K, single_m, 1, 0))
    DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    for i in range(single_m // 16):
        LoadData(a2[i * K * 16], a1[i * 512 // 2], LoadData2DParams(0, K // 16, single_m // 16, 0, 0, False, 0))
    for i in range(K // 16):
        LoadData(b2[i * N * 16], b1[i * 512 // 2], LoadData2DParams(0, N // 16, K // 16, 0, 0, True, 0))
    handoff(HardEvent.MTE1_M)
    Mmad(c_local, a2, b2, MmadParams(single_m, N, K, 0, False, True))
    handoff(HardEvent.M_FIX)
    Fixpipe(cGm, c_local, FixpipeParamsV220(N, single_m, single_m, N, False, QuantMode_t.F322F16, 0, 1, 0, 0, 0))


def test_the_two_core_walkthrough_shape_gives_numpys_answer():
    """M 256, K 64, N 256 on two cores (singleCoreM 128): the shape whose Nz -> Zz loops gave a max error of
    10 when L1/L0 held ND; in the real formats the result is numpy's, rounded once to half."""
    M, K, N = 256, 64, 256
    rng = np.random.default_rng(8)
    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    launch(mmad_two_cores, 2, a, b, c, (M, K, N, 128))
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    assert np.abs(c.astype(np.float32) - ref.astype(np.float16).astype(np.float32)).max() <= 2 ** -8


@kernel(core="AIC")
def fixpipe_stride(a, b, c, src_stride):
    """C = A @ B for M = 20 (L0C column blocks of 32 rows), written out with the given srcStride."""
    pipe = TPipe()
    a1, b1 = local(pipe, TPosition.A1, half, 32 * 32), local(pipe, TPosition.B1, half, 32 * 32)
    a2, b2 = local(pipe, TPosition.A2, half, 32 * 32), local(pipe, TPosition.B2, half, 32 * 32)
    co1 = local(pipe, TPosition.CO1, float32, 32 * 32)
    DataCopy(a1, gm(a, half), Nd2NzParams(1, 20, 32, 0, 32, 32, 1, 0))
    DataCopy(b1, gm(b, half), Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    for i in range(2):
        LoadData(a2[i * 512], a1[i * 256], LoadData2DParams(0, 2, 2, 0, 0, False, 0))
        LoadData(b2[i * 512], b1[i * 256], LoadData2DParams(0, 2, 2, 0, 0, True, 0))
    handoff(HardEvent.MTE1_M)
    Mmad(co1, a2, b2, MmadParams(20, 32, 32, 0, False, True))
    handoff(HardEvent.M_FIX)
    Fixpipe(gm(c, float32), co1, FixpipeParamsV220(32, 20, src_stride, 32))


def test_fixpipe_src_stride_is_m_rounded_up_to_16():
    rng = np.random.default_rng(9)
    a, b = ints(rng, (20, 32), np.float16), ints(rng, (32, 32), np.float16)
    c = np.zeros((20, 32), np.float32)
    launch(fixpipe_stride, 1, a, b, c, 32)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
    with pytest.raises(CubeFormatError) as info:
        launch(fixpipe_stride, 1, a, b, np.zeros((20, 32), np.float32), 20)
    for words in ("Fixpipe srcStride 20, but the Mmad at test_cube_path.py:", "column blocks of 32 rows",
                  "srcStride = 32"):
        assert words in str(info.value), str(info.value)
