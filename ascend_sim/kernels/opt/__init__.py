"""Module 2 (optimisation) library kernels: one module per kernel.

``tiled_matmul``   the hand-written cube matmul (L1/L0 tiling, K prefetch in L1, double-buffered L0,
                   multi-core with tails; optional bias through BT and ReLU on Fixpipe: fused MatMul+Add+ReLU)
``default_matmul`` the named "default operator": the Matmul API with GetTiling's default tiling on the
                   chip's cube-core count
``conv_cube``      Conv2D as img2col (done explicitly on the host: LoadData3D is not in the simulator yet)
                   feeding ``tiled_matmul``; Conv+BN+ReLU with BN folded into the weights and bias
"""
