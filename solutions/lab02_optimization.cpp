// Instructor C++ solutions of labs/lab02_optimization.ipynb (format: ascend_sim/course/grading/solution_file.py).
//
// The same format as solutions/lab02_optimization.py with // for #. Each `// %% exN` block is one whole translation
// unit: the text of the notebook's %%ascendc answer cell after its magic line (this file as a whole does not
// compile; tests/ascendc/test_cpp_syntax.py checks every block and every wrong answer with g++). The kernels'
// arguments are what the checks pass to launch: the GM arrays in order, then the sizes as uint32_t. Each
// `// %% exN wrong: ...` block is one replacement that its check must fail: a wrong result, or a correct but too
// slow answer that misses the cycle budget. ex7's cell holds an operator's host code too, as in CANN: the BN fold
// and the tiling function are host C++ functions the check calls (writing into the GM buffers it passes, returning
// the tiling struct), and the kernel reads that struct with GET_TILING_DATA.

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

// %% ex1 wrong: the vector instructions stop one DataBlock short of n [key: values]
// replace: Relu(zLocal, zLocal, n); -> Relu(zLocal, zLocal, n - 16);

// %% ex1 wrong: the scalar loop is correct but far over the cycle budget [key: budget]
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

// %% ex2 wrong: a tail core starts at idx * tailLength, inside the former cores' range [key: GMWriteConflictError]
// replace:             offset = formerNum * formerLength + (idx - formerNum) * tailLength; ->             offset = idx * tailLength;

// %% ex2 wrong: splits the elements, not the 32-byte DataBlocks: cores start at unaligned addresses [key: AlignmentError]
// replace:
//         uint32_t blocks = total / 16;                     // 32-byte DataBlocks of 16 halves
//         uint32_t formerNum = blocks % GetBlockNum();      // the first formerNum cores take one DataBlock more
//         uint32_t tailLength = blocks / GetBlockNum() * 16;
//         uint32_t formerLength = tailLength + 16;
// with:
//         uint32_t formerNum = total % GetBlockNum();
//         uint32_t tailLength = total / GetBlockNum();
//         uint32_t formerLength = tailLength + 1;

// %% ex2 wrong: whole tiles per core and the rest on the last core: correct, but one core does most of the work [key: budget]
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

// %% ex3 wrong: the loop stops before the last, shorter tile [key: unwritten]
// replace:         for (uint32_t start = 0; start < n; start += tile) { ->         for (uint32_t start = 0; start + tile <= n; start += tile) {

// %% ex3 wrong: one buffer per queue: correct, but copies and vector work never overlap [key: budget]
// replace: constexpr uint32_t BUFFER_NUM = 2;                // double buffering -> constexpr uint32_t BUFFER_NUM = 1;

// %% ex3 wrong: 512-byte tiles: correct, but every copy and instruction pays its fixed cost 16 times as often [key: budget/small-copies]
// replace: constexpr uint32_t TILE = 4096;                   // 8 KB copies -> constexpr uint32_t TILE = 256;

// %% ex3 wrong: 32 KB tiles: correct, but a block is only two tiles, so the first copy in and the last copy out overlap nothing [key: budget/large-tiles]
// replace: constexpr uint32_t TILE = 4096;                   // 8 KB copies -> constexpr uint32_t TILE = 16384;

// %% ex3 wrong: 64 KB tiles: two queues of two buffers do not fit UB [key: CapacityError]
// replace: constexpr uint32_t TILE = 4096;                   // 8 KB copies -> constexpr uint32_t TILE = 32768;

