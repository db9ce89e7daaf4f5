// Fully connected layer on the cube: the C++ twin of the float16 kernel of ascend_sim/kernels/linear.py.
//
// Y^T [O, lanes] = W' [Mp, Kp] @ X'^T [Kp, lanes] with the bias riding along as one more input feature: the host
// (pack_cube) appends b as column K of W' and a row of ones at K to X'^T, both zero padded to whole 16 x 16
// fractals (分形). W' goes to L1 once, in NZ (DataCopy with Nd2NzParams). Per chunk of nb images and per K step of
// baseK: the X' tile to L1 (NZ), LoadData of both tiles to L0A (ZZ) and L0B (ZN, each fractal transposed), Mmad
// into L0C (fp32, NZ; zeroed at the first K step), then one Fixpipe to GM (fp32 -> fp16, NZ -> ND).
// Launch: linear_cube_cpp(wp, xp, y, LinearCubeTiling) on the AIC blocks linear() uses.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t FRACTAL = 16;                      // a fractal's edge (halves)
constexpr uint32_t FRACTAL_SIZE = FRACTAL * FRACTAL;  // halves in one 512-byte fractal

struct LinearCubeTilingData {  // filled by name from the host's LinearCubeTiling
    uint32_t O;      // outputs
    uint32_t Mp;     // outputs padded to 16
    uint32_t Kp;     // inputs + the bias row, padded to 16
    uint32_t lanes;  // images padded to 16 (the GM row length of X'^T and Y^T)
    uint32_t nb;     // images per chunk (one Mmad's n)
    uint32_t baseK;  // K step (one Mmad's k)
};

class KernelLinearCube {
public:
    __aicore__ inline KernelLinearCube() {}

