// Conv2D (stride 1, zero padding) on the vector unit: the C++ twin of ascend_sim/kernels/conv2d.py (half in and
// out, float accumulation).
//
// Chunked layout [chunk][C, H, W, nb]: the image index innermost, so one instruction updates a pixel of nb images.
// Per chunk the padded input [C, Hp, Wp, nb] sits in UB. Flatten a plane to p = y * Wp + x: output pixel p of
// channel o is bias[o] + sum over (c, i, j) of w[o, c, i, j] * in[c, p + i * Wp + j], so each weight tap is ONE
// Axpy over ((rows - 1) * Wp + OW) * nb contiguous elements that updates every output pixel of a band of rows;
// the columns x >= OW of that range are garbage and are skipped by the strided copy out. The input is Cast to
// float once, the band is Cast back to half once. The weights are scalars, read once per block with GetValue.
// Blocks: block = batchPart * oGroups + oGroup: a contiguous range of chunks and one group of output channels.
// Launch: conv2d_cpp(x, w, b, y, Conv2dTiling) on the blocks conv2d() uses (conv_blocks).
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t BLOCK_BYTES = 32;      // one DataBlock
constexpr uint32_t MAX_SCALARS = 4096;    // weights of one block's output channels held in scalar registers
constexpr uint32_t MAX_OUT = 256;         // biases likewise
constexpr uint32_t LANES_PER_REPEAT = 256 / sizeof(half);
constexpr uint32_t MAX_STRIDE = 255;      // repeat stride: an 8-bit field
constexpr uint32_t MAX_REPEAT = 255;

struct Conv2dTilingData {  // filled by name from the host's Conv2dTiling
    uint32_t C;
    uint32_t H;
    uint32_t W;
    uint32_t O;
    uint32_t KH;
    uint32_t KW;
    uint32_t pad;
    uint32_t lanes;      // images rounded up to a DataBlock of lanes
    uint32_t nb;         // lanes per chunk
    uint32_t rows;       // output rows per band
    uint32_t in_depth;   // VECIN buffers
    uint32_t out_depth;  // VECOUT buffers
    uint32_t o_groups;   // output-channel groups (blocks per batch part)
};

struct PadRun {   // a contiguous run of padding pixels of the padded planes [C, Hp, Wp]
    uint32_t start;
    uint32_t length;
};

class KernelConv2d {
public:
    __aicore__ inline KernelConv2d() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y, const Conv2dTilingData& t)
    {
        C = t.C;
        H = t.H;
        W = t.W;
        KH = t.KH;
        KW = t.KW;
        pad = t.pad;
        lanes = t.lanes;
        nb = t.nb;
        rows = t.rows;
        Hp = H + 2 * pad;
        Wp = W + 2 * pad;
        OH = Hp - KH + 1;
        OW = Wp - KW + 1;
        O = t.O;
        taps = C * KH * KW;
        uint32_t part = GetBlockIdx() / t.o_groups;
        uint32_t group = GetBlockIdx() % t.o_groups;
        Share((lanes + nb - 1) / nb, GetBlockNum() / t.o_groups, part, chunkFirst, chunkLast);
        Share(O, t.o_groups, group, oFirst, oLast);
        xGm.SetGlobalBuffer((__gm__ half*)x, C * H * W * lanes);
        yGm.SetGlobalBuffer((__gm__ half*)y, O * OH * OW * lanes);
        uint32_t plane = C * Hp * Wp * nb;
        uint32_t band = rows * Wp * nb;
        pipe.InitBuffer(inQueue, t.in_depth, plane * sizeof(half));
        pipe.InitBuffer(outQueue, t.out_depth, band * sizeof(half));
        pipe.InitBuffer(xBuf, plane * sizeof(float));
        pipe.InitBuffer(accBuf, band * sizeof(float));
        uint32_t outs = oLast - oFirst;
        if (outs > 0) {
            ascendc_assert(outs * taps <= MAX_SCALARS && outs <= MAX_OUT,
                           "conv2d_cpp: one block's output channels hold more than MAX_SCALARS (4096) weights or "
                           "MAX_OUT (256) biases for the scalar registers; launch more blocks (more output-channel "
                           "groups) or raise the two constants");
            pipe.InitBuffer(wBuf, Padded(outs * taps * sizeof(half)));
            LocalTensor<half> wLocal = wBuf.Get<half>();
            StageScalars(wLocal, w, oFirst * taps, outs * taps);
            for (uint32_t i = 0; i < outs * taps; i++) {     // each weight read once per block
                wv[i] = static_cast<float>(wLocal.GetValue(i));
            }
            pipe.InitBuffer(bBuf, Padded(outs * sizeof(half)));
            LocalTensor<half> bLocal = bBuf.Get<half>();
            StageScalars(bLocal, b, oFirst, outs);
            for (uint32_t i = 0; i < outs; i++) {
                bv[i] = static_cast<float>(bLocal.GetValue(i));
            }
        }
    }

    // The "before" of caching the weights (kernels/cpp/conv_weights.cpp): the taps come from GM again before
    // every chunk, as a port does when the weights load sits inside the loop. Call after Init.
    __aicore__ inline void RereadWeightsPerChunk(GM_ADDR w)
    {
        rereadW = w;
        rereadCount = (oLast - oFirst) * taps;
        pipe.InitBuffer(rereadBuf, Padded((rereadCount > 0 ? rereadCount : 1) * sizeof(half)));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t chunk = chunkFirst; chunk < chunkLast && oFirst < oLast; chunk++) {
            uint32_t n0 = chunk * nb;
            uint32_t width = lanes - n0 < nb ? lanes - n0 : nb;
            CopyIn(n0, width);
            Prepare(width);
            for (uint32_t o = oFirst; o < oLast; o++) {
                for (uint32_t y0 = 0; y0 < OH; y0 += rows) {
                    uint32_t bandRows = OH - y0 < rows ? OH - y0 : rows;
                    Compute(o, y0, bandRows, width);
                    CopyOut(o, y0, bandRows, n0, width);
                }
            }
        }
    }