// %% ex4
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t C0 = 16;                           // halves per fractal row; a fractal is 16 x 16 (512 bytes)
constexpr uint32_t FRACTAL = C0 * C0;

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Up16(uint32_t a) { return CeilDiv(a, C0) * C0; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

struct CubeTiling {
    uint32_t M, N, K;                                 // C [M, N] = A [M, K] @ B [N, K]^T (B given transposed)
    uint32_t singleM, singleN;                        // each tile's block of C (multiples of 16)
    uint32_t baseK;                                   // K columns of B^T per step (a multiple of 16)
    uint32_t depth;                                   // buffers per queue: 2 = double buffering (双缓冲)
};

// Conv2D written NCHW: per image y[i] [O, HW] = w [O, K] @ cols[i]^T. The weights are A (M = O rows) and stay in L1
// for all of a core's images; the image's img2col rows are B^T (N = HW columns), in K steps through L1 and L0B.
class KernelConvNCHW {
public:
    __aicore__ inline KernelConvNCHW() {}

    __aicore__ inline void Init(GM_ADDR w, GM_ADDR cols, GM_ADDR y, const CubeTiling& tiling, uint32_t hw)
    {
        t = tiling;
        this->hw = hw;                                // output pixels per image
        aGm.SetGlobalBuffer((__gm__ half*)w, t.M * t.K);
        bGm.SetGlobalBuffer((__gm__ half*)cols, t.N * t.K);        // [images * HW, K]: B transposed
        cGm.SetGlobalBuffer((__gm__ half*)y, t.M * t.N);
        pipe.InitBuffer(qA1, t.depth, t.singleM * Up16(t.K) * sizeof(half));
        pipe.InitBuffer(qB1, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qA2, t.depth, t.singleM * t.baseK * sizeof(half));
        pipe.InitBuffer(qB2, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qCO1, t.depth, t.singleM * t.singleN * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        LocalTensor<half> weights;
        bool loaded = false;
        for (uint32_t img = GetBlockIdx(); img < t.N / hw; img += GetBlockNum()) {
            // --- BEGIN SOLUTION hint="this image's tile: row0/col0, rows/cols, rp/np; the weights into L1 once (CopyInA); Tile(weights)"
            row0 = 0;                                 // all O rows of A
            col0 = img * hw;                          // this image's HW rows of B^T
            rows = t.M;
            cols = hw;
            rp = Up16(rows);
            np = Up16(cols);
            if (!loaded) {                            // the first image of this core: the weights into L1, kept
                weights = CopyInA();
                loaded = true;
            }
            Tile(weights);
            // --- END SOLUTION
        }
        if (loaded) {
            qA1.FreeTensor(weights);
        }
    }

private:
    // One image: B^T in K steps through L1 -> L0B (double-buffered) against the weights a1 in L1.
    __aicore__ inline void Tile(const LocalTensor<half>& a1)
    {
        LocalTensor<float> co1 = qCO1.AllocTensor<float>();
        uint32_t steps = CeilDiv(t.K, t.baseK);
        uint32_t ahead = t.depth > 1 ? 1 : 0;         // prefetch: the next K step moves while this one computes
        if (ahead == 1) {
            CopyInB(0);
        }
        for (uint32_t kk = 0; kk < steps; kk++) {
            if (kk + ahead < steps) {
                CopyInB(kk + ahead);
            }
            SplitLoad(a1, kk);
            Compute(co1, kk);
        }
        qCO1.EnQue(co1);
        CopyOut();
    }

    __aicore__ inline LocalTensor<half> CopyInA()
    {
        LocalTensor<half> a1 = qA1.AllocTensor<half>();
        // {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, aGm[row0 * t.K], Nd2NzParams{1, static_cast<uint16_t>(rows), t.K, 0, t.K, static_cast<uint16_t>(rp), 1, 0});
        qA1.EnQue(a1);
        return qA1.DeQue<half>();
    }

    // K step kk of this image's img2col rows ([HW, K]): `cols` rows of bk halves each, as NZ fractals in L1.
    __aicore__ inline void CopyInB(uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t bk = Min(t.baseK, t.K - k0);
        LocalTensor<half> b1 = qB1.AllocTensor<half>();
        DataCopy(b1, bGm[col0 * t.K + k0], Nd2NzParams{1, static_cast<uint16_t>(cols), bk, 0, t.K, static_cast<uint16_t>(np), 1, 0});
        qB1.EnQue(b1);
    }

    // L1 -> L0A (per 16-row block of w, its K fractals) and L0B (per K block of B^T, its N fractals as they are: the
    // NZ fractals of B^T are the ZN fractals L0B wants, no transpose).
    __aicore__ inline void SplitLoad(const LocalTensor<half>& a1, uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t kB = CeilDiv(Min(t.baseK, t.K - k0), C0);
        uint32_t rB = rp / C0;
        uint32_t nB = np / C0;
        LocalTensor<half> b1 = qB1.DeQue<half>();
        LocalTensor<half> a2 = qA2.AllocTensor<half>();
        LocalTensor<half> b2 = qB2.AllocTensor<half>();
        // {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for (uint32_t i = 0; i < rB; i++) {
            LoadData(a2[i * kB * FRACTAL], a1[((k0 / C0) * rB + i) * FRACTAL],
                     LoadData2DParams{0, (uint8_t)kB, (uint16_t)rB, 0, 0, false, 0});
        }
        for (uint32_t j = 0; j < kB; j++) {
            LoadData(b2[j * nB * FRACTAL], b1[j * nB * FRACTAL], LoadData2DParams{0, (uint8_t)nB, 1, 0, 0, false, 0});
        }
        qB1.FreeTensor(b1);
        qA2.EnQue(a2);
        qB2.EnQue(b2);
    }

    __aicore__ inline void Compute(const LocalTensor<float>& co1, uint32_t kk)
    {
        uint32_t bk = Min(t.baseK, t.K - kk * t.baseK);
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}: the first K step starts C from zero
        Mmad(co1, a2, b2, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, false, kk == 0});
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }

    __aicore__ inline void CopyOut()
    {
        // --- BEGIN SOLUTION hint="one Fixpipe per image into its [O, HW] block of y: where does it start, how long is a row?"
        LocalTensor<float> co1 = qCO1.DeQue<float>();
        // {nSize, mSize, srcStride (rows rounded up to 16), dstStride (a row of y's image block), reluEn, quantPre}
        Fixpipe(cGm[col0 / hw * t.M * hw], co1, FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), hw, false, QuantMode_t::F322F16});
        qCO1.FreeTensor(co1);
        // --- END SOLUTION
    }

    TPipe pipe;
    TQue<TPosition::A1, 2> qA1;
    TQue<TPosition::B1, 2> qB1;                       // depth 2: the prefetch EnQues step kk + 1 before step kk's DeQue
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 2> qCO1;
    GlobalTensor<half> aGm, bGm, cGm;
    CubeTiling t;
    uint32_t hw = 0;
    uint32_t row0 = 0, col0 = 0, rows = 0, cols = 0, rp = 0, np = 0;
};

// y [images, O, HW] = w [O, K] @ cols[i]^T per image: NCHW out, one image per tile, the weights resident in L1.
extern "C" __global__ __aicore__ void conv_nchw_kernel(GM_ADDR cols, GM_ADDR w, GM_ADDR y, uint32_t images,
                                                       uint32_t O, uint32_t HW, uint32_t K)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    // --- BEGIN SOLUTION hint="the tiling {M, N, K, singleM, singleN, baseK, depth}: which operand is A (M rows) and which B^T (N columns)? Then Init, Process"
    CubeTiling tiling{O, images * HW, K, Up16(O), Up16(HW), 64, 2};
    KernelConvNCHW op;
    op.Init(w, cols, y, tiling, HW);
    op.Process();
    // --- END SOLUTION
}

