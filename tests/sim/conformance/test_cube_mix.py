"""Conformance: MatmulLeakyRelu as a MIX 1:2 kernel, written from the docs in C++ call order.

The AIC multiplies its tile on the cube (Nd2Nz, LoadData Nz->Zz/Zn, Mmad, Fixpipe NZ2ND to a float
workspace in GM) and signals its two AIVs with CrossCoreSetFlag(2, PIPE_FIX, id); each AIV waits
(CrossCoreWaitFlag), applies LeakyRelu to half of the rows (Maxs/Mins/Muls/Add: max(x, 0) + alpha *
min(x, 0)) and writes the result. Exact against numpy.
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (ASCEND_IS_AIC, PIPE_FIX, Add, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, Fixpipe,
                        FixpipeParamsV220, GetBlockIdx, GetSubBlockIdx, HardEvent, LoadData, LoadData2DParams, Maxs,
                        Mins, Mmad, MmadParams, Muls, Nd2NzParams, QuantMode_t, TPipe, TPosition, float32, half, kernel,
                        launch)
from cube_kernels import gm, handoff, local

M, N, K, ALPHA = 32, 32, 48, 0.125       # per group: a 32 x 32 tile of C, 16 rows per AIV
FLAG = 3


@kernel(core="MIX")
def matmul_leaky_relu(a, b, work, y):
    if ASCEND_IS_AIC():
        g = GetBlockIdx()
        pipe = TPipe()
        a1, b1 = local(pipe, TPosition.A1, half, M * K), local(pipe, TPosition.B1, half, K * N)
        a2, b2 = local(pipe, TPosition.A2, half, M * K), local(pipe, TPosition.B2, half, K * N)
        co1 = local(pipe, TPosition.CO1, float32, M * N)
        DataCopy(a1, gm(a, half)[g * M * K], Nd2NzParams(1, M, K, 0, K, M, 1, 0))
        DataCopy(b1, gm(b, half), Nd2NzParams(1, K, N, 0, N, K, 1, 0))
        handoff(HardEvent.MTE2_MTE1)
        for i in range(M // 16):
            LoadData(a2[i * K * 16], a1[i * 256], LoadData2DParams(0, K // 16, M // 16, 0, 0, False, 0))
        for i in range(K // 16):
            LoadData(b2[i * N * 16], b1[i * 256], LoadData2DParams(0, N // 16, K // 16, 0, 0, True, 0))
        handoff(HardEvent.MTE1_M)
        Mmad(co1, a2, b2, MmadParams(M, N, K, 0, False, True))
        handoff(HardEvent.M_FIX)
        Fixpipe(gm(work, float32)[g * M * N], co1, FixpipeParamsV220(N, M, M, N, False, QuantMode_t.NoQuant))
        CrossCoreSetFlag(2, PIPE_FIX, FLAG)         # C is in GM: wake the group's two AIVs
        return
    CrossCoreWaitFlag(FLAG)
    g, s = GetBlockIdx() // 2, GetSubBlockIdx()
    rows = M // 2
    off = (g * M + s * rows) * N
    pipe = TPipe()
    x, pos, neg = (local(pipe, TPosition.VECCALC, float32, rows * N) for _ in range(3))
    DataCopy(x, gm(work, float32)[off], rows * N)
    handoff(HardEvent.MTE2_V)
    Maxs(pos, x, 0.0, rows * N)
    Mins(neg, x, 0.0, rows * N)
    Muls(neg, neg, ALPHA, rows * N)
    Add(x, pos, neg, rows * N)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(y, float32)[off], x, rows * N)


def test_matmul_leaky_relu_mix_1_2_is_exact():
    groups = 3
    rng = np.random.default_rng(6)
    a = rng.integers(-4, 5, (groups * M, K)).astype(np.float16)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    work = np.zeros((groups * M, N), np.float32)
    y = np.full((groups * M, N), np.nan, np.float32)
    result = launch(matmul_leaky_relu, groups, a, b, work, y, gm_names=["a", "b", "work", "y"])
    c = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_array_equal(work, c)
    np.testing.assert_array_equal(y, np.where(c > 0, c, c * np.float32(ALPHA)))
    assert (c < 0).any() and (c > 0).any()
    assert {t[1] for t in result.core_times} == {"AIC", "AIV"}
