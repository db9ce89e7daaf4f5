// Conv2D on the cube with LoadData3D: the C++ twin of ascend_sim/kernels/opt/conv_l3d.py (half in and out, float
// bias; the host's layouts: the input as NC1HWC0, the weights as FRACTAL_Z rows (c1, kh, kw, c0) x Op).
//
// The weights go GM -> L1 (ND -> NZ) -> L0B (transposed to ZN) once per core and stay; the float bias GM -> C1 ->
// the BT buffer once. Each core takes a contiguous share of the (image, chunk of m_chunk output pixels) items; per
// image one DataCopy of its feature map into L1 (two buffers: the next image's copy overlaps the cube), per chunk
// LoadData with LoadData3DParamsV2 unfolds the rows into L0A (img2col, 图像转列), one Mmad adds the bias from BT, one
// Fixpipe writes the rows: NHWC (CFG_ROW_MAJOR) or NC1HWC0 (CFG_NZ), fp32 -> fp16 and ReLU on the way.
// Launch: conv2d_l3d(x, w, b, pad, kernel=mod.conv_l3d_cpp) on the wrapper's x, w, bias, y and ConvL3DTiling.
#include "kernel_operator.h"
#include "cube_common.h"   // C0, FRACTAL, LoadBiasTable

using namespace AscendC;
constexpr uint32_t BLOCK_BYTES = 32;             // one DataBlock

struct ConvL3DTilingData {  // filled by name from the host's ConvL3DTiling
    uint32_t N;        // images (after packing)
    uint32_t Cp;       // input channels padded to C0
    uint32_t H;
    uint32_t W;
    uint32_t Op;       // output channels padded to 16
    uint32_t KH;
    uint32_t KW;
    uint32_t pad;
    uint32_t m_chunk;  // output pixels per LoadData3D / Mmad / Fixpipe (a multiple of 16)
    uint32_t relu;     // 1: ReLU on Fixpipe
    uint32_t nz_out;   // 1: Fixpipe writes NC1HWC0 (CFG_NZ)
};

class KernelConvL3D {
public:
    __aicore__ inline KernelConvL3D() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y, const ConvL3DTilingData& tiling)
    {
        t = tiling;
        OH = t.H + 2 * t.pad - t.KH + 1;
        OW = t.W + 2 * t.pad - t.KW + 1;
        M = OH * OW;
        K = t.Cp * t.KH * t.KW;
        fmap = t.Cp * t.H * t.W;
        xGm.SetGlobalBuffer((__gm__ half*)x, t.N * fmap);
        wGm.SetGlobalBuffer((__gm__ half*)w, K * t.Op);
        yGm.SetGlobalBuffer((__gm__ half*)y, t.N * M * t.Op);
        pipe.InitBuffer(qF, 2, fmap * sizeof(half));
        pipe.InitBuffer(qW1, 1, K * t.Op * sizeof(half));
        pipe.InitBuffer(qW2, 1, K * t.Op * sizeof(half));
        pipe.InitBuffer(qA2, 2, t.m_chunk * K * sizeof(half));
        pipe.InitBuffer(qCO1, 2, t.m_chunk * t.Op * sizeof(float));
        biasGm.SetGlobalBuffer((__gm__ float*)bias, t.Op);
        pipe.InitBuffer(qC1, 1, t.Op * sizeof(float));
        pipe.InitBuffer(qC2, 1, t.Op * sizeof(float));
    }

    // This core's contiguous share [lo, hi) of the N * chunks items; each image it touches is copied once.
    __aicore__ inline void Process()
    {
        uint32_t chunks = (M + t.m_chunk - 1) / t.m_chunk;
        uint32_t items = t.N * chunks;
        uint32_t lo = items * GetBlockIdx() / GetBlockNum();
        uint32_t hi = items * (GetBlockIdx() + 1) / GetBlockNum();
        if (lo >= hi) {
            return;
        }
        uint32_t first = lo / chunks;
        uint32_t last = (hi - 1) / chunks;
        CopyInFmap(first);
        LocalTensor<half> w2 = LoadWeights();
        LocalTensor<float> bt = LoadBias();
        for (uint32_t img = first; img <= last; img++) {
            if (img < last) {                    // prefetch the next image while the cube works on this one
                CopyInFmap(img + 1);
            }
            LocalTensor<half> f1 = qF.DeQue<half>();
            uint32_t c0 = lo > img * chunks ? lo - img * chunks : 0;
            uint32_t c1 = hi < (img + 1) * chunks ? hi - img * chunks : chunks;
            for (uint32_t c = c0; c < c1; c++) {
                Chunk(f1, img, c * t.m_chunk, w2, bt);
            }
            qF.FreeTensor(f1);
        }
        qW2.FreeTensor(w2);
        qC2.FreeTensor(bt);
    }

