"""Int8 conv2d and linear on the simulator: host AscendQuant, the cube int8 matmul, the dequant (the conv through
kernels/opt/conv_cube.conv2d_cube_int8).

The activation is quantised on the host with AscendQuant's arithmetic (``rint(x / scale) + offset``,
round half to even, saturate to int8); a padded conv border holds the code of 0.0 (the offset), so the
zero point folded into the bias (``- scale * offset * sum_k Wq[o, k]``) stays exact at the border.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.m4.qmatmul import int8_linear_rows
from ascend_sim.kernels.opt.conv_cube import conv2d_cube_int8
from ascend_sim.migrate import quant
from ascend_sim.migrate.ptq import QuantLayer


def _dequant(layer: QuantLayer) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel: the dequant scale (activation x weight scale) and the bias with the zero point folded."""
    scale = (np.float32(layer.act.scale) * layer.w_scale).astype(np.float32)
    rowsum = layer.wq.astype(np.int64).sum(axis=1)
    return scale, (layer.bias - scale * float(layer.act.offset) * rowsum).astype(np.float32)


def int8_conv2d(x: np.ndarray, layer: QuantLayer, kh: int, kw: int, pad: int = 0, *, stride: int = 1,
                relu: bool = False, chip=None) -> tuple[np.ndarray, list[LaunchResult]]:
    """``x [N, C, H, W]`` -> half ``[N, O, OH, OW]`` (every ``stride``-th window), ReLU fused into the dequant."""
    xq = quant.quantize(np.asarray(x, np.float32), layer.act)
    wq = layer.wq.reshape(layer.wq.shape[0], xq.shape[1], kh, kw)
    return conv2d_cube_int8(xq, wq, *_dequant(layer), pad, stride=stride, pad_code=int(layer.act.offset), relu=relu,
                            chip=chip)


def int8_linear(x: np.ndarray, layer: QuantLayer, *, relu: bool = False,
                chip=None) -> tuple[np.ndarray, list[LaunchResult]]:
    """``x [N, K]`` -> half ``[N, O]``."""
    xq = quant.quantize(np.asarray(x, np.float32), layer.act)
    y, res = int8_linear_rows(layer.wq, np.ascontiguousarray(xq), *_dequant(layer), relu=relu, chip=chip)
    return np.ascontiguousarray(y.T), res


__all__ = ["int8_conv2d", "int8_linear"]
