"""Conv2D on the cube as img2col + matmul (the course's one conv-on-cube module), and Conv2D + BatchNorm + ReLU.

img2col (图像转列): each output pixel's receptive field ``C x KH x KW`` becomes one row of a matrix
``X[N*OH*OW, C*KH*KW]``; with ``W[C*KH*KW, O]`` the convolution is ``X @ W``. On the device LoadData3D builds
these rows from the feature map in L1 as it loads L0A, reading the input once (that path is
``conv_l3d.conv2d_l3d``). Here the expansion is done **explicitly on the host** (numpy, not simulated time) and
the kernel reads the expanded matrix from GM: its GM traffic (about KH*KW / stride² times the input) is counted,
the expansion itself is not. Module 2 uses it as the "before" step; Module 4's runtime and ResNet-50 table run
every convolution through it.

Two matmuls can run the product (``matmul=``):

* ``"tiled"`` (Module 2): the hand-written ``tiled_matmul`` (L1/L0 tiling chosen by ``choose_tiling``, weights
  resident when they fit, bias via BT, ReLU on Fixpipe), half or float inputs, ``cores=`` and the C++ twin
  through ``kernel=`` (``kernels/cpp/tiled_matmul.cpp``);
* ``"api"`` (Module 4): the high-level Matmul API (``kernels/m4/gemm.py``: CFG_MDL, GetTiling's tiling on every
  cube core), half inputs, weights stored transposed ``[O, C*KH*KW]``, bias via BT.

``conv2d_cube_int8`` is the int8 form (Module 4's post-training quantisation): int8 codes on the cube through the
Matmul API into int32, then the per-channel dequantisation (scale, bias, ReLU) on the vector cores
(``kernels/m4/qmatmul.py``); a padded border holds the code of 0.0 (``pad_code``).

Stride ``s`` keeps every s-th window of each row and column (output ``(H + 2*pad - KH) // s + 1``). ``conv_cube``
is Module 4's graph operator: "same" padding ``k // 2`` on the Matmul API, half in and out.

Fusion (算子融合): BatchNorm in inference is ``y = gamma * (z - mean) / sqrt(var + eps) + beta`` per output
channel, so it folds into the weights and the bias on the host (``fold_bn``); the bias enters the first Mmad
through the BT buffer and ReLU rides on Fixpipe (``reluEn``): one kernel, one GM write.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.engine.errors import ArgumentError, DtypeError
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.m4.gemm import gemm_bt, gemm_tiling, time_gemm_bt
from ascend_sim.kernels.m4.qmatmul import int8_linear_rows
from ascend_sim.kernels.opt.cube_common import cube_dtype
from ascend_sim.kernels.opt.tiled_matmul import tiled_matmul

#: the matmuls that can run the product: Module 2's hand-tiled kernel, Module 4's Matmul API
MATMULS = ("tiled", "api")


def conv_out_hw(h: int, w: int, KH: int, KW: int, pad: int = 0, stride: int = 1) -> tuple[int, int]:
    """Output height and width of a conv with zero padding ``pad`` and ``stride``."""
    return (h + 2 * pad - KH) // stride + 1, (w + 2 * pad - KW) // stride + 1


def im2col(x: np.ndarray, KH: int, KW: int, pad: int = 0, stride: int = 1) -> np.ndarray:
    """``x [N, C, H, W]`` -> ``[N*OH*OW, C*KH*KW]`` (zero padding, every ``stride``-th window), rows in (n, y, x)
    order."""
    x = np.asarray(x)
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c = x.shape[:2]
    win = np.lib.stride_tricks.sliding_window_view(x, (KH, KW), axis=(2, 3))[:, :, ::stride, ::stride]
    oh, ow = win.shape[2:4]                                                          # [N, C, OH, OW, KH, KW]
    return np.ascontiguousarray(win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * KH * KW))


def conv_gemm_shape(x_shape, w_shape, pad: int = 0, stride: int = 1) -> tuple[int, int, int]:
    """(M, N, K) of the conv's im2col matmul: output pixels, output channels, C*KH*KW."""
    n, _, h, w = x_shape
    o, c, KH, KW = w_shape
    oh, ow = conv_out_hw(h, w, KH, KW, pad, stride)
    return n * oh * ow, o, c * KH * KW