    __aicore__ inline void Init(GM_ADDR w, GM_ADDR x, GM_ADDR y, const LinearCubeTilingData& tiling)
    {
        O = tiling.O;
        Mp = tiling.Mp;
        Kp = tiling.Kp;
        lanes = tiling.lanes;
        nb = tiling.nb;
        baseK = tiling.baseK;
        wGm.SetGlobalBuffer((__gm__ half*)w, Mp * Kp);
        xGm.SetGlobalBuffer((__gm__ half*)x, Kp * lanes);
        yGm.SetGlobalBuffer((__gm__ half*)y, O * lanes);
        pipe.InitBuffer(inQueueA1, 1, Mp * Kp * sizeof(half));
        pipe.InitBuffer(inQueueB1, 2, baseK * nb * sizeof(half));
        pipe.InitBuffer(inQueueA2, 2, Mp * baseK * sizeof(half));
        pipe.InitBuffer(inQueueB2, 2, baseK * nb * sizeof(half));
        pipe.InitBuffer(outQueueCO1, 2, Mp * nb * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        uint32_t chunks = (lanes + nb - 1) / nb;
        uint32_t perBlock = (chunks + GetBlockNum() - 1) / GetBlockNum();   // this block's share of the chunks
        uint32_t first = GetBlockIdx() * perBlock < chunks ? GetBlockIdx() * perBlock : chunks;
        uint32_t last = first + perBlock < chunks ? first + perBlock : chunks;
        if (first == last) {
            return;
        }
        LocalTensor<half> a1 = LoadWeights();
        for (uint32_t chunk = first; chunk < last; chunk++) {
            uint32_t n0 = chunk * nb;
            uint32_t width = lanes - n0 < nb ? lanes - n0 : nb;
            LocalTensor<float> c1 = outQueueCO1.AllocTensor<float>();
            for (uint32_t k0 = 0; k0 < Kp; k0 += baseK) {
                uint32_t bk = Kp - k0 < baseK ? Kp - k0 : baseK;
                CopyIn(k0, bk, n0, width);
                SplitLoad(a1, k0, bk, width);
                Compute(c1, bk, width, k0 == 0);
            }
            outQueueCO1.EnQue(c1);
            CopyOut(n0, width);
        }
        inQueueA1.FreeTensor(a1);
    }

private:
    // W' into L1 in NZ: column blocks of 16 inputs, each Mp rows tall, so a K step is a run of column blocks.
    __aicore__ inline LocalTensor<half> LoadWeights()
    {
        LocalTensor<half> a1 = inQueueA1.AllocTensor<half>();
        // {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, wGm, Nd2NzParams{1, static_cast<uint16_t>(Mp), static_cast<uint16_t>(Kp), 0,
                                      static_cast<uint16_t>(Kp), static_cast<uint16_t>(Mp), 1, 0});
        inQueueA1.EnQue(a1);
        return inQueueA1.DeQue<half>();
    }

    // The [bk, width] tile of X'^T (rows k0.., images n0..) into L1 in NZ.
    __aicore__ inline void CopyIn(uint32_t k0, uint32_t bk, uint32_t n0, uint32_t width)
    {
        LocalTensor<half> b1 = inQueueB1.AllocTensor<half>();
        DataCopy(b1, xGm[k0 * lanes + n0], Nd2NzParams{1, static_cast<uint16_t>(bk), static_cast<uint16_t>(width),
                                                       0, static_cast<uint16_t>(lanes), static_cast<uint16_t>(bk),
                                                       1, 0});
        inQueueB1.EnQue(b1);
    }

    // L1 -> L0: the K step of W' as ZZ (one row of fractals per call), the X' tile as ZN (fractals transposed).
    __aicore__ inline void SplitLoad(const LocalTensor<half>& a1, uint32_t k0, uint32_t bk, uint32_t width)
    {
        LocalTensor<half> b1 = inQueueB1.DeQue<half>();
        LocalTensor<half> a2 = inQueueA2.AllocTensor<half>();
        LocalTensor<half> b2 = inQueueB2.AllocTensor<half>();
        uint32_t mBlocks = Mp / FRACTAL;
        uint32_t kBlocks = bk / FRACTAL;
        uint32_t nBlocks = width / FRACTAL;
        // {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for (uint32_t i = 0; i < mBlocks; i++) {   // fractal row i of the step: kBlocks fractals, mBlocks apart in NZ
            LoadData(a2[i * bk * FRACTAL], a1[Mp * k0 + i * FRACTAL_SIZE],
                     LoadData2DParams{0, static_cast<uint8_t>(kBlocks), static_cast<uint16_t>(mBlocks), 0, 0,
                                      false, 0});
        }
        for (uint32_t i = 0; i < kBlocks; i++) {   // fractal row i of the tile: nBlocks fractals, kBlocks apart
            LoadData(b2[i * width * FRACTAL], b1[i * FRACTAL_SIZE],
                     LoadData2DParams{0, static_cast<uint8_t>(nBlocks), static_cast<uint16_t>(kBlocks), 0, 0,
                                      true, 0});
        }
        inQueueA2.EnQue(a2);
        inQueueB2.EnQue(b2);
        inQueueB1.FreeTensor(b1);
    }

    // --- SHOW linear-cube-compute-cpp: course/01_basics.ipynb cell basics-23-cpp
    __aicore__ inline void Compute(const LocalTensor<float>& c1, uint32_t bk, uint32_t width, bool firstStep)
    {
        LocalTensor<half> a2 = inQueueA2.DeQue<half>();
        LocalTensor<half> b2 = inQueueB2.DeQue<half>();
        // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}: L0C starts from zero at the first K step
        Mmad(c1, a2, b2, MmadParams{static_cast<uint16_t>(O), static_cast<uint16_t>(width),
                                    static_cast<uint16_t>(bk), 0, false, firstStep});
        inQueueA2.FreeTensor(a2);
        inQueueB2.FreeTensor(b2);
    }
    // --- END SHOW

    __aicore__ inline void CopyOut(uint32_t n0, uint32_t width)
    {
        LocalTensor<float> c1 = outQueueCO1.DeQue<float>();
        // NZ -> ND and fp32 -> fp16: {nSize, mSize, srcStride (O padded to 16), dstStride (the GM row), reluEn, quant}
        Fixpipe(yGm[n0], c1, FixpipeParamsV220{static_cast<uint16_t>(width), static_cast<uint16_t>(O),
                                               static_cast<uint16_t>(Mp), lanes, false, QuantMode_t::F322F16});
        outQueueCO1.FreeTensor(c1);
    }

    TPipe pipe;
    TQue<TPosition::A1, 1> inQueueA1;     // L1: W'
    TQue<TPosition::B1, 2> inQueueB1;     // L1: X' tiles
    TQue<TPosition::A2, 2> inQueueA2;     // L0A
    TQue<TPosition::B2, 2> inQueueB2;     // L0B
    TQue<TPosition::CO1, 2> outQueueCO1;  // L0C (fp32 accumulator)
    GlobalTensor<half> wGm, xGm, yGm;
    uint32_t O = 0;
    uint32_t Mp = 0;
    uint32_t Kp = 0;
    uint32_t lanes = 0;
    uint32_t nb = 0;
    uint32_t baseK = 0;
};

extern "C" __global__ __aicore__ void linear_cube_cpp(GM_ADDR w, GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    GET_TILING_DATA_WITH_STRUCT(LinearCubeTilingData, tilingData, tiling);
    KernelLinearCube op;
    op.Init(w, x, y, tilingData);
    op.Process();
}
