// leaky_relu_flags: y = x > 0 ? x : slope * x, static tensors (LocalMemAllocator) and hand-placed flags
// (SetFlag/WaitFlag) with two UB buffers per direction so copy-in, compute and copy-out overlap.
// Written for the tests from the Ascend C API pages (LocalMemAllocator, LeakyRelu, SetFlag/WaitFlag).
#include "kernel_operator.h"

struct LeakyReluTiling {
    uint32_t totalLength;
    uint32_t tileLength;
    float slope;
};

namespace {
constexpr int32_t BUFFERS = 2;
}

class KernelLeakyRelu {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LeakyReluTiling& tiling)
    {
        blockLength = tiling.totalLength / AscendC::GetBlockNum();
        tileLength = tiling.tileLength;
        slope = tiling.slope;
        xGm.SetGlobalBuffer((__gm__ float*)x + blockLength * AscendC::GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + blockLength * AscendC::GetBlockIdx(), blockLength);
    }

    __aicore__ inline void Process()
    {
        AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
        AscendC::LocalTensor<float> in[BUFFERS];
        AscendC::LocalTensor<float> out[BUFFERS];
        for (int32_t b = 0; b < BUFFERS; b++) {
            in[b] = ub.Alloc<float>(tileLength);
            out[b] = ub.Alloc<float>(tileLength);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(b);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(b);
        }
        uint32_t tiles = blockLength / tileLength;
        for (uint32_t i = 0; i < tiles; i++) {
            int32_t b = i % BUFFERS;
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(b);
            AscendC::DataCopy(in[b], xGm[i * tileLength], tileLength);
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(b);
            AscendC::LeakyRelu(out[b], in[b], slope, tileLength);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(b);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(b);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(b);
            AscendC::DataCopy(yGm[i * tileLength], out[b], tileLength);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(b);
        }
        for (int32_t b = 0; b < BUFFERS; b++) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(b);
        }
    }

private:
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
    float slope = 0.0f;
};

extern "C" __global__ __aicore__ void leaky_relu(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(LeakyReluTiling, tilingData, tiling);
    KernelLeakyRelu op;
    op.Init(x, y, tilingData);
    op.Process();
}
