"""Checks of lab 01, the LeNet-5 operators: ReLU, MaxPool 2x2/2, Conv2D, FC, Softmax, then LeNet-5 assembled.

The learner writes the device kernels; the host helpers here do the layout
work a CANN graph would do around them (padding to whole tiles, gathering the
four corners of every pooling window, unfolding the convolution windows,
"im2col"), so each kernel is a short loop of vector instructions.

Hidden cases: fixed shapes, seeded random shapes and block counts, the
all-ones test (conv: 9/12/15/16/20/25 + bias), compared with the numpy
reference of ``ascend_sim.lenet_reference`` under the fp16 verify tolerance.
Outputs are pre-filled with NaN so unwritten elements are recognised.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..grading import Context, Lab
from ..lenet_reference import conv2d_ref, im2col, linear_ref, maxpool2d_ref, softmax_ref

__all__ = ["LAB", "check", "EltTiling", "ConvTiling", "SoftmaxTiling", "elt_tiling", "pool_corners", "run_relu",
           "run_maxpool", "run_conv2d", "run_linear", "run_softmax", "ones_conv_golden", "LENET_IMAGES",
           "MIN_ACCURACY"]

LENET_IMAGES = 300          # ex6: held-out digits the assembled network must classify
MIN_ACCURACY = 0.90

LAB = Lab("lab01_lenet_ops")
check = LAB.check


@dataclass
class EltTiling:
    """Elementwise tiling: every block owns totalLength // blockDim elements, processed tileLength at a time."""

    totalLength: int
    tileLength: int


@dataclass
class ConvTiling:
    """Conv2D as a sum of shifted windows.

    ``cols`` is ``[K, P]`` float32 (K = C*KH*KW window taps, P output positions of all images, a multiple of
    tileLength); ``y`` is ``[O, P]`` float32. ``weights[o][k]`` and ``bias[o]`` are Python floats.
    """

    K: int
    O: int
    P: int
    tileLength: int
    weights: list
    bias: list


