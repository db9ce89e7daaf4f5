"""Module 2 (optimisation) library kernels: one module per kernel.

``tiled_matmul``   the hand-written cube matmul (L1/L0 tiling, K prefetch in L1, double-buffered L0,
                   multi-core with tails; optional bias through BT and ReLU on Fixpipe: fused MatMul+Add+ReLU)
``default_matmul`` the named "default operator": the Matmul API (CFG_MDL) with GetTiling's default tiling
                   on the chip's cube-core count
``conv_cube``      the one conv on the cube: img2col (done explicitly on the host, any stride and padding)
                   feeding ``tiled_matmul`` or the Matmul API (``m4/gemm``); Conv+BN+ReLU with BN folded into the
                   weights and bias; the int8 form with its per-channel dequant; Module 4 uses it too
``conv_l3d``       Conv2D with LoadData3D (feature map once in L1), images packed into the C0 group,
                   NHWC rows or NC1HWC0 (Fixpipe CFG_NZ) out
``conv_s2d``       space-to-depth for few input channels (LeNet's conv1), then ``conv_l3d``
``conv_pool_mix``  Conv2D + ReLU + 2x2 max pool in one MIX launch (AIC conv -> L2 workspace -> AIV pool),
                   also straight on the NC1HWC0 map the previous kernel wrote (``conv_pool_mix_5hd``)
``s2d_transdata``  space-to-depth NCHW -> NC1HWC0 as a vector kernel (one Gather per batch of images)
``softmax_rows``   softmax over short rows (logits) in the cube's row layout, per 32-byte block
``mlp_cube``       a chain of dense layers (fc1 -> fc2 -> fc3) in one cube kernel
``matmul_mix``     MatMul + Add + ReLU with the epilogue on the AIVs (MIX)

``tiled_matmul``, ``matmul_mix``, ``conv_cube`` and ``conv_l3d`` take half or float inputs (``cube_common.cube_dtype``:
float when the operands are float32; C0 = 32 B / sizeof: 16 half, 8 float; float B is stored transposed in GM,
as LoadData transposes b16 fractals only).
"""
