// MatMul + Add + ReLU as one MIX kernel (融合算子, AIC -> AIV): the C++ twin of ascend_sim/kernels/opt/matmul_mix.py
// (half A, B and C; float bias).
//
// Per C tile the AIC (cube core) runs the tiled matmul of kernels/opt/tiled_matmul.py: its A rows (all of K) to L1
// in NZ, B in K steps through L1 (or all of B resident in L1 when the host's tiling says so), LoadData to L0A/L0B,
// Mmad into the float L0C accumulator, then one Fixpipe of the float tile to its own slot of a GM workspace and
// CrossCoreSetFlag<2, PIPE_FIX> (mode 2: the two AIVs of its group). Each AIV waits for every tile of its group
// (CrossCoreWaitFlag), reads its half of the tile's rows, adds the bias row by row, applies ReLU, casts to half and
// writes its rows of C. Launch: matmul_add_relu_mix_run(a, b, bias, kernel=mod.matmul_add_relu_mix_cpp) runs it with
// the wrapper's arguments (a, b, bias, workspace, c, TiledMatmulTiling).
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t C0 = 16;                      // halves per fractal row; a fractal is 16 x 16 (512 bytes)
constexpr uint32_t FRACTAL = C0 * C0;
constexpr uint16_t TILE_READY = 3;               // the cross-core flag id of the hand-off
constexpr uint32_t CHUNK_BYTES = 32 * 1024;      // float rows per vector pass: two in, two out buffers fit UB
constexpr uint32_t BLOCK_BYTES = 32;             // one DataBlock

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Up16(uint32_t a) { return CeilDiv(a, C0) * C0; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

struct TiledMatmulTilingData {  // filled by name from the host's TiledMatmulTiling
    uint32_t M;           // C [M, N] = relu(A [M, K] @ B [K, N] + bias [N])
    uint32_t N;
    uint32_t K;
    uint32_t singleM;     // each tile's block of C (multiples of 16)
    uint32_t singleN;
    uint32_t baseK;       // K rows of B per step
    uint32_t depth;       // buffers per queue: 2 = double buffering (双缓冲)
    uint32_t resident_b;  // 1: all of B stays in L1 for every tile of the core (one column block)
};

// The AIC: every GetBlockNum()-th C tile, its float accumulator to the tile's workspace slot, then the flag.
class CubeToWorkspace {
public:
    __aicore__ inline CubeToWorkspace() {}

    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR ws, const TiledMatmulTilingData& tiling)
    {
        t = tiling;
        blocksN = CeilDiv(t.N, t.singleN);
        tiles = CeilDiv(t.M, t.singleM) * blocksN;
        aGm.SetGlobalBuffer((__gm__ half*)a, t.M * t.K);
        bGm.SetGlobalBuffer((__gm__ half*)b, t.K * t.N);
        wsGm.SetGlobalBuffer((__gm__ float*)ws, tiles * t.singleM * t.singleN);
        pipe.InitBuffer(qA1, t.depth, t.singleM * Up16(t.K) * sizeof(half));
        pipe.InitBuffer(qA2, t.depth, t.singleM * t.baseK * sizeof(half));
        pipe.InitBuffer(qB2, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qCO1, t.depth, t.singleM * t.singleN * sizeof(float));
        if (t.resident_b) {
            pipe.InitBuffer(qB1, 1, Up16(t.K) * t.singleN * sizeof(half));
        } else {
            pipe.InitBuffer(qB1, t.depth, t.baseK * t.singleN * sizeof(half));
        }
    }

    __aicore__ inline void Process()
    {
        bool haveB = false;
        for (uint32_t tile = GetBlockIdx(); tile < tiles; tile += GetBlockNum()) {
            this->tile = tile;
            row0 = tile / blocksN * t.singleM;
            col0 = tile % blocksN * t.singleN;
            rows = Min(t.singleM, t.M - row0);        // the last tiles are shorter
            cols = Min(t.singleN, t.N - col0);
            rp = Up16(rows);
            np = Up16(cols);
            if (t.resident_b && !haveB) {             // the weights: once per core
                bRes = CopyInBAll();
                haveB = true;
            }
            Tile();
        }
        if (haveB) {
            qB1.FreeTensor(bRes);
        }
    }

private:
    __aicore__ inline void Tile()
    {
        LocalTensor<half> a1 = CopyInA();
        LocalTensor<float> co1 = qCO1.AllocTensor<float>();
        uint32_t steps = CeilDiv(t.K, t.baseK);
        uint32_t ahead = t.depth > 1 ? 1 : 0;         // prefetch: the next K step moves while this one computes
        if (ahead == 1 && !t.resident_b) {
            CopyInB(0);
        }
        for (uint32_t kk = 0; kk < steps; kk++) {
            if (kk + ahead < steps && !t.resident_b) {
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
        DataCopy(a1, aGm[row0 * t.K], Nd2NzParams{1, static_cast<uint16_t>(rows), static_cast<uint16_t>(t.K), 0,
                                                  static_cast<uint16_t>(t.K), static_cast<uint16_t>(rp), 1, 0});
        qA1.EnQue(a1);
        return qA1.DeQue<half>();
    }

    __aicore__ inline LocalTensor<half> CopyInBAll()
    {
        LocalTensor<half> b1 = qB1.AllocTensor<half>();
        DataCopy(b1, bGm[col0], Nd2NzParams{1, static_cast<uint16_t>(t.K), static_cast<uint16_t>(cols), 0,
                                            static_cast<uint16_t>(t.N), static_cast<uint16_t>(Up16(t.K)), 1, 0});
        qB1.EnQue(b1);
        return qB1.DeQue<half>();
    }

    __aicore__ inline void CopyInB(uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t bk = Min(t.baseK, t.K - k0);
        LocalTensor<half> b1 = qB1.AllocTensor<half>();
        DataCopy(b1, bGm[k0 * t.N + col0], Nd2NzParams{1, static_cast<uint16_t>(bk), static_cast<uint16_t>(cols), 0,
                                                        static_cast<uint16_t>(t.N), static_cast<uint16_t>(Up16(bk)),
                                                        1, 0});
        qB1.EnQue(b1);
    }

    // L1 -> L0A (per 16-row block of A, its K fractals) and L0B (per K block, its N fractals, transposed: ZN).
    __aicore__ inline void SplitLoad(const LocalTensor<half>& a1, uint32_t kk)
    {
        uint32_t k0 = kk * t.baseK;
        uint32_t kB = CeilDiv(Min(t.baseK, t.K - k0), C0);
        uint32_t rB = rp / C0;
        uint32_t nB = np / C0;
        uint32_t first = 0;        // the K step's first fractal row in L1, and the fractals between two columns
        uint32_t stride = kB;
        LocalTensor<half> b1;
        if (t.resident_b) {
            b1 = bRes;
            first = k0 / C0;
            stride = Up16(t.K) / C0;
        } else {
            b1 = qB1.DeQue<half>();
        }
        LocalTensor<half> a2 = qA2.AllocTensor<half>();
        LocalTensor<half> b2 = qB2.AllocTensor<half>();
        // {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for (uint32_t i = 0; i < rB; i++) {
            LoadData(a2[i * kB * FRACTAL], a1[((k0 / C0) * rB + i) * FRACTAL],
                     LoadData2DParams{0, static_cast<uint8_t>(kB), static_cast<uint16_t>(rB), 0, 0, false, 0});
        }
        for (uint32_t j = 0; j < kB; j++) {
            LoadData(b2[j * nB * FRACTAL], b1[(first + j) * FRACTAL],
                     LoadData2DParams{0, static_cast<uint8_t>(nB), static_cast<uint16_t>(stride), 0, 0, true, 0});
        }
        if (!t.resident_b) {
            qB1.FreeTensor(b1);
        }
        qA2.EnQue(a2);
        qB2.EnQue(b2);
    }

    __aicore__ inline void Compute(const LocalTensor<float>& co1, uint32_t kk)
    {
        uint32_t bk = Min(t.baseK, t.K - kk * t.baseK);
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}: the first K step starts C from zero
        Mmad(co1, a2, b2, MmadParams{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols),
                                     static_cast<uint16_t>(bk), 0, false, kk == 0});
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }

    // --- SHOW mix-cube-handoff-cpp: course/02_optimization.ipynb cell opt-27-cpp
    __aicore__ inline void CopyOut()
    {
        LocalTensor<float> co1 = qCO1.DeQue<float>();
        // the float tile, NZ -> ND, to this tile's slot: {nSize, mSize, srcStride, dstStride, reluEn, quantPre}
        Fixpipe(wsGm[tile * t.singleM * t.singleN], co1,
                FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                  static_cast<uint16_t>(rp), np, false, QuantMode_t::NoQuant});
        qCO1.FreeTensor(co1);
        CrossCoreSetFlag<2, PIPE_FIX>(TILE_READY);   // mode 2: the AIVs of this AIC's group may read the tile
    }
    // --- END SHOW

    TPipe pipe;
    TQue<TPosition::A1, 2> qA1;
    TQue<TPosition::B1, 2> qB1;                   // depth 2: the prefetch EnQues step kk + 1 before step kk's DeQue
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 2> qCO1;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> wsGm;
    LocalTensor<half> bRes;                       // all of B, when resident
    TiledMatmulTilingData t;
    uint32_t blocksN = 0, tiles = 0, tile = 0;
    uint32_t row0 = 0, col0 = 0, rows = 0, cols = 0, rp = 0, np = 0;
};