// %% ex4 wrong: every image's tile is written at image 0 of y [key: GMWriteConflictError]
// replace: Fixpipe(cGm[col0 / hw * t.M * hw], co1, -> Fixpipe(cGm[0], co1,

// %% ex4 wrong: the weights are read from GM again for every image: correct, but each tile waits for them [key: budget]
// replace:
//             if (!loaded) {                            // the first image of this core: the weights into L1, kept
//                 weights = CopyInA();
//                 loaded = true;
//             }
//             Tile(weights);
// with:
//             weights = CopyInA();                      // the weights again, for every image
//             Tile(weights);
//             qA1.FreeTensor(weights);

// %% ex4 wrong: Fixpipe's dstStride is the tile width rounded up to 16, not the pixels of one image [key: GMWriteConflictError]
// replace: FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), hw, false, QuantMode_t::F322F16} -> FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), np, false, QuantMode_t::F322F16}

// %% ex4 wrong: rp and np not rounded up to 16 (SplitLoad then reads L1 bytes nothing wrote) [key: UninitializedReadError]
// replace:
//             rp = Up16(rows);
//             np = Up16(cols);
// with:
//             rp = rows;
//             np = cols;

// %% ex5
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t C0 = 16;                           // halves per fractal row; a fractal is 16 x 16 (512 bytes)
constexpr uint32_t FRACTAL = C0 * C0;

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Up16(uint32_t a) { return CeilDiv(a, C0) * C0; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

struct CubeTiling {
    uint32_t M, N, K;                                 // C [M, N] = A [M, K] @ B [K, N]
    uint32_t singleM, singleN;                        // each tile's block of C (multiples of 16)
    uint32_t baseK;                                   // K rows of B per step (a multiple of 16)
    uint32_t depth;                                   // buffers per queue: 2 = double buffering (双缓冲)
};

// One core: every GetBlockNum()-th C tile; per tile its A rows (all of K) in L1, B in K steps through L1 and L0B,
// one L0C accumulator, one Fixpipe out.
class KernelMatmulWide {
public:
    __aicore__ inline KernelMatmulWide() {}

    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const CubeTiling& tiling)
    {
        t = tiling;
        aGm.SetGlobalBuffer((__gm__ half*)a, t.M * t.K);
        bGm.SetGlobalBuffer((__gm__ half*)b, t.K * t.N);
        cGm.SetGlobalBuffer((__gm__ half*)c, t.M * t.N);
        pipe.InitBuffer(qA1, t.depth, t.singleM * Up16(t.K) * sizeof(half));
        pipe.InitBuffer(qB1, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qA2, t.depth, t.singleM * t.baseK * sizeof(half));
        pipe.InitBuffer(qB2, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qCO1, t.depth, t.singleM * t.singleN * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        uint32_t blocksN = CeilDiv(t.N, t.singleN);
        uint32_t tiles = CeilDiv(t.M, t.singleM) * blocksN;
        for (uint32_t tile = GetBlockIdx(); tile < tiles; tile += GetBlockNum()) {
            row0 = tile / blocksN * t.singleM;
            col0 = tile % blocksN * t.singleN;
            rows = Min(t.singleM, t.M - row0);        // the last tiles are shorter
            cols = Min(t.singleN, t.N - col0);
            rp = Up16(rows);
            np = Up16(cols);
            Tile();
        }
    }

private:
    __aicore__ inline void Tile()
    {
        LocalTensor<half> a1 = CopyInA();
        LocalTensor<float> co1 = qCO1.AllocTensor<float>();
        uint32_t steps = CeilDiv(t.K, t.baseK);
        uint32_t ahead = t.depth > 1 ? 1 : 0;         // prefetch: the next K step moves while this one computes
        if (ahead == 1) {
            CopyInB(0);
        }
        for (uint32_t kk = 0; kk < steps; kk++) {
            if (kk + ahead < steps) {
                CopyInB(kk + ahead);
            }
            SplitLoad(a1, kk);
            Compute(co1, kk);
        }
        qA1.FreeTensor(a1);
        qCO1.EnQue(co1);
        CopyOut();
    }

    __aicore__ inline LocalTensor<half> CopyInA()
    {
        LocalTensor<half> a1 = qA1.AllocTensor<half>();
        // {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, aGm[row0 * t.K], Nd2NzParams{1, static_cast<uint16_t>(rows), t.K, 0, t.K, static_cast<uint16_t>(rp), 1, 0});
        qA1.EnQue(a1);
        return qA1.DeQue<half>();
    }

    __aicore__ inline void CopyInB(uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t bk = Min(t.baseK, t.K - k0);
        LocalTensor<half> b1 = qB1.AllocTensor<half>();
        DataCopy(b1, bGm[k0 * t.N + col0], Nd2NzParams{1, static_cast<uint16_t>(bk), cols, 0, t.N, static_cast<uint16_t>(Up16(bk)), 1, 0});
        qB1.EnQue(b1);
    }

    // L1 -> L0A (per 16-row block of A, its K fractals) and L0B (per K block, its N fractals, transposed: ZN).
    __aicore__ inline void SplitLoad(const LocalTensor<half>& a1, uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t kB = CeilDiv(Min(t.baseK, t.K - k0), C0);
        uint32_t rB = rp / C0;
        uint32_t nB = np / C0;
        LocalTensor<half> b1 = qB1.DeQue<half>();
        LocalTensor<half> a2 = qA2.AllocTensor<half>();
        LocalTensor<half> b2 = qB2.AllocTensor<half>();
        // {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for (uint32_t i = 0; i < rB; i++) {
            LoadData(a2[i * kB * FRACTAL], a1[((k0 / C0) * rB + i) * FRACTAL],
                     LoadData2DParams{0, (uint8_t)kB, (uint16_t)rB, 0, 0, false, 0});
        }
        for (uint32_t j = 0; j < kB; j++) {
            LoadData(b2[j * nB * FRACTAL], b1[j * FRACTAL], LoadData2DParams{0, (uint8_t)nB, (uint16_t)kB, 0, 0, true, 0});
        }
        qB1.FreeTensor(b1);
        qA2.EnQue(a2);
        qB2.EnQue(b2);
    }

    __aicore__ inline void Compute(const LocalTensor<float>& co1, uint32_t kk)
    {
        uint32_t bk = Min(t.baseK, t.K - kk * t.baseK);
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}: the first K step starts C from zero
        Mmad(co1, a2, b2, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, false, kk == 0});
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }

    __aicore__ inline void CopyOut()
    {
        // --- BEGIN SOLUTION hint="DeQue L0C, one Fixpipe for the tile (F322F16), FreeTensor"
        LocalTensor<float> co1 = qCO1.DeQue<float>();
        // {nSize, mSize, srcStride (rows rounded up to 16), dstStride (C's row length), reluEn, quantPre}
        Fixpipe(cGm[row0 * t.N + col0], co1, FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, false, QuantMode_t::F322F16});
        qCO1.FreeTensor(co1);
        // --- END SOLUTION
    }

    TPipe pipe;
    TQue<TPosition::A1, 2> qA1;
    TQue<TPosition::B1, 2> qB1;                       // depth 2: the prefetch EnQues step kk + 1 before step kk's DeQue
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 2> qCO1;
    GlobalTensor<half> aGm, bGm, cGm;
    CubeTiling t;
    uint32_t row0 = 0, col0 = 0, rows = 0, cols = 0, rp = 0, np = 0;
};

