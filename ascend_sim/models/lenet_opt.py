"""LeNet-5 with Module 2's optimised kernels: the same network and weights, fewer and faster launches.

Compared with Module 1's graph (``lenet.lenet_graph``: 12 launches per batch), 6 launches:

* conv1 + relu1 -> ``conv2d_s2d``: space-to-depth on the host (4x4 pixel blocks into the 16 channels of
  one C0 group: a 2x2 convolution of an 8x8 map with 96 output channels) then ``conv2d_l3d``;
* conv2 + relu2 -> ``conv2d_l3d``: the cube with LoadData3D (each feature map read once into L1 as
  NC1HWC0, img2col into L0A, weights resident in L0B, bias in BT, ReLU on Fixpipe), two images packed
  into one 16-channel C0 group (block-diagonal weights);
* both convs write NC1HWC0 through Fixpipe ``CFG_NZ`` (one contiguous run per 16 channels of a chunk);
* fc1 + relu3 -> fc2 + relu4 -> fc3 -> ``mlp_cube``: one cube kernel, weights resident in L1, the
  activations written NZ to a per-core GM workspace and copied straight back (no Nd2Nz);
* pool1, pool2 and softmax are Module 1's kernels.

Layout conversions between the nodes (NCHW <-> NC1HWC0, space-to-depth) are the host's, not simulated.
Bias values go to the cube in float32 (BT holds float); Module 1's float16 path rounds them to half.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ascend_sim.kernels.opt.conv_l3d import conv2d_l3d
from ascend_sim.kernels.opt.conv_relu_vec import conv2d_relu
from ascend_sim.kernels.opt.conv_pool_mix import conv_relu_pool
from ascend_sim.kernels.opt.conv_s2d import conv2d_s2d, conv_relu_pool_s2d
from ascend_sim.kernels.opt.mlp_cube import mlp_cube
from ascend_sim.kernels.opt.tiled_matmul import tiled_matmul
from ascend_sim.models.lenet import Graph, LeNetRuntime, Node, lenet_graph


def conv_relu_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0, *, chip=None, **_: Any):
    """relu(conv2d) on the cube (LoadData3D img2col + Mmad, bias in BT, ReLU on Fixpipe, NC1HWC0 out through
    Fixpipe CFG_NZ); float16 out. One input channel (conv1): space-to-depth first (``conv_s2d``)."""
    if np.asarray(x).shape[1] * 4 <= 16:
        return conv2d_s2d(x, w, np.asarray(b, np.float32), pad, relu=True, chip=chip)
    return conv2d_l3d(x, w, np.asarray(b, np.float32), pad, relu=True, nz_out=True, chip=chip)


def linear_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray, *, relu: bool = False, chip=None, **_: Any):
    """``x @ w.T + b`` (ReLU optional) in one tiled cube matmul; float16 out."""
    return tiled_matmul(np.asarray(x, np.float16), np.asarray(w, np.float16).T, np.asarray(b, np.float32),
                        relu=relu, chip=chip)


def linear_relu_cube(x, w, b, *, chip=None, **_: Any):
    return linear_cube(x, w, b, relu=True, chip=chip)


def conv_relu_pool_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0, *, chip=None, **_: Any):
    """maxpool2x2(relu(conv2d)) in one MIX launch: the conv on the AICs (NC1HWC0 out through Fixpipe CFG_NZ
    into a GM workspace), the pool on the AIVs from L2. One input channel (conv1): space-to-depth first."""
    if np.asarray(x).shape[1] * 4 <= 16:
        return conv_relu_pool_s2d(x, w, np.asarray(b, np.float32), pad, chip=chip)
    return conv_relu_pool(x, w, np.asarray(b, np.float32), pad, chip=chip)


def mlp3_cube(x: np.ndarray, w1, b1, w2, b2, w3, b3, *, chip=None, **_: Any):
    """fc1 + relu3 -> fc2 + relu4 -> fc3 in one cube kernel (``mlp_cube``); float16 logits out."""
    layers = [(np.asarray(w, np.float16).T, np.asarray(b, np.float32)) for w, b in ((w1, b1), (w2, b2), (w3, b3))]
    return mlp_cube(np.asarray(x, np.float16), layers, chip=chip)


def conv_relu_vector(x, w, b, pad: int = 0, *, chip=None, **_: Any):
    return conv2d_relu(x, w, b, pad, dtype="float16", chip=chip)


OPT_OPS = {"conv_relu": conv_relu_vector, "conv_relu_cube": conv_relu_cube, "linear_relu_cube": linear_relu_cube,
           "linear_cube": linear_cube, "mlp3_cube": mlp3_cube, "conv_relu_pool_cube": conv_relu_pool_cube}


def lenet_opt_graph(weights: Mapping[str, np.ndarray]) -> Graph:
    """Module 1's graph with the fusions above (4 launches per batch instead of 12)."""
    lenet_graph(weights)                          # same shape checks
    w = {k: np.asarray(v) for k, v in weights.items()}

    def layer(name: str, op: str, src: str, **params) -> Node:
        return Node(name, op, (src,), params)

    return Graph([
        layer("conv1+relu1+pool1", "conv_relu_pool_cube", "input", w=w["conv1.w"], b=w["conv1.b"], pad=2),
        layer("conv2+relu2+pool2", "conv_relu_pool_cube", "conv1+relu1+pool1", w=w["conv2.w"], b=w["conv2.b"],
              pad=0),
        layer("flatten", "flatten", "conv2+relu2+pool2"),
        layer("fc1..fc3", "mlp3_cube", "flatten", w1=w["fc1.w"], b1=w["fc1.b"], w2=w["fc2.w"], b2=w["fc2.b"],
              w3=w["fc3.w"], b3=w["fc3.b"]),
        layer("softmax", "softmax", "fc1..fc3"),
    ])


class LeNetOptRuntime(LeNetRuntime):
    """``LeNetRuntime`` over ``lenet_opt_graph`` (float16 only: the cube path)."""

    def __init__(self, weights: Mapping[str, np.ndarray] | None = None, chip=None, keep_results: bool = True):
        super().__init__(weights, "float16", OPT_OPS, None, chip, keep_results)
        if weights is None:
            from ascend_sim.models.lenet_reference import load_lenet_weights
            weights = load_lenet_weights()
        self.graph = lenet_opt_graph(weights)
        self.reset_stats()


__all__ = ["LeNetOptRuntime", "lenet_opt_graph", "OPT_OPS", "conv_relu_cube", "linear_cube", "linear_relu_cube",
           "conv_relu_vector", "mlp3_cube", "conv_relu_pool_cube"]
