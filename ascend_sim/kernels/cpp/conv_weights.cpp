// Conv2D with the weights re-read from GM before every chunk of images: the C++ twin of
// ascend_sim/kernels/opt/conv_weights.py (conv2d_weights(..., cache=False); half in and out).
//
// The "before" of caching the filter taps on chip: the kernel of conv2d.cpp (taps read once per block into scalar
// registers) with one call more, RereadWeightsPerChunk, so that each chunk's CopyIn first copies the block's taps
// to UB again (DataCopyPad after an S_MTE2 flag: the scalar unit must have read the previous ones) and reads them
// with GetValue. Same numbers, more MTE2 and scalar work.
// Launch: conv2d_weights(x, w, b, pad, cache=False, kernel=mod.conv2d_reread_cpp) on conv2d()'s tiling and blocks.
#include "conv2d.cpp"

extern "C" __global__ __aicore__ void conv2d_reread_cpp(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(Conv2dTilingData, tilingData, tiling);
    KernelConv2d op;
    op.Init(x, w, b, y, tilingData);
    op.RereadWeightsPerChunk(w);
    op.Process();
}