// c = a @ b for a [96, 1024] and b [1024, 768] half, >= 12 % faster than the default operator.
extern "C" __global__ __aicore__ void matmul_wide(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    // --- BEGIN SOLUTION hint="derive the tiling {M, N, K, singleM, singleN, baseK, depth}, then Init and Process"
    CubeTiling tiling{96, 768, 1024, 32, 128, 128, 2};
    KernelMatmulWide op;
    op.Init(a, b, c, tiling);
    op.Process();
    // --- END SOLUTION
}

// %% ex5 wrong: the tiling describes K = 768: a quarter of the sum is missing [key: values]
// replace:     CubeTiling tiling{96, 768, 1024, 32, 128, 128, 2}; ->     CubeTiling tiling{96, 768, 768, 32, 128, 128, 2};

// %% ex5 wrong: Fixpipe's dstStride is the tile width, not the row length of C [key: ArgumentError]
// replace: FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, false, QuantMode_t::F322F16} -> FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), 16, false, QuantMode_t::F322F16}

// %% ex5 wrong: choose_tiling's tiling (16-row tiles: B read 6 times over): correct but slower than the default [key: budget]
// replace:     CubeTiling tiling{96, 768, 1024, 32, 128, 128, 2}; ->     CubeTiling tiling{96, 768, 1024, 16, 192, 80, 2};

// %% ex5 wrong: the right tiles without double buffering miss the 12 % target [key: budget]
// replace:     CubeTiling tiling{96, 768, 1024, 32, 128, 128, 2}; ->     CubeTiling tiling{96, 768, 1024, 32, 128, 128, 1};

// %% ex5 wrong: Fixpipe's nSize and mSize swapped (rows where the columns go) [key: CubeFormatError/fixpipe-swapped]
// replace: FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, false, QuantMode_t::F322F16} -> FixpipeParamsV220{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(rp), t.N, false, QuantMode_t::F322F16}

