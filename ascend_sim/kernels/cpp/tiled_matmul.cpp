// A hand-tiled cube matmul with its fused epilogue: the C++ twin of ascend_sim/kernels/opt/tiled_matmul.py
// (half A and B, half C; float bias), C = relu?(A [M, K] @ B [K, N] + bias [N]). conv2d_cube and conv_bn_relu
// (kernels/opt/conv_cube.py) run it on the host's img2col matrix; matmul_mix.cpp runs it on the cube core of a MIX
// kernel, with each tile handed to the vector cores through a GM workspace (HandOffTo).
//
// Per C tile (every GetBlockNum()-th from GetBlockIdx()): its A rows (all of K) to L1 in NZ, B in K steps through
// L1 (or all of B resident in L1 when the tiling says so), LoadData to L0A (ZZ) and L0B (ZN), Mmad into the float
// L0C accumulator (the first one adding the bias from the BT buffer), then one Fixpipe (NZ -> ND, fp32 -> fp16,
// ReLU on the way with reluEn). Launch: tiled_matmul(a, b, bias, relu=..., kernel=mod.tiled_matmul_cpp) runs it
// with the wrapper's arguments (a, b, bias, c, TiledMatmulTiling).
#include "kernel_operator.h"
#include "cube_common.h"   // C0, FRACTAL, LoadBiasTable

using namespace AscendC;
constexpr uint16_t TILE_READY = 3;               // the cross-core flag id of a MIX kernel's hand-off

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Up16(uint32_t a) { return CeilDiv(a, C0) * C0; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

struct TiledMatmulTilingData {  // filled by name from the host's TiledMatmulTiling
    uint32_t M;           // C [M, N] = relu?(A [M, K] @ B [K, N] + bias [N])
    uint32_t N;
    uint32_t K;
    uint32_t singleM;     // each tile's block of C (multiples of 16)
    uint32_t singleN;
    uint32_t baseK;       // K rows of B per step
    uint32_t depth;       // buffers per queue: 2 = double buffering (双缓冲)
    uint32_t resident_b;  // 1: all of B stays in L1 for every tile of the core (one column block)
    uint32_t bias;        // 1: add bias [N] (BT buffer, first Mmad)
    uint32_t relu;        // 1: ReLU on Fixpipe (reluEn)
};

// One cube core: its C tiles, K stepped through L1 and L0 with two buffers each.
class KernelTiledMatmul {
public:
    __aicore__ inline KernelTiledMatmul() {}

    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, const TiledMatmulTilingData& tiling)
    {
        t = tiling;
        blocksN = CeilDiv(t.N, t.singleN);
        tiles = CeilDiv(t.M, t.singleM) * blocksN;
        aGm.SetGlobalBuffer((__gm__ half*)a, t.M * t.K);
        bGm.SetGlobalBuffer((__gm__ half*)b, t.K * t.N);
        cGm.SetGlobalBuffer((__gm__ half*)c, t.M * t.N);
        pipe.InitBuffer(qA1, t.depth, t.singleM * Up16(t.K) * sizeof(half));
        pipe.InitBuffer(qA2, t.depth, t.singleM * t.baseK * sizeof(half));
        pipe.InitBuffer(qB2, t.depth, t.baseK * t.singleN * sizeof(half));
        pipe.InitBuffer(qCO1, t.depth, t.singleM * t.singleN * sizeof(float));
        if (t.resident_b) {
            pipe.InitBuffer(qB1, 1, Up16(t.K) * t.singleN * sizeof(half));
        } else {
            pipe.InitBuffer(qB1, t.depth, t.baseK * t.singleN * sizeof(half));
        }
        if (t.bias) {
            biasGm.SetGlobalBuffer((__gm__ float*)bias, Up16(t.N));
            pipe.InitBuffer(qC1, 1, t.singleN * sizeof(float));
            pipe.InitBuffer(qC2, 1, t.singleN * sizeof(float));
        }
    }

    // In a MIX kernel: each tile's float accumulator goes to its own slot of the workspace `ws` (the AIVs finish
    // it), then CrossCoreSetFlag. Call after Init; C is then not written.
    __aicore__ inline void HandOffTo(GM_ADDR ws)
    {
        wsGm.SetGlobalBuffer((__gm__ float*)ws, tiles * t.singleM * t.singleN);
        handOff = true;
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
            if (t.resident_b && !haveB) {             // the weights and the bias: once per core
                bRes = CopyInBAll();
                if (t.bias) {
                    btRes = CopyInBias();
                }
                haveB = true;
            }
            Tile();
        }
        if (haveB) {
            qB1.FreeTensor(bRes);
            if (t.bias) {
                qC2.FreeTensor(btRes);
            }
        }
    }

