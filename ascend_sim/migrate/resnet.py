"""A small ResNet for MNIST: basic blocks (残差连接) with BN, its numpy reference and BN folding.

    stem      conv3x3 1 -> 16, BN, ReLU                       28 x 28
    block 1   conv3x3 16 -> 16, BN, ReLU, conv3x3, BN, + x, ReLU
    block 2   conv3x3 16 -> 32 stride 2, BN, ReLU, conv3x3, BN, + down(x), ReLU     14 x 14
              down = conv1x1 16 -> 32 stride 2, BN
    head      global average pooling, linear 32 -> 10

Inference folds every BN into its convolution (``w' = w * gamma / sqrt(var + eps)``, ``b' = beta -
mean * gamma / sqrt(var + eps)``) and the average pooling into the linear layer (``W'[o, c*HW + p] =
W[o, c] / HW``), so the simulator runs only convolutions, adds, ReLUs and one linear layer.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ascend_sim.models.lenet_reference import im2col

BN_EPS = 1e-5
#: name -> (out channels, in channels, kernel, stride)
CONVS = {"stem": (16, 1, 3, 1), "b1.conv1": (16, 16, 3, 1), "b1.conv2": (16, 16, 3, 1),
         "b2.conv1": (32, 16, 3, 2), "b2.conv2": (32, 32, 3, 1), "b2.down": (32, 16, 1, 2)}
WEIGHTS_FILE = "resnet_mnist.npz"


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
    a0 = relu(cb("stem", x))
    a1 = relu(cb("b1.conv2", relu(cb("b1.conv1", a0))) + a0)
    a2 = relu(cb("b2.conv2", relu(cb("b2.conv1", a1))) + cb("b2.down", a1))
    w, b = fold_head(params, a2.shape[2] * a2.shape[3])
    return a2.reshape(len(x), -1) @ w.T + b


def resnet_predict_ref(params: Mapping[str, np.ndarray], x: np.ndarray, batch: int = 500) -> np.ndarray:
    """Predicted digits for normalized ``x [N, 1, 28, 28]``."""
    return np.concatenate([resnet_logits_ref(params, x[i:i + batch]).argmax(axis=1)
                           for i in range(0, len(x), batch)])


__all__ = ["BN_EPS", "CONVS", "WEIGHTS_FILE", "load_resnet_weights", "fold_bn", "fold_head", "conv_ref",
           "resnet_logits_ref", "resnet_predict_ref"]


def resnet_graph(params: Mapping[str, np.ndarray]):
    """The folded network as a runtime Graph: conv_cube nodes (BN folded), relu, add_relu, flatten, linear."""
    from ascend_sim.models.lenet import Graph, Node

    def conv(name: str, src: str) -> Node:
        w, b = fold_bn(params, name)
        return Node(name, "conv_cube", (src,), {"w": w, "b": b, "stride": CONVS[name][3]})

    hw = (28 // 2) * (28 // 2)
    wf, bf = fold_head(params, hw)
    return Graph([
        conv("stem", "input"), Node("stem.relu", "relu", ("stem",)),
        conv("b1.conv1", "stem.relu"), Node("b1.relu1", "relu", ("b1.conv1",)),
        conv("b1.conv2", "b1.relu1"), Node("b1.out", "add_relu", ("b1.conv2", "stem.relu")),
        conv("b2.conv1", "b1.out"), Node("b2.relu1", "relu", ("b2.conv1",)),
        conv("b2.conv2", "b2.relu1"), conv("b2.down", "b1.out"),
        Node("b2.out", "add_relu", ("b2.conv2", "b2.down")),
        Node("flatten", "flatten", ("b2.out",)),
        Node("fc", "linear", ("flatten",), {"w": wf, "b": bf}),
    ])


__all__ += ["resnet_graph"]
