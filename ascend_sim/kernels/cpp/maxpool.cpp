// MaxPool2D (k x k windows, stride s, no padding): the C++ twin of ascend_sim/kernels/maxpool.py (half).
//
// Chunked layout [chunk][C, H, W, 16]: a chunk is 16 images, so one pixel of the chunk is exactly one 32-byte
// DataBlock and block strides address pixels. Per tile of cg channels (one contiguous DataCopy):
//   1. horizontal h[r, x] = max over dx of in[r, s*x + dx]: Max in the repeat form, up to 8 output pixels in the
//      DataBlocks of one repeat (block stride s), repeats stepping over rows (repeat stride W);
//   2. vertical out[c, y, x] = max over dy of h[c, s*y + dy, x]: the same with rows s rows apart.
// Launch: maxpool2d_cpp(x, y, MaxPoolTiling) on the blocks maxpool2d() uses.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;      // double buffering (双缓冲)
constexpr uint32_t BLOCK_BYTES = 32;   // one DataBlock: one pixel of the chunk's 16 images
constexpr uint32_t LANES = BLOCK_BYTES / sizeof(half);
constexpr uint32_t MAX_STRIDE = 255;   // block and repeat strides are 8-bit fields
constexpr uint32_t MAX_REPEAT = 255;

struct MaxPoolTilingData {  // filled by name from the host's MaxPoolTiling
    uint32_t C;
    uint32_t H;
    uint32_t W;
    uint32_t k;      // window
    uint32_t s;      // stride
    uint32_t lanes;  // images rounded up to 16
    uint32_t cg;     // channels per tile
};

struct Stride2d {   // a tensor's step per row and per column, in DataBlocks
    uint32_t row;
    uint32_t col;
};