def _round_up(n: int, m: int) -> int:
    return -(-int(n) // m) * m


def elt_tiling(n: int, block_dim: int, tile: int) -> EltTiling:
    """Tiling for ``n`` elements on ``block_dim`` blocks: n rounded up to whole tiles of every block."""
    return EltTiling(_round_up(max(n, 1), block_dim * tile), tile)


def _padded(x: np.ndarray, total: int, fill=0) -> np.ndarray:
    flat = np.full(total, fill, np.float16)
    flat[: x.size] = np.asarray(x, np.float16).ravel()
    return flat


def run_relu(kern, x: np.ndarray, block_dim: int = 4, tile: int = 256):
    """ReLU of any fp16 array with the learner's ``relu_custom``; returns (y, LaunchResult)."""
    from .. import launch
    t = elt_tiling(x.size, block_dim, tile)
    xp, y = _padded(x, t.totalLength), np.full(t.totalLength, np.nan, np.float16)
    res = launch(kern, block_dim, xp, y, t)
    return y[: x.size].reshape(x.shape), res


def pool_corners(x: np.ndarray) -> list[np.ndarray]:
    """The four corners of every 2x2/2 window of ``x [N, C, H, W]``: four ``[N, C, H//2, W//2]`` arrays."""
    h, w = x.shape[2] // 2 * 2, x.shape[3] // 2 * 2
    return [np.ascontiguousarray(x[:, :, dy:h:2, dx:w:2]) for dy in (0, 1) for dx in (0, 1)]


def run_maxpool(kern, x: np.ndarray, block_dim: int = 4, tile: int = 256):
    """MaxPool 2x2/2 of fp16 ``x [N, C, H, W]`` with the learner's ``maxpool_custom``; returns (y, result)."""
    from .. import launch
    corners = pool_corners(np.asarray(x, np.float16))
    shape = corners[0].shape
    t = elt_tiling(corners[0].size, block_dim, tile)
    a, b, c, d = (_padded(k, t.totalLength) for k in corners)
    y = np.full(t.totalLength, np.nan, np.float16)
    res = launch(kern, block_dim, a, b, c, d, y, t)
    return y[: int(np.prod(shape))].reshape(shape), res


def run_conv2d(kern, x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0, block_dim: int = 4,
               tile: int = 512):
    """Conv2D (stride 1) of fp16 ``x [N, C, H, W]`` with the learner's ``conv2d_custom``; returns (y, result).

    The host unfolds the windows (im2col, as the Img2Col/Load3D unit does on the chip): row ``k`` of ``cols`` is
    tap ``k = (c, i, j)`` of every output position, so the window slide is the kernel's loop over k.
    """
    from .. import launch
    x, w, b = (np.asarray(v, np.float16) for v in (x, w, b))
    n, C, H, W = x.shape
    O, _, KH, KW = w.shape
    OH, OW = H + 2 * pad - KH + 1, W + 2 * pad - KW + 1
    K, P = C * KH * KW, n * OH * OW
    Pp = _round_up(P, block_dim * tile) if P > block_dim * tile else _round_up(P, tile)
    cols = np.zeros((K, Pp), np.float32)
    cols[:, :P] = im2col(x.astype(np.float32), KH, KW, pad).T
    y = np.full((O, Pp), np.nan, np.float32)
    wf = w.astype(np.float32).reshape(O, K)
    t = ConvTiling(K, O, Pp, tile, [[float(v) for v in row] for row in wf], [float(v) for v in b.astype(np.float32)])
    res = launch(kern, min(block_dim, Pp // tile), cols, y, t)
    out = y[:, :P].reshape(O, n, OH, OW).transpose(1, 0, 2, 3)
    return np.ascontiguousarray(out).astype(np.float16), res


def run_linear(kern, x: np.ndarray, w: np.ndarray, b: np.ndarray, block_dim: int = 2, tile: int = 256):
    """FC layer ``x [N, K] @ w.T + b`` with the learner's ``linear_custom``; returns (y [N, O] fp16, result).

    The kernel sees the same ConvTiling as conv2d_custom: ``cols = x.T`` ``[K, P]`` (P = N padded), ``y [O, P]``.
    """
    from .. import launch
    x, w, b = (np.asarray(v, np.float16) for v in (x, w, b))
    n, K = x.shape
    O = w.shape[0]
    Pp = _round_up(n, tile)
    cols = np.zeros((K, Pp), np.float32)
    cols[:, :n] = x.astype(np.float32).T
    y = np.full((O, Pp), np.nan, np.float32)
    t = ConvTiling(K, O, Pp, tile, [[float(v) for v in row] for row in w.astype(np.float32)],
                   [float(v) for v in b.astype(np.float32)])
    res = launch(kern, min(block_dim, Pp // tile), cols, y, t)
    return np.ascontiguousarray(y[:, :n].T).astype(np.float16), res


@dataclass
class SoftmaxTiling:
    """Softmax over C classes for N images, class-major: ``x``/``y`` are ``[C, N]`` float32, N a multiple of tileLength."""

    C: int
    N: int
    tileLength: int


def run_softmax(kern, x: np.ndarray, block_dim: int = 2, tile: int = 64):
    """Softmax over the last axis of fp16 ``x [N, C]`` with the learner's ``softmax_custom``; returns (y, result)."""
    from .. import launch
    x = np.asarray(x, np.float16)
    n, C = x.shape
    Np = _round_up(n, tile)
    xt = np.zeros((C, Np), np.float32)
    xt[:, :n] = x.astype(np.float32).T
    y = np.full((C, Np), np.nan, np.float32)
    res = launch(kern, min(block_dim, Np // tile), xt, y, SoftmaxTiling(C, Np, tile))
    return np.ascontiguousarray(y[:, :n].T).astype(np.float16), res


def ones_conv_golden(size: int = 28, k: int = 5, pad: int = 2, bias: float = 0.5) -> np.ndarray:
    """The all-ones test by hand: taps inside the image along each axis, multiplied, plus the bias."""
    taps = np.array([min(r + k - pad, size) - max(r - pad, 0) for r in range(size + 2 * pad - k + 1)])
    return (np.outer(taps, taps) + bias).astype(np.float16)


def _halves(ctx: Context, shape) -> np.ndarray:
    return ctx.rng.uniform(-2, 2, shape).astype(np.float16)


# ----------------------------------------------------------------------------- ex1 ReLU
@LAB.exercise("ex1", points=2, title="ReLU", hints=(
    "Block GetBlockIdx() owns blockLength = tiling.totalLength // GetBlockNum() elements from "
    "blockLength * GetBlockIdx(): pass `x + offset` to SetGlobalBuffer.",
    "Per tile: CopyIn (AllocTensor, DataCopy GM->UB, EnQue), Compute (DeQue, Relu(dst, src, tileLength), EnQue), "
    "CopyOut (DeQue, DataCopy UB->GM, FreeTensor).",
    "Loop over blockLength // tiling.tileLength tiles; InitBuffer sizes are bytes (tileLength * 2 for half).",
))
def _ex1(ctx: Context) -> None:
    kern = ctx.answer("relu_custom")
    cases = [("all-ones", np.ones((2, 6, 28, 28), np.float16), np.ones((2, 6, 28, 28)), 4, 256),
             ("all minus ones", -np.ones(1000, np.float16), np.zeros(1000), 2, 128)]
    for _ in range(3):
        shape = tuple(int(v) for v in ctx.rng.integers(1, 40, 3))
        x = _halves(ctx, shape)
        cases.append((f"random {shape}", x, np.maximum(x, np.float16(0)), int(ctx.rng.choice([1, 3, 8])),
                      int(ctx.rng.choice([64, 128, 256]))))
    for label, x, golden, blocks, tile in cases:
        with ctx.case(f"{label}, {blocks} blocks, tile {tile}"):
            y, _ = ctx.call(run_relu, kern, x, blocks, tile)
            ctx.expect_close(y, golden.astype(np.float16), sentinel=np.nan)


# ----------------------------------------------------------------------------- ex2 MaxPool
@LAB.exercise("ex2", points=2, title="MaxPool 2x2, stride 2", hints=(
    "a, b, c, d hold the four corners of every window (top-left, top-right, bottom-left, bottom-right): "
    "the output is their elementwise maximum.",
    "Per tile: copy in the four tiles, then Max(t, a, b, n), Max(t, t, c, n), Max(t, t, d, n), copy out.",
    "Blocks and tiles as in the ReLU kernel: tiling.totalLength // GetBlockNum() elements per block.",
))
def _ex2(ctx: Context) -> None:
    kern = ctx.answer("maxpool_custom")
    cases = [("all-ones 2x6x28x28", np.ones((2, 6, 28, 28), np.float16), 4, 256),
             ("LeNet Pool2 4x16x10x10", _halves(ctx, (4, 16, 10, 10)), 2, 128)]
    for _ in range(3):
        n, c, h, w = (int(ctx.rng.integers(1, 4)), int(ctx.rng.integers(1, 9)), int(ctx.rng.integers(2, 31)),
                      int(ctx.rng.integers(2, 31)))
        cases.append((f"random {n}x{c}x{h}x{w}", _halves(ctx, (n, c, h, w)), int(ctx.rng.choice([1, 3, 8])), 64))
    for label, x, blocks, tile in cases:
        with ctx.case(f"{label}, {blocks} blocks, tile {tile}"):
            y, _ = ctx.call(run_maxpool, kern, x, blocks, tile)
            ctx.expect_close(y, maxpool2d_ref(x), sentinel=np.nan)


# ----------------------------------------------------------------------------- ex3 Conv2D
@LAB.exercise("ex3", points=4, title="Conv2D: sliding window and bias", hints=(
    "Output channel o at position p is bias[o] + sum over k of weights[o][k] * cols[k, p]: start the accumulator "
    "with Duplicate(acc, bias[o], n), then one Axpy(acc, row_k, weights[o][k], n) per tap k.",
    "Per tile of tileLength positions: for each k, copy row k of the tile (cols[k * P + p0]) to UB and Axpy it "
    "into all O accumulators (a TBuf of O * tileLength floats); then copy each accumulator to y[o * P + p0].",
    "Tiles: tiling.P // tiling.tileLength of them, tile i on block i % GetBlockNum(); the data are float32 "
    "(InitBuffer bytes = count * 4).",
))
def _ex3(ctx: Context) -> None:
    kern = ctx.answer("conv2d_custom")
    bias = 0.5
    with ctx.case("all-ones 28x28 image, 5x5 all-ones filter, pad 2, bias 0.5"):
        y, _ = ctx.call(run_conv2d, kern, np.ones((1, 1, 28, 28)), np.ones((1, 1, 5, 5)), np.array([bias]), 2)
        ctx.expect_close(y[0, 0], ones_conv_golden(28, 5, 2, bias))
    cases = [((2, 1, 28, 28), (6, 1, 5, 5), 2, 4), ((2, 6, 14, 14), (16, 6, 5, 5), 0, 3)]
    for _ in range(2):
        k = int(ctx.rng.choice([1, 3, 5]))
        shape = (int(ctx.rng.integers(1, 3)), int(ctx.rng.integers(1, 4)), int(ctx.rng.integers(k, 16)),
                 int(ctx.rng.integers(k, 16)))
        cases.append((shape, (int(ctx.rng.integers(1, 7)), shape[1], k, k), int(ctx.rng.integers(0, 3)),
                      int(ctx.rng.choice([1, 2, 5]))))
    for xs, ws, pad, blocks in cases:
        x = ctx.rng.uniform(0, 1, xs).astype(np.float16)
        w = ctx.rng.uniform(-0.5, 0.5, ws).astype(np.float16)
        b = ctx.rng.uniform(-1, 1, ws[0]).astype(np.float16)
        with ctx.case(f"x {xs}, w {ws}, pad {pad}, {blocks} blocks"):
            y, _ = ctx.call(run_conv2d, kern, x, w, b, pad, blocks)
            ctx.expect_close(y, conv2d_ref(x, w, b, pad=pad))


# ----------------------------------------------------------------------------- ex4 FC
@LAB.exercise("ex4", points=2, title="fully connected layer", hints=(
    "y[o, p] = bias[o] + sum over k of weights[o][k] * cols[k, p]: the same sum as the convolution, with the "
    "input features in place of the window taps.",
    "Your conv2d_custom already computes exactly this from a ConvTiling; linear_custom may be the same kernel.",
    "Check the bias: an all-ones input with all-ones weights gives K + bias.",
))
def _ex4(ctx: Context) -> None:
    kern = ctx.answer("linear_custom")
    with ctx.case("all-ones x [2, 400], all-ones w [3, 400], bias 0.5"):
        y, _ = ctx.call(run_linear, kern, np.ones((2, 400)), np.ones((3, 400)), np.full(3, 0.5))
        ctx.expect_close(y, np.full((2, 3), 400.5, np.float16))
    shapes = [(8, 400, 120), (5, 84, 10)] + [tuple(int(v) for v in ctx.rng.integers(1, 90, 3)) for _ in range(2)]
    for n, k, o in shapes:
        x = ctx.rng.uniform(0, 1, (n, k)).astype(np.float16)
        w = ctx.rng.uniform(-0.2, 0.2, (o, k)).astype(np.float16)
        b = ctx.rng.uniform(-1, 1, o).astype(np.float16)
        with ctx.case(f"x [{n}, {k}], w [{o}, {k}]"):
            y, _ = ctx.call(run_linear, kern, x, w, b)
            ctx.expect_close(y, linear_ref(x, w, b))


# ----------------------------------------------------------------------------- ex5 Softmax
@LAB.exercise("ex5", points=3, title="Softmax, numerically stable", hints=(
    "Class-major layout: row c of x holds class c of tileLength images, so the max over classes is an "
    "elementwise Max over the C rows.",
    "Per tile: copy in the C rows; m = Max over the rows; Sub(row, row, m) for every row; Exp; s = sum of the "
    "rows with Add; Div(row, row, s); copy out.",
    "Subtract the max BEFORE Exp: logits of 100 overflow exp; the checks use logits up to +-60.",
))
def _ex5(ctx: Context) -> None:
    kern = ctx.answer("softmax_custom")
    with ctx.case("equal logits (all-ones test): every probability is 1/10"):
        y, _ = ctx.call(run_softmax, kern, np.ones((3, 10)))
        ctx.expect_close(y, np.full((3, 10), 0.1, np.float16))
    cases = [(64, 10, 30.0), (100, 10, 60.0)]
    cases += [(int(ctx.rng.integers(1, 130)), int(ctx.rng.integers(2, 17)), 20.0) for _ in range(2)]
    for n, c, scale in cases:
        x = (ctx.rng.standard_normal((n, c)) * scale).astype(np.float16)
        with ctx.case(f"x [{n}, {c}], logits up to +-{scale:g}"):
            y, _ = ctx.call(run_softmax, kern, x)
            ctx.expect_close(y, softmax_ref(x))


# ----------------------------------------------------------------------------- ex6 LeNet-5
@LAB.exercise("ex6", points=4, title="LeNet-5 from your kernels", hints=(
    "Chain run_conv2d(conv2d_custom, ...), run_relu, run_maxpool, ... as in the graph: conv1 (pad 2), ReLU, pool, "
    "conv2, ReLU, pool, flatten to [N, 400], fc1 + ReLU, fc2 + ReLU, fc3, softmax.",
    "Input: normalize(images).astype(np.float16); weights: load_lenet_weights() cast to float16.",
    "Every run_* helper returns (output, LaunchResult): keep the output, index [0].",
))
def _ex6(ctx: Context) -> None:
    from ..datasets import load_mnist_subset
    from ..lenet_reference import lenet_predict_ref, load_lenet_weights
    forward = ctx.answer("lenet_forward")
    images, labels = load_mnist_subset("heldout")
    images, labels = images[:LENET_IMAGES], labels[:LENET_IMAGES]
    probs = np.asarray(ctx.call(forward, images))
    if probs.shape != (LENET_IMAGES, 10):
        ctx.fail(f"lenet_forward returned shape {probs.shape}, expected ({LENET_IMAGES}, 10): one row of 10 "
                 "class probabilities per image")
    sums = probs.astype(np.float32).sum(axis=1)
    if not np.allclose(sums, 1, atol=1e-2):
        ctx.fail(f"the rows are not probabilities: row sums range {sums.min():.3f}..{sums.max():.3f}; "
                 "end with your softmax")
    pred = probs.astype(np.float32).argmax(axis=1)
    acc = float((pred == labels).mean())
    agree = float((pred == lenet_predict_ref(load_lenet_weights(), images, dtype=np.float16)).mean())
    if acc < MIN_ACCURACY:
        ctx.fail(f"accuracy {acc:.1%} on {LENET_IMAGES} held-out digits, at least {MIN_ACCURACY:.0%} needed; "
                 f"your predictions agree with the fp16 reference network on {agree:.1%} of them")
    ctx.note(f"accuracy {acc:.1%} on {LENET_IMAGES} held-out digits ({agree:.1%} agreement with the reference)")