private:
    __aicore__ inline void CopyInFmap(uint32_t img)
    {
        LocalTensor<half> f1 = qF.AllocTensor<half>();
        DataCopy(f1, xGm[img * fmap], fmap);
        qF.EnQue(f1);
    }

    // Weights GM -> L1 (ND -> NZ) -> L0B (per 16-row K block, its Op fractals transposed: ZN), kept.
    __aicore__ inline LocalTensor<half> LoadWeights()
    {
        LocalTensor<half> w1 = qW1.AllocTensor<half>();
        // {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(w1, wGm, Nd2NzParams{1, static_cast<uint16_t>(K), static_cast<uint16_t>(t.Op), 0,
                                      static_cast<uint16_t>(t.Op), static_cast<uint16_t>(K), 1, 0});
        qW1.EnQue(w1);
        w1 = qW1.DeQue<half>();
        LocalTensor<half> w2 = qW2.AllocTensor<half>();
        uint32_t kb = K / C0;
        uint32_t nb = t.Op / C0;
        // {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for (uint32_t i = 0; i < kb; i++) {
            LoadData(w2[i * nb * FRACTAL], w1[i * FRACTAL],
                     LoadData2DParams{0, static_cast<uint8_t>(nb), static_cast<uint16_t>(kb), 0, 0, true, 0});
        }
        qW1.FreeTensor(w1);
        qW2.EnQue(w2);
        return qW2.DeQue<half>();
    }

    // Bias GM -> C1 (L1) -> C2 (the BT buffer), where each chunk's Mmad reads it.
    __aicore__ inline LocalTensor<float> LoadBias() { return LoadBiasTable(qC1, qC2, biasGm, t.Op); }

    // --- SHOW conv-l3d-chunk-cpp: course/02_optimization.ipynb cell opt-l3d-cpp
    // Output pixels [m0, m0 + rows) of one image: LoadData3D -> Mmad (+ bias) -> Fixpipe (ReLU, cast).
    __aicore__ inline void Chunk(const LocalTensor<half>& f1, uint32_t img, uint32_t m0, const LocalTensor<half>& w2,
                                 const LocalTensor<float>& bt)
    {
        uint32_t rows = M - m0 < t.m_chunk ? M - m0 : t.m_chunk;
        LocalTensor<half> a2 = qA2.AllocTensor<half>();
        LoadData3DParamsV2<half> l3d;          // img2col of the rows: K = (c1, kh, kw, c0) columns, m0.. rows
        uint8_t p = static_cast<uint8_t>(t.pad);
        l3d.padList[0] = p;
        l3d.padList[1] = p;
        l3d.padList[2] = p;
        l3d.padList[3] = p;
        l3d.l1H = t.H;
        l3d.l1W = t.W;
        l3d.channelSize = t.Cp;
        l3d.kExtension = K;
        l3d.mExtension = rows;
        l3d.kStartPt = 0;
        l3d.mStartPt = m0;
        l3d.filterW = t.KW;
        l3d.filterH = t.KH;
        LoadData(a2, f1, l3d);
        qA2.EnQue(a2);
        a2 = qA2.DeQue<half>();
        LocalTensor<float> co1 = qCO1.AllocTensor<float>();
        // {m, n, k, unitFlag, cmatrixSource (the bias in BT), cmatrixInitVal}
        Mmad(co1, a2, w2, bt, MmadParams{static_cast<uint16_t>(rows), static_cast<uint16_t>(t.Op),
                                         static_cast<uint16_t>(K), 0, true, false});
        qA2.FreeTensor(a2);
        qCO1.EnQue(co1);
        co1 = qCO1.DeQue<float>();
        uint16_t rp = static_cast<uint16_t>((rows + C0 - 1) / C0 * C0);
        // {nSize, mSize, srcStride (rows rounded up to 16), dstStride, reluEn, quantPre}
        if (t.nz_out) {    // NC1HWC0: channel block k of the image at k * M * 16; dstStride in 32-byte blocks
            Fixpipe<half, float, CFG_NZ>(yGm[img * M * t.Op + m0 * C0], co1,
                FixpipeParamsV220{static_cast<uint16_t>(t.Op), static_cast<uint16_t>(rows), rp,
                                  static_cast<uint32_t>(M * C0 * sizeof(half) / BLOCK_BYTES), t.relu != 0,
                                  QuantMode_t::F322F16});
        } else {           // NHWC rows of Op channels (NZ -> ND)
            Fixpipe<half, float, CFG_ROW_MAJOR>(yGm[(img * M + m0) * t.Op], co1,
                FixpipeParamsV220{static_cast<uint16_t>(t.Op), static_cast<uint16_t>(rows), rp, t.Op, t.relu != 0,
                                  QuantMode_t::F322F16});
        }
        qCO1.FreeTensor(co1);
    }
    // --- END SHOW

    TPipe pipe;
    TQue<TPosition::A1, 2> qF;             // L1: the feature maps (NC1HWC0), two images
    TQue<TPosition::B1, 1> qW1;            // L1: the weights on their way to L0B
    TQue<TPosition::B2, 1> qW2;            // L0B: the weights, kept
    TQue<TPosition::A2, 2> qA2;            // L0A: one chunk's img2col rows
    TQue<TPosition::CO1, 2> qCO1;          // L0C: the float accumulator
    TQue<TPosition::C1, 1> qC1;            // L1: the bias on its way to BT
    TQue<TPosition::C2, 1> qC2;            // BT: the bias
    GlobalTensor<half> xGm, wGm, yGm;
    GlobalTensor<float> biasGm;
    ConvL3DTilingData t;
    uint32_t OH = 0, OW = 0, M = 0, K = 0, fmap = 0;
};

extern "C" __global__ __aicore__ void conv_l3d_cpp(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    GET_TILING_DATA_WITH_STRUCT(ConvL3DTilingData, tilingData, tiling);
    KernelConvL3D op;
    op.Init(x, w, bias, y, tilingData);
    op.Process();
}
