"""LeNet-5 with Module 2's optimised kernels: the same network and weights, fewer and faster launches.

Compared with Module 1's graph (``lenet.lenet_graph``: 12 launches per batch), 5 launches, and every
byte between the NCHW float16 image batch in GM and the probabilities is moved by a simulated kernel
(each node hands the next one its GM output array unchanged: no host reshuffling between nodes):

* ``s2d_transdata`` (AIV): the NCHW images -> the space-to-depth NC1HWC0 map conv1 reads (4x4 pixel
  blocks into the 16 channels of one C0 group, zero padding included): one Gather per batch of images;
* conv1 + relu1 + pool1 -> ``conv_pool_mix`` (MIX): conv1 as a 2x2 convolution of the 8x8 s2d map with
  128 output channels in ``pool_order`` (LoadData3D img2col, weights resident in L0B, bias in BT, ReLU on
  Fixpipe, NC1HWC0 out through Fixpipe CFG_NZ into an L2 workspace); the AIVs pool it as the element-wise
  max of 4 channel groups and write the pooled map as it comes: the 14x14x6 map in s2d-by-2 form,
  ``[N, 2, 7, 7, 16]`` NC1HWC0 (channel (py, px, o), 24 of 32 used);
* conv2 + relu2 + pool2 -> ``conv_pool_mix`` on that map as it is: conv2 becomes a 3x3 convolution of the
  7x7 map (``s2d_pool_weights`` with ``pooled_channels``: the weights read the channels where pool1 put
  them), 64 output channels in ``pool_order``; the pooled ``[N, 1, 5, 5, 16]`` is the 400-element row
  fc1 reads;
* fc1 + relu3 -> fc2 + relu4 -> fc3 -> ``mlp_cube``: one cube kernel reading those rows (fc1's weights
  permuted offline from NCHW-flatten order to that (y, x, c) order), weights resident in L1, the
  activations written NZ to a per-core GM workspace and copied straight back, the logits written as rows of
  16 half (one 32-byte block each, the 6 padded classes 0);
* softmax -> ``softmax_rows`` (AIV): per block, masked to the 10 classes (Module 1's softmax puts the
  images on the lanes, a host transpose before and after).

Only the weights are laid out on the host (once per graph, as a framework stores FRACTAL_Z weights).
The zero-weight channels cost cube work (conv2: 288 K columns per image, 8 of
every 32 input channels zero, against 400 per pair of images packed in one C0 group before) and are in
the timed figures. Bias values go to the cube in float32 (BT holds float); Module 1's float16 path rounds
them to half.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ascend_sim.kernels.opt.conv_l3d import conv2d_l3d
from ascend_sim.kernels.opt.conv_relu_vec import conv2d_relu
from ascend_sim.kernels.opt.conv_pool_mix import conv_pool_mix_5hd, conv_relu_pool
from ascend_sim.kernels.opt.conv_s2d import (conv2d_s2d, conv_relu_pool_s2d, pooled_channels, s2d_block,
                                             s2d_pool_weights)
from ascend_sim.kernels.opt.s2d_transdata import s2d_transdata
from ascend_sim.kernels.opt.softmax_rows import softmax_rows
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


def mlp3_cube(x: np.ndarray, w1, b1, w2, b2, w3, b3, *, pad_out: bool = False, chip=None, **_: Any):
    """fc1 + relu3 -> fc2 + relu4 -> fc3 in one cube kernel (``mlp_cube``); float16 logits out. ``x`` may be the
    previous kernel's NC1HWC0 output: its rows are read as they lie in GM (a reshape, no copy). ``pad_out``:
    logit rows of 16 (``mlp_cube``), the layout ``softmax_rows`` reads."""
    x = np.asarray(x)
    layers = [(np.asarray(w, np.float16).T, np.asarray(b, np.float32)) for w, b in ((w1, b1), (w2, b2), (w3, b3))]
    return mlp_cube(x.reshape(len(x), -1), layers, pad_out=pad_out, chip=chip)


def softmax_logits(x: np.ndarray, *, classes: int, chip=None, **_: Any):
    """Softmax of the first ``classes`` columns of the MLP's padded logit rows, in the rows' own layout
    (``softmax_rows``); ``[N, classes]`` probabilities, a view of the kernel's GM output."""
    return softmax_rows(x, classes, chip=chip)


def s2d_input(x: np.ndarray, *, pad: int, block: int, kh: int, kw: int, chip=None, **_: Any):
    """The NCHW float16 image batch -> the s2d NC1HWC0 map, in one simulated vector kernel (``s2d_transdata``)."""
    return s2d_transdata(x, pad, block, kh, kw, chip=chip)


