// tiling/tiling_api.h: the host-side Matmul tiling API (namespace matmul_tiling), DECLARATIONS ONLY.
// Written for ascend_sim from the public API reference (高阶API > 矩阵计算 > Matmul Tiling); the names are those of
// ascend_sim.matmul_tiling (MultiCoreMatmulTiling, MatmulApiTiling, DataType ...).
#ifndef ASCEND_SIM_TILING_API_H
#define ASCEND_SIM_TILING_API_H

#include <cstdint>
#if defined(__has_include)
#if __has_include(<iostream>)
#include <iostream>  // host code that prints its tiling
#endif
#endif
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"

namespace matmul_tiling {
enum class TPosition { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC };
enum class CubeFormat { ND = 0, NZ, ND_ALIGN, VECTOR };
enum class DataType { DT_FLOAT = 0, DT_FLOAT16, DT_BF16, DT_INT8, DT_INT32, DT_INT4 };
enum class MatrixTraverse { FIRSTM = 0, FIRSTN = 1 };

class MatmulApiTiling {
public:
    MatmulApiTiling();
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform);
    int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType);
    int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType);
    int32_t SetShape(int32_t m, int32_t n, int32_t k);
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn);
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn);
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1);
    int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1);
    int32_t SetTraverse(MatrixTraverse traverse);
    int32_t EnableBias(bool isBiasIn = false);
    int32_t SetBias(bool isBiasIn = false);
    int32_t GetBaseM() const;
    int32_t GetBaseN() const;
    int32_t GetBaseK() const;
    int64_t GetTiling(AscendC::TCubeTiling& tiling);
};

class MultiCoreMatmulTiling : public MatmulApiTiling {
public:
    MultiCoreMatmulTiling();
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform);
    int32_t SetDim(int32_t dim);
    int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1);
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim);
    int32_t GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK);
};
}  // namespace matmul_tiling

#endif  // ASCEND_SIM_TILING_API_H
