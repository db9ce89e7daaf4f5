// C++ answers of the kernels of labs/lab04b_llm.ipynb (format: ascend_sim/course/grading/solution_file.py).
//
// Not the lab's solutions file: the notebook's answer cells stay Python (a learner may replace one by a %%ascendc cell).
// These blocks prove that a C++ kernel passes the same checks (tests/course/test_grading_cpp_kernels.py binds each
// beside the Python solution's other names). Each `// %% exN` block is one translation unit; the kernels' arguments are
// what the checks pass to launch: the GM arrays, then the lab's tiling dataclass (DecodeStep, Int4Gemv, W4A16Tiling)
// read with GET_TILING_DATA into a struct with the same field names (its properties are computed in the kernel).

// %% ex1
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t MAX_KEYS = 248;     // one WholeReduceSum repeat per key row (at most 255), whole float blocks

struct DecodeStepTilingData {          // the fields of the lab's DecodeStep, by name
    uint32_t N;                        // heads
    uint32_t D;                        // values per head
    uint32_t S_max;                    // rows of each head's caches
    uint32_t pos;                      // the new token's row
    float scale;                       // the softmax scale, 1 / sqrt(D)
};

// Block h: append the new token's K and V rows to head h's caches, then attend its query over keys 0 .. pos.
class KernelDecodeStep {
public:
    __aicore__ inline KernelDecodeStep() {}

    __aicore__ inline void Init(GM_ADDR qkv, GM_ADDR kCache, GM_ADDR vCache, GM_ADDR out,
                                const DecodeStepTilingData& tiling)
    {
        h = GetBlockIdx();
        N = tiling.N;
        D = tiling.D;
        pos = tiling.pos;
        scale = tiling.scale;
        n = pos + 1;                                   // n keys: the cached 0 .. pos - 1 and the new one
        row = h * tiling.S_max * D;                    // head h's first cache element
        pipe.InitBuffer(khBuf, MAX_KEYS * D * sizeof(half));
        pipe.InitBuffer(vhBuf, MAX_KEYS * D * sizeof(half));
        pipe.InitBuffer(kfBuf, MAX_KEYS * D * sizeof(float));
        pipe.InitBuffer(vfBuf, MAX_KEYS * D * sizeof(float));
        pipe.InitBuffer(qhBuf, D * sizeof(half));
        pipe.InitBuffer(qfBuf, D * sizeof(float));
        pipe.InitBuffer(sBuf, MAX_KEYS * sizeof(float));
        pipe.InitBuffer(workBuf, MAX_KEYS * sizeof(float));
        pipe.InitBuffer(redBuf, 32);
        pipe.InitBuffer(blkBuf, MAX_KEYS * 32);
        qkvGm.SetGlobalBuffer((__gm__ half*)qkv);
        kGm.SetGlobalBuffer((__gm__ half*)kCache);
        vGm.SetGlobalBuffer((__gm__ half*)vCache);
        outGm.SetGlobalBuffer((__gm__ float*)out);
    }

