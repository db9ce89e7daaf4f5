// Instructor C++ solutions of labs/lab00_warmup.ipynb (format: ascend_sim/course/grading/solution_file.py).
//
// The same format as solutions/lab00_warmup.py with // for #. Each `// %% exN` block is one whole translation
// unit: the text of the notebook's %%ascendc answer cell after its magic line (this file as a whole does not
// compile; tests/ascendc/test_cpp_syntax.py checks every block and every wrong answer with g++). The stub is
// generated from the `// --- BEGIN SOLUTION hint="..."` regions: each becomes `ASCEND_SIM_TODO("exN: hint");`.
// The kernels' arguments are what the checks pass to launch: the GM arrays in order, then the lab's tiling
// dataclass, read here with GET_TILING_DATA into a struct with the same field names.

// %% ex1
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;  // one buffer per queue (exercise 3 makes it two)

struct AddTilingData {        // the fields of the lab's AddTiling, by name
    uint32_t totalLength;     // halves over all blocks
    uint32_t tileLength;      // halves per tile
};

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}

    // Block GetBlockIdx() of GetBlockNum() owns blockLength = totalLength / GetBlockNum() halves.
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
    {
        // --- BEGIN SOLUTION hint="set blockLength, tileLength, the GM tensors of this block and the queue buffers"
        blockLength = totalLength / GetBlockNum();
        this->tileLength = tileLength;
        uint32_t offset = blockLength * GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ half*)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ half*)y + offset, blockLength);
        zGm.SetGlobalBuffer((__gm__ half*)z + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));   // bytes
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
        // --- END SOLUTION
    }

    __aicore__ inline void Process()
    {
        // --- BEGIN SOLUTION hint="loop over the tiles of this block: CopyIn, Compute, CopyOut"
        uint32_t loopCount = blockLength / tileLength;
        for (uint32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
        // --- END SOLUTION
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress)
    {
        // --- BEGIN SOLUTION hint="AllocTensor, DataCopy GM to UB, EnQue (x and y)"
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        DataCopy(xLocal, xGm[progress * tileLength], tileLength);
        DataCopy(yLocal, yGm[progress * tileLength], tileLength);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
        // --- END SOLUTION
    }

    __aicore__ inline void Compute(uint32_t progress)
    {
        // --- BEGIN SOLUTION hint="DeQue x and y, Add into a tensor of outQueueZ, EnQue it, FreeTensor the inputs"
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        Add(zLocal, xLocal, yLocal, tileLength);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
        // --- END SOLUTION
    }

    __aicore__ inline void CopyOut(uint32_t progress)
    {
        // --- BEGIN SOLUTION hint="DeQue z, DataCopy UB to GM, FreeTensor"
        LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        DataCopy(zGm[progress * tileLength], zLocal, tileLength);
        outQueueZ.FreeTensor(zLocal);
        // --- END SOLUTION
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<half> xGm, yGm, zGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(AddTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelAdd op;
    op.Init(x, y, z, tilingData.totalLength, tilingData.tileLength);
    op.Process();
}

// %% ex1 wrong: every block works on block 0's range (no GetBlockIdx offset) [key: GMWriteConflictError]
// replace: uint32_t offset = blockLength * GetBlockIdx(); -> uint32_t offset = 0;

// %% ex1 wrong: skips the last tile of every block [key: loop]
// replace: uint32_t loopCount = blockLength / tileLength; -> uint32_t loopCount = blockLength / tileLength - 1;

// %% ex2
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

struct ReluTilingData {       // the fields of the lab's ReluTiling, by name
    uint32_t totalLength;     // halves over all blocks
    uint32_t blockLength;     // halves per block (a multiple of 16); the last block gets the rest
    uint32_t tileLength;      // halves per full tile
};

class KernelRelu {
public:
    __aicore__ inline KernelRelu() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t blockLength,
                                uint32_t tileLength)
    {
        // --- BEGIN SOLUTION hint="this block's start and length (the last block is shorter), GM tensors, buffers"
        uint32_t start = blockLength * GetBlockIdx();
        length = totalLength - start < blockLength ? totalLength - start : blockLength;
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ half*)x + start, length);
        yGm.SetGlobalBuffer((__gm__ half*)y + start, length);
        pipe.InitBuffer(inQueue, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileLength * sizeof(half));
        // --- END SOLUTION
    }

    __aicore__ inline void Process()
    {
        // --- BEGIN SOLUTION hint="every tile, the shorter tail tile too: DataCopyPad moves a byte count"
        for (uint32_t offset = 0; offset < length; offset += tileLength) {
            uint32_t count = length - offset < tileLength ? length - offset : tileLength;   // the tail is shorter
            LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
            if (count == tileLength) {
                DataCopy(xLocal, xGm[offset], count);
            } else {
                DataCopyPad(xLocal, xGm[offset], DataCopyExtParams{1, count * 2, 0, 0, 0},
                            DataCopyPadExtParams<half>{false, 0, 0, 0});
            }
            inQueue.EnQue(xLocal);
            xLocal = inQueue.DeQue<half>();
            LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
            Relu(yLocal, xLocal, count);
            outQueue.EnQue<half>(yLocal);
            inQueue.FreeTensor(xLocal);
            yLocal = outQueue.DeQue<half>();
            if (count == tileLength) {
                DataCopy(yGm[offset], yLocal, count);
            } else {
                DataCopyPad(yGm[offset], yLocal, DataCopyExtParams{1, count * 2, 0, 0, 0});
            }
            outQueue.FreeTensor(yLocal);
        }
        // --- END SOLUTION
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    GlobalTensor<half> xGm, yGm;
    uint32_t length = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelRelu op;
    op.Init(x, y, tilingData.totalLength, tilingData.blockLength, tilingData.tileLength);
    op.Process();
}

