// MatMul + Add + ReLU as one MIX kernel (融合算子, AIC -> AIV): the C++ twin of ascend_sim/kernels/opt/matmul_mix.py
// (half A, B and C; float bias).
//
// Per C tile the AIC (cube core) runs the tiled matmul of tiled_matmul.cpp, then one Fixpipe of the float tile to
// its own slot of a GM workspace and CrossCoreSetFlag<2, PIPE_FIX> (mode 2: the two AIVs of its group). Each AIV waits for every tile of its group
// (CrossCoreWaitFlag), reads its half of the tile's rows, adds the bias row by row, applies ReLU, casts to half and
// writes its rows of C. Launch: matmul_add_relu_mix_run(a, b, bias, kernel=mod.matmul_add_relu_mix_cpp) runs it with
// the wrapper's arguments (a, b, bias, workspace, c, TiledMatmulTiling).
#include "tiled_matmul.cpp"   // KernelTiledMatmul, the cube side (HandOffTo: tiles to the workspace, then the flag)

constexpr uint32_t CHUNK_BYTES = 32 * 1024;      // float rows per vector pass: two in, two out buffers fit UB
constexpr uint32_t BLOCK_BYTES = 32;             // one DataBlock

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
        KernelTiledMatmul op;
        op.Init(a, b, bias, c, tilingData);   // C is written by the AIVs
        op.HandOffTo(ws);
        op.Process();
    } else {
        VectorEpilogue ep;
        ep.Init(ws, bias, c, tilingData);
        ep.Process();
    }
}
// --- END SHOW
