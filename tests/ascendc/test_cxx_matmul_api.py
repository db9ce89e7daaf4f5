"""The high-level Matmul API in C++: Matmul<MatmulType<...>, ..., CFG_MDL> with REGIST_MATMUL_OBJ and a TCubeTiling
kernel argument (made on the host in Python, as GetTiling would)."""
import numpy as np

from ascend_sim import launch
from ascend_sim.kernels.opt.default_matmul import default_tiling
from cxx_util import load_src

SRC = """
template <bool MDL>
__global__ __cube__ void mm_kernel(__gm__ half* a, __gm__ half* b, __gm__ float* c, TCubeTiling tiling)
{
    TPipe pipe;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(a, tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(b, tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(c, tiling.M * tiling.N);
    using A = MatmulType<TPosition::GM, CubeFormat::ND, half>;
    using C = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    if constexpr (MDL) {
        Matmul<A, A, C, C, CFG_MDL> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
        mm.SetTensorA(aGm[GetBlockIdx() * tiling.singleCoreM * tiling.Ka], false);
        mm.SetTensorB(bGm, false);
        mm.IterateAll(cGm[GetBlockIdx() * tiling.singleCoreM * tiling.N]);
        mm.End();
    } else {
        Matmul<A, A, C> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
        mm.SetTensorA(aGm[GetBlockIdx() * tiling.singleCoreM * tiling.Ka], false);
        mm.SetTensorB(bGm, false);
        mm.IterateAll(cGm[GetBlockIdx() * tiling.singleCoreM * tiling.N]);
        mm.End();
    }
}
"""


def test_matmul_high_level_api_norm_and_mdl():
    mod = load_src(SRC, name="matmulapi")
    M, N, K = 256, 128, 128
    rng = np.random.default_rng(6)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    tiling = default_tiling(M, N, K, cores=2, out_dtype=np.float32)
    blocks = M // tiling.singleCoreM
    ref = a.astype(np.float32) @ b.astype(np.float32)
    for mdl in (False, True):
        c = np.zeros((M, N), np.float32)
        r = launch(mod.mm_kernel.template(mdl), blocks, a, b, c, tiling)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
        assert {rec.op for rec in r.trace.records} >= {"Mmad", "Fixpipe"}
    assert "Matmul(MatmulType(TPosition.GM, CubeFormat.ND, half" in mod.python_source
    assert "CFG_MDL)" in mod.python_source


MIX_SRC = """
template <bool SHARE>
__global__ __mix__(1, 2) void mix_kernel(__gm__ half* a, __gm__ half* b, __gm__ float* c, TCubeTiling tiling)
{
    TPipe pipe;
    using A = MatmulType<TPosition::GM, CubeFormat::ND, half>;
    using B = MatmulType<TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NONE, true>;
    using C = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    Matmul<A, B, C, C, SHARE ? CFG_IBSHARE_NORM : CFG_NORM> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(a, tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(b, tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(c, tiling.M * tiling.N);
    mm.SetTensorA(aGm[GetBlockIdx() * tiling.singleCoreM * tiling.Ka]);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm[GetBlockIdx() * tiling.singleCoreM * tiling.N]);
    mm.End();
}
"""


def test_mix_matmul_from_the_aiv_and_ibshare_in_cpp():
    """A MIX kernel (__mix__(1, 2)): REGIST_MATMUL_OBJ's server on the AIC, the calls on the two AIV; with IBShare on
    B the second AIV's job copies no B (MatmulType's sixth argument, CFG_IBSHARE_NORM)."""
    import dataclasses
    mod = load_src(MIX_SRC, name="matmulmix")
    M, N, K = 64, 256, 128
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    t = dataclasses.replace(default_tiling(M, N, K, cores=1, out_dtype=np.float32), usedCoreNum=2, singleCoreM=32,
                            singleCoreN=256, singleCoreK=128, baseM=32, baseN=256, baseK=64, stepKa=2, stepKb=2,
                            depthA1=2, depthB1=2)
    copies = []
    for share in (False, True):
        c = np.zeros((M, N), np.float32)
        r = launch(mod.mix_kernel.template(share), 1, a, b, c, t)
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)
        copies.append(sum(rec.op == "DataCopy" and rec.core_type == "AIC" for rec in r.trace.records))
    assert copies == [8, 6]         # Norm: 2 A + 2 B blocks per AIV; IBShare: B's 2 once