// %% ex6
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t C0 = 16;                           // halves per fractal row; a fractal is 16 x 16 (512 bytes)
constexpr uint32_t FRACTAL = C0 * C0;

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Up16(uint32_t a) { return CeilDiv(a, C0) * C0; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

struct CubeTiling {
    uint32_t M, N, K;                                 // y [M, N] = relu(x [M, K] @ w [N, K]^T + bias [N])
    uint32_t singleM, singleN;                        // each tile's block of C (multiples of 16)
    uint32_t baseK;                                   // K columns of w per step (a multiple of 16)
    uint32_t depth;                                   // buffers per queue: 2 = double buffering (双缓冲)
};

// One core: every GetBlockNum()-th tile of y; per tile its x rows (all of K) in L1, w (B^T: Linear's [out, in]) in
// K steps through L1 and L0B, the bias through BT into the first Mmad, one L0C accumulator, one Fixpipe out.
class KernelLinearRelu {
public:
    __aicore__ inline KernelLinearRelu() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y, const CubeTiling& tiling)
    {
        t = tiling;
        aGm.SetGlobalBuffer((__gm__ half*)x, t.M * t.K);
        bGm.SetGlobalBuffer((__gm__ half*)w, t.N * t.K);           // [N, K]: B transposed
        biasGm.SetGlobalBuffer((__gm__ float*)bias, Up16(t.N));
        cGm.SetGlobalBuffer((__gm__ half*)y, t.M * t.N);
        pipe.InitBuffer(qA1, t.depth, t.singleM * Up16(t.K) * sizeof(half));
        pipe.InitBuffer(qB1, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qA2, t.depth, t.singleM * t.baseK * sizeof(half));
        pipe.InitBuffer(qB2, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qCO1, t.depth, t.singleM * t.singleN * sizeof(float));
        pipe.InitBuffer(qC1, 1, t.singleN * sizeof(float));
        pipe.InitBuffer(qC2, 1, t.singleN * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        uint32_t blocksN = CeilDiv(t.N, t.singleN);
        uint32_t tiles = CeilDiv(t.M, t.singleM) * blocksN;
        for (uint32_t tile = GetBlockIdx(); tile < tiles; tile += GetBlockNum()) {
            row0 = tile / blocksN * t.singleM;
            col0 = tile % blocksN * t.singleN;
            rows = Min(t.singleM, t.M - row0);        // the last tiles are shorter
            cols = Min(t.singleN, t.N - col0);
            rp = Up16(rows);
            np = Up16(cols);
            Tile();
        }
    }

private:
    __aicore__ inline void Tile()
    {
        LocalTensor<half> a1 = CopyInA();
        LocalTensor<float> bt = CopyInBias();
        LocalTensor<float> co1 = qCO1.AllocTensor<float>();
        uint32_t steps = CeilDiv(t.K, t.baseK);
        uint32_t ahead = t.depth > 1 ? 1 : 0;         // prefetch: the next K step moves while this one computes
        if (ahead == 1) {
            CopyInB(0);
        }
        for (uint32_t kk = 0; kk < steps; kk++) {
            if (kk + ahead < steps) {
                CopyInB(kk + ahead);
            }
            SplitLoad(a1, kk);
            Compute(co1, bt, kk);
        }
        qA1.FreeTensor(a1);
        qC2.FreeTensor(bt);
        qCO1.EnQue(co1);
        CopyOut();
    }

    __aicore__ inline LocalTensor<half> CopyInA()
    {
        LocalTensor<half> a1 = qA1.AllocTensor<half>();
        // {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, aGm[row0 * t.K], Nd2NzParams{1, static_cast<uint16_t>(rows), t.K, 0, t.K, static_cast<uint16_t>(rp), 1, 0});
        qA1.EnQue(a1);
        return qA1.DeQue<half>();
    }

    // Bias GM -> C1 (L1) -> C2 (the BT buffer), where the first Mmad reads it.
    __aicore__ inline LocalTensor<float> CopyInBias()
    {
        LocalTensor<float> c1 = qC1.AllocTensor<float>();
        DataCopy(c1, biasGm[col0], np);
        qC1.EnQue(c1);
        c1 = qC1.DeQue<float>();
        LocalTensor<float> bt = qC2.AllocTensor<float>();
        DataCopy(bt, c1, np);
        qC1.FreeTensor(c1);
        qC2.EnQue(bt);
        return qC2.DeQue<float>();
    }

    // K step kk of this tile's rows of w ([N, K]): `cols` rows of bk halves each, as NZ fractals in L1.
    __aicore__ inline void CopyInB(uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t bk = Min(t.baseK, t.K - k0);
        LocalTensor<half> b1 = qB1.AllocTensor<half>();
        DataCopy(b1, bGm[col0 * t.K + k0], Nd2NzParams{1, static_cast<uint16_t>(cols), bk, 0, t.K, static_cast<uint16_t>(np), 1, 0});
        qB1.EnQue(b1);
    }

    // L1 -> L0A (per 16-row block of x, its K fractals) and L0B (per K block of w, its N fractals as they are: the
    // NZ fractals of B^T are the ZN fractals L0B wants, no transpose).
    __aicore__ inline void SplitLoad(const LocalTensor<half>& a1, uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t kB = CeilDiv(Min(t.baseK, t.K - k0), C0);
        uint32_t rB = rp / C0;
        uint32_t nB = np / C0;
        LocalTensor<half> b1 = qB1.DeQue<half>();
        LocalTensor<half> a2 = qA2.AllocTensor<half>();
        LocalTensor<half> b2 = qB2.AllocTensor<half>();
        // {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for (uint32_t i = 0; i < rB; i++) {
            LoadData(a2[i * kB * FRACTAL], a1[((k0 / C0) * rB + i) * FRACTAL],
                     LoadData2DParams{0, (uint8_t)kB, (uint16_t)rB, 0, 0, false, 0});
        }
        for (uint32_t j = 0; j < kB; j++) {
            LoadData(b2[j * nB * FRACTAL], b1[j * nB * FRACTAL], LoadData2DParams{0, (uint8_t)nB, 1, 0, 0, false, 0});
        }
        qB1.FreeTensor(b1);
        qA2.EnQue(a2);
        qB2.EnQue(b2);
    }

    __aicore__ inline void Compute(const LocalTensor<float>& co1, const LocalTensor<float>& bt, uint32_t kk)
    {
        uint32_t bk = Min(t.baseK, t.K - kk * t.baseK);
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}
        // --- BEGIN SOLUTION hint="the first K step starts the accumulator from the bias in BT, the others add to it"
        if (kk == 0) {
            Mmad(co1, a2, b2, bt, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, true, false});
        } else {
            Mmad(co1, a2, b2, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, false, false});
        }
        // --- END SOLUTION
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }

    __aicore__ inline void CopyOut()
    {
        // --- BEGIN SOLUTION hint="one Fixpipe per tile with reluEn on (and F322F16)"
        LocalTensor<float> co1 = qCO1.DeQue<float>();
        // {nSize, mSize, srcStride (rows rounded up to 16), dstStride (y's row length), reluEn, quantPre}
        Fixpipe(cGm[row0 * t.N + col0], co1, FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, true, QuantMode_t::F322F16});
        qCO1.FreeTensor(co1);
        // --- END SOLUTION
    }

    TPipe pipe;
    TQue<TPosition::A1, 2> qA1;
    TQue<TPosition::B1, 2> qB1;                       // depth 2: the prefetch EnQues step kk + 1 before step kk's DeQue
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 2> qCO1;
    TQue<TPosition::C1, 1> qC1;
    TQue<TPosition::C2, 1> qC2;
    GlobalTensor<half> aGm, bGm, cGm;
    GlobalTensor<float> biasGm;
    CubeTiling t;
    uint32_t row0 = 0, col0 = 0, rows = 0, cols = 0, rp = 0, np = 0;
};

