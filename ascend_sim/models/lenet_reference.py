"""Numpy reference LeNet-5: the ground truth the simulated Ascend C kernels are checked against.

Network (input: :func:`ascend_sim.models.datasets.normalize`, float32 ``[N, 1, 28, 28]`` in [0, 1])::

    conv1  6 filters 5x5, pad 2   -> [N, 6, 28, 28]  ReLU  maxpool 2x2/2 -> [N, 6, 14, 14]
    conv2 16 filters 5x5, pad 0   -> [N, 16, 10, 10] ReLU  maxpool 2x2/2 -> [N, 16, 5, 5]
    flatten (C, H, W order)       -> [N, 400]
    fc1 400->120 ReLU, fc2 120->84 ReLU, fc3 84->10, softmax -> [N, 10]

Layouts: activations NCHW; conv weights ``[O, C, kh, kw]``; linear weights
``[O, K]`` (out features first, as in PyTorch), so ``linear_ref(x, w, b) = x @ w.T + b``.

Precision: every op reads its inputs in their dtype, computes in at least
float32 (as the Cube unit accumulates fp16 products in fp32) and rounds its
result to the dtype of ``x``. So fp16 inputs give the fp16 network with one
rounding per op, and float64 inputs give an exact-ish float64 reference.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
from numpy.typing import DTypeLike
from numpy.lib.stride_tricks import sliding_window_view

from ascend_sim.models.datasets import bundled_file, normalize

__all__ = [
    "LENET_PARAM_SHAPES",
    "conv2d_ref",
    "im2col",
    "lenet_forward_ref",
    "lenet_logits_ref",
    "lenet_predict_ref",
    "linear_ref",
    "load_lenet_weights",
    "maxpool2d_ref",
    "relu_ref",
    "softmax_ref",
]

#: Name and shape of every LeNet-5 parameter.
LENET_PARAM_SHAPES: dict[str, tuple[int, ...]] = {
    "conv1.w": (6, 1, 5, 5),
    "conv1.b": (6,),
    "conv2.w": (16, 6, 5, 5),
    "conv2.b": (16,),
    "fc1.w": (120, 400),
    "fc1.b": (120,),
    "fc2.w": (84, 120),
    "fc2.b": (84,),
    "fc3.w": (10, 84),
    "fc3.b": (10,),
}

_WEIGHTS_FILE = "lenet5_weights.npz"
_CONV1_PAD = 2


def _compute_dtype(x: np.ndarray) -> np.dtype:
    """The dtype an op computes in: x's dtype, but at least float32."""
    return np.promote_types(x.dtype, np.float32)


def im2col(x: np.ndarray, kh: int, kw: int, pad: int = 0) -> np.ndarray:
    """Unfold ``x [N, C, H, W]`` (stride 1) into ``[N*OH*OW, C*kh*kw]``, rows in (n, oh, ow) order."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(xp, (kh, kw), axis=(2, 3))  # [N, C, OH, OW, kh, kw]
    n, c, oh, ow = windows.shape[:4]
    return windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)


def conv2d_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0) -> np.ndarray:
    """2-D convolution, stride 1, zero padding ``pad``: ``x [N,C,H,W]``, ``w [O,C,kh,kw]``, ``b [O]`` -> ``[N,O,OH,OW]``."""
    acc = _compute_dtype(x)
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    cols = im2col(x.astype(acc), kh, kw, pad)
    y = cols @ w.reshape(o, -1).astype(acc).T + b.astype(acc)
    return y.reshape(n, oh, ow, o).transpose(0, 3, 1, 2).astype(x.dtype)


def maxpool2d_ref(x: np.ndarray, k: int = 2, s: int = 2) -> np.ndarray:
    """Max pooling over ``k x k`` windows with stride ``s`` (no padding, floor): ``[N,C,H,W]`` -> ``[N,C,OH,OW]``."""
    windows = sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    return windows.max(axis=(4, 5))


def linear_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fully connected layer ``x @ w.T + b``: ``x [N,K]``, ``w [O,K]``, ``b [O]`` -> ``[N,O]``."""
    acc = _compute_dtype(x)
    return (x.astype(acc) @ w.astype(acc).T + b.astype(acc)).astype(x.dtype)


def relu_ref(x: np.ndarray) -> np.ndarray:
    """Elementwise ``max(x, 0)``."""
    return np.maximum(x, np.zeros((), dtype=x.dtype))


def softmax_ref(x: np.ndarray) -> np.ndarray:
    """Numerically stable softmax over the last axis (row max subtracted before exp)."""
    z = x.astype(_compute_dtype(x))
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def lenet_logits_ref(params: Mapping[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """LeNet-5 up to fc3 on normalized input ``x [N, 1, 28, 28]``; computes in ``x.dtype``."""
    p = {name: np.asarray(value).astype(x.dtype) for name, value in params.items()}
    h = maxpool2d_ref(relu_ref(conv2d_ref(x, p["conv1.w"], p["conv1.b"], pad=_CONV1_PAD)))
    h = maxpool2d_ref(relu_ref(conv2d_ref(h, p["conv2.w"], p["conv2.b"])))
    h = h.reshape(len(h), -1)
    h = relu_ref(linear_ref(h, p["fc1.w"], p["fc1.b"]))
    h = relu_ref(linear_ref(h, p["fc2.w"], p["fc2.b"]))
    return linear_ref(h, p["fc3.w"], p["fc3.b"])


def lenet_forward_ref(
    params: Mapping[str, np.ndarray], images: np.ndarray, dtype: DTypeLike = np.float32
) -> np.ndarray:
    """Class probabilities ``[N, 10]`` (in ``dtype``) for uint8 images ``[N, 28, 28]``.

    The images are normalized, rounded to ``dtype`` with the weights, and every op
    rounds its result to ``dtype`` (use ``np.float16`` for the fp16 network).
    """
    x = normalize(images).astype(dtype)
    return softmax_ref(lenet_logits_ref(params, x))


def lenet_predict_ref(
    params: Mapping[str, np.ndarray],
    images: np.ndarray,
    dtype: DTypeLike = np.float32,
    batch_size: int = 1000,
) -> np.ndarray:
    """Predicted digits ``[N]`` (int64) for uint8 images, run in batches to bound memory."""
    batches = [
        lenet_forward_ref(params, images[i : i + batch_size], dtype).argmax(axis=1)
        for i in range(0, len(images), batch_size)
    ]
    return np.concatenate(batches)


def load_lenet_weights() -> dict[str, np.ndarray]:
    """Load the shipped trained weights (float32) as ``{"conv1.w": ..., ..., "fc3.b": ...}``."""
    with bundled_file(_WEIGHTS_FILE).open("rb") as f, np.load(f) as npz:
        params = {name: npz[name] for name in npz.files}
    for name, shape in LENET_PARAM_SHAPES.items():
        if name not in params or params[name].shape != shape:
            found = params[name].shape if name in params else "missing"
            raise ValueError(
                f"{_WEIGHTS_FILE}: parameter {name}: expected shape {shape}, found {found}. "
                "Fix: regenerate it with scripts/train_lenet.py."
            )
    return params