def fold_bn(w: np.ndarray, b: np.ndarray, gamma, beta, mean, var, eps: float = 1e-5
            ) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm (inference) folded into conv weights ``[O, ...]`` and bias ``[O]`` (float64 on the host)."""
    scale = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + eps)
    w2 = np.asarray(w, np.float64) * scale.reshape((-1,) + (1,) * (np.ndim(w) - 1))
    b2 = (np.asarray(b, np.float64) - np.asarray(mean, np.float64)) * scale + np.asarray(beta, np.float64)
    return w2, b2


def _check_call(x: np.ndarray, w: np.ndarray, pad: int, stride: int, matmul: str, dt: np.dtype,
                relu: bool, cores: int | None, kernel) -> None:
    """The rules of a conv2d_cube call, each with its fix."""
    if x.ndim != 4 or w.ndim != 4 or w.shape[1] != x.shape[1]:
        raise ArgumentError(f"conv2d_cube: x {x.shape} and w {w.shape}: expected x [N, C, H, W] and "
                            "w [O, C, KH, KW] with the same C", fix="pass NCHW images and OIHW weights")
    if stride < 1 or pad < 0:
        raise ArgumentError(f"conv2d_cube: stride {stride} and pad {pad}: stride must be >= 1 and pad >= 0",
                            fix="pass stride=1 (or 2, ...) and pad=0 or more")
    if min(conv_out_hw(*x.shape[2:], *w.shape[2:], pad, stride)) < 1:
        raise ArgumentError(f"conv2d_cube: a {w.shape[2]}x{w.shape[3]} filter does not fit the {x.shape[2]}x"
                            f"{x.shape[3]} input padded by {pad}", fix="pad the input or use a smaller filter")
    if matmul not in MATMULS:
        raise ArgumentError(f"conv2d_cube: matmul={matmul!r} is not one of {MATMULS}",
                            fix="matmul='tiled' (the hand-tiled kernel) or matmul='api' (the Matmul API)")
    if matmul == "api":
        if dt != np.float16:
            raise DtypeError(f"conv2d_cube(matmul='api') takes half inputs (the cube's fp16 path), not {dt}",
                             fix="pass dtype='float16', or matmul='tiled' for float inputs")
        extra = [name for name, given in (("relu", relu), ("cores", cores is not None),
                                          ("kernel", kernel is not None)) if given]
        if extra:
            raise ArgumentError(f"conv2d_cube(matmul='api') has no {', '.join(extra)}: the Matmul API kernel "
                                "runs on every cube core with no Fixpipe ReLU",
                                fix=f"drop {', '.join(extra)}, or use matmul='tiled'")


def conv2d_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, pad: int = 0, *, stride: int = 1,
                relu: bool = False, out_dtype=np.float16, cores: int | None = None, chip=None, dtype=None,
                kernel=None, matmul: str = "tiled") -> tuple[np.ndarray, LaunchResult]:
    """Simulated Conv2D on the cube: ``x [N, C, H, W]``, ``w [O, C, KH, KW]``, ``b [O]`` -> NCHW.

    ``dtype``: the cube's input type; by default float when x and w are both float32, else half. ``matmul``:
    ``"tiled"`` (Module 2's kernel; ``kernel=`` another kernel with its arguments, e.g. the C++ twin
    ``kernels/cpp/tiled_matmul.cpp``) or ``"api"`` (the Matmul API, Module 4). See the module doc."""
    x, w = np.asarray(x), np.asarray(w)
    dt = np.dtype(dtype or np.float16) if matmul == "api" else cube_dtype(x, w, dtype=dtype)
    _check_call(x, w, pad, stride, matmul, dt, relu, cores, kernel)
    n = x.shape[0]
    O, _, KH, KW = w.shape
    cols = im2col(x.astype(dt), KH, KW, pad, stride)
    oh, ow = conv_out_hw(x.shape[2], x.shape[3], KH, KW, pad, stride)
    wm = w.reshape(O, -1).astype(dt)                            # [O, C*KH*KW]
    if matmul == "api":
        y, res = gemm_bt(cols, wm, None if b is None else np.asarray(b, np.float32), out_dtype=out_dtype, chip=chip)
    else:
        y, res = tiled_matmul(cols, wm.T, b, relu=relu, out_dtype=out_dtype, cores=cores, chip=chip, dtype=dt,
                              kernel=kernel)
    return np.ascontiguousarray(y.reshape(n, oh, ow, O).transpose(0, 3, 1, 2)), res


def conv_bn_relu(x: np.ndarray, w: np.ndarray, b: np.ndarray, gamma, beta, mean, var, pad: int = 0, *,
                 stride: int = 1, eps: float = 1e-5, out_dtype=np.float16, cores: int | None = None, chip=None,
                 dtype=None, kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Fused Conv2D + BatchNorm + ReLU in one cube kernel (BN folded on the host, bias via BT, ReLU on Fixpipe).

    The cube's input type is decided by x and w as given (the folded weights are float64 on the host)."""
    dt = cube_dtype(x, w, dtype=dtype)
    w2, b2 = fold_bn(w, b, gamma, beta, mean, var, eps)
    return conv2d_cube(x, w2, b2, pad, stride=stride, relu=True, out_dtype=out_dtype, cores=cores, chip=chip,
                       dtype=dt, kernel=kernel)