// y = relu(x @ w^T + bias) in one kernel, w half [N, K]: bias through BT, ReLU on Fixpipe, under a budget.
extern "C" __global__ __aicore__ void linear_relu(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y, uint32_t M,
                                                  uint32_t N, uint32_t K)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    // --- BEGIN SOLUTION hint="a tiling whose GM copies of w's rows are long (how many bytes does one K step copy per row?); Init, Process"
    CubeTiling tiling{M, N, K, 48, 64, Up16(K), 2};
    KernelLinearRelu op;
    op.Init(x, w, bias, y, tiling);
    op.Process();
    // --- END SOLUTION
}

// %% ex6 wrong: ReLU left out of the epilogue [key: values]
// replace: FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, true, QuantMode_t::F322F16} -> FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, false, QuantMode_t::F322F16}

// %% ex6 wrong: the first Mmad starts from zero: the bias in BT is never used [key: values]
// replace:             Mmad(co1, a2, b2, bt, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, true, false}); ->             Mmad(co1, a2, b2, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, false, true});

// %% ex6 wrong: choose_tiling's K steps of 64 cut every row of w into 128-byte copies: correct but over the budget [key: budget]
// replace:     CubeTiling tiling{M, N, K, 48, 64, Up16(K), 2}; ->     CubeTiling tiling{M, N, K, 32, 256, 64, 2};

// %% ex6 wrong: w read as if it were [K, N] (LoadData transposes its fractals): the wrong products [key: values]
// replace:
//         DataCopy(b1, bGm[col0 * t.K + k0], Nd2NzParams{1, static_cast<uint16_t>(cols), bk, 0, t.K, static_cast<uint16_t>(np), 1, 0});
// with:
//         DataCopy(b1, bGm[k0 * t.N + col0], Nd2NzParams{1, static_cast<uint16_t>(bk), cols, 0, t.N, static_cast<uint16_t>(Up16(bk)), 1, 0});

// %% ex7
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include <cmath>

using namespace AscendC;

constexpr uint32_t C0 = 16;                           // halves per fractal row; a fractal is 16 x 16 (512 bytes)
constexpr uint32_t FRACTAL = C0 * C0;
constexpr float BN_EPS = 1e-5f;                       // BatchNorm's epsilon (PyTorch's default)

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Up16(uint32_t a) { return CeilDiv(a, C0) * C0; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

struct CubeTiling {
    uint32_t M, N, K;                                 // y [M, N] = relu(cols [M, K] @ wt [N, K]^T + bias [N])
    uint32_t singleM, singleN;                        // each tile's block of y (multiples of 16)
    uint32_t baseK;                                   // K columns of wt per step (a multiple of 16)
    uint32_t depth;                                   // buffers per queue: 2 = double buffering (双缓冲)
};

// Host: BatchNorm (inference) folded into the conv, written into the kernel's GM buffers. w half [O * kk]
// (row-major [O, C*KH*KW], kk = C*KH*KW); b, gamma, beta, mean, var float [O]; wt half [O * kk]; bias float
// [O rounded up to 16], zero-filled (the BT buffer reads whole 16-float groups).
void fold_bn_host(const half* w, const float* b, const float* gamma, const float* beta, const float* mean,
                  const float* var, uint32_t O, uint32_t kk, half* wt, float* bias)
{
    // --- BEGIN SOLUTION hint="scale = gamma / sqrt(var + eps): fold it into w and b; keep w's own [O, C*KH*KW] layout"
    for (uint32_t o = 0; o < O; o++) {
        float scale = gamma[o] / std::sqrt(var[o] + BN_EPS);
        for (uint32_t i = 0; i < kk; i++) {
            wt[o * kk + i] = static_cast<half>(static_cast<float>(w[o * kk + i]) * scale);    // row o: channel o
        }
        bias[o] = (b[o] - mean[o]) * scale + beta[o];
    }
    // --- END SOLUTION
}

// Host: the tiling function (in CANN the operator's TilingFunc, run on the CPU before the launch) for `blocks`
// cube cores. The chip's buffer sizes come from the platform, as in CANN (Tiling API: PlatformAscendC).
CubeTiling conv_tiling(uint32_t M, uint32_t N, uint32_t K, uint32_t blocks)
{
    uint64_t l0aBytes = 0;
    uint64_t btBytes = 0;
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    platform->GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, l0aBytes);
    platform->GetCoreMemSize(platform_ascendc::CoreMemType::BT, btBytes);
    // --- BEGIN SOLUTION hint="a tiling over every one of the `blocks` cube cores: split M; N in tiles whose float bias fits BT (btBytes), all of K per step; L0A (l0aBytes) holds depth tiles of singleM x baseK halves"
    uint32_t btFloats = static_cast<uint32_t>(btBytes / sizeof(float)) / C0 * C0;
    CubeTiling t{M, N, K, 0, Min(Up16(N), btFloats), Up16(K), 2};
    t.singleM = Up16(CeilDiv(M, blocks));
    while (t.singleM > C0 && t.depth * t.singleM * t.baseK * sizeof(half) > l0aBytes) {
        t.singleM -= C0;                              // L0A holds depth tiles of singleM x baseK halves
    }
    return t;
    // --- END SOLUTION
}