class KernelMaxPool {
public:
    __aicore__ inline KernelMaxPool() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const MaxPoolTilingData& tiling)
    {
        C = tiling.C;
        H = tiling.H;
        W = tiling.W;
        k = tiling.k;
        s = tiling.s;
        lanes = tiling.lanes;
        cg = tiling.cg;
        OH = (H - k) / s + 1;
        OW = (W - k) / s + 1;
        xGm.SetGlobalBuffer((__gm__ half*)x, C * H * W * lanes);
        yGm.SetGlobalBuffer((__gm__ half*)y, C * OH * OW * lanes);
        pipe.InitBuffer(inQueue, BUFFER_NUM, cg * H * W * BLOCK_BYTES);
        pipe.InitBuffer(hBuf, cg * H * OW * BLOCK_BYTES);
        pipe.InitBuffer(outQueue, BUFFER_NUM, cg * OH * OW * BLOCK_BYTES);
    }

    __aicore__ inline void Process()
    {
        uint32_t chunks = lanes / LANES;
        uint32_t perBlock = (chunks + GetBlockNum() - 1) / GetBlockNum();   // this block's share of the chunks
        uint32_t first = GetBlockIdx() * perBlock < chunks ? GetBlockIdx() * perBlock : chunks;
        uint32_t last = first + perBlock < chunks ? first + perBlock : chunks;
        for (uint32_t chunk = first; chunk < last; chunk++) {
            for (uint32_t c0 = 0; c0 < C; c0 += cg) {
                uint32_t channels = C - c0 < cg ? C - c0 : cg;
                CopyIn(chunk * LANES, c0, channels);
                Compute(channels);
                CopyOut(chunk * LANES, c0, channels);
            }
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t n0, uint32_t c0, uint32_t channels)
    {
        LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        DataCopy(xLocal, xGm[n0 * C * H * W + c0 * H * W * LANES], channels * H * W * LANES);
        inQueue.EnQue(xLocal);
    }

    // --- SHOW maxpool-compute-cpp: course/01_basics.ipynb cell basics-19-cpp
    __aicore__ inline void Compute(uint32_t channels)
    {
        LocalTensor<half> xLocal = inQueue.DeQue<half>();
        LocalTensor<half> h = hBuf.Get<half>();
        LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        Stride2d hRows{OW, 1};       // h: OW pixels per row
        Stride2d xCols{W, s};        // the input: W pixels per row, every s-th pixel
        MaxGrid(h, xLocal, xLocal[LANES], channels * H, OW, hRows, xCols, xCols);        // taps dx = 0 and 1
        for (uint32_t dx = 2; dx < k; dx++) {
            MaxGrid(h, h, xLocal[dx * LANES], channels * H, OW, hRows, hRows, xCols);
        }
        Stride2d hPairs{s * OW, 1};  // h rows s apart
        Stride2d outRows{OW, 1};
        bool uniform = H == s * OH;  // then out row r reads h row s*r for every channel: one pass
        uint32_t groups = uniform ? 1 : channels;
        for (uint32_t g = 0; g < groups; g++) {
            uint32_t r0 = uniform ? 0 : g * OH;
            uint32_t rows = uniform ? channels * OH : OH;
            uint32_t src = (uniform ? 0 : g * H) * OW;
            LocalTensor<half> dst = yLocal[r0 * OW * LANES];
            MaxGrid(dst, h[src * LANES], h[(src + OW) * LANES], rows, OW, outRows, hPairs, hPairs);
            for (uint32_t dy = 2; dy < k; dy++) {
                MaxGrid(dst, dst, h[(src + dy * OW) * LANES], rows, OW, outRows, outRows, hPairs);
            }
        }
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
    }
    // --- END SHOW

    // dst[r, x] = max(a[r, x], b[r, x]) over rows x cols pixels, each tensor with its own Stride2d. Up to 8 items
    // in the DataBlocks of one repeat, repeats over the other axis: the arrangement with fewer instructions whose
    // strides fit the 8-bit fields (columns inside the repeat on a tie); one row at a time when none fits.
    __aicore__ inline void MaxGrid(const LocalTensor<half>& dst, const LocalTensor<half>& a,
                                   const LocalTensor<half>& b, uint32_t rows, uint32_t cols,
                                   Stride2d d, Stride2d sa, Stride2d sb)
    {
        bool fits = d.col <= MAX_STRIDE && sa.col <= MAX_STRIDE && sb.col <= MAX_STRIDE &&
                    d.row <= MAX_STRIDE && sa.row <= MAX_STRIDE && sb.row <= MAX_STRIDE;
        uint32_t colsCost = (cols + 7) / 8 * ((rows + MAX_REPEAT - 1) / MAX_REPEAT);
        uint32_t rowsCost = (rows + 7) / 8 * ((cols + MAX_REPEAT - 1) / MAX_REPEAT);
        if (fits && colsCost <= rowsCost) {   // columns in the repeat, rows as repeats
            MaxRepeat(dst, a, b, cols, rows, Stride2d{d.col, d.row}, Stride2d{sa.col, sa.row},
                      Stride2d{sb.col, sb.row});
        } else if (fits) {                    // rows in the repeat, columns as repeats
            MaxRepeat(dst, a, b, rows, cols, d, sa, sb);
        } else {                              // one row at a time (a row's column strides must fit)
            ascendc_assert(rows > 1, "maxpool2d_cpp: a column stride of more than 255 DataBlocks does not fit "
                                     "the 8-bit stride fields of BinaryRepeatParams; pool with a stride <= 255");
            for (uint32_t r = 0; r < rows; r++) {
                MaxGrid(dst[r * d.row * LANES], a[r * sa.row * LANES], b[r * sb.row * LANES], 1, cols,
                        Stride2d{0, d.col}, Stride2d{0, sa.col}, Stride2d{0, sb.col});
            }
        }
    }

    // inner items (8 per repeat, block stride .row of each Stride2d) x outer repeats (repeat stride .col).
    __aicore__ inline void MaxRepeat(const LocalTensor<half>& dst, const LocalTensor<half>& a,
                                     const LocalTensor<half>& b, uint32_t inner, uint32_t outer,
                                     Stride2d d, Stride2d sa, Stride2d sb)
    {
        BinaryRepeatParams params{static_cast<uint8_t>(d.row), static_cast<uint8_t>(sa.row),
                                  static_cast<uint8_t>(sb.row), static_cast<uint8_t>(d.col),
                                  static_cast<uint8_t>(sa.col), static_cast<uint8_t>(sb.col)};
        for (uint32_t i0 = 0; i0 < inner; i0 += 8) {
            uint32_t items = inner - i0 < 8 ? inner - i0 : 8;
            for (uint32_t o0 = 0; o0 < outer; o0 += MAX_REPEAT) {
                uint8_t repeats = outer - o0 < MAX_REPEAT ? outer - o0 : MAX_REPEAT;
                Max(dst[(i0 * d.row + o0 * d.col) * LANES], a[(i0 * sa.row + o0 * sa.col) * LANES],
                    b[(i0 * sb.row + o0 * sb.col) * LANES], items * LANES, repeats, params);
            }
        }
    }

    __aicore__ inline void CopyOut(uint32_t n0, uint32_t c0, uint32_t channels)
    {
        LocalTensor<half> yLocal = outQueue.DeQue<half>();
        DataCopy(yGm[n0 * C * OH * OW + c0 * OH * OW * LANES], yLocal, channels * OH * OW * LANES);
        outQueue.FreeTensor(yLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<QuePosition::VECCALC> hBuf;   // the horizontal maxima
    GlobalTensor<half> xGm, yGm;
    uint32_t C = 0;
    uint32_t H = 0;
    uint32_t W = 0;
    uint32_t k = 0;
    uint32_t s = 0;
    uint32_t lanes = 0;
    uint32_t cg = 0;
    uint32_t OH = 0;
    uint32_t OW = 0;
};

extern "C" __global__ __aicore__ void maxpool2d_cpp(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(MaxPoolTilingData, tilingData, tiling);
    KernelMaxPool op;
    op.Init(x, y, tilingData);
    op.Process();
}
