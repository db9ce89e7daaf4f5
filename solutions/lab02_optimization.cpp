// Instructor C++ solutions of labs/lab02_optimization.ipynb (format: ascend_sim/course/grading/solution_file.py).
//
// The same format as solutions/lab02_optimization.py with // for #. Each `// %% exN` block is one whole translation
// unit: the text of the notebook's %%ascendc answer cell after its magic line (this file as a whole does not
// compile; tests/ascendc/test_cpp_syntax.py checks every block and every wrong answer with g++). The kernels'
// arguments are what the checks pass to launch: the GM arrays in order, then the sizes as uint32_t. Each
// `// %% exN wrong: ...` block is one replacement that its check must fail: a wrong result, or a correct but too
// slow answer that misses the cycle budget. ex7 stays Python: its answer is a host function (the BN fold) and a
// kernel in one cell.

// %% ex1
#include "kernel_operator.h"

using namespace AscendC;

// z = max(x + y, 0) for n halves on one block, with vector instructions (no scalar loop).
extern "C" __global__ __aicore__ void add_relu_vector(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n)
{
    // --- BEGIN SOLUTION hint="write the vectorised kernel"
    GlobalTensor<half> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, n);
    yGm.SetGlobalBuffer((__gm__ half*)y, n);
    zGm.SetGlobalBuffer((__gm__ half*)z, n);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bz;
    pipe.InitBuffer(bx, n * sizeof(half));
    pipe.InitBuffer(by, n * sizeof(half));
    pipe.InitBuffer(bz, n * sizeof(half));
    LocalTensor<half> xLocal = bx.Get<half>();
    LocalTensor<half> yLocal = by.Get<half>();
    LocalTensor<half> zLocal = bz.Get<half>();
    DataCopy(xLocal, xGm, n);
    DataCopy(yLocal, yGm, n);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    Add(zLocal, xLocal, yLocal, n);
    Relu(zLocal, zLocal, n);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(zGm, zLocal, n);
    // --- END SOLUTION
}

// %% ex1 wrong: the vector instructions stop one DataBlock short of n
// replace: Relu(zLocal, zLocal, n); -> Relu(zLocal, zLocal, n - 16);

// %% ex1 wrong: the scalar loop is correct but far over the cycle budget
// replace:
//     SetFlag<HardEvent::MTE2_V>(0);
//     WaitFlag<HardEvent::MTE2_V>(0);
//     Add(zLocal, xLocal, yLocal, n);
//     Relu(zLocal, zLocal, n);
//     SetFlag<HardEvent::V_MTE3>(0);
//     WaitFlag<HardEvent::V_MTE3>(0);
// with:
//     SetFlag<HardEvent::MTE2_S>(0);
//     WaitFlag<HardEvent::MTE2_S>(0);
//     for (uint32_t i = 0; i < n; i++) {
//         float v = (float)xLocal.GetValue(i) + (float)yLocal.GetValue(i);
//         zLocal.SetValue(i, (half)(v > 0.0f ? v : 0.0f));
//     }
//     SetFlag<HardEvent::S_MTE3>(0);
//     WaitFlag<HardEvent::S_MTE3>(0);

// %% ex2
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t TILE = 2048;                       // halves per tile (4 KB)

class KernelAddTails {
public:
    __aicore__ inline KernelAddTails() {}