def conv_relu_pool_5hd(x5: np.ndarray, w: np.ndarray, b: np.ndarray, *, chip=None, **_: Any):
    """maxpool2x2(relu(conv2d)) in one MIX launch on the NC1HWC0 map the previous kernel wrote (``w``, ``b``: the
    s2d weights in ``pool_order``); the pooled NC1HWC0 map out, as the AIVs wrote it."""
    return conv_pool_mix_5hd(x5, w, b, 0, mode="groups", chip=chip)


def fc_weights_for_map(w: np.ndarray, c: int, h: int, wd: int, cells: tuple[int, int], channels: np.ndarray):
    """fc weights ``[O, c*h*wd]`` (NCHW flatten order) -> ``[O, IH*IW*len(channels)]`` for the rows of an
    NC1HWC0 map ``[1, IH, IW, C0]`` (C1 = 1) whose channel ``k`` holds ``channels[k]`` (or -1); 0 elsewhere."""
    ih, iw = cells
    o = w.shape[0]
    out = np.zeros((o, ih, iw, channels.size), np.asarray(w).dtype)
    used = channels >= 0
    out[:, :h, :wd, used] = np.asarray(w).reshape(o, c, h, wd).transpose(0, 2, 3, 1)[..., channels[used]]
    return out.reshape(o, -1)


def conv_relu_vector(x, w, b, pad: int = 0, *, chip=None, **_: Any):
    return conv2d_relu(x, w, b, pad, dtype="float16", chip=chip)


OPT_OPS = {"conv_relu": conv_relu_vector, "conv_relu_cube": conv_relu_cube, "linear_relu_cube": linear_relu_cube,
           "linear_cube": linear_cube, "mlp3_cube": mlp3_cube, "conv_relu_pool_cube": conv_relu_pool_cube,
           "s2d_transdata": s2d_input, "conv_relu_pool_5hd": conv_relu_pool_5hd,
           "softmax_rows": softmax_logits}


def lenet_opt_graph(weights: Mapping[str, np.ndarray]) -> Graph:
    """Module 1's graph with the fusions and layouts above (5 launches per batch instead of 12)."""
    lenet_graph(weights)                          # same shape checks
    w = {k: np.asarray(v) for k, v in weights.items()}
    o1, c1, kh1, kw1 = w["conv1.w"].shape
    o2, _, kh2, kw2 = w["conv2.w"].shape
    blk = s2d_block(c1)                                          # 4: 4x4 pixel blocks into one C0 group
    w1, b1 = s2d_pool_weights(w["conv1.w"], w["conv1.b"], blk)
    w2, b2 = s2d_pool_weights(w["conv2.w"], w["conv2.b"], 2, pooled_channels(o1, blk // 2))
    # conv1 (a ks1 x ks1 s2d kernel over the s2d input) gives m x m (7) cells of blk x blk pixels, pool1 keeps
    # m x m cells of 2x2, conv2 (ks2 x ks2 over them) leaves m - ks2 + 1 (5): pool2's 5x5, channel o2 in slot o2
    ks1 = -(-(blk - 1 + kh1) // blk)
    m = -(-(28 + 2 * 2 - kh1 + 1) // blk) + -(-(blk - 1 + kh1) // blk) - 1 - ks1 + 1
    cells = m - w2.shape[2] + 1
    pooled = (28 // 2 - kh2 + 1) // 2
    fc1 = fc_weights_for_map(w["fc1.w"], o2, pooled, pooled, (cells, cells), pooled_channels(o2, 1))

    def layer(name: str, op: str, src: str, **params) -> Node:
        return Node(name, op, (src,), params)

    return Graph([
        layer("s2d", "s2d_transdata", "input", pad=2, block=blk, kh=kh1, kw=kw1),
        layer("conv1+relu1+pool1", "conv_relu_pool_5hd", "s2d", w=w1, b=b1),
        layer("conv2+relu2+pool2", "conv_relu_pool_5hd", "conv1+relu1+pool1", w=w2, b=b2),
        layer("fc1..fc3", "mlp3_cube", "conv2+relu2+pool2", w1=fc1, b1=w["fc1.b"], w2=w["fc2.w"], b2=w["fc2.b"],
              w3=w["fc3.w"], b3=w["fc3.b"], pad_out=True),
        layer("softmax", "softmax_rows", "fc1..fc3", classes=w["fc3.w"].shape[0]),
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
           "conv_relu_vector", "mlp3_cube", "conv_relu_pool_cube",
           "s2d_input", "conv_relu_pool_5hd", "fc_weights_for_map", "softmax_logits"]
