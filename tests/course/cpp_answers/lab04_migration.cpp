// C++ answers of the kernels of labs/lab04_migration.ipynb (format: ascend_sim/course/grading/solution_file.py).
//
// Not the lab's solutions file: the answer cells of ex2 and ex3 hold a Python host function (dyn_tiling, fold_bn)
// beside the kernel, and a %%ascendc cell holds C++ only, so the notebook stays Python. These blocks prove that a C++
// kernel passes the same checks (tests/course/test_grading_cpp_kernels.py binds each beside the Python solution's host
// function). ex1 has no C++ block: its kernel is the body of a Python template space (ASCENDC_TPL_* objects that the
// check drives through the learner's Python host entry). The kernels' arguments are what the checks pass to launch:
// the GM arrays in order, then the sizes as uint32_t.

// %% ex2
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelAddDyn {
public:
    __aicore__ inline KernelAddDyn() {}

    // This core's range: former cores own formerLength halves, tail cores tailLength; the last stops at total.
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t formerNum,
                                uint32_t formerLength, uint32_t tailLength, uint32_t tileLength)
    {
        uint32_t idx = GetBlockIdx();
        uint32_t start = idx * formerLength;
        length = formerLength;
        if (idx >= formerNum) {
            start = formerNum * formerLength + (idx - formerNum) * tailLength;
            length = tailLength;
        }
        uint32_t rest = total - start;
        length = length < rest ? length : rest;       // the last core stops at total
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ half*)x + start, length);
        yGm.SetGlobalBuffer((__gm__ half*)y + start, length);
        zGm.SetGlobalBuffer((__gm__ half*)z + start, length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t offset = 0; offset < length; offset += tileLength) {
            uint32_t n = length - offset < tileLength ? length - offset : tileLength;
            CopyIn(offset, n);
            Compute(n);
            CopyOut(offset, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t offset, uint32_t n)
    {
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        if (n % 16 == 0) {
            DataCopy(xLocal, xGm[offset], n);
            DataCopy(yLocal, yGm[offset], n);
        } else {                                      // a partial DataBlock: copy exactly n * 2 bytes
            DataCopyExtParams copyParams{1, n * 2, 0, 0, 0};
            DataCopyPadExtParams<half> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
            DataCopyPad(yLocal, yGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        Add(zLocal, xLocal, yLocal, n);
        outQueueZ.EnQue(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }

    __aicore__ inline void CopyOut(uint32_t offset, uint32_t n)
    {
        LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        if (n % 16 == 0) {
            DataCopy(zGm[offset], zLocal, n);
        } else {
            DataCopyExtParams copyParams{1, n * 2, 0, 0, 0};
            DataCopyPad(zGm[offset], zLocal, copyParams);
        }
        outQueueZ.FreeTensor(zLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<half> xGm, yGm, zGm;
    uint32_t length = 0;
    uint32_t tileLength = 0;
};

// z = x + y (half) for any total: this core's range, tiles, a partial last DataBlock by DataCopyPad.
extern "C" __global__ __aicore__ void add_dyn(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t former_num,
                                              uint32_t former_length, uint32_t tail_length, uint32_t tile_length)
{
    KernelAddDyn op;
    op.Init(x, y, z, total, former_num, former_length, tail_length, tile_length);
    op.Process();
}

// %% ex2 wrong: the last core does not stop at total: it reads and writes past the end
// replace: length = length < rest ? length : rest;       // the last core stops at total -> length = length + 0 * rest;