    __aicore__ inline void Process()
    {
        LocalTensor<half> kh = khBuf.Get<half>();
        LocalTensor<half> vh = vhBuf.Get<half>();
        LocalTensor<float> kf = kfBuf.Get<float>();
        LocalTensor<float> vf = vfBuf.Get<float>();
        LocalTensor<half> qh = qhBuf.Get<half>();
        LocalTensor<float> qf = qfBuf.Get<float>();
        LocalTensor<float> s = sBuf.Get<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        LocalTensor<float> red = redBuf.Get<float>();
        LocalTensor<float> blk = blkBuf.Get<float>();
        if (n > 1) {                                   // the cached rows 0 .. pos - 1
            DataCopy(kh, kGm[row], (n - 1) * D);
            DataCopy(vh, vGm[row], (n - 1) * D);
        }
        DataCopy(qh, qkvGm[h * D], D);
        // Append: the new K and V rows into slot n - 1 of the tiles, then (after MTE2 -> MTE3) to row pos of the caches.
        DataCopy(kh[(n - 1) * D], qkvGm[(N + h) * D], D);
        DataCopy(vh[(n - 1) * D], qkvGm[(2 * N + h) * D], D);
        Handoff<HardEvent::MTE2_MTE3>();
        DataCopy(kGm[row + pos * D], kh[(n - 1) * D], D);
        DataCopy(vGm[row + pos * D], vh[(n - 1) * D], D);
        Handoff<HardEvent::MTE2_V>();
        Cast(kf, kh, RoundMode::CAST_NONE, n * D);
        Cast(qf, qh, RoundMode::CAST_NONE, D);
        uint8_t rep = D * sizeof(float) / 32;          // blocks of one float row
        Mul(kf, kf, qf, D, n, {1, 1, 1, rep, rep, 0});           // each key row times q
        WholeReduceSum(s, kf, D, n, 1, 1, rep);                  // s_j = k_j . q
        // Softmax: p_j = exp(scale * s_j - max), l = sum p_j.
        Muls(s, s, scale, n);
        ReduceMax(red, s, work, n);
        float m = ReadScalar(red);
        Adds(s, s, -m, n);
        Exp(s, s, n);
        ReduceSum(red, s, work, n);
        float l = ReadScalar(red);
        Cast(vf, vh, RoundMode::CAST_NONE, n * D);
        Brcb(blk, s, (n + 7) / 8, {1, 8});
        Mul(vf, vf, blk, D, n, {1, 1, 0, rep, rep, 1});          // p_j V_j
        FoldRows(vf, n);                                         // sum_j p_j V_j in row 0
        Muls(vf, vf, l != 0 ? 1.0f / l : 0.0f, D);
        Handoff<HardEvent::V_MTE3>();
        DataCopy(outGm[h * D], vf, D);
    }

private:
    // Order two pipes inside this AIV: the producer's writes land before the consumer reads.
    template <HardEvent EVENT>
    __aicore__ inline void Handoff()
    {
        SetFlag<EVENT>(0);
        WaitFlag<EVENT>(0);
    }

    // Element 0 of a vector result on the scalar unit (V -> S, then S -> V before the next vector op).
    __aicore__ inline float ReadScalar(const LocalTensor<float>& buf)
    {
        Handoff<HardEvent::V_S>();
        float value = buf.GetValue(0);
        Handoff<HardEvent::S_V>();
        return value;
    }

    // x[0, :] = the sum of its rows of D floats: a tree of Adds, halving each time.
    __aicore__ inline void FoldRows(const LocalTensor<float>& x, uint32_t rows)
    {
        while (rows > 1) {
            uint32_t half_rows = rows / 2;
            Add(x, x, x[(rows - half_rows) * D], half_rows * D);
            rows -= half_rows;
        }
    }

    TPipe pipe;
    TBuf<TPosition::VECCALC> khBuf, vhBuf, kfBuf, vfBuf, qhBuf, qfBuf, sBuf, workBuf, redBuf, blkBuf;
    GlobalTensor<half> qkvGm, kGm, vGm;
    GlobalTensor<float> outGm;
    uint32_t h, N, D, pos, n, row;
    float scale;
};