private:
    // Part `index` of `items` split into `parts` contiguous ranges [first, last) (the last ones may be short).
    __aicore__ inline void Share(uint32_t items, uint32_t parts, uint32_t index, uint32_t& first, uint32_t& last)
    {
        uint32_t per = (items + parts - 1) / parts;
        first = index * per < items ? index * per : items;
        last = first + per < items ? first + per : items;
    }

    // count values at GM offset `first` into UB, ready for the scalar unit (it waits for the MTE2 copy to land).
    __aicore__ inline void StageScalars(const LocalTensor<half>& local, GM_ADDR src, uint32_t first, uint32_t count)
    {
        GlobalTensor<half> srcGm;
        srcGm.SetGlobalBuffer((__gm__ half*)src + first, count);
        DataCopyPad(local, srcGm, DataCopyExtParams{1, static_cast<uint32_t>(count * sizeof(half)), 0, 0, 0},
                    DataCopyPadExtParams<half>{false, 0, 0, 0});
        SetFlag<HardEvent::MTE2_S>(0);
        WaitFlag<HardEvent::MTE2_S>(0);
    }

    __aicore__ inline uint32_t Padded(uint32_t bytes)   // InitBuffer sizes: whole DataBlocks
    {
        return (bytes + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
    }

    // The chunk (contiguous in GM) into the padded planes: one strided DataCopy per channel.
    __aicore__ inline void CopyIn(uint32_t n0, uint32_t width)
    {
        if (rereadW != nullptr) {
            ReloadWeights();
        }
        uint16_t blk = width * sizeof(half) / BLOCK_BYTES;   // DataBlocks per pixel
        GlobalTensor<half> src = xGm[n0 * C * H * W];
        LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        if (pad > 0) {
            for (uint32_t c = 0; c < C; c++) {
                DataCopy(xLocal[((c * Hp + pad) * Wp + pad) * width], src[c * H * W * width],
                         DataCopyParams{static_cast<uint16_t>(H), static_cast<uint16_t>(W * blk), 0,
                                        static_cast<uint16_t>(2 * pad * blk)});
            }
        } else {
            DataCopy(xLocal, src, C * H * W * width);
        }
        inQueue.EnQue(xLocal);
    }

    // --- SHOW conv-weights-reread-cpp: course/02_optimization.ipynb cell opt-11-cpp
    // The taps again for this chunk: wait until the scalar unit has read the last ones (S_MTE2), copy, read.
    __aicore__ inline void ReloadWeights()
    {
        LocalTensor<half> wLocal = rereadBuf.Get<half>();
        SetFlag<HardEvent::S_MTE2>(0);
        WaitFlag<HardEvent::S_MTE2>(0);
        StageScalars(wLocal, rereadW, oFirst * taps, rereadCount);
        for (uint32_t i = 0; i < rereadCount; i++) {
            wv[i] = static_cast<float>(wLocal.GetValue(i));
        }
    }
    // --- END SHOW

    // Zero the padding, then the chunk to float in xBuf (freeing the input buffer).
    __aicore__ inline void Prepare(uint32_t width)
    {
        LocalTensor<half> xLocal = inQueue.DeQue<half>();
        if (pad > 0) {   // after the copy: a strided copy writes its gaps too
            ZeroPadding(xLocal, width);
        }
        LocalTensor<float> xf = xBuf.Get<float>();
        Cast(xf, xLocal, RoundMode::CAST_NONE, C * Hp * Wp * width);
        inQueue.FreeTensor(xLocal);
    }

    // Run r of the padding, adjacent runs merged: the top rows + left pad of channel 0, then after each image row
    // its right pad with the next row's left pad (with the bottom and top rows between two channels).
    __aicore__ inline PadRun Run(uint32_t r)
    {
        if (r == 0) {
            return PadRun{0, pad * Wp + pad};
        }
        uint32_t c = (r - 1) / H;
        uint32_t y = (r - 1) % H;
        uint32_t start = (c * Hp + pad + y) * Wp + pad + W;
        if (y + 1 < H) {
            return PadRun{start, 2 * pad};
        }
        return PadRun{start, c + 1 < C ? 2 * pad * Wp + 2 * pad : pad * Wp + pad};
    }

    // Duplicate(0) over every run; equal runs at a constant pitch go in one repeat-form instruction.
    __aicore__ inline void ZeroPadding(const LocalTensor<half>& buf, uint32_t width)
    {
        uint32_t runs = C * H + 1;
        uint32_t i = 0;
        while (i < runs) {
            PadRun first = Run(i);
            uint32_t j = i + 1;
            if (first.length * width <= LANES_PER_REPEAT && j < runs && Run(j).length == first.length) {
                uint32_t pitch = Run(j).start - first.start;
                while (j < runs && Run(j).length == first.length && Run(j).start - Run(j - 1).start == pitch) {
                    j++;
                }
                uint32_t repStride = pitch * width * sizeof(half) / BLOCK_BYTES;
                if (repStride <= MAX_STRIDE) {
                    for (uint32_t r0 = i; r0 < j; r0 += MAX_REPEAT) {
                        uint8_t repeats = j - r0 < MAX_REPEAT ? j - r0 : MAX_REPEAT;
                        Duplicate(buf[Run(r0).start * width], static_cast<half>(0), first.length * width, repeats,
                                  1, static_cast<uint8_t>(repStride));
                    }
                    i = j;
                    continue;
                }
                j = i + 1;
            }
            Duplicate(buf[first.start * width], static_cast<half>(0), first.length * width);
            i = j;
        }
    }

    // --- SHOW conv2d-compute-cpp: course/01_basics.ipynb cell basics-17-cpp
    // One band of output channel o: the bias, then one Axpy per weight tap, then Cast to half.
    __aicore__ inline void Compute(uint32_t o, uint32_t y0, uint32_t bandRows, uint32_t width)
    {
        LocalTensor<float> xf = xBuf.Get<float>();
        LocalTensor<float> acc = accBuf.Get<float>();
        uint32_t count = ((bandRows - 1) * Wp + OW) * width;
        uint32_t k = o - oFirst;                              // index into this block's weights
        Duplicate(acc, bv[k], count);
        for (uint32_t c = 0; c < C; c++) {
            for (uint32_t i = 0; i < KH; i++) {
                uint32_t row = (c * Hp + y0 + i) * Wp * width;
                for (uint32_t j = 0; j < KW; j++) {
                    Axpy(acc, xf[row + j * width], wv[k * taps + (c * KH + i) * KW + j], count);
                }
            }
        }
        LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        Cast(yLocal, acc, RoundMode::CAST_NONE, count);
        outQueue.EnQue(yLocal);
    }
    // --- END SHOW

    // bandRows output rows, skipping the garbage columns: one strided DataCopy.
    __aicore__ inline void CopyOut(uint32_t o, uint32_t y0, uint32_t bandRows, uint32_t n0, uint32_t width)
    {
        uint16_t blk = width * sizeof(half) / BLOCK_BYTES;
        LocalTensor<half> yLocal = outQueue.DeQue<half>();
        DataCopy(yGm[n0 * O * OH * OW + (o * OH + y0) * OW * width], yLocal,
                 DataCopyParams{static_cast<uint16_t>(bandRows), static_cast<uint16_t>(OW * blk),
                                static_cast<uint16_t>((Wp - OW) * blk), 0});
        outQueue.FreeTensor(yLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQueue;     // the chunk in half (1 or 2 buffers: tiling.in_depth)
    TQue<QuePosition::VECOUT, 2> outQueue;   // a band in half (tiling.out_depth)
    TBuf<QuePosition::VECCALC> xBuf;         // the padded chunk in float
    TBuf<QuePosition::VECCALC> accBuf;       // a band's float accumulator
    TBuf<QuePosition::VECCALC> wBuf;         // the weights on their way to the scalar registers
    TBuf<QuePosition::VECCALC> bBuf;         // the biases likewise
    TBuf<QuePosition::VECCALC> rereadBuf;    // the weights again, per chunk (RereadWeightsPerChunk only)
    GM_ADDR rereadW = nullptr;
    uint32_t rereadCount = 0;
    GlobalTensor<half> xGm, yGm;
    float wv[MAX_SCALARS];
    float bv[MAX_OUT];
    uint32_t C = 0, H = 0, W = 0, O = 0, KH = 0, KW = 0, pad = 0, lanes = 0, nb = 0, rows = 0;
    uint32_t Hp = 0, Wp = 0, OH = 0, OW = 0, taps = 0;
    uint32_t chunkFirst = 0, chunkLast = 0, oFirst = 0, oLast = 0;
};

extern "C" __global__ __aicore__ void conv2d_cpp(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(Conv2dTilingData, tilingData, tiling);
    KernelConv2d op;
    op.Init(x, w, b, y, tilingData);
    op.Process();
}
