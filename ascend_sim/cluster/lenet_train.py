"""LeNet5Train: LeNet-5 with a hand-written fp32 backward pass, the model Module 3 trains with DDP.

The network is the one of ``ascend_sim.models.lenet_reference`` (conv 6@5x5 pad 2, ReLU, maxpool 2, conv 16@5x5,
ReLU, maxpool 2, fc 400-120-84-10), with torch's parameter names and layouts (``conv1.weight`` [O, C, kh, kw],
``fc1.weight`` [out, in]) so that a state dict moves to ``torch.nn`` unchanged (gloo.py builds that twin).
It has the interface DistributedDataParallel needs: ``parameters()``, ``loss_and_grads(x, y)`` (mean softmax
cross-entropy, like ``F.cross_entropy``) and ``backward_flops(batch)``. Max pooling sends the gradient to the first
maximum of each window, as torch does.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ascend_sim.cluster.nn_ops import conv2d, conv2d_backward, maxpool2, maxpool2_backward, softmax_xent
from ascend_sim.models.lenet_reference import LENET_PARAM_SHAPES, load_lenet_weights

F32 = np.float32
LAYERS = ("conv1", "conv2", "fc1", "fc2", "fc3")
PADS = {"conv1": 2, "conv2": 0}


def _torch_name(ref_name: str) -> str:
    layer, kind = ref_name.split(".")
    return f"{layer}.{'weight' if kind == 'w' else 'bias'}"


class LeNet5Train:
    """LeNet-5 in numpy fp32 with forward, backward and torch's parameter names."""

    def __init__(self, seed: int = 0, weights: Mapping[str, np.ndarray] | None = None):
        """``weights``: a state dict with torch names; by default torch-style uniform(±1/sqrt(fan_in)) from ``seed``."""
        if weights is not None:
            self.params = {k: np.array(weights[k], F32) for k in self.names()}
            return
        rng = np.random.default_rng(seed)
        self.params = {}
        for ref, shape in LENET_PARAM_SHAPES.items():
            layer = ref.split(".")[0]
            w_shape = LENET_PARAM_SHAPES[f"{layer}.w"]
            bound = 1.0 / np.sqrt(np.prod(w_shape[1:]))
            self.params[_torch_name(ref)] = rng.uniform(-bound, bound, shape).astype(F32)

    @staticmethod
    def names() -> list[str]:
        return [_torch_name(k) for k in LENET_PARAM_SHAPES]

    @classmethod
    def pretrained(cls) -> "LeNet5Train":
        """The bundled trained weights (models/data/lenet5_weights.npz)."""
        return cls(weights={_torch_name(k): v for k, v in load_lenet_weights().items()})

    def parameters(self) -> list[tuple[str, np.ndarray]]:
        return list(self.params.items())

    def state_dict(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in self.params.items()}

    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, dict]:
        p, cache = self.params, {}
        a = np.asarray(x, F32)
        for layer in ("conv1", "conv2"):
            cache[layer + ".in"] = a.shape
            z, cache[layer + ".cols"] = conv2d(a, p[layer + ".weight"], p[layer + ".bias"], PADS[layer])
            cache[layer + ".relu"] = z > 0
            a, cache[layer + ".pool"] = maxpool2(np.maximum(z, F32(0)))
        a = a.reshape(len(a), -1)
        for layer in ("fc1", "fc2", "fc3"):
            cache[layer + ".in"] = a
            a = a @ p[layer + ".weight"].T + p[layer + ".bias"]
            if layer != "fc3":
                cache[layer + ".relu"] = a > 0
                a = np.maximum(a, F32(0))
        return a, cache

    def logits(self, x: np.ndarray) -> np.ndarray:
        return self._forward(x)[0]

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(self.logits(x), axis=1)

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """Mean cross-entropy of the batch and the gradient of every parameter."""
        z, cache = self._forward(x)
        p, g, b = self.params, {}, len(z)
        loss, d = softmax_xent(z, y)
        for layer in ("fc3", "fc2", "fc1"):
            if layer != "fc3":
                d = d * cache[layer + ".relu"]
            g[layer + ".weight"] = d.T @ cache[layer + ".in"]
            g[layer + ".bias"] = d.sum(axis=0)
            d = d @ p[layer + ".weight"]
        d = d.reshape(b, 16, 5, 5)
        for layer in ("conv2", "conv1"):
            d = maxpool2_backward(d, cache[layer + ".pool"]) * cache[layer + ".relu"]
            d, g[layer + ".weight"], g[layer + ".bias"] = conv2d_backward(
                d, cache[layer + ".cols"], p[layer + ".weight"], cache[layer + ".in"], PADS[layer])
        return loss, {k: g[k].astype(F32) for k in p}

    def backward_flops(self, batch: int) -> dict[str, float]:
        """Backward FLOPs per parameter: weight 4 x MACs (dW and dX), bias one add per output element."""
        outs = {"conv1": 28 * 28, "conv2": 10 * 10, "fc1": 1, "fc2": 1, "fc3": 1}
        flops = {}
        for layer in LAYERS:
            w = self.params[layer + ".weight"]
            flops[layer + ".weight"] = 4.0 * batch * outs[layer] * w.size
            flops[layer + ".bias"] = float(batch * outs[layer] * w.shape[0])
        return {k: flops[k] for k in self.params}
