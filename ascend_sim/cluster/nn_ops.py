"""fp32 numpy layers with their backward passes, shared by the models the cluster trains (LeNet-5, SmallResNet).

Layouts are torch's: activations NCHW, conv weights [O, C, kh, kw]. Convolution is im2col + one matmul; max pooling
2x2/2 sends the gradient to the first maximum of each window, as torch does.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

F32 = np.float32


def conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """NCHW convolution by im2col; returns the output and the columns backward needs."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
    o, c, kh, kw = w.shape
    win = sliding_window_view(xp, (kh, kw), axis=(2, 3))            # [N, C, OH, OW, kh, kw]
    n, _, oh, ow = win.shape[:4]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    out = cols @ w.reshape(o, -1).T + b
    return out.reshape(n, oh, ow, o).transpose(0, 3, 1, 2), cols


def conv2d_backward(dout: np.ndarray, cols: np.ndarray, w: np.ndarray, x_shape: tuple[int, ...],
               pad: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of the input, the weight and the bias of ``conv2d``."""
    n, o, oh, ow = dout.shape
    _, c, kh, kw = w.shape
    d2 = dout.transpose(0, 2, 3, 1).reshape(-1, o)
    dw = (d2.T @ cols).reshape(w.shape)
    dcols = (d2 @ w.reshape(o, -1)).reshape(n, oh, ow, c, kh, kw)
    h, wd = x_shape[2] + 2 * pad, x_shape[3] + 2 * pad
    dxp = np.zeros((n, c, h, wd), F32)
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i:i + oh, j:j + ow] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    dx = dxp[:, :, pad:h - pad, pad:wd - pad] if pad else dxp
    return dx, dw, d2.sum(axis=0)


def maxpool2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2/2 max pooling; returns the output and the one-hot position of each window's first maximum."""
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    first = np.argmax(win, axis=-1)
    onehot = np.arange(4) == first[..., None]
    return np.take_along_axis(win, first[..., None], -1)[..., 0], onehot


def maxpool2_backward(dout: np.ndarray, onehot: np.ndarray) -> np.ndarray:
    n, c, h2, w2 = dout.shape
    d = (onehot * dout[..., None]).reshape(n, c, h2, w2, 2, 2).transpose(0, 1, 2, 4, 3, 5)
    return d.reshape(n, c, 2 * h2, 2 * w2).astype(F32)


def softmax_xent(z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy of logits ``z`` [B, K] (like ``F.cross_entropy``) and its gradient."""
    b = len(z)
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = float(-logp[np.arange(b), y].mean())
    d = np.exp(logp)
    d[np.arange(b), y] -= F32(1)
    return loss, (d / F32(b)).astype(F32)