private:
    __aicore__ inline void Tile()
    {
        LocalTensor<half> a1 = CopyInA();
        LocalTensor<float> bt;
        if (t.resident_b) {
            bt = btRes;
        } else if (t.bias) {
            bt = CopyInBias();
        }
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
            Compute(co1, bt, kk);
        }
        qA1.FreeTensor(a1);
        if (t.bias && !t.resident_b) {
            qC2.FreeTensor(bt);
        }
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

    // The tile's float bias GM -> C1 (L1) -> C2 (the BT buffer), where the first Mmad reads it.
    __aicore__ inline LocalTensor<float> CopyInBias() { return LoadBiasTable(qC1, qC2, biasGm[col0], np); }

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

    // --- SHOW tiled-matmul-compute-cpp: course/02_optimization.ipynb cell opt-21-cpp
    __aicore__ inline void Compute(const LocalTensor<float>& co1, const LocalTensor<float>& bt, uint32_t kk)
    {
        uint32_t bk = Min(t.baseK, t.K - kk * t.baseK);
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}: the first K step starts C from the bias (BT) or zero
        if (kk == 0 && t.bias) {
            Mmad(co1, a2, b2, bt, MmadParams{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols),
                                             static_cast<uint16_t>(bk), 0, true, false});
        } else {
            Mmad(co1, a2, b2, MmadParams{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols),
                                         static_cast<uint16_t>(bk), 0, false, kk == 0});
        }
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }
    // --- END SHOW

    // --- SHOW mix-cube-handoff-cpp: course/02_optimization.ipynb cell opt-27-cpp
    __aicore__ inline void CopyOut()
    {
        LocalTensor<float> co1 = qCO1.DeQue<float>();
        // {nSize, mSize, srcStride (rows rounded up to 16), dstStride, reluEn, quantPre}
        if (handOff) {   // MIX: the float tile, NZ -> ND, to this tile's slot; then flag the AIVs of the group
            Fixpipe(wsGm[tile * t.singleM * t.singleN], co1,
                    FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                      static_cast<uint16_t>(rp), np, false, QuantMode_t::NoQuant});
            qCO1.FreeTensor(co1);
            CrossCoreSetFlag<2, PIPE_FIX>(TILE_READY);   // mode 2: the AIVs of this AIC's group
            return;
        }
        // the whole tile to C: NZ -> ND, fp32 -> fp16, ReLU on the way when the tiling asks for it
        Fixpipe(cGm[row0 * t.N + col0], co1,
                FixpipeParamsV220{static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                  static_cast<uint16_t>(rp), t.N, t.relu != 0, QuantMode_t::F322F16});
        qCO1.FreeTensor(co1);
    }
    // --- END SHOW

    TPipe pipe;
    TQue<TPosition::A1, 2> qA1;
    TQue<TPosition::B1, 2> qB1;                   // depth 2: the prefetch EnQues step kk + 1 before step kk's DeQue
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 2> qCO1;
    TQue<TPosition::C1, 1> qC1;                   // L1: the bias on its way to BT
    TQue<TPosition::C2, 1> qC2;                   // BT: the bias the first Mmad adds
    GlobalTensor<half> aGm, bGm, cGm;
    GlobalTensor<float> biasGm, wsGm;
    LocalTensor<half> bRes;                       // all of B, when resident
    LocalTensor<float> btRes;                     // its bias, likewise
    bool handOff = false;
    TiledMatmulTilingData t;
    uint32_t blocksN = 0, tiles = 0, tile = 0;
    uint32_t row0 = 0, col0 = 0, rows = 0, cols = 0, rp = 0, np = 0;
};

extern "C" __global__ __aicore__ void tiled_matmul_cpp(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    GET_TILING_DATA_WITH_STRUCT(TiledMatmulTilingData, tilingData, tiling);
    KernelTiledMatmul op;
    op.Init(a, b, bias, c, tilingData);
    op.Process();
}
