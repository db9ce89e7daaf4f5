// C++ answers of the kernels of labs/lab05_engineering.ipynb (format: ascend_sim/course/grading/solution_file.py).
//
// Not the lab's solutions file: each answer cell of ex1-ex5 holds a kernel AND a Python diagnose_exN() function, and
// a %%ascendc cell holds C++ only, so the notebook stays Python. These blocks prove that a C++ kernel passes the same
// checks (tests/course/test_grading_lab05_cpp.py runs each with the Python diagnose function beside it). Each
// `// %% exN` block is one translation unit; the kernels' arguments are what the checks pass to launch: the GM arrays,
// then the lab's Tiling dataclass read with GET_TILING_DATA into a struct with the same field names.

// %% ex1
#include "kernel_operator.h"

using namespace AscendC;

struct ScaleTilingData {      // the fields of the lab's Tiling, by name
    uint32_t totalLength;     // halves over all blocks
    uint32_t blockLength;     // halves per block (the last block owns the rest)
    uint32_t tileLength;      // halves per tile
};

// y = 2x: blocks of blockLength halves (the last block owns the rest), tiles of tileLength.
extern "C" __global__ __aicore__ void scale_blocks(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTilingData);
    GET_TILING_DATA(tilingData, tiling);
    uint32_t start = tilingData.blockLength * GetBlockIdx();
    uint32_t rest = tilingData.totalLength - start;                     // what is left from this block on
    uint32_t length = rest < tilingData.blockLength ? rest : tilingData.blockLength;
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, tilingData.totalLength);
    yGm.SetGlobalBuffer((__gm__ half*)y, tilingData.totalLength);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    pipe.InitBuffer(inQueue, 1, tilingData.tileLength * sizeof(half));
    pipe.InitBuffer(outQueue, 1, tilingData.tileLength * sizeof(half));
    for (uint32_t i = 0; i < length; i += tilingData.tileLength) {
        LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        DataCopy(xLocal, xGm[start + i], tilingData.tileLength);
        inQueue.EnQue(xLocal);
        xLocal = inQueue.DeQue<half>();
        LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        Muls(yLocal, xLocal, (half)2.0, tilingData.tileLength);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
        yLocal = outQueue.DeQue<half>();
        DataCopy(yGm[start + i], yLocal, tilingData.tileLength);
        outQueue.FreeTensor(yLocal);
    }
}

// %% ex1 wrong: every block runs to the end of the data (blocks overlap) [key: GMWriteConflictError]
// replace: uint32_t length = rest < tilingData.blockLength ? rest : tilingData.blockLength; -> uint32_t length = rest;

// %% ex2
#include "kernel_operator.h"

using namespace AscendC;

struct ScaleTilingData {      // the fields of the lab's Tiling, by name
    uint32_t totalLength;
    uint32_t blockLength;
    uint32_t tileLength;
};

// y = 2x in tiles of tileLength halves through one TBuf, with explicit flags.
extern "C" __global__ __aicore__ void scale_tbuf(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTilingData);
    GET_TILING_DATA(tilingData, tiling);
    uint32_t start = tilingData.blockLength * GetBlockIdx();
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + start, tilingData.blockLength);
    yGm.SetGlobalBuffer((__gm__ half*)y + start, tilingData.blockLength);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tilingData.tileLength * sizeof(half));
    LocalTensor<half> t = buf.Get<half>();
    for (uint32_t i = 0; i < tilingData.blockLength; i += tilingData.tileLength) {
        DataCopy(t, xGm[i], tilingData.tileLength);
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        Muls(t, t, (half)2.0, tilingData.tileLength);
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
        DataCopy(yGm[i], t, tilingData.tileLength);
        SetFlag<HardEvent::MTE3_MTE2>(0);
        WaitFlag<HardEvent::MTE3_MTE2>(0);
    }
}

// %% ex2 wrong: a buffer 32 bytes larger is still too small [key: OutOfBoundsError]
// replace: pipe.InitBuffer(buf, tilingData.tileLength * sizeof(half)); -> pipe.InitBuffer(buf, tilingData.tileLength + 32);

// %% ex3
#include "kernel_operator.h"

using namespace AscendC;

struct ScaleTilingData {      // the fields of the lab's Tiling, by name
    uint32_t totalLength;
    uint32_t blockLength;
    uint32_t tileLength;
};

// y = 2x in tiles through one TBuf; each pipe hand-over needs a SetFlag/WaitFlag pair.
extern "C" __global__ __aicore__ void scale_flags(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTilingData);
    GET_TILING_DATA(tilingData, tiling);
    uint32_t start = tilingData.blockLength * GetBlockIdx();
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + start, tilingData.blockLength);
    yGm.SetGlobalBuffer((__gm__ half*)y + start, tilingData.blockLength);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tilingData.tileLength * sizeof(half));
    LocalTensor<half> t = buf.Get<half>();
    for (uint32_t i = 0; i < tilingData.blockLength; i += tilingData.tileLength) {
        DataCopy(t, xGm[i], tilingData.tileLength);
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        Muls(t, t, (half)2.0, tilingData.tileLength);
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
        DataCopy(yGm[i], t, tilingData.tileLength);
        SetFlag<HardEvent::MTE3_MTE2>(0);
        WaitFlag<HardEvent::MTE3_MTE2>(0);
    }
}

