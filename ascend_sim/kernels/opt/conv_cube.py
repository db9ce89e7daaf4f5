"""Conv2D on the cube as img2col + matmul, and the fused Conv2D + BatchNorm + ReLU.

img2col (图像转列): each output pixel's receptive field ``C x KH x KW`` becomes one row of a matrix
``X[N*OH*OW, C*KH*KW]``; with ``W[C*KH*KW, O]`` the convolution is ``X @ W`` (``tiled_matmul``).
On the device LoadData3D builds these rows from the feature map in L1 as it loads L0A, reading the
input once (that path is ``conv_l3d.conv2d_l3d``). This module is the "before" step of Module 2: the
expansion is done **explicitly on the host** (numpy, not simulated time) and the kernel reads the
expanded matrix from GM: its GM traffic (KH*KW times the input for stride 1) is counted, the expansion
itself is not.

Fusion (算子融合): BatchNorm in inference is ``y = gamma * (z - mean) / sqrt(var + eps) + beta`` per
output channel, so it folds into the weights and the bias on the host (``fold_bn``); the bias enters
the first Mmad through the BT buffer and ReLU rides on Fixpipe (``reluEn``): one kernel, one GM write.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.opt.cube_common import cube_dtype
from ascend_sim.kernels.opt.tiled_matmul import tiled_matmul


def im2col(x: np.ndarray, KH: int, KW: int, pad: int = 0) -> np.ndarray:
    """``x [N, C, H, W]`` -> ``[N*OH*OW, C*KH*KW]`` (stride 1, zero padding), rows in (n, y, x) order."""
    x = np.asarray(x)
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, hp, wp = x.shape
    oh, ow = hp - KH + 1, wp - KW + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (KH, KW), axis=(2, 3))    # [N, C, OH, OW, KH, KW]
    return np.ascontiguousarray(win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * KH * KW))


def fold_bn(w: np.ndarray, b: np.ndarray, gamma, beta, mean, var, eps: float = 1e-5
            ) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm (inference) folded into conv weights ``[O, ...]`` and bias ``[O]`` (float64 on the host)."""
    scale = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + eps)
    w2 = np.asarray(w, np.float64) * scale.reshape((-1,) + (1,) * (np.ndim(w) - 1))
    b2 = (np.asarray(b, np.float64) - np.asarray(mean, np.float64)) * scale + np.asarray(beta, np.float64)
    return w2, b2


def conv2d_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, pad: int = 0, *, relu: bool = False,
                out_dtype=np.float16, cores: int | None = None, chip=None, dtype=None, kernel=None
                ) -> tuple[np.ndarray, LaunchResult]:
    """Simulated Conv2D (stride 1) on the cube: ``x [N, C, H, W]``, ``w [O, C, KH, KW]``, ``b [O]`` -> NCHW.

    ``dtype``: the cube's input type; by default float when x and w are both float32, else half. ``kernel``:
    another matmul kernel for ``tiled_matmul(..., kernel=)``, e.g. the C++ twin ``kernels/cpp/tiled_matmul.cpp``."""
    x, w = np.asarray(x), np.asarray(w)
    if x.ndim != 4 or w.ndim != 4 or w.shape[1] != x.shape[1]:
        raise ValueError(f"conv2d_cube: x {x.shape} and w {w.shape}: expected x [N, C, H, W], w [O, C, KH, KW]")
    n = x.shape[0]
    O, _, KH, KW = w.shape
    dt = cube_dtype(x, w, dtype=dtype)
    cols = im2col(x.astype(dt), KH, KW, pad)
    oh, ow = x.shape[2] + 2 * pad - KH + 1, x.shape[3] + 2 * pad - KW + 1
    y, res = tiled_matmul(cols, w.reshape(O, -1).T.astype(dt), b, relu=relu, out_dtype=out_dtype,
                          cores=cores, chip=chip, dtype=dt, kernel=kernel)
    return np.ascontiguousarray(y.reshape(n, oh, ow, O).transpose(0, 3, 1, 2)), res


def conv_bn_relu(x: np.ndarray, w: np.ndarray, b: np.ndarray, gamma, beta, mean, var, pad: int = 0, *,
                 eps: float = 1e-5, out_dtype=np.float16, cores: int | None = None, chip=None, dtype=None,
                 kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Fused Conv2D + BatchNorm + ReLU in one cube kernel (BN folded on the host, bias via BT, ReLU on Fixpipe).

    The cube's input type is decided by x and w as given (the folded weights are float64 on the host)."""
    dt = cube_dtype(x, w, dtype=dtype)
    w2, b2 = fold_bn(w, b, gamma, beta, mean, var, eps)
    return conv2d_cube(x, w2, b2, pad, relu=True, out_dtype=out_dtype, cores=cores, chip=chip, dtype=dt,
                       kernel=kernel)


def conv_reference(x, w, b=None, pad: int = 0, relu: bool = False, out_dtype=np.float16, dtype=None) -> np.ndarray:
    """What the cube gives: half (or float, see ``cube_dtype``) inputs and weights, float accumulation + float
    bias, ReLU, one rounding."""
    O = w.shape[0]
    dt = cube_dtype(x, w, dtype=dtype)
    cols = im2col(np.asarray(x, dt), w.shape[2], w.shape[3], pad).astype(np.float64)
    acc = cols @ np.asarray(w, dt).reshape(O, -1).T.astype(np.float64)
    if b is not None:
        acc = acc + np.asarray(b, np.float32).astype(np.float64)
    acc = acc.astype(np.float32)
    if relu:
        acc = np.maximum(acc, 0)
    n, oh = x.shape[0], x.shape[2] + 2 * pad - w.shape[2] + 1
    ow = x.shape[3] + 2 * pad - w.shape[3] + 1
    return np.ascontiguousarray(acc.astype(out_dtype).reshape(n, oh, ow, O).transpose(0, 3, 1, 2))


__all__ = ["im2col", "fold_bn", "conv2d_cube", "conv_bn_relu", "conv_reference"]