def conv2d_cube_int8(xq: np.ndarray, wq: np.ndarray, deq_scale: np.ndarray, bias: np.ndarray, pad: int = 0, *,
                     stride: int = 1, pad_code: int = 0, relu: bool = False, chip=None
                     ) -> tuple[np.ndarray, list[LaunchResult]]:
    """Int8 Conv2D: ``xq [N, C, H, W]`` and ``wq [O, C, KH, KW]`` int8 codes -> half
    ``relu?(deq_scale[o] * conv(xq, wq) + bias[o])`` NCHW; returns the cube launch and the dequant launch."""
    xq, wq = np.asarray(xq), np.asarray(wq)
    _check_call(xq, wq, pad, stride, "api", np.dtype(np.float16), False, None, None)
    if xq.dtype != np.int8 or wq.dtype != np.int8:
        raise DtypeError(f"conv2d_cube_int8 takes int8 codes, got x {xq.dtype} and w {wq.dtype}",
                         fix="quantise x and w first (AscendQuant's rint(x / scale) + offset), or use conv2d_cube")
    if pad:
        xq = np.pad(xq, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=pad_code)
    n, O = xq.shape[0], wq.shape[0]
    oh, ow = conv_out_hw(xq.shape[2], xq.shape[3], wq.shape[2], wq.shape[3], 0, stride)
    cols = im2col(xq, wq.shape[2], wq.shape[3], 0, stride)
    y, res = int8_linear_rows(wq.reshape(O, -1), cols, deq_scale, bias, relu=relu, chip=chip)   # y [O, N*OH*OW]
    return y.reshape(O, n, oh, ow).transpose(1, 0, 2, 3), res


def conv_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray, *, stride: int = 1, dtype="float16", chip=None,
              **_: object) -> tuple[np.ndarray, LaunchResult]:
    """Module 4's graph operator: ``x [N, C, H, W]``, ``w [O, C, k, k]``, ``b [O]`` -> half
    ``[N, O, ceil(H/stride), ceil(W/stride)]``: "same" padding ``k // 2`` through the Matmul API."""
    return conv2d_cube(x, w, b, np.shape(w)[-1] // 2, stride=stride, dtype=dtype, chip=chip, matmul="api")


def time_conv_cube(x_shape, w_shape, pad: int = 0, *, stride: int = 1, chip=None) -> LaunchResult:
    """Timing-only launch (``numerics=False``: the same instructions and cycles, no values) of
    ``conv2d_cube(..., matmul="api")`` with bias on inputs of these shapes: no host im2col, so full-size layers
    time in seconds."""
    return time_gemm_bt(*conv_gemm_shape(x_shape, w_shape, pad, stride), chip=chip)


def matmul_api_tiling(x_shape, w_shape, pad: int = 0, *, stride: int = 1, bias: bool = True, chip=None):
    """The Matmul API's tiling (GetTiling, every cube core) that ``conv2d_cube(..., matmul="api")`` launches with
    for half output: ``usedCoreNum`` cores, each a block of ``singleCoreM`` rows x ``singleCoreN`` channels."""
    M, N, K = conv_gemm_shape(x_shape, w_shape, pad, stride)
    return gemm_tiling(M, N, K, np.float16, np.float16, get_chip(chip).aic_count, bias)


def conv_reference(x, w, b=None, pad: int = 0, relu: bool = False, out_dtype=np.float16, dtype=None,
                   stride: int = 1) -> np.ndarray:
    """What the cube gives: half (or float, see ``cube_dtype``) inputs and weights, float accumulation + float
    bias, ReLU, one rounding."""
    O = w.shape[0]
    dt = cube_dtype(x, w, dtype=dtype)
    cols = im2col(np.asarray(x, dt), w.shape[2], w.shape[3], pad, stride).astype(np.float64)
    acc = cols @ np.asarray(w, dt).reshape(O, -1).T.astype(np.float64)
    if b is not None:
        acc = acc + np.asarray(b, np.float32).astype(np.float64)
    acc = acc.astype(np.float32)
    if relu:
        acc = np.maximum(acc, 0)
    oh, ow = conv_out_hw(x.shape[2], x.shape[3], w.shape[2], w.shape[3], pad, stride)
    return np.ascontiguousarray(acc.astype(out_dtype).reshape(x.shape[0], oh, ow, O).transpose(0, 3, 1, 2))


__all__ = ["MATMULS", "conv_out_hw", "im2col", "conv_gemm_shape", "fold_bn", "conv2d_cube", "conv_bn_relu",
           "conv2d_cube_int8", "conv_cube", "time_conv_cube", "matmul_api_tiling", "conv_reference"]