extern "C" __global__ __aicore__ void decode_step_kernel(GM_ADDR qkv, GM_ADDR k_cache, GM_ADDR v_cache, GM_ADDR out,
                                                         GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(DecodeStepTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelDecodeStep op;
    op.Init(qkv, k_cache, v_cache, out, tilingData);
    op.Process();
}

// %% ex1 wrong: forgets to write the new rows to the caches (attends correctly, but the next step has no row pos) [key: kv/append]
// replace:
//         DataCopy(kGm[row + pos * D], kh[(n - 1) * D], D);
//         DataCopy(vGm[row + pos * D], vh[(n - 1) * D], D);
// with:

// %% ex1 wrong: counts pos keys, not pos + 1: one cached row too few is loaded (key pos - 1 left out) [key: kv/length]
// replace:         n = pos + 1;                                   // n keys: the cached 0 .. pos - 1 and the new one ->         n = pos > 1 ? pos : 1;

// %% ex1 wrong: scales the scores by 1 / D instead of 1 / sqrt(D) [key: kv/scale]
// replace:         Muls(s, s, scale, n); ->         Muls(s, s, 1.0f / D, n);

// %% ex4
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t MAX_K = 1024;       // activation values this kernel keeps in scalar registers
constexpr int32_t CODE_BUFFERS = 2;    // two buffers for the codes: the next chunk's copy overlaps these Axpys

struct Int4GemvTilingData {            // the fields of the lab's Int4Gemv, by name
    uint32_t K;                        // input channels (rows of W)
    uint32_t O;                        // output columns
    uint32_t group;                    // rows per scale
    uint32_t tile;                     // columns per tile (the last tile may be partial)
    uint32_t rows;                     // rows per copy of codes
    uint32_t block_dim;                // cores
};

// y[O] = x[K] @ (codes * scales) for one decode row: this core's column tiles, their int4 codes streamed chunk by
// chunk and dequantised in UB (Cast int4b_t -> half), each group's sum times its scale.
class KernelInt4Gemv {
public:
    __aicore__ inline KernelInt4Gemv() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR scales, GM_ADDR y, const Int4GemvTilingData& tiling)
    {
        K = tiling.K;
        O = tiling.O;
        group = tiling.group;
        tile = tiling.tile;
        rows = tiling.rows;
        uint32_t tiles = (O + tile - 1) / tile;
        uint32_t base = tiles / tiling.block_dim;      // tiles per core; the first `former` cores take one more
        uint32_t former = tiles % tiling.block_dim;
        uint32_t idx = GetBlockIdx();
        first = idx * base + (idx < former ? idx : former);
        count = base + (idx < former ? 1 : 0);
        groups = K / group;
        chunk = rows * tile;                           // the codes of one copy
        xGm.SetGlobalBuffer((__gm__ half*)x, K);
        LoadScalars();
        wGm.SetGlobalBuffer((__gm__ int8_t*)w);
        sGm.SetGlobalBuffer((__gm__ half*)scales);
        yGm.SetGlobalBuffer((__gm__ float*)y, O);
        pipe.InitBuffer(qs, 1, tile * sizeof(half));
        pipe.InitBuffer(qo, 1, tile * sizeof(float));
        pipe.InitBuffer(whBuf, chunk * sizeof(half));
        pipe.InitBuffer(partBuf, tile * sizeof(float));
        pipe.InitBuffer(sfBuf, tile * sizeof(float));
        pipe.InitBuffer(qw, CODE_BUFFERS, chunk / 2);  // two int4b_t codes a byte
    }

    __aicore__ inline void Process()
    {
        LocalTensor<half> wh = whBuf.Get<half>();
        LocalTensor<float> part = partBuf.Get<float>();
        LocalTensor<float> sf = sfBuf.Get<float>();
        for (uint32_t i = first; i < first + count; i++) {
            LocalTensor<float> acc = qo.AllocTensor<float>();
            Duplicate(acc, 0.0f, tile);
            for (uint32_t g = 0; g < groups; g++) {
                Duplicate(part, 0.0f, tile);
                for (uint32_t c = 0; c < group / rows; c++) {
                    uint32_t k0 = g * group + c * rows;
                    // Stream and dequantise: the chunk's codes in, Cast to half, one Axpy per row into part.
                    LocalTensor<int8_t> codes = qw.AllocTensor<int8_t>();
                    DataCopy(codes, wGm[(i * K + k0) * tile / 2], chunk / 2);
                    qw.EnQue(codes);
                    codes = qw.DeQue<int8_t>();
                    Cast(wh, codes.ReinterpretCast<int4b_t>(), RoundMode::CAST_NONE, chunk);   // exact: -8 .. 7
                    for (uint32_t r = 0; r < rows; r++) {
                        Axpy(part, wh[r * tile], xs[k0 + r], tile);
                    }
                    qw.FreeTensor(codes);
                }
                // Scale: the group's scale row of tile i, to float, times part, into acc.
                LocalTensor<half> sc = qs.AllocTensor<half>();
                DataCopy(sc, sGm[(i * groups + g) * tile], tile);
                qs.EnQue(sc);
                sc = qs.DeQue<half>();
                Cast(sf, sc, RoundMode::CAST_NONE, tile);
                qs.FreeTensor(sc);
                Mul(part, part, sf, tile);
                Add(acc, acc, part, tile);
            }
            qo.EnQue(acc);
            acc = qo.DeQue<float>();
            DataCopy(yGm[i * tile], acc, Cols(i));     // the columns of tile i that y has
            qo.FreeTensor(acc);
        }
    }

private:
    // The activation row: GM -> UB once, then into scalar registers (the scalar unit reads UB after MTE2 -> S).
    __aicore__ inline void LoadScalars()
    {
        pipe.InitBuffer(xBuf, (K * sizeof(half) + 31) / 32 * 32);
        LocalTensor<half> xLocal = xBuf.Get<half>();
        DataCopyPad(xLocal, xGm, {1, static_cast<uint32_t>(K * sizeof(half)), 0, 0, 0}, {false, 0, 0, 0});
        SetFlag<HardEvent::MTE2_S>(0);
        WaitFlag<HardEvent::MTE2_S>(0);
        for (uint32_t k = 0; k < K; k++) {
            xs[k] = xLocal.GetValue(k);
        }
    }

    // Columns of tile i that exist in y: tile, or fewer in the last tile.
    __aicore__ inline uint32_t Cols(uint32_t i)
    {
        return O - i * tile < tile ? O - i * tile : tile;
    }

    TPipe pipe;
    TQue<TPosition::VECIN, CODE_BUFFERS> qw;
    TQue<TPosition::VECIN, 1> qs;
    TQue<TPosition::VECOUT, 1> qo;
    TBuf<TPosition::VECCALC> xBuf, whBuf, partBuf, sfBuf;
    GlobalTensor<half> xGm, sGm;
    GlobalTensor<int8_t> wGm;
    GlobalTensor<float> yGm;
    half xs[MAX_K];
    uint32_t K, O, group, tile, rows, first, count, groups, chunk;
};