// One core: every GetBlockNum()-th tile of y; per tile its cols rows (all of K) in L1, wt (B^T: [O, C*KH*KW]) in
// K steps through L1 and L0B, the bias through BT into the first Mmad, one L0C accumulator, one Fixpipe out.
class KernelConvBnRelu {
public:
    __aicore__ inline KernelConvBnRelu() {}

    __aicore__ inline void Init(GM_ADDR cols, GM_ADDR wt, GM_ADDR bias, GM_ADDR y, const CubeTiling& tiling)
    {
        t = tiling;
        aGm.SetGlobalBuffer((__gm__ half*)cols, t.M * t.K);
        bGm.SetGlobalBuffer((__gm__ half*)wt, t.N * t.K);          // [N, K]: B transposed
        biasGm.SetGlobalBuffer((__gm__ float*)bias, Up16(t.N));
        cGm.SetGlobalBuffer((__gm__ half*)y, t.M * t.N);
        pipe.InitBuffer(qA1, t.depth, t.singleM * Up16(t.K) * sizeof(half));
        pipe.InitBuffer(qB1, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qA2, t.depth, t.singleM * t.baseK * sizeof(half));
        pipe.InitBuffer(qB2, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qCO1, t.depth, t.singleM * t.singleN * sizeof(float));
        pipe.InitBuffer(qC1, 1, t.singleN * sizeof(float));
        pipe.InitBuffer(qC2, 1, t.singleN * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        uint32_t blocksN = CeilDiv(t.N, t.singleN);
        uint32_t tiles = CeilDiv(t.M, t.singleM) * blocksN;
        for (uint32_t tile = GetBlockIdx(); tile < tiles; tile += GetBlockNum()) {
            row0 = tile / blocksN * t.singleM;
            col0 = tile % blocksN * t.singleN;
            rows = Min(t.singleM, t.M - row0);        // the last tiles are shorter
            cols = Min(t.singleN, t.N - col0);
            rp = Up16(rows);
            np = Up16(cols);
            Tile();
        }
    }

private:
    __aicore__ inline void Tile()
    {
        LocalTensor<half> a1 = CopyInA();
        LocalTensor<float> bt = CopyInBias();
        LocalTensor<float> co1 = qCO1.AllocTensor<float>();
        uint32_t steps = CeilDiv(t.K, t.baseK);
        uint32_t ahead = t.depth > 1 ? 1 : 0;         // prefetch: the next K step moves while this one computes
        if (ahead == 1) {
            CopyInB(0);
        }
        for (uint32_t kk = 0; kk < steps; kk++) {
            if (kk + ahead < steps) {
                CopyInB(kk + ahead);
            }
            SplitLoad(a1, kk);
            Compute(co1, bt, kk);
        }
        qA1.FreeTensor(a1);
        qC2.FreeTensor(bt);
        qCO1.EnQue(co1);
        CopyOut();
    }

    __aicore__ inline LocalTensor<half> CopyInA()
    {
        LocalTensor<half> a1 = qA1.AllocTensor<half>();
        // {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, aGm[row0 * t.K], Nd2NzParams{1, static_cast<uint16_t>(rows), t.K, 0, t.K, static_cast<uint16_t>(rp), 1, 0});
        qA1.EnQue(a1);
        return qA1.DeQue<half>();
    }

    // Bias GM -> C1 (L1) -> C2 (the BT buffer), where the first Mmad reads it.
    __aicore__ inline LocalTensor<float> CopyInBias()
    {
        LocalTensor<float> c1 = qC1.AllocTensor<float>();
        DataCopy(c1, biasGm[col0], np);
        qC1.EnQue(c1);
        c1 = qC1.DeQue<float>();
        LocalTensor<float> bt = qC2.AllocTensor<float>();
        DataCopy(bt, c1, np);
        qC1.FreeTensor(c1);
        qC2.EnQue(bt);
        return qC2.DeQue<float>();
    }

    // K step kk of this tile's rows of wt ([N, K]): `cols` rows of bk halves each, as NZ fractals in L1.
    __aicore__ inline void CopyInB(uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t bk = Min(t.baseK, t.K - k0);
        LocalTensor<half> b1 = qB1.AllocTensor<half>();
        DataCopy(b1, bGm[col0 * t.K + k0], Nd2NzParams{1, static_cast<uint16_t>(cols), bk, 0, t.K, static_cast<uint16_t>(np), 1, 0});
        qB1.EnQue(b1);
    }

    // L1 -> L0A (per 16-row block of cols, its K fractals) and L0B (per K block of wt, its N fractals as they are:
    // the NZ fractals of B^T are the ZN fractals L0B wants, no transpose).
    __aicore__ inline void SplitLoad(const LocalTensor<half>& a1, uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t kB = CeilDiv(Min(t.baseK, t.K - k0), C0);
        uint32_t rB = rp / C0;
        uint32_t nB = np / C0;
        LocalTensor<half> b1 = qB1.DeQue<half>();
        LocalTensor<half> a2 = qA2.AllocTensor<half>();
        LocalTensor<half> b2 = qB2.AllocTensor<half>();
        // {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for (uint32_t i = 0; i < rB; i++) {
            LoadData(a2[i * kB * FRACTAL], a1[((k0 / C0) * rB + i) * FRACTAL],
                     LoadData2DParams{0, (uint8_t)kB, (uint16_t)rB, 0, 0, false, 0});
        }
        for (uint32_t j = 0; j < kB; j++) {
            LoadData(b2[j * nB * FRACTAL], b1[j * nB * FRACTAL], LoadData2DParams{0, (uint8_t)nB, 1, 0, 0, false, 0});
        }
        qB1.FreeTensor(b1);
        qA2.EnQue(a2);
        qB2.EnQue(b2);
    }

