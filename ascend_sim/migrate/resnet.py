"""A small ResNet for MNIST: basic blocks (残差连接) with BN, its numpy reference and BN folding.

    stem      conv3x3 1 -> 16, BN, ReLU                                           28 x 28
    block b1  conv3x3 16 -> 16, BN, ReLU, conv3x3, BN, + x, ReLU                    28 x 28
    block b2  conv3x3 16 -> 32 stride 2, BN, ReLU, conv3x3, BN, + down(x), ReLU     14 x 14
    block b3  conv3x3 32 -> 64 stride 2, BN, ReLU, conv3x3, BN, + down(x), ReLU      7 x 7
              down = conv1x1 stride 2, BN (only where the shape changes)
    head      global average pooling, linear 64 -> 10

``BLOCKS`` is the one description of the stages; ``CONVS`` is derived from it. Inference folds every BN
into its convolution (``w' = w * gamma / sqrt(var + eps)``, ``b' = beta - mean * gamma / sqrt(var + eps)``)
and the average pooling into the linear layer (``W'[o, c*HW + p] = W[o, c] / HW``), so the simulator runs
only convolutions, adds, ReLUs and one linear layer.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ascend_sim.models.lenet_reference import im2col

BN_EPS = 1e-5
SIDE = 28
STEM = 16
#: (name, in channels, out channels, stride) of each basic block, in order
BLOCKS = (("b1", 16, 16, 1), ("b2", 16, 32, 2), ("b3", 32, 64, 2))
FEATURES = BLOCKS[-1][2]
CLASSES = 10
WEIGHTS_FILE = "resnet_mnist.npz"


def has_downsample(cin: int, cout: int, stride: int) -> bool:
    """A block needs the 1x1 projection on its shortcut when it changes the channels or the size."""
    return stride != 1 or cin != cout


def _convs() -> dict[str, tuple[int, int, int, int]]:
    convs = {"stem": (STEM, 1, 3, 1)}
    for name, cin, cout, stride in BLOCKS:
        convs[f"{name}.conv1"] = (cout, cin, 3, stride)
        convs[f"{name}.conv2"] = (cout, cout, 3, 1)
        if has_downsample(cin, cout, stride):
            convs[f"{name}.down"] = (cout, cin, 1, stride)
    return convs


#: name -> (out channels, in channels, kernel, stride)
CONVS = _convs()
#: side of the last block's feature map (the pooled one)
FINAL_SIDE = SIDE // int(np.prod([s for *_, s in BLOCKS]))


def load_resnet_weights() -> dict[str, np.ndarray]:
    """The bundled trained weights (scripts/train_resnet.py)."""
    from ascend_sim.models.datasets import bundled_file
    with bundled_file(WEIGHTS_FILE).open("rb") as f, np.load(f) as npz:
        return {k: npz[k] for k in npz.files}


def fold_bn(params: Mapping[str, np.ndarray], name: str) -> tuple[np.ndarray, np.ndarray]:
    """(w', b') of conv ``name`` with its BN folded in (inference statistics)."""
    s = params[f"{name}.gamma"] / np.sqrt(params[f"{name}.var"] + BN_EPS)
    w = params[f"{name}.w"] * s[:, None, None, None]
    return w.astype(np.float32), (params[f"{name}.beta"] - params[f"{name}.mean"] * s).astype(np.float32)


def fold_head(params: Mapping[str, np.ndarray], hw: int) -> tuple[np.ndarray, np.ndarray]:
    """The linear layer over flattened ``[C, H, W]`` features that equals avg-pool then fc."""
    w = np.repeat(params["fc.w"][:, :, None], hw, axis=2).reshape(params["fc.w"].shape[0], -1) / hw
    return w.astype(np.float32), params["fc.b"].astype(np.float32)


def conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int) -> np.ndarray:
    """Convolution with pad k // 2 and ``stride`` (stride-1 windows, every stride-th kept), float32."""
    n, _, h, wd = x.shape
    o, _, k, _ = w.shape
    cols = im2col(x.astype(np.float32), k, k, k // 2).reshape(n, h, wd, -1)[:, ::stride, ::stride]
    y = cols @ w.reshape(o, -1).T + b
    return y.transpose(0, 3, 1, 2)


def resnet_logits_ref(params: Mapping[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The folded network in float32 numpy (what the simulator computes, without fp16 rounding)."""
    def cb(name, v):
        w, b = fold_bn(params, name)
        return conv_ref(v, w, b, CONVS[name][3])
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    a = relu(cb("stem", x))
    for name, cin, cout, stride in BLOCKS:
        short = cb(f"{name}.down", a) if has_downsample(cin, cout, stride) else a
        a = relu(cb(f"{name}.conv2", relu(cb(f"{name}.conv1", a))) + short)
    w, b = fold_head(params, a.shape[2] * a.shape[3])
    return a.reshape(len(x), -1) @ w.T + b


def resnet_predict_ref(params: Mapping[str, np.ndarray], x: np.ndarray, batch: int = 500) -> np.ndarray:
    """Predicted digits for normalized ``x [N, 1, 28, 28]``."""
    return np.concatenate([resnet_logits_ref(params, x[i:i + batch]).argmax(axis=1)
                           for i in range(0, len(x), batch)])


def resnet_graph(params: Mapping[str, np.ndarray]):
    """The folded network as a runtime Graph: conv_cube nodes (BN folded), relu, add_relu, flatten, linear."""
    from ascend_sim.models.lenet import Graph, Node

    def conv(name: str, src: str) -> Node:
        w, b = fold_bn(params, name)
        return Node(name, "conv_cube", (src,), {"w": w, "b": b, "stride": CONVS[name][3]})

    nodes = [conv("stem", "input"), Node("stem.relu", "relu", ("stem",))]
    src = "stem.relu"
    for name, cin, cout, stride in BLOCKS:
        nodes += [conv(f"{name}.conv1", src), Node(f"{name}.relu1", "relu", (f"{name}.conv1",)),
                  conv(f"{name}.conv2", f"{name}.relu1")]
        short = src
        if has_downsample(cin, cout, stride):
            nodes.append(conv(f"{name}.down", src))
            short = f"{name}.down"
        nodes.append(Node(f"{name}.out", "add_relu", (f"{name}.conv2", short)))
        src = f"{name}.out"
    wf, bf = fold_head(params, FINAL_SIDE * FINAL_SIDE)
    nodes += [Node("flatten", "flatten", (src,)), Node("fc", "linear", ("flatten",), {"w": wf, "b": bf})]
    return Graph(nodes)


__all__ = ["BN_EPS", "BLOCKS", "CONVS", "FEATURES", "CLASSES", "FINAL_SIDE", "STEM", "WEIGHTS_FILE",
           "has_downsample", "load_resnet_weights", "fold_bn", "fold_head", "conv_ref", "resnet_logits_ref",
           "resnet_predict_ref", "resnet_graph"]