extern "C" __global__ __aicore__ void int4_gemv_kernel(GM_ADDR x, GM_ADDR w, GM_ADDR scales, GM_ADDR y,
                                                       GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(Int4GemvTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelInt4Gemv op;
    op.Init(x, w, scales, y, tilingData);
    op.Process();
}

// %% ex4 wrong: one buffer for the codes: MTE2 and the vector unit take turns (over the cycle budget) [key: budget]
// replace: constexpr int32_t CODE_BUFFERS = 2;    // two buffers for the codes: the next chunk's copy overlaps these Axpys -> constexpr int32_t CODE_BUFFERS = 1;

// %% ex4 wrong: reads tile 0's scales for every tile (the scales are tile-major) [key: int4mm/scales]
// replace:                 DataCopy(sc, sGm[(i * groups + g) * tile], tile); ->                 DataCopy(sc, sGm[g * tile], tile);

// %% ex4 wrong: copies the whole last tile out, past the end of y when O is not whole tiles [key: OutOfBoundsError]
// replace:             DataCopy(yGm[i * tile], acc, Cols(i));     // the columns of tile i that y has ->             DataCopy(yGm[i * tile], acc, tile);

// %% ex5
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t C0 = 16;            // a fractal is 16 x 16 halves (512 bytes)

struct W4A16TilingData {               // the fields of the lab's W4A16Tiling, by name
    uint32_t M;                        // prompt rows
    uint32_t N;                        // output columns (rows of the codes)
    uint32_t K;                        // input channels
    uint32_t group;                    // input channels per scale
    uint32_t tile_n;                   // columns per N tile
    uint32_t base_k;                   // input channels per K step
    uint32_t block_dim;                // cores
    uint32_t panel_k;                  // X's columns per L1 load (K: all of X stays in L1)
};

// Y[M, N] = X[M, K] @ (codes * scales)^T on the 310B's AI Core: per N tile, per K step, the vector unit dequantises
// the step's int4 codes in UB, MTE3 copies them to L1, and the cube multiplies them with X.
class KernelW4A16Matmul {
public:
    __aicore__ inline KernelW4A16Matmul() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR codes, GM_ADDR scales, GM_ADDR y, const W4A16TilingData& tiling)
    {
        M = tiling.M;
        N = tiling.N;
        K = tiling.K;
        group = tiling.group;
        tileN = tiling.tile_n;
        baseK = tiling.base_k;
        Mp = (M + C0 - 1) / C0 * C0;                   // M rounded up to whole fractals
        tiles = N / tileN;
        steps = K / baseK;
        chunk = baseK * tileN;                         // codes of one K step of one tile
        groups = baseK / group;                        // groups per K step
        kB = baseK / C0;                               // K blocks per step
        rB = Mp / C0;                                  // row blocks
        block = tileN * C0;                            // one K block of a tile: tileN rows of 16 codes
        xGm.SetGlobalBuffer((__gm__ half*)x, M * K);
        wGm.SetGlobalBuffer((__gm__ int8_t*)codes, N * K / 2);
        sGm.SetGlobalBuffer((__gm__ half*)scales, N * K / group);
        yGm.SetGlobalBuffer((__gm__ half*)y, M * N);
        pipe.InitBuffer(qCode, 2, chunk / 2);
        pipe.InitBuffer(qScale, 2, groups * tileN * sizeof(half));
        pipe.InitBuffer(qW, 2, chunk * sizeof(half));
        pipe.InitBuffer(qA1, 1, Mp * K * sizeof(half));
        pipe.InitBuffer(qB1, 2, chunk * sizeof(half));
        pipe.InitBuffer(qA2, 2, Mp * baseK * sizeof(half));
        pipe.InitBuffer(qB2, 2, chunk * sizeof(half));
        pipe.InitBuffer(qCO1, 1, Mp * tileN * sizeof(float));
        pipe.InitBuffer(scaleBuf, groups * tileN * 32);  // each scale spread over one 32-byte block (16 halves)
    }

    __aicore__ inline void Process()
    {
        LocalTensor<half> scaleBlocks = scaleBuf.Get<half>();
        LocalTensor<half> a1 = qA1.AllocTensor<half>();   // all of X in L1 (NZ), read from GM once
        Nd2NzParams nd2nz;
        nd2nz.ndNum = 1;
        nd2nz.nValue = M;
        nd2nz.dValue = K;
        nd2nz.srcDValue = K;
        nd2nz.dstNzC0Stride = Mp;
        nd2nz.dstNzNStride = 1;
        DataCopy(a1, xGm, nd2nz);
        qA1.EnQue(a1);
        a1 = qA1.DeQue<half>();
        uint32_t step = 0;                             // K steps so far: this step's L1 buffer is step % 2
        for (uint32_t tile = GetBlockIdx(); tile < tiles; tile += GetBlockNum()) {
            LocalTensor<float> co1 = qCO1.AllocTensor<float>();
            for (uint32_t kk = 0; kk < steps; kk++) {
                LocalTensor<int8_t> w4 = qCode.AllocTensor<int8_t>();
                LocalTensor<half> sc = qScale.AllocTensor<half>();
                DataCopy(w4, wGm[(tile * K / C0 + kk * kB) * block / 2], chunk / 2);
                DataCopy(sc, sGm[(tile * K / group + kk * groups) * tileN], groups * tileN);
                qCode.EnQue(w4);
                qScale.EnQue(sc);
                w4 = qCode.DeQue<int8_t>();
                sc = qScale.DeQue<half>();
                LocalTensor<half> w = qW.AllocTensor<half>();
                // AntiQuant: the codes to half in w, then each K block b of w times its group's scales.
                Cast(w, w4.ReinterpretCast<int4b_t>(), RoundMode::CAST_NONE, chunk);       // exact: -8 .. 7
                Brcb(scaleBlocks, sc, groups * tileN / 8, {1, 8});                          // scale n -> block n
                for (uint32_t b = 0; b < kB; b++) {
                    uint32_t g = b * C0 / group;                // the group of K block b's 16 input channels
                    Mul(w[b * block], w[b * block], scaleBlocks[g * block], block);
                }
                qCode.FreeTensor(w4);
                qScale.FreeTensor(sc);
                qW.EnQue(w);
                w = qW.DeQue<half>();
                LocalTensor<half> b1 = qB1.AllocTensor<half>();
                event_t slot = static_cast<event_t>(step % 2);
                if (step >= 2) {                              // LoadData of step - 2 has finished reading this buffer
                    WaitFlag<HardEvent::MTE1_MTE3>(slot);
                }
                // UB -> L1 on MTE3, then MTE1 waits for the copy (event id slot).
                DataCopy(b1, w, chunk);
                SetFlag<HardEvent::MTE3_MTE1>(slot);
                WaitFlag<HardEvent::MTE3_MTE1>(slot);
                qW.FreeTensor(w);
                qB1.EnQue(b1);
                b1 = qB1.DeQue<half>();
                LocalTensor<half> a2 = qA2.AllocTensor<half>();
                LocalTensor<half> b2 = qB2.AllocTensor<half>();
                LoadData2DParams loadA;                       // X's K blocks of this step, one row block at a time
                loadA.repeatTimes = kB;
                loadA.srcStride = rB;
                for (uint32_t i = 0; i < rB; i++) {
                    LoadData(a2[i * kB * 256], a1[(kk * kB * rB + i) * 256], loadA);
                }
                LoadData2DParams loadB;
                loadB.repeatTimes = kB * tileN / C0;
                loadB.srcStride = 1;
                LoadData(b2, b1, loadB);
                SetFlag<HardEvent::MTE1_MTE3>(slot);          // b1 may be written again
                qB1.FreeTensor(b1);
                qA2.EnQue(a2);
                qB2.EnQue(b2);
                a2 = qA2.DeQue<half>();
                b2 = qB2.DeQue<half>();
                // Mmad: co1 (+)= a2 @ b2, M x tileN x baseK; the first K step starts co1 from zero.
                MmadParams mmad;
                mmad.m = M;
                mmad.n = tileN;
                mmad.k = baseK;
                mmad.cmatrixInitVal = kk == 0;
                Mmad(co1, a2, b2, mmad);
                qA2.FreeTensor(a2);
                qB2.FreeTensor(b2);
                step++;
            }
            qCO1.EnQue(co1);
            co1 = qCO1.DeQue<float>();
            FixpipeParamsV220 fixpipe;                        // L0C (NZ, float) -> Y (ND, half)
            fixpipe.nSize = tileN;
            fixpipe.mSize = M;
            fixpipe.srcStride = Mp;
            fixpipe.dstStride = N;
            fixpipe.quantPre = QuantMode_t::F322F16;
            Fixpipe(yGm[tile * tileN], co1, fixpipe);
            qCO1.FreeTensor(co1);
        }
        qA1.FreeTensor(a1);
        for (uint32_t s = step > 2 ? step - 2 : 0; s < step; s++) {   // the last two SetFlags have their WaitFlags
            WaitFlag<HardEvent::MTE1_MTE3>(static_cast<event_t>(s % 2));
        }
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, 2> qCode, qScale;
    TQue<TPosition::VECOUT, 2> qW;
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, 2> qB1;
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 1> qCO1;
    TBuf<TPosition::VECCALC> scaleBuf;
    GlobalTensor<half> xGm, sGm, yGm;
    GlobalTensor<int8_t> wGm;
    uint32_t M, N, K, group, tileN, baseK, Mp, tiles, steps, chunk, groups, kB, rB, block;
};

// A plain __aicore__ kernel: the 310B's AI Core is coupled (one core holds the vector and the cube units), so one
// core runs both parts; KERNEL_TASK_TYPE_DEFAULT is not supported there (Ascend C API reference, "设置Kernel类型",
// product support: Atlas 200I/500 A2 inference products).
extern "C" __global__ __aicore__ void w4a16_matmul_kernel(GM_ADDR x, GM_ADDR codes, GM_ADDR scales, GM_ADDR y,
                                                          GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(W4A16TilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelW4A16Matmul op;
    op.Init(x, codes, scales, y, tilingData);
    op.Process();
}

// %% ex5 wrong: every K block multiplied by the scales of group 0 [key: w4mm/group]
// replace:                     uint32_t g = b * C0 / group;                // the group of K block b's 16 input channels ->                     uint32_t g = 0;

// %% ex5 wrong: every Mmad starts co1 from zero: only the last K step is left [key: w4mm/accumulate]
// replace:                 mmad.cmatrixInitVal = kk == 0; ->                 mmad.cmatrixInitVal = true;

// %% ex5 wrong: LoadData reads L1 without waiting for the UB -> L1 copy (no MTE3 -> MTE1 flag) [key: RaceError]
// replace:
//                 SetFlag<HardEvent::MTE3_MTE1>(slot);
//                 WaitFlag<HardEvent::MTE3_MTE1>(slot);
// with:

// %% ex5 wrong: one Mul per 16-code row instead of one per K block: right values, 16x the vector instructions [key: budget]
// replace:
//                     Mul(w[b * block], w[b * block], scaleBlocks[g * block], block);
// with:
//                     for (uint32_t r = 0; r < tileN; r++) {
//                         Mul(w[b * block + r * C0], w[b * block + r * C0], scaleBlocks[g * block + r * C0], C0);
//                     }
