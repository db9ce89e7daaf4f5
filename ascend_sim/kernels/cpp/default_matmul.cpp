// The "default operator" of Module 2's cube exercise: the C++ twin of ascend_sim/kernels/opt/default_matmul.py.
//
// C [M, N] = A [M, K] @ B [K, N] (+ bias [N]) through the high-level Matmul API (half A and B, half C, float bias)
// with the template CFG_MDL and the TCubeTiling that GetTiling (MultiCoreMatmulTiling) returns on the host with
// nothing tuned. Each core locates its C block from GetBlockIdx() and sets its tail (CalcOffset + SetTail, as the
// Matmul samples do), then one IterateAll writes the block. Launch: default_matmul(a, b, kernel=mod.default_matmul_cpp)
// runs it on the wrapper's a, b, bias, c and tiling.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;

using AType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using BType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

// --- SHOW default-matmul-cpp: course/02_optimization.ipynb cell opt-23-cpp
extern "C" __global__ __aicore__ void default_matmul_cpp(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                         TCubeTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TPipe pipe;
    Matmul<AType, BType, CType, BiasType, CFG_MDL> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    uint32_t blocksM = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    uint32_t mIdx = GetBlockIdx() % blocksM;              // the blocks walk M first, then N
    uint32_t nIdx = GetBlockIdx() / blocksM;
    mm.SetTail(Min(tiling.singleCoreM, tiling.M - mIdx * tiling.singleCoreM),
               Min(tiling.singleCoreN, tiling.N - nIdx * tiling.singleCoreN));
    GlobalTensor<half> aGm, bGm, cGm;
    aGm.SetGlobalBuffer((__gm__ half*)a);
    bGm.SetGlobalBuffer((__gm__ half*)b);
    cGm.SetGlobalBuffer((__gm__ half*)c);
    mm.SetTensorA(aGm[mIdx * tiling.singleCoreM * tiling.Ka]);
    mm.SetTensorB(bGm[nIdx * tiling.singleCoreN]);
    if (tiling.isBias) {
        GlobalTensor<float> biasGm;
        biasGm.SetGlobalBuffer((__gm__ float*)bias);
        mm.SetBias(biasGm[nIdx * tiling.singleCoreN]);
    }
    mm.IterateAll(cGm[mIdx * tiling.singleCoreM * tiling.N + nIdx * tiling.singleCoreN]);
    mm.End();
}
// --- END SHOW
