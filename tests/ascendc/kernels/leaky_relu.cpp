// LeakyRelu: z = x if x >= 0 else negativeSlope * x (half), legacy kernel style with a tiling struct.
// Written for ascend_sim from the Ascend C API reference (LeakyRelu, GET_TILING_DATA); see README.md.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

struct LeakyReluTilingData {
    uint32_t totalLength;
    uint32_t tileNum;
    float negativeSlope;
};

class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, const LeakyReluTilingData& tiling)
    {
        blockLength = tiling.totalLength / GetBlockNum();
        tileNum = tiling.tileNum;
        tileLength = blockLength / tileNum / BUFFER_NUM;
        slope = static_cast<half>(tiling.negativeSlope);
        xGm.SetGlobalBuffer((__gm__ half*)x + blockLength * GetBlockIdx(), blockLength);
        zGm.SetGlobalBuffer((__gm__ half*)z + blockLength * GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueue, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileLength * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum * BUFFER_NUM; i++) {
            LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
            DataCopy(xLocal, xGm[i * tileLength], tileLength);
            inQueue.EnQue(xLocal);

            LocalTensor<half> xIn = inQueue.DeQue<half>();
            LocalTensor<half> zLocal = outQueue.AllocTensor<half>();
            LeakyRelu(zLocal, xIn, slope, tileLength);
            outQueue.EnQue(zLocal);
            inQueue.FreeTensor(xIn);

            LocalTensor<half> zOut = outQueue.DeQue<half>();
            DataCopy(zGm[i * tileLength], zOut, tileLength);
            outQueue.FreeTensor(zOut);
        }
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    GlobalTensor<half> xGm, zGm;
    uint32_t blockLength = 0;
    uint32_t tileNum = 0;
    uint32_t tileLength = 0;
    half slope;
};

extern "C" __global__ __aicore__ void leaky_relu(GM_ADDR x, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(LeakyReluTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelLeakyRelu op;
    op.Init(x, z, tilingData);
    op.Process();
}