// One AIV: for each tile of its group, wait for the flag, then bias + ReLU + cast on its half of the rows.
class VectorEpilogue {
public:
    __aicore__ inline VectorEpilogue() {}

    __aicore__ inline void Init(GM_ADDR ws, GM_ADDR bias, GM_ADDR c, const TiledMatmulTilingData& tiling)
    {
        t = tiling;
        blocksN = CeilDiv(t.N, t.singleN);
        tiles = CeilDiv(t.M, t.singleM) * blocksN;
        wsGm.SetGlobalBuffer((__gm__ float*)ws, tiles * t.singleM * t.singleN);
        biasGm.SetGlobalBuffer((__gm__ float*)bias, t.N);
        cGm.SetGlobalBuffer((__gm__ half*)c, t.M * t.N);
        chunk = Min(CeilDiv(t.singleM, 2), CHUNK_BYTES / (t.singleN * sizeof(float)));   // rows per UB pass
        chunk = chunk > 1 ? chunk : 1;
        pipe.InitBuffer(qIn, 2, chunk * t.singleN * sizeof(float));
        pipe.InitBuffer(qOut, 2, chunk * t.singleN * sizeof(half));
        pipe.InitBuffer(qBias, 1, t.singleN * sizeof(float));
    }

    // --- SHOW mix-vector-epilogue-cpp: course/02_optimization.ipynb cell opt-27-cpp
    __aicore__ inline void Process()
    {
        // on the AIVs of a MIX kernel GetBlockNum() counts the AIC groups and GetBlockIdx() the AIVs
        uint32_t group = GetBlockIdx() / GetTaskRatio();
        for (uint32_t tile = group; tile < tiles; tile += GetBlockNum()) {
            CrossCoreWaitFlag(TILE_READY);           // both AIVs of the group wait for each tile
            uint32_t mIdx = tile / blocksN;
            uint32_t nIdx = tile % blocksN;
            uint32_t rows = Min(t.singleM, t.M - mIdx * t.singleM);
            uint32_t cols = Min(t.singleN, t.N - nIdx * t.singleN);
            uint32_t top = CeilDiv(rows, 2);          // AIV 0 takes the upper half of the rows, AIV 1 the rest
            uint32_t r0 = GetSubBlockIdx() == 0 ? 0 : top;
            uint32_t nr = GetSubBlockIdx() == 0 ? top : rows - top;
            for (uint32_t q = r0; q < r0 + nr; q += chunk) {
                Epilogue(tile, mIdx * t.singleM + q, nIdx * t.singleN, q, Min(chunk, r0 + nr - q), cols);
            }
        }
    }
    // --- END SHOW

private:
    __aicore__ inline void Epilogue(uint32_t tile, uint32_t row0, uint32_t col0, uint32_t r0, uint32_t nr,
                                    uint32_t cols)
    {
        LocalTensor<float> x = qIn.AllocTensor<float>();
        LocalTensor<float> bv = qBias.AllocTensor<float>();
        DataCopy(x, wsGm[tile * t.singleM * t.singleN + r0 * cols], nr * cols);
        DataCopy(bv, biasGm[col0], cols);
        qIn.EnQue(x);
        qBias.EnQue(bv);
        x = qIn.DeQue<float>();
        bv = qBias.DeQue<float>();
        for (uint32_t r = 0; r < nr; r++) {
            Add(x[r * cols], x[r * cols], bv, cols);  // the bias row on each row of the tile
        }
        qBias.FreeTensor(bv);
        LocalTensor<half> y = qOut.AllocTensor<half>();
        Relu(x, x, nr * cols);
        Cast(y, x, RoundMode::CAST_NONE, nr * cols);
        qIn.FreeTensor(x);
        qOut.EnQue(y);
        y = qOut.DeQue<half>();
        // nr rows of cols halves, packed in UB, N halves apart in C: {blockCount, blockLen, srcStride, dstStride}
        uint32_t blk = cols * sizeof(half) / BLOCK_BYTES;
        DataCopy(cGm[row0 * t.N + col0], y,
                 DataCopyParams{static_cast<uint16_t>(nr), static_cast<uint16_t>(blk), 0,
                                static_cast<uint16_t>((t.N - cols) * sizeof(half) / BLOCK_BYTES)});
        qOut.FreeTensor(y);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, 2> qIn;
    TQue<TPosition::VECOUT, 2> qOut;
    TQue<TPosition::VECIN, 1> qBias;
    GlobalTensor<float> wsGm, biasGm;
    GlobalTensor<half> cGm;
    TiledMatmulTilingData t;
    uint32_t blocksN = 0, tiles = 0, chunk = 1;
};

// --- SHOW mix-kernel-cpp: course/02_optimization.ipynb cell opt-27-cpp
extern "C" __global__ __mix__(1, 2) void matmul_add_relu_mix_cpp(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR ws,
                                                                  GM_ADDR c, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);   // one AIC and its two AIVs per block
    GET_TILING_DATA_WITH_STRUCT(TiledMatmulTilingData, tilingData, tiling);
    if ASCEND_IS_AIC {
        CubeToWorkspace op;
        op.Init(a, b, ws, tilingData);
        op.Process();
    } else {
        VectorEpilogue ep;
        ep.Init(ws, bias, c, tilingData);
        ep.Process();
    }
}
// --- END SHOW
