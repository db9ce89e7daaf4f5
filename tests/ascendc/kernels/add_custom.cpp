// add_custom: z = x + y, the C++ twin of ascend_sim/kernels/add_custom.py (same calls in the same order,
// so the same trace and cycles). Written for the tests from the Ascend C API pages; a TPipe/TQue kernel
// with double buffering in the classic layout of Init / Process / CopyIn / Compute / CopyOut.
#include "kernel_operator.h"
#include "add_custom_tiling.h"

using namespace AscendC;

template <typename T>
class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileNum,
                                uint32_t bufferNum)
    {
        this->blockLength = totalLength / GetBlockNum();
        this->tileNum = tileNum;
        this->bufferNum = bufferNum;
        this->tileLength = this->blockLength / tileNum / bufferNum;
        xGm.SetGlobalBuffer((__gm__ T*)x + this->blockLength * GetBlockIdx(), this->blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)y + this->blockLength * GetBlockIdx(), this->blockLength);
        zGm.SetGlobalBuffer((__gm__ T*)z + this->blockLength * GetBlockIdx(), this->blockLength);
        pipe.InitBuffer(inQueueX, bufferNum, this->tileLength * sizeof(T));
        pipe.InitBuffer(inQueueY, bufferNum, this->tileLength * sizeof(T));
        pipe.InitBuffer(outQueueZ, bufferNum, this->tileLength * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        int32_t loopCount = this->tileNum * this->bufferNum;
        for (int32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress)
    {
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        LocalTensor<T> yLocal = inQueueY.AllocTensor<T>();
        DataCopy(xLocal, xGm[progress * this->tileLength], this->tileLength);
        DataCopy(yLocal, yGm[progress * this->tileLength], this->tileLength);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(int32_t progress)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = inQueueY.DeQue<T>();
        LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();
        Add(zLocal, xLocal, yLocal, this->tileLength);
        outQueueZ.EnQue<T>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress)
    {
        LocalTensor<T> zLocal = outQueueZ.DeQue<T>();
        DataCopy(zGm[progress * this->tileLength], zLocal, this->tileLength);
        outQueueZ.FreeTensor(zLocal);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, 2> inQueueX, inQueueY;
    TQue<TPosition::VECOUT, 2> outQueueZ;
    GlobalTensor<T> xGm, yGm, zGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t bufferNum;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(AddCustomTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelAdd<half> op;
    op.Init(x, y, z, tilingData.totalLength, tilingData.tileNum, tilingData.bufferNum);
    op.Process();
}
