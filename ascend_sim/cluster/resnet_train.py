"""SmallResNet: a small residual network with a hand-written fp32 backward pass, for DDP on the simulated cluster.

stem conv 1->C 3x3 pad 1, ReLU; block1 (conv C->C 3x3, ReLU, conv C->C 3x3, + identity, ReLU); maxpool 2x2/2;
block2 (the same); global average pool; fc C->10. No batch normalisation (a per-rank BN would need SyncBatchNorm to
match the single-process gradient). torch's parameter names, like LeNet5Train, and the same DDP interface.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.cluster.nn_ops import conv2d, conv2d_backward, maxpool2, maxpool2_backward, softmax_xent

F32 = np.float32
CONVS = ("stem", "block1.conv1", "block1.conv2", "block2.conv1", "block2.conv2")


class SmallResNet:
    """Two residual blocks of ``channels`` channels on 28 x 28 inputs, 10 classes."""

    def __init__(self, channels: int = 8, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.channels, self.params = channels, {}
        for name in CONVS:
            cin = 1 if name == "stem" else channels
            bound = 1.0 / np.sqrt(cin * 9)
            self.params[name + ".weight"] = rng.uniform(-bound, bound, (channels, cin, 3, 3)).astype(F32)
            self.params[name + ".bias"] = rng.uniform(-bound, bound, channels).astype(F32)
        bound = 1.0 / np.sqrt(channels)
        self.params["fc.weight"] = rng.uniform(-bound, bound, (10, channels)).astype(F32)
        self.params["fc.bias"] = rng.uniform(-bound, bound, 10).astype(F32)

    def parameters(self) -> list[tuple[str, np.ndarray]]:
        return list(self.params.items())

    def state_dict(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in self.params.items()}

    def _conv(self, name: str, a: np.ndarray, cache: dict) -> np.ndarray:
        z, cols = conv2d(a, self.params[name + ".weight"], self.params[name + ".bias"], 1)
        cache[name] = (a.shape, cols)
        return z

    def _block(self, name: str, a: np.ndarray, cache: dict) -> np.ndarray:
        h = self._conv(name + ".conv1", a, cache)
        cache[name + ".relu1"] = h > 0
        z = self._conv(name + ".conv2", np.maximum(h, F32(0)), cache) + a
        cache[name + ".relu2"] = z > 0
        return np.maximum(z, F32(0))

    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, dict]:
        cache: dict = {}
        z = self._conv("stem", np.asarray(x, F32), cache)
        cache["stem.relu"] = z > 0
        a = self._block("block1", np.maximum(z, F32(0)), cache)
        a, cache["pool"] = maxpool2(a)
        a = self._block("block2", a, cache)
        cache["gap"] = a.shape
        feat = a.mean(axis=(2, 3))
        cache["feat"] = feat
        return feat @ self.params["fc.weight"].T + self.params["fc.bias"], cache

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(self._forward(x)[0], axis=1)

    def _conv_back(self, name: str, d: np.ndarray, cache: dict, g: dict) -> np.ndarray:
        shape, cols = cache[name]
        dx, g[name + ".weight"], g[name + ".bias"] = conv2d_backward(d, cols, self.params[name + ".weight"], shape, 1)
        return dx

    def _block_back(self, name: str, d: np.ndarray, cache: dict, g: dict) -> np.ndarray:
        d = d * cache[name + ".relu2"]
        dh = self._conv_back(name + ".conv2", d, cache, g) * cache[name + ".relu1"]
        return d + self._conv_back(name + ".conv1", dh, cache, g)

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """Mean cross-entropy of the batch and the gradient of every parameter."""
        z, cache = self._forward(x)
        loss, d = softmax_xent(z, y)
        g: dict[str, np.ndarray] = {"fc.weight": d.T @ cache["feat"], "fc.bias": d.sum(axis=0)}
        n, c, h, w = cache["gap"]
        da = np.broadcast_to((d @ self.params["fc.weight"])[:, :, None, None] / F32(h * w), (n, c, h, w)).astype(F32)
        da = self._block_back("block2", da, cache, g)
        da = maxpool2_backward(da, cache["pool"])
        da = self._block_back("block1", da, cache, g) * cache["stem.relu"]
        self._conv_back("stem", da, cache, g)
        return loss, {k: g[k].astype(F32) for k in self.params}

    def macs(self) -> dict[str, float]:
        """Multiply-accumulates per image of each weight's layer (forward)."""
        out = {}
        for name in CONVS:
            side = 28 if name.startswith(("stem", "block1")) else 14
            out[name + ".weight"] = float(side * side * self.params[name + ".weight"].size)
        out["fc.weight"] = float(self.params["fc.weight"].size)
        return out

    def backward_flops(self, batch: int) -> dict[str, float]:
        """Backward FLOPs per parameter: weight 4 x MACs (dW and dX), bias one add per output element."""
        macs = self.macs()
        return {k: 4.0 * batch * macs[k] if k in macs else float(batch * v.size * 28 * 28)
                for k, v in self.params.items()}