// %% ex3 wrong: sets the flag but never waits for it [key: RaceError]
// replace:
//         SetFlag<HardEvent::V_MTE3>(0);
//         WaitFlag<HardEvent::V_MTE3>(0);
// with:
//         SetFlag<HardEvent::V_MTE3>(0);

// %% ex4
#include "kernel_operator.h"

using namespace AscendC;

struct ScaleTilingData {      // the fields of the lab's Tiling, by name
    uint32_t totalLength;
    uint32_t blockLength;
    uint32_t tileLength;
};

// dst = scale * src for n halves (a multiple of 16) through one UB buffer, with its flags.
__aicore__ inline void CopyScaled(GlobalTensor<half> src, GlobalTensor<half> dst, uint32_t n, half scale)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(half));
    LocalTensor<half> t = buf.Get<half>();
    DataCopy(t, src, n);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    Muls(t, t, scale, n);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(dst, t, n);
    SetFlag<HardEvent::MTE3_MTE2>(0);
    WaitFlag<HardEvent::MTE3_MTE2>(0);
}

// y = 2x by blocks of blockLength; then block 0 copies the whole of y to z.
extern "C" __global__ __aicore__ void gather_blocks(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTilingData);
    GET_TILING_DATA(tilingData, tiling);
    uint32_t n = tilingData.blockLength;
    uint32_t i = GetBlockIdx();
    GlobalTensor<half> xGm, yGm, yAll, zAll;
    xGm.SetGlobalBuffer((__gm__ half*)x + i * n, n);
    yGm.SetGlobalBuffer((__gm__ half*)y + i * n, n);
    yAll.SetGlobalBuffer((__gm__ half*)y, tilingData.totalLength);
    zAll.SetGlobalBuffer((__gm__ half*)z, tilingData.totalLength);
    CopyScaled(xGm, yGm, n, (half)2.0);
    SyncAll();
    if (GetBlockIdx() == 0) {
        CopyScaled(yAll, zAll, tilingData.totalLength, (half)1.0);
    }
}

// %% ex4 wrong: a pipe barrier instead of the all-block barrier (block 0 reads y before the others wrote it) [key: RaceError]
// replace: SyncAll(); -> PipeBarrier<PIPE_ALL>();

// %% ex4 wrong: keeps the planted bug: SyncAll only in block 0, which then waits for blocks that never reach it [key: DeadlockError]
// replace:
//     SyncAll();
//     if (GetBlockIdx() == 0) {
// with:
//     if (GetBlockIdx() == 0) {
//         SyncAll();

// %% ex4 wrong: x and y swapped in the first copy: the kernel overwrites its input x and never writes y [key: unwritten]
// replace:     CopyScaled(xGm, yGm, n, (half)2.0); ->     CopyScaled(yGm, xGm, n, (half)2.0);

// %% ex5
#include "kernel_operator.h"

using namespace AscendC;

struct SumTilingData {        // the fields of the lab's Tiling, by name
    uint32_t totalLength;
    uint32_t blockLength;
    uint32_t tileLength;
};

// y[j] = sum over the tiles of x[tile][j]: one block, tiles of tileLength halves.
extern "C" __global__ __aicore__ void sum_tiles(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(SumTilingData);
    GET_TILING_DATA(tilingData, tiling);
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, tilingData.totalLength);
    yGm.SetGlobalBuffer((__gm__ half*)y, tilingData.tileLength);
    TPipe pipe;
    TBuf<TPosition::VECCALC> inBuf, accBuf;
    pipe.InitBuffer(inBuf, tilingData.tileLength * sizeof(half));
    pipe.InitBuffer(accBuf, tilingData.tileLength * sizeof(half));
    LocalTensor<half> t = inBuf.Get<half>();
    LocalTensor<half> acc = accBuf.Get<half>();
    Duplicate(acc, (half)0.0, tilingData.tileLength);
    for (uint32_t i = 0; i < tilingData.totalLength; i += tilingData.tileLength) {
        DataCopy(t, xGm[i], tilingData.tileLength);
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        Add(acc, acc, t, tilingData.tileLength);
        SetFlag<HardEvent::V_MTE2>(0);
        WaitFlag<HardEvent::V_MTE2>(0);
    }
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(yGm, acc, tilingData.tileLength);
}

// %% ex5 wrong: zeroes only half of the accumulator [key: UninitializedReadError]
// replace: Duplicate(acc, (half)0.0, tilingData.tileLength); -> Duplicate(acc, (half)0.0, tilingData.tileLength / 2);
