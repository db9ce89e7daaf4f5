"""Library kernels: the LeNet-5 operators and the examples lessons show (add_custom, matmul).

The LeNet-5 operators:

One module per operator; each has the kernel (``@kernel``), its host-side
tiling and a wrapper with the same calling convention::

    out, result = conv2d(x, w, b, pad, dtype="float16", block_dim=None)
    out, result = maxpool2d(x, k=2, s=2, dtype=...)
    out, result = relu(x, dtype=...)
    out, result = linear(x, w, b, dtype=...)      # float16: cube; float32: vector unit
    out, result = softmax(x, dtype=...)

Inputs are NCHW / [N, K] numpy arrays; ``result`` is the LaunchResult.

``CPP_DIR`` holds the C++ twins of conv2d, maxpool2d, linear (cube) and softmax in Ascend C (half in and out):
``load(CPP_DIR / "conv2d.cpp").conv2d_cpp`` runs through the same wrapper with ``kernel=``, on the same tiling,
with the same instructions and cycles as the Python kernel. Lesson 02's twins sit beside them, half in
and out, launched the same way through the ``opt`` wrappers: ``tiled_matmul.cpp`` (``tiled_matmul``,
``conv2d_cube``, ``conv_bn_relu``), ``matmul_mix.cpp``, ``conv_weights.cpp`` (``conv2d_weights(cache=False)``),
``default_matmul.cpp`` and ``conv_l3d.cpp``; ``cube_common.h`` holds what the cube twins share.
"""
from pathlib import Path

from ascend_sim.kernels._common import from_chunks, resolve_dtype, to_chunks
from ascend_sim.kernels.conv2d import conv2d, conv2d_kernel
from ascend_sim.kernels.linear import linear, linear_cube_kernel, linear_vector_kernel
from ascend_sim.kernels.maxpool import maxpool2d, maxpool2d_kernel
from ascend_sim.kernels.relu import relu, relu_kernel
from ascend_sim.kernels.softmax import softmax, softmax_kernel

CPP_DIR = Path(__file__).resolve().parent / "cpp"      # the C++ twins, for ascend_sim.ascendc.load

__all__ = ["CPP_DIR", "conv2d", "maxpool2d", "relu", "linear", "softmax", "conv2d_kernel", "maxpool2d_kernel",
           "relu_kernel", "linear_cube_kernel", "linear_vector_kernel", "softmax_kernel", "resolve_dtype",
           "from_chunks", "to_chunks"]
