"""Convolution on the cube: host im2col, then ``cols [N*OH*OW, C*k*k] @ W^T [O, C*k*k]`` + bias (gemm.py).

Padding ``k // 2``; ``stride`` keeps every stride-th window of the stride-1 im2col (the 1x1 stride-2
downsample is one strided row selection and a matmul). Half inputs, float32 accumulation in L0C, half out
(Fixpipe F322F16), bias through BT. The im2col runs on the host (no simulated time); the kernel then reads
the expanded matrix, about k*k times the input's bytes, from GM, and that traffic is simulated. The LoadData3D
path (img2col in L1, the input read once) is ``kernels/opt/conv_l3d.py``, which this runtime does not use yet.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.m4.gemm import gemm_bt
from ascend_sim.models.lenet_reference import im2col


def conv_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray, *, stride: int = 1, dtype="float16", chip=None,
              **_: object) -> tuple[np.ndarray, LaunchResult]:
    """``x [N, C, H, W]``, ``w [O, C, k, k]``, ``b [O]`` -> half ``[N, O, ceil(H/stride), ceil(W/stride)]``."""
    if np.dtype(dtype) != np.float16:
        raise ValueError(f"conv_cube takes half inputs (the cube's fp16 path), not {dtype}")
    x, w = np.asarray(x), np.asarray(w)
    if x.ndim != 4 or w.ndim != 4 or x.shape[1] != w.shape[1]:
        raise ValueError(f"conv_cube: input {x.shape} and weight {w.shape} must be [N, C, H, W] and [O, C, k, k]")
    n, _, h, wd = x.shape
    o, _, k, _ = w.shape
    cols = im2col(x.astype(np.float16), k, k, k // 2).reshape(n, h, wd, -1)[:, ::stride, ::stride]
    oh, ow = cols.shape[1:3]
    y, res = gemm_bt(np.ascontiguousarray(cols.reshape(n * oh * ow, -1)), w.reshape(o, -1).astype(np.float16),
                     np.asarray(b, np.float32), out_dtype=np.float16, chip=chip)
    return y.reshape(n, oh, ow, o).transpose(0, 3, 1, 2), res


__all__ = ["conv_cube"]