    // total halves (a multiple of 16) split over GetBlockNum() cores in whole 32-byte DataBlocks.
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total)
    {
        uint32_t offset = 0;                              // this core's first element; its count is `length`
        // --- BEGIN SOLUTION hint="split the DataBlocks over the cores (former/tail cores): this core's offset and length"
        uint32_t blocks = total / 16;                     // 32-byte DataBlocks of 16 halves
        uint32_t formerNum = blocks % GetBlockNum();      // the first formerNum cores take one DataBlock more
        uint32_t tailLength = blocks / GetBlockNum() * 16;
        uint32_t formerLength = tailLength + 16;
        uint32_t idx = GetBlockIdx();
        if (idx < formerNum) {
            offset = idx * formerLength;
            length = formerLength;
        } else {
            offset = formerNum * formerLength + (idx - formerNum) * tailLength;
            length = tailLength;
        }
        // --- END SOLUTION
        xGm.SetGlobalBuffer((__gm__ half*)x + offset, length);
        yGm.SetGlobalBuffer((__gm__ half*)y + offset, length);
        zGm.SetGlobalBuffer((__gm__ half*)z + offset, length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        // --- BEGIN SOLUTION hint="the tile loop over this core's length, the last tile shorter"
        for (uint32_t start = 0; start < length; start += TILE) {
            uint32_t count = length - start < TILE ? length - start : TILE;   // still whole DataBlocks
            CopyIn(start, count);
            Compute(count);
            CopyOut(start, count);
        }
        // --- END SOLUTION
    }

private:
    __aicore__ inline void CopyIn(uint32_t start, uint32_t count)
    {
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        DataCopy(xLocal, xGm[start], count);
        DataCopy(yLocal, yGm[start], count);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        Add(zLocal, xLocal, yLocal, count);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }

    __aicore__ inline void CopyOut(uint32_t start, uint32_t count)
    {
        LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        DataCopy(zGm[start], zLocal, count);
        outQueueZ.FreeTensor(zLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<half> xGm, yGm, zGm;
    uint32_t length = 0;
};

extern "C" __global__ __aicore__ void add_tails(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total)
{
    KernelAddTails op;
    op.Init(x, y, z, total);
    op.Process();
}

// %% ex2 wrong: a tail core starts at idx * tailLength, inside the former cores' range
// replace:             offset = formerNum * formerLength + (idx - formerNum) * tailLength; ->             offset = idx * tailLength;

// %% ex2 wrong: splits the elements, not the 32-byte DataBlocks: cores start at unaligned addresses
// replace:
//         uint32_t blocks = total / 16;                     // 32-byte DataBlocks of 16 halves
//         uint32_t formerNum = blocks % GetBlockNum();      // the first formerNum cores take one DataBlock more
//         uint32_t tailLength = blocks / GetBlockNum() * 16;
//         uint32_t formerLength = tailLength + 16;
// with:
//         uint32_t formerNum = total % GetBlockNum();
//         uint32_t tailLength = total / GetBlockNum();
//         uint32_t formerLength = tailLength + 1;

// %% ex2 wrong: whole tiles per core and the rest on the last core: correct, but one core does most of the work
// replace:
//         if (idx < formerNum) {
//             offset = idx * formerLength;
//             length = formerLength;
//         } else {
//             offset = formerNum * formerLength + (idx - formerNum) * tailLength;
//             length = tailLength;
//         }
// with:
//         uint32_t per = total / GetBlockNum() / TILE * TILE;
//         offset = idx * per;
//         length = idx < GetBlockNum() - 1 ? per : total - offset;

// %% ex3
#include "kernel_operator.h"

using namespace AscendC;

class KernelScaleStream {
public:
    __aicore__ inline KernelScaleStream() {}

    // z = 2 x + 1 for n halves per block (n a multiple of 16), streamed GM -> UB -> GM in tiles of `tile` halves
    // through queues of `bufferNum` buffers each.
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, uint32_t n, uint32_t bufferNum, uint32_t tile)
    {
        this->n = n;
        this->tile = tile;
        xGm.SetGlobalBuffer((__gm__ half*)x + n * GetBlockIdx(), n);
        zGm.SetGlobalBuffer((__gm__ half*)z + n * GetBlockIdx(), n);
        pipe.InitBuffer(inQueue, bufferNum, tile * sizeof(half));
        pipe.InitBuffer(outQueue, bufferNum, tile * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        // --- BEGIN SOLUTION hint="the CopyIn / Compute / CopyOut loop over the block, the last tile shorter"
        for (uint32_t start = 0; start < n; start += tile) {
            uint32_t count = n - start < tile ? n - start : tile;    // the last tile is shorter
            LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
            DataCopy(xLocal, xGm[start], count);
            inQueue.EnQue(xLocal);
            xLocal = inQueue.DeQue<half>();
            LocalTensor<half> zLocal = outQueue.AllocTensor<half>();
            Muls(zLocal, xLocal, (half)2.0, count);
            Adds(zLocal, zLocal, (half)1.0, count);
            outQueue.EnQue<half>(zLocal);
            inQueue.FreeTensor(xLocal);
            zLocal = outQueue.DeQue<half>();
            DataCopy(zGm[start], zLocal, count);
            outQueue.FreeTensor(zLocal);
        }
        // --- END SOLUTION
    }

private:
    TPipe pipe;
    // Queue depth 1: never two EnQue without a DeQue between them. Double buffering is the number of buffers
    // given to InitBuffer, not the depth (Ascend C API reference, TQue简介, "depth").
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    GlobalTensor<half> xGm, zGm;
    uint32_t n = 0;
    uint32_t tile = 0;
};

extern "C" __global__ __aicore__ void scale_stream(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    // --- BEGIN SOLUTION hint="choose BUFFER_NUM (buffers per queue) and TILE (halves per copy), then Init and Process"
    constexpr uint32_t BUFFER_NUM = 2;                // double buffering
    constexpr uint32_t TILE = 4096;                   // 8 KB copies
    KernelScaleStream op;
    op.Init(x, z, n, BUFFER_NUM, TILE);
    op.Process();
    // --- END SOLUTION
}

// %% ex3 wrong: the loop stops before the last, shorter tile
// replace:         for (uint32_t start = 0; start < n; start += tile) { ->         for (uint32_t start = 0; start + tile <= n; start += tile) {

// %% ex3 wrong: one buffer per queue: correct, but copies and vector work never overlap
// replace: constexpr uint32_t BUFFER_NUM = 2;                // double buffering -> constexpr uint32_t BUFFER_NUM = 1;

// %% ex3 wrong: 512-byte tiles: correct, but every copy and instruction pays its fixed cost 16 times as often
// replace: constexpr uint32_t TILE = 4096;                   // 8 KB copies -> constexpr uint32_t TILE = 256;

// %% ex3 wrong: 32 KB tiles: correct, but a block is only three tiles, so the first copy in and the last copy out overlap nothing
// replace: constexpr uint32_t TILE = 4096;                   // 8 KB copies -> constexpr uint32_t TILE = 16384;

// %% ex3 wrong: 64 KB tiles: two queues of two buffers do not fit UB
// replace: constexpr uint32_t TILE = 4096;                   // 8 KB copies -> constexpr uint32_t TILE = 32768;

// %% ex8
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t N = 4096;                          // floats of x, y and z

// z = x + y (4096 floats) computed `times` times with the repeat-form Add; x, y, z at UB byte addresses that avoid
// bank conflicts.
extern "C" __global__ __aicore__ void add_banks(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t times)
{
    uint32_t xAddr = 0, yAddr = 0, zAddr = 0;          // UB byte addresses of x, y and z
    // --- BEGIN SOLUTION hint="choose the UB byte addresses of x, y and z"
    xAddr = 0x0;
    yAddr = 0x10100;                                  // another bank_id and the other 8 groups
    zAddr = 0x20000;                                  // a third bank_id
    // --- END SOLUTION
    GlobalTensor<float> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, N);
    yGm.SetGlobalBuffer((__gm__ float*)y, N);
    zGm.SetGlobalBuffer((__gm__ float*)z, N);
    uint32_t top = xAddr > yAddr ? xAddr : yAddr;
    top = top > zAddr ? top : zAddr;
    TPipe pipe;
    TBuf<TPosition::VECCALC> ub;
    pipe.InitBuffer(ub, top + N * sizeof(float));
    LocalTensor<float> whole = ub.Get<float>();
    LocalTensor<float> xLocal = whole[xAddr / sizeof(float)];
    LocalTensor<float> yLocal = whole[yAddr / sizeof(float)];
    LocalTensor<float> zLocal = whole[zAddr / sizeof(float)];
    DataCopy(xLocal, xGm, N);
    DataCopy(yLocal, yGm, N);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    for (uint32_t i = 0; i < times; i++) {
        Add(zLocal, xLocal, yLocal, 64, N / 64, BinaryRepeatParams{1, 1, 1, 8, 8, 8});
    }
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(zGm, zLocal, N);
}

// %% ex8 wrong: y overlaps x (x takes 16 KB from 0x0): the second copy overwrites half of x
// replace:     yAddr = 0x10100;                                  // another bank_id and the other 8 groups ->     yAddr = 0x2000;

// %% ex8 wrong: x and y in the same bank (0x4000 apart): correct, but every repeat's reads collide
// replace:
//     yAddr = 0x10100;                                  // another bank_id and the other 8 groups
//     zAddr = 0x20000;                                  // a third bank_id
// with:
//     yAddr = 0x4000;
//     zAddr = 0x10000;