// %% ex2 wrong: forgets the tail (only full tiles) [key: tail]
// replace: for (uint32_t offset = 0; offset < length; offset += tileLength) { -> for (uint32_t offset = 0; offset + tileLength <= length; offset += tileLength) {

// %% ex2 wrong: copies the tail in with DataCopy (not a multiple of 32 bytes) [key: AlignmentError]
// replace:
//             if (count == tileLength) {
//                 DataCopy(xLocal, xGm[offset], count);
//             } else {
//                 DataCopyPad(xLocal, xGm[offset], DataCopyExtParams{1, count * 2, 0, 0, 0},
//                             DataCopyPadExtParams<half>{false, 0, 0, 0});
//             }
// with:
//             DataCopy(xLocal, xGm[offset], count);

// %% ex3
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // double buffering (双缓冲): two tiles in flight per queue

struct AddTilingData {
    uint32_t totalLength;
    uint32_t tileLength;
};

class KernelAddDoubleBuffer {
public:
    __aicore__ inline KernelAddDoubleBuffer() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
    {
        blockLength = totalLength / GetBlockNum();
        this->tileLength = tileLength;
        uint32_t offset = blockLength * GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ half*)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ half*)y + offset, blockLength);
        zGm.SetGlobalBuffer((__gm__ half*)z + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, this->tileLength * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, this->tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, this->tileLength * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        uint32_t loopCount = blockLength / tileLength;
        for (uint32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress)
    {
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        DataCopy(xLocal, xGm[progress * tileLength], tileLength);
        DataCopy(yLocal, yGm[progress * tileLength], tileLength);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }

    __aicore__ inline void Compute(uint32_t progress)
    {
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        Add(zLocal, xLocal, yLocal, tileLength);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }

    __aicore__ inline void CopyOut(uint32_t progress)
    {
        LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        DataCopy(zGm[progress * tileLength], zLocal, tileLength);
        outQueueZ.FreeTensor(zLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<half> xGm, yGm, zGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void add_double_buffer(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(AddTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelAddDoubleBuffer op;
    op.Init(x, y, z, tilingData.totalLength, tilingData.tileLength);
    op.Process();
}

// %% ex3 stub
#include "kernel_operator.h"

using namespace AscendC;

struct AddTilingData {        // the fields of the lab's AddTiling, by name
    uint32_t totalLength;
    uint32_t tileLength;
};

// z = x + y like add_custom, with BUFFER_NUM = 2 buffers per queue: write the class and its Init/Process here.

extern "C" __global__ __aicore__ void add_double_buffer(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)
{
    ASCEND_SIM_TODO("ex3: write the double-buffered Add kernel");
}

// %% ex3 wrong: single-buffered (BUFFER_NUM = 1) is correct but over the cycle budget [key: budget]
// replace: constexpr int32_t BUFFER_NUM = 2; -> constexpr int32_t BUFFER_NUM = 1;

// %% ex3 wrong: one big copy per block instead of tiles [key: tile-size]
// replace: this->tileLength = tileLength; -> this->tileLength = blockLength;
