"""Conformance: LoadDataWithTranspose, the int8 route of a row-major B (K x N) into L0B's ZN fractals.

Written from the docs in C++ order: B goes GM -> L1 by Nd2Nz (NZ, C0 = 32 for int8), then one
LoadDataWithTranspose per 32-row block of B turns its 32 x 32 squares into ZN fractals; A takes the
Nz -> Zz loops; Mmad accumulates in int32; Fixpipe NZ2ND. Exact against numpy.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (DataCopy, Fixpipe, FixpipeParamsV220, HardEvent, LoadData, LoadData2DParams,
                        LoadData2dTransposeParams, LoadDataWithTranspose, Mmad, MmadParams, Nd2NzParams,
                        OutOfBoundsError, QuantMode_t, TPipe, TPosition, half, int8, int32, kernel, launch)
from cube_kernels import gm, handoff, local


@kernel(core="AIC")
def int8_matmul_nd_b(a, b, c, cfg):
    M, K, N = cfg
    mB, kB, nB = M // 16, K // 32, N // 16
    pipe = TPipe()
    a1, b1 = local(pipe, TPosition.A1, int8, M * K), local(pipe, TPosition.B1, int8, K * N)
    a2, b2 = local(pipe, TPosition.A2, int8, M * K), local(pipe, TPosition.B2, int8, K * N)
    co1 = local(pipe, TPosition.CO1, int32, M * N)
    DataCopy(a1, gm(a, int8), Nd2NzParams(1, M, K, 0, K, M, 1, 0))
    DataCopy(b1, gm(b, int8), Nd2NzParams(1, K, N, 0, N, K, 1, 0))       # B as it is: K x N, row-major
    handoff(HardEvent.MTE2_MTE1)
    for i in range(mB):
        LoadData(a2[i * kB * 512], a1[i * 512], LoadData2DParams(0, kB, mB, 0, 0, False, 0))
    # {startIndex, repeatTimes, srcStride, dstGap, dstFracGap, addrMode}: squares of 32 x 32, kB apart in L1;
    # each square's transpose is two ZN fractals, so the next square starts two fractals on (dstGap 1)
    for kb in range(kB):
        LoadDataWithTranspose(b2[kb * nB * 512], b1, LoadData2dTransposeParams(kb, N // 32, kB, 1, 0, 0))
    handoff(HardEvent.MTE1_M)
    Mmad(co1, a2, b2, MmadParams(M, N, K, 0, False, True))
    handoff(HardEvent.M_FIX)
    Fixpipe(gm(c, int32), co1, FixpipeParamsV220(N, M, M, N, False, QuantMode_t.NoQuant))


@pytest.mark.parametrize("M, K, N", [(16, 32, 32), (48, 96, 64)])
def test_int8_matmul_with_row_major_b_through_loaddatawithtranspose(M, K, N):
    rng = np.random.default_rng(M + K + N)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    launch(int8_matmul_nd_b, 1, a, b, c, (M, K, N))
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


@kernel(core="AIC")
def b16_both_ways(x, seen):
    pipe = TPipe()
    l1 = local(pipe, TPosition.B1, half, 32 * 32)
    via_load, via_trans = local(pipe, TPosition.B2, half, 1024), local(pipe, TPosition.B2, half, 1024)
    DataCopy(l1, gm(x, half), Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    for i in range(2):
        LoadData(via_load[i * 512], l1[i * 256], LoadData2DParams(0, 2, 2, 0, 0, True, 0))
        LoadDataWithTranspose(via_trans[i * 512], l1[i * 256], LoadData2dTransposeParams(0, 2, 2, 0, 0, 0))
    handoff(HardEvent.MTE1_M)
    seen.extend([via_load.peek(), via_trans.peek()])


def test_b16_squares_are_the_transposed_fractals_of_loaddata():
    seen: list[np.ndarray] = []
    launch(b16_both_ways, 1, np.arange(1024, dtype=np.float32).astype(np.float16), seen)
    np.testing.assert_array_equal(seen[0], seen[1])


@kernel(core="AIC")
def trans_call(x, params):
    pipe = TPipe()
    l1, l0 = local(pipe, TPosition.B1, int8, 2048), local(pipe, TPosition.B2, int8, 2048)
    DataCopy(l1, gm(x, int8), 2048)
    handoff(HardEvent.MTE2_MTE1)
    LoadDataWithTranspose(l0, l1, params)


def test_a_square_beyond_l1_is_refused_with_the_numbers():
    with pytest.raises(OutOfBoundsError, match="source needs 3072 bytes but the L1 tensor holds 2048"):
        launch(trans_call, 1, np.zeros(2048, np.int8), LoadData2dTransposeParams(2, 1, 0, 0, 0, 0))
