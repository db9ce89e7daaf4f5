"""TinyMLP: the smallest model data parallelism can train, in numpy fp32 with torch's layouts.

x -> Linear(in, hidden) -> ReLU -> Linear(hidden, out) -> softmax cross-entropy, mean over the
batch. Weights are (out_features, in_features) as in torch.nn.Linear, and ``parameters()`` lists
them in definition order (fc1.weight, fc1.bias, fc2.weight, fc2.bias), so backward produces their
gradients in the reverse order, as DDP assumes.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32


class TinyMLP:
    """A two-layer perceptron with hand-written forward and backward passes."""

    def __init__(self, sizes: tuple[int, int, int] = (16, 32, 10), seed: int = 0):
        n_in, n_hid, n_out = sizes
        rng = np.random.default_rng(seed)
        self.params: dict[str, np.ndarray] = {
            "fc1.weight": (rng.standard_normal((n_hid, n_in)) / np.sqrt(n_in)).astype(F32),
            "fc1.bias": (rng.standard_normal(n_hid) * 0.1).astype(F32),
            "fc2.weight": (rng.standard_normal((n_out, n_hid)) / np.sqrt(n_hid)).astype(F32),
            "fc2.bias": (rng.standard_normal(n_out) * 0.1).astype(F32),
        }

    def parameters(self) -> list[tuple[str, np.ndarray]]:
        return list(self.params.items())

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The predicted class of every row of x."""
        p = self.params
        h = np.maximum(x @ p["fc1.weight"].T + p["fc1.bias"], F32(0))
        return np.argmax(h @ p["fc2.weight"].T + p["fc2.bias"], axis=1)

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """Mean cross-entropy of the batch and the gradient of every parameter."""
        p = self.params
        h = x @ p["fc1.weight"].T + p["fc1.bias"]
        a = np.maximum(h, F32(0))
        z = a @ p["fc2.weight"].T + p["fc2.bias"]
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        prob = e / e.sum(axis=1, keepdims=True)
        b = x.shape[0]
        loss = float(-np.log(prob[np.arange(b), y]).mean())
        dz = prob
        dz[np.arange(b), y] -= F32(1)
        dz /= F32(b)
        da = dz @ p["fc2.weight"]
        dh = da * (h > 0)
        grads = {"fc2.bias": dz.sum(axis=0), "fc2.weight": dz.T @ a,
                 "fc1.bias": dh.sum(axis=0), "fc1.weight": dh.T @ x}
        return loss, {k: grads[k].astype(F32) for k in p}

    def backward_flops(self, batch: int) -> dict[str, float]:
        """Floating-point operations of each parameter's backward (weight: dW and dX matmuls; bias: a sum)."""
        return {k: (4.0 * batch * v.size if v.ndim == 2 else float(batch * v.size)) for k, v in self.params.items()}