    // The first K step starts the accumulator from the folded bias in BT, the others add to it.
    __aicore__ inline void Compute(const LocalTensor<float>& co1, const LocalTensor<float>& bt, uint32_t kk)
    {
        uint32_t bk = Min(t.baseK, t.K - kk * t.baseK);
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}
        if (kk == 0) {
            Mmad(co1, a2, b2, bt, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, true, false});
        } else {
            Mmad(co1, a2, b2, MmadParams{(uint16_t)rows, (uint16_t)cols, (uint16_t)bk, 0, false, false});
        }
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }

    __aicore__ inline void CopyOut()
    {
        // --- BEGIN SOLUTION hint="one Fixpipe per tile with reluEn on (and F322F16)"
        LocalTensor<float> co1 = qCO1.DeQue<float>();
        // {nSize, mSize, srcStride (rows rounded up to 16), dstStride (y's row length), reluEn, quantPre}
        Fixpipe(cGm[row0 * t.N + col0], co1, FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, true, QuantMode_t::F322F16});
        qCO1.FreeTensor(co1);
        // --- END SOLUTION
    }

    TPipe pipe;
    TQue<TPosition::A1, 2> qA1;
    TQue<TPosition::B1, 2> qB1;                       // depth 2: the prefetch EnQues step kk + 1 before step kk's DeQue
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 2> qCO1;
    TQue<TPosition::C1, 1> qC1;
    TQue<TPosition::C2, 1> qC2;
    GlobalTensor<half> aGm, bGm, cGm;
    GlobalTensor<float> biasGm;
    CubeTiling t;
    uint32_t row0 = 0, col0 = 0, rows = 0, cols = 0, rp = 0, np = 0;
};

// y = relu(cols @ wt^T + bias): the conv as a matmul on img2col rows, BN folded, one kernel, one GM write; the
// tiling is conv_tiling's, made on the host.
extern "C" __global__ __aicore__ void conv_bn_relu_kernel(GM_ADDR cols, GM_ADDR wt, GM_ADDR bias, GM_ADDR y,
                                                          GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    // --- BEGIN SOLUTION hint="read the host's tiling (REGISTER_TILING_DEFAULT, GET_TILING_DATA); KernelConvBnRelu: Init(cols, wt, bias, y, tiling), Process()"
    REGISTER_TILING_DEFAULT(CubeTiling);
    GET_TILING_DATA(tilingData, tiling);
    KernelConvBnRelu op;
    op.Init(cols, wt, bias, y, tilingData);
    op.Process();
    // --- END SOLUTION
}

// %% ex7 wrong: forgets to subtract the running mean when folding the bias [key: bn/fold]
// replace:         bias[o] = (b[o] - mean[o]) * scale + beta[o]; ->         bias[o] = b[o] * scale + beta[o];

// %% ex7 wrong: ReLU left out of the Fixpipe epilogue [key: values]
// replace: FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, true, QuantMode_t::F322F16} -> FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows), static_cast<uint16_t>(rp), t.N, false, QuantMode_t::F322F16}

// %% ex7 wrong: a tiling for 4 cores: correct, but most of the 24 cube cores stay idle [key: budget]
// replace:     t.singleM = Up16(CeilDiv(M, blocks)); ->     t.singleM = Up16(CeilDiv(M, 4));

// %% ex7 wrong: the folded weights transposed to [C*KH*KW, O] as the library's conv kernel takes them [key: bn/fold]
// replace:             wt[o * kk + i] = static_cast<half>(static_cast<float>(w[o * kk + i]) * scale);    // row o: channel o ->             wt[i * O + o] = static_cast<half>(static_cast<float>(w[o * kk + i]) * scale);    // row o: channel o

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
    LocalTensor<float> xLocal = ub.GetWithOffset<float>(N, xAddr);     // N floats from byte xAddr of the TBuf
    LocalTensor<float> yLocal = ub.GetWithOffset<float>(N, yAddr);
    LocalTensor<float> zLocal = ub.GetWithOffset<float>(N, zAddr);
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

// %% ex8 wrong: y overlaps x (x takes 16 KB from 0x0): the second copy overwrites half of x [key: values]
// replace:     yAddr = 0x10100;                                  // another bank_id and the other 8 groups ->     yAddr = 0x2000;

// %% ex8 wrong: x and y in the same bank (0x4000 apart): correct, but every repeat's reads collide [key: budget]
// replace:
//     yAddr = 0x10100;                                  // another bank_id and the other 8 groups
//     zAddr = 0x20000;                                  // a third bank_id
// with:
//     yAddr = 0x4000;
//     zAddr = 0x10000;

// %% ex8 wrong: y one byte below its bank-free address: a UB tensor must start on a 32-byte boundary [key: AlignmentError]
// replace:     yAddr = 0x10100;                                  // another bank_id and the other 8 groups ->     yAddr = 0x100FF;
