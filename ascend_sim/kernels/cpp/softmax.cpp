// Softmax over classes, numerically stable: the C++ twin of ascend_sim/kernels/softmax.py (half in and out).
//
// Lane layout [K, lanes]: K classes, the image index innermost. A chunk of nb images (nb <= 64) is cast to float,
// so one class row is one 256-byte repeat. Per chunk: the row max by a halving tree of Max, Sub of the max row from
// every row (repeat form, the max row read with repeat stride 0), Exp, the row sum by an Add tree, Div by the sum,
// and one Cast back to half. Launch: softmax_cpp(x, y, SoftmaxTiling) on the blocks softmax() uses.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;      // double buffering (双缓冲)
constexpr uint32_t MAX_BURSTS = 4095;  // DataCopyParams.blockCount limit
constexpr uint32_t MAX_ROWS = 255;     // repeats of one repeat-form instruction
constexpr uint32_t BLOCK_BYTES = 32;   // one DataBlock

struct SoftmaxTilingData {  // filled by name from the host's SoftmaxTiling
    uint32_t K;      // classes
    uint32_t lanes;  // images rounded up to a DataBlock (the GM row length)
    uint32_t nb;     // images per chunk
};

class KernelSoftmax {
public:
    __aicore__ inline KernelSoftmax() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxTilingData& tiling)
    {
        K = tiling.K;
        lanes = tiling.lanes;
        nb = tiling.nb;
        xGm.SetGlobalBuffer((__gm__ half*)x, K * lanes);
        yGm.SetGlobalBuffer((__gm__ half*)y, K * lanes);
        pipe.InitBuffer(inQueue, BUFFER_NUM, K * nb * sizeof(half));
        pipe.InitBuffer(outQueue, BUFFER_NUM, K * nb * sizeof(half));
        pipe.InitBuffer(work, K * nb * sizeof(float));
        pipe.InitBuffer(scratch, (K / 2 > 1 ? K / 2 : 1) * nb * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        uint32_t chunks = (lanes + nb - 1) / nb;
        uint32_t perBlock = (chunks + GetBlockNum() - 1) / GetBlockNum();   // this block's share of the chunks
        uint32_t first = GetBlockIdx() * perBlock < chunks ? GetBlockIdx() * perBlock : chunks;
        uint32_t last = first + perBlock < chunks ? first + perBlock : chunks;
        for (uint32_t chunk = first; chunk < last; chunk++) {
            uint32_t n0 = chunk * nb;
            uint32_t width = lanes - n0 < nb ? lanes - n0 : nb;
            CopyIn(n0, width);
            Compute(width);
            CopyOut(n0, width);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t n0, uint32_t width)
    {
        LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        uint16_t blk = width * sizeof(half) / BLOCK_BYTES;               // DataBlocks per class row
        uint16_t gap = (lanes - width) * sizeof(half) / BLOCK_BYTES;     // the other images of the GM row
        for (uint32_t k0 = 0; k0 < K; k0 += MAX_BURSTS) {
            uint16_t rows = K - k0 < MAX_BURSTS ? K - k0 : MAX_BURSTS;
            DataCopy(xLocal[k0 * width], xGm[k0 * lanes + n0], DataCopyParams{rows, blk, gap, 0});
        }
        inQueue.EnQue(xLocal);
    }

    // --- SHOW softmax-compute-cpp: course/01_basics.ipynb cell basics-25-cpp
    __aicore__ inline void Compute(uint32_t width)
    {
        LocalTensor<half> xLocal = inQueue.DeQue<half>();
        LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        LocalTensor<float> xf = work.Get<float>();
        LocalTensor<float> tmp = scratch.Get<float>();
        Cast(xf, xLocal, RoundMode::CAST_NONE, K * width);
        LocalTensor<float> rowMax = ReduceRows(tmp, xf, width, false);
        Broadcast(xf, rowMax, width, false);                             // x - max: every exponent is now <= 0
        Exp(xf, xf, K * width);
        LocalTensor<float> rowSum = ReduceRows(tmp, xf, width, true);
        Broadcast(xf, rowSum, width, true);                              // e / sum
        Cast(yLocal, xf, RoundMode::CAST_NONE, K * width);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
    }
    // --- END SHOW

    // Row max (or sum) of the K rows of src by halving: rows i and rows-h+i into tmp row i, an odd middle row
    // stays put; the result is row 0 of the returned tensor.
    __aicore__ inline LocalTensor<float> ReduceRows(LocalTensor<float>& tmp, LocalTensor<float>& src, uint32_t width,
                                                    bool sum)
    {
        if (K == 1) {
            return src;
        }
        uint32_t h = K / 2;
        Combine(tmp, src, src[(K - h) * width], h * width, sum);
        if (K % 2 == 1) {
            Combine(tmp, tmp, src[h * width], width, sum);
        }
        for (uint32_t rows = h; rows > 1; rows -= rows / 2) {
            Combine(tmp, tmp, tmp[(rows - rows / 2) * width], rows / 2 * width, sum);
        }
        return tmp;
    }

    __aicore__ inline void Combine(const LocalTensor<float>& dst, const LocalTensor<float>& a,
                                   const LocalTensor<float>& b, uint32_t count, bool sum)
    {
        if (sum) {
            Add(dst, a, b, count);
        } else {
            Max(dst, a, b, count);
        }
    }

    // x[k] = x[k] - row (or x[k] / row) for every class k: one repeat per class, the row read with repeat stride 0.
    __aicore__ inline void Broadcast(LocalTensor<float>& x, LocalTensor<float>& row, uint32_t width, bool divide)
    {
        uint8_t rep = width * sizeof(float) / BLOCK_BYTES;
        BinaryRepeatParams params{1, 1, 1, rep, rep, 0};
        for (uint32_t k0 = 0; k0 < K; k0 += MAX_ROWS) {
            uint8_t rows = K - k0 < MAX_ROWS ? K - k0 : MAX_ROWS;
            if (divide) {
                Div(x[k0 * width], x[k0 * width], row, width, rows, params);
            } else {
                Sub(x[k0 * width], x[k0 * width], row, width, rows, params);
            }
        }
    }

    __aicore__ inline void CopyOut(uint32_t n0, uint32_t width)
    {
        LocalTensor<half> yLocal = outQueue.DeQue<half>();
        uint16_t blk = width * sizeof(half) / BLOCK_BYTES;
        uint16_t gap = (lanes - width) * sizeof(half) / BLOCK_BYTES;
        for (uint32_t k0 = 0; k0 < K; k0 += MAX_BURSTS) {
            uint16_t rows = K - k0 < MAX_BURSTS ? K - k0 : MAX_BURSTS;
            DataCopy(yGm[k0 * lanes + n0], yLocal[k0 * width], DataCopyParams{rows, blk, 0, gap});
        }
        outQueue.FreeTensor(yLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<QuePosition::VECCALC> work;      // the chunk in float
    TBuf<QuePosition::VECCALC> scratch;   // the reduction trees
    GlobalTensor<half> xGm, yGm;
    uint32_t K = 0;
    uint32_t lanes = 0;
    uint32_t nb = 0;
};

extern "C" __global__ __aicore__ void softmax_cpp(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(SoftmaxTilingData, tilingData, tiling);
    KernelSoftmax op;
    op.Init(x, y, tilingData);
    op.Process();
}
