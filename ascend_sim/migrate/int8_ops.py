"""Int8 conv2d and linear on the simulator: host AscendQuant + im2col, the cube int8 matmul, the dequant.

The activation is quantised on the host with AscendQuant's arithmetic (``rint(x / scale) + offset``,
round half to even, saturate to int8); a padded conv border holds the code of 0.0 (the offset), so the
zero point folded into the bias (``- scale * offset * sum_k Wq[o, k]``) stays exact at the border.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.m4.qmatmul import int8_linear_rows
from ascend_sim.migrate import quant
from ascend_sim.migrate.ptq import QuantLayer
from ascend_sim.models.lenet_reference import im2col


def _rows(layer: QuantLayer, cols: np.ndarray, relu: bool, chip) -> tuple[np.ndarray, list[LaunchResult]]:
    scale = (np.float32(layer.act.scale) * layer.w_scale).astype(np.float32)
    rowsum = layer.wq.astype(np.int64).sum(axis=1)
    bias = (layer.bias - scale * float(layer.act.offset) * rowsum).astype(np.float32)
    return int8_linear_rows(layer.wq, cols, scale, bias, relu=relu, chip=chip)


def int8_conv2d(x: np.ndarray, layer: QuantLayer, kh: int, kw: int, pad: int = 0, *, stride: int = 1,
                relu: bool = False, chip=None) -> tuple[np.ndarray, list[LaunchResult]]:
    """``x [N, C, H, W]`` -> half ``[N, O, OH, OW]`` (every ``stride``-th window), ReLU fused into the dequant."""
    xq = quant.quantize(np.asarray(x, np.float32), layer.act)
    if pad:
        xq = np.pad(xq, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=int(layer.act.offset))
    n, _, h, w = xq.shape
    cols = im2col(xq, kh, kw, 0).reshape(n, h - kh + 1, w - kw + 1, -1)[:, ::stride, ::stride]
    oh, ow = cols.shape[1:3]
    cols = np.ascontiguousarray(cols.reshape(n * oh * ow, -1))
    y, res = _rows(layer, cols, relu, chip)
    return y.reshape(-1, n, oh, ow).transpose(1, 0, 2, 3), res


def int8_linear(x: np.ndarray, layer: QuantLayer, *, relu: bool = False,
                chip=None) -> tuple[np.ndarray, list[LaunchResult]]:
    """``x [N, K]`` -> half ``[N, O]``."""
    xq = quant.quantize(np.asarray(x, np.float32), layer.act)
    y, res = _rows(layer, np.ascontiguousarray(xq), relu, chip)
    return np.ascontiguousarray(y.T), res


__all__ = ["int8_conv2d", "int8_linear"]
