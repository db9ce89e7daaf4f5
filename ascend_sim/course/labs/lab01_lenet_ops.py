"""Checks of lab 01, the LeNet-5 operators: ReLU, MaxPool 2x2/2, Conv2D, FC, Softmax, then LeNet-5 assembled.

The learner's kernels do the operators' work; the host helpers here only do
what a CANN graph does around a kernel: format conversion (TransData) and
weight packing, done once per tensor, never the operator itself:

* ReLU: the tensor flattened and padded to whole tiles.
* MaxPool: the activations in the batch-innermost *chunked layout*
  ``[chunk][C, H, W, 16]`` (16 images per chunk, so one pixel of the chunk
  is exactly one 32-byte DataBlock); the kernel finds the 2x2 window maxima
  itself (row offsets for the vertical pairs, block stride 2 for the
  horizontal pairs). No window is gathered on the host.
* Conv2D: the zero-padded input in the chunked layout ``[chunk][C, Hp, Wp, nb]``
  (no im2col), the weights ``[O, C, KH, KW]`` and the bias ``[O]`` as fp16 GM
  tensors. The kernel reads them as scalars (GetValue after the MTE2->S
  sync), slides the window (one Axpy per tap over a shifted range) and adds
  the bias in-kernel.
* FC: a cube (Mmad) kernel, ``Y^T [Mp, N] = W' [Mp, Kp] @ X'^T [Kp, N]``. The
  host packs ``W' = [W | b]`` K-step by K-step and appends a row of ones to
  ``X^T`` (the bias rides along as one more input feature, as in
  ``ascend_sim.kernels.linear``), padded to whole 16 x 16 fractals.
* Softmax: the logits class-major ``[C, N]`` float32.

Hidden cases: fixed shapes, seeded random shapes and block counts, the
all-ones test (conv: 9/12/15/16/20/25 + bias; FC: K + bias), compared with the
numpy reference of ``ascend_sim.models.lenet_reference`` under the fp16 verify
tolerance. Outputs are pre-filled with NaN so unwritten elements are recognised.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.engine.spelling import CPP
from ascend_sim.hw.chips import DATA_BLOCK_BYTES, get_chip
from ascend_sim.course.grading import Context, Lab
from ascend_sim.course.labs.lab00_warmup import BYTES_HINTS, LOOP_HINTS, OFFSET_HINTS, QUEUE_HINTS
from ascend_sim.kernels import from_chunks, to_chunks
from ascend_sim.models.lenet_reference import conv2d_ref, linear_ref, maxpool2d_ref, softmax_ref

__all__ = ["LAB", "check", "hint", "EltTiling", "PoolTiling", "ConvTiling", "LinearTiling", "SoftmaxTiling", "elt_tiling",
           "pool_tiling", "conv_tiling", "linear_tiling", "pack_linear", "run_relu", "run_maxpool", "run_conv2d",
           "run_linear", "run_softmax", "ones_conv_golden", "LANES", "LENET_IMAGES", "MIN_ACCURACY", "LENET_WEIGHT_ORDER",
           "lenet_weights_flat", "run_lenet"]

LENET_IMAGES = 300          # ex6: held-out digits the assembled network must classify
MIN_ACCURACY = 0.90
LANES = DATA_BLOCK_BYTES // 2  # halves per DataBlock: images per pixel block of the batch-innermost layout
L0AB_TILE_BYTES = 32 * 1024  # the FC tiles: half of L0A / L0B, as in examples/matmul.py
L0C_BYTES = 128 * 1024
BASE_K = 128                # FC K step (halves); several steps for K = 400, so the accumulation is tested
FC_CHUNK = 128              # FC images per Mmad

LAB = Lab("lab01_lenet_ops")
check = LAB.check
hint = LAB.hint         # hint("ex1"): the next hint for the last mistake the check diagnosed


def _round_up(n: int, m: int) -> int:
    return -(-int(n) // m) * m


# ----------------------------------------------------------------------------- ReLU: flat, whole tiles
@dataclass
class EltTiling:
    """Elementwise tiling: every block owns totalLength // blockDim elements, processed tileLength at a time."""

    totalLength: int
    tileLength: int


def elt_tiling(n: int, block_dim: int, tile: int) -> EltTiling:
    """Tiling for ``n`` elements on ``block_dim`` blocks: n rounded up to whole tiles of every block."""
    return EltTiling(_round_up(max(n, 1), block_dim * tile), tile)


def _padded(x: np.ndarray, total: int, fill=0) -> np.ndarray:
    flat = np.full(total, fill, np.float16)
    flat[: x.size] = np.asarray(x, np.float16).ravel()
    return flat


def run_relu(kern, x: np.ndarray, block_dim: int = 4, tile: int = 256):
    """ReLU of any fp16 array with the learner's ``relu_custom``; returns (y, LaunchResult)."""
    from ascend_sim import launch
    t = elt_tiling(x.size, block_dim, tile)
    xp, y = _padded(x, t.totalLength), np.full(t.totalLength, np.nan, np.float16)
    res = launch(kern, block_dim, xp, y, t)
    return y[: x.size].reshape(x.shape), res


# ----------------------------------------------------------------------------- MaxPool: chunked layout, 16 lanes
@dataclass
class PoolTiling:
    """MaxPool 2x2/2 on ``planes`` planes of ``H x W`` pixels; a pixel is one DataBlock of 16 halves (16 images).

    x is ``[planes][H, W, 16]`` half (planes = chunks x C, chunk-major), y is ``[planes][OH, OW, 16]``;
    ``OH = H // 2``, ``OW = W // 2`` (an odd last row or column belongs to no window).
    """

    planes: int
    H: int
    W: int
    OH: int
    OW: int


def pool_tiling(n: int, C: int, H: int, W: int) -> PoolTiling:
    return PoolTiling(-(-n // LANES) * C, H, W, H // 2, W // 2)


def run_maxpool(kern, x: np.ndarray, block_dim: int = 4):
    """MaxPool 2x2/2 of fp16 ``x [N, C, H, W]`` with the learner's ``maxpool_custom``; returns (y, result).

    The host converts NCHW to the chunked layout ``[chunk][C, H, W, 16]`` and back (TransData); the windows
    are the kernel's job.
    """
    from ascend_sim import launch
    x = np.asarray(x, np.float16)
    n, C, H, W = x.shape
    t = pool_tiling(n, C, H, W)
    y = np.full(t.planes * t.OH * t.OW * LANES, np.nan, np.float16)
    res = launch(kern, block_dim, to_chunks(x, np.float16, LANES), y, t, gm_names=["x", "y"])
    return from_chunks(y, n, LANES, (C, t.OH, t.OW)), res


# ----------------------------------------------------------------------------- Conv2D: padded chunks, GM weights
@dataclass
class ConvTiling:
    """Conv2D (stride 1) of chunks of ``nb`` images.

    x is the zero-padded input ``[chunks][C, Hp, Wp, nb]`` half; w ``[O, C, KH, KW]`` and b ``[O]`` half, each
    padded with zeros to a multiple of 16 elements (``wLength``, ``bLength``); y is ``[chunks][O, OH, OW, nb]``
    half with ``OH = Hp - KH + 1``, ``OW = Wp - KW + 1``.
    """

    C: int
    Hp: int
    Wp: int
    O: int
    KH: int
    KW: int
    OH: int
    OW: int
    nb: int
    chunks: int
    wLength: int
    bLength: int


def conv_ub_bytes(C, Hp, Wp, OH, OW, nb, O, taps) -> int:
    """UB of the reference kernel: input (half + float copy), accumulator (float) and output (half), weights."""
    plane, count = C * Hp * Wp * nb, ((OH - 1) * Wp + OW) * nb
    sizes = (plane * 2, plane * 4, count * 4, count * 2, O * taps * 2, O * 2)
    return sum(_round_up(b, DATA_BLOCK_BYTES) for b in sizes)


def conv_tiling(n: int, C: int, H: int, W: int, O: int, KH: int, KW: int, pad: int) -> ConvTiling:
    """The widest chunk (16, 32, 48 or 64 images) whose buffers fit UB."""
    Hp, Wp = H + 2 * pad, W + 2 * pad
    OH, OW = Hp - KH + 1, Wp - KW + 1
    if OH < 1 or OW < 1:
        raise ValueError(f"conv2d: a {KH}x{KW} kernel does not fit a {H}x{W} input with pad {pad}")
    lanes = _round_up(max(n, 1), LANES)
    fits = [nb for nb in range(LANES, min(lanes, 4 * LANES) + 1, LANES)
            if conv_ub_bytes(C, Hp, Wp, OH, OW, nb, O, C * KH * KW) <= get_chip(None).ub_usable_bytes]
    if not fits:
        raise ValueError(f"conv2d: one chunk of {LANES} images of a {C}x{Hp}x{Wp} padded input does not fit UB")
    nb = fits[-1]
    return ConvTiling(C, Hp, Wp, O, KH, KW, OH, OW, nb, -(-lanes // nb), _round_up(O * C * KH * KW, LANES),
                      _round_up(O, LANES))


def run_conv2d(kern, x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0, block_dim: int = 4,
               auto_sync: bool = True):
    """Conv2D (stride 1) of fp16 ``x [N, C, H, W]`` with the learner's ``conv2d_custom``; returns (y, result).

    The host zero-pads the input and converts it to the chunked layout (TransData); no im2col: the window
    slide, the weights and the bias are the kernel's job. ``auto_sync=False``: built as with --cce-auto-sync=off
    (ex3's check: the kernel's own MTE2_S flag is graded).
    """
    from ascend_sim import launch
    x, w, b = (np.asarray(v, np.float16) for v in (x, w, b))
    n, C, H, W = x.shape
    O, _, KH, KW = w.shape
    t = conv_tiling(n, C, H, W, O, KH, KW, pad)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.full(t.chunks * t.O * t.OH * t.OW * t.nb, np.nan, np.float16)
    res = launch(kern, block_dim, to_chunks(xp, np.float16, t.nb), _padded(w, t.wLength), _padded(b, t.bLength),
                 y, t, gm_names=["x", "w", "b", "y"], auto_sync=auto_sync)
    return from_chunks(y, n, t.nb, (O, t.OH, t.OW)), res


# ----------------------------------------------------------------------------- FC: the cube
@dataclass
class LinearTiling:
    """FC on the cube: ``Y^T [M, N] = W' [M, K] @ X'^T [K, N]``, half in, fp32 in L0C, half out.

    ``M`` = outputs (``O``) padded to 16; ``K`` = inputs + 1 (the bias row) padded to a multiple of ``baseK``;
    ``N`` = images padded to a multiple of ``nb``. w is ``W' [M, K]``, x is ``X'^T [K, N]`` and y is ``[M, N]``,
    all row-major (ND): the kernel converts to the cube's fractal formats on the way (Nd2Nz, LoadData).
    """

    M: int
    K: int
    N: int
    baseK: int
    nb: int
    O: int


def linear_tiling(n: int, K: int, O: int) -> LinearTiling:
    M = _round_up(O, 16)
    nb = min(FC_CHUNK, _round_up(max(n, 1), 16), L0C_BYTES // (M * 4) // 16 * 16)
    base_k = min(BASE_K, _round_up(K + 1, 16), L0AB_TILE_BYTES // (2 * max(M, nb)) // 16 * 16)
    if nb < 16 or base_k < 16:
        raise ValueError(f"linear: {O} outputs do not fit the L0 buffers; split the layer")
    return LinearTiling(M, _round_up(K + 1, base_k), _round_up(max(n, 1), nb), base_k, nb, O)


def pack_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray, t: LinearTiling):
    """Host packing (a weight conversion): W' = [W | b] padded, X'^T with a row of ones at K; both ND."""
    n, K = x.shape
    wp = np.zeros((t.M, t.K), np.float16)
    wp[: t.O, :K], wp[: t.O, K] = w, b
    xt = np.zeros((t.K, t.N), np.float16)
    xt[:K, :n], xt[K, :] = x.T, 1.0
    return wp.ravel(), xt.ravel()


def run_linear(kern, x: np.ndarray, w: np.ndarray, b: np.ndarray, block_dim: int = 2):
    """FC layer ``x [N, K] @ w.T + b`` with the learner's cube ``linear_custom``; returns (y [N, O] fp16, result)."""
    from ascend_sim import launch
    x, w, b = (np.asarray(v, np.float16) for v in (x, w, b))
    n, K = x.shape
    t = linear_tiling(n, K, w.shape[0])
    wp, xp = pack_linear(x, w, b, t)
    y = np.full(t.M * t.N, np.nan, np.float16)
    res = launch(kern, block_dim, wp, xp, y, t, gm_names=["w", "x", "y"])
    return np.ascontiguousarray(y.reshape(t.M, t.N)[: t.O, :n].T), res


# ----------------------------------------------------------------------------- Softmax: class-major
@dataclass
class SoftmaxTiling:
    """Softmax over C classes for N images, class-major: ``x``/``y`` are ``[C, N]`` float32, N a multiple of tileLength."""

    C: int
    N: int
    tileLength: int


def run_softmax(kern, x: np.ndarray, block_dim: int = 2, tile: int = 64):
    """Softmax over the last axis of fp16 ``x [N, C]`` with the learner's ``softmax_custom``; returns (y, result)."""
    from ascend_sim import launch
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
# Hints per diagnosis (ascend_sim/course/grading/hints.py): nudge, pointer, explanation.
@LAB.exercise("ex1", points=2, title="ReLU", hints={
    "QueueError": QUEUE_HINTS,
    "offset": OFFSET_HINTS,
    "GMWriteConflictError": OFFSET_HINTS,
    "OutOfBoundsError": BYTES_HINTS,
    "loop": LOOP_HINTS,
    "*": (
        "This is lab00's Add with one input: CopyIn, Compute with Relu, CopyOut, per tile.",
        "Per tile: CopyIn (AllocTensor, DataCopy GM->UB, EnQue), Compute (DeQue, Relu(dst, src, tileLength), "
        "EnQue), CopyOut (DeQue, DataCopy UB->GM, FreeTensor).",
    ),
})
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
POOL_LAYOUT = ("Plane p starts at x[p * H * W * 16]: H rows of W pixels, one pixel = one DataBlock (32 bytes) of "
               "16 images.")
POOL_HORIZONTAL = ("Horizontal pairs in the repeat form: Max(dst, v, v[16], 128, repeats, «BinaryRepeatParams(1, 2, "
                   "2, 8, 16, 16)»): block stride 2 reads the even pixels from v and the odd ones from v[16]; a repeat "
                   "writes 8 output pixels and moves 16 input pixels.")
POOL_REST = ("OH * OW output pixels = «(OH * OW) // 8» full repeats plus one repeat with mask rest * 16 for the "
             "rest; planes go to blocks round robin: «range(GetBlockIdx(), tiling.planes, GetBlockNum())|for "
             "(uint32_t p = GetBlockIdx(); p < planes; p += GetBlockNum())».")


@LAB.exercise("ex2", points=2, title="MaxPool 2x2, stride 2", hints={
    "values": (
        "The ramp case says which maximum each window should find: print your output for it next to the expected "
        "one. Are the vertical pairs or the horizontal pairs off?",
        f"{POOL_LAYOUT} Vertical pairs: rows 2r and 2r+1 are W * 16 elements apart, so one count-form Max per "
        "output row over the first 2 * OW pixels gives v[r] = max(row 2r, row 2r+1).",
        POOL_HORIZONTAL,
    ),
    "unwritten": (
        "Some output pixels were never written: which ones does the message name, the last of each plane?",
        POOL_REST,
    ),
    "offset": ("Some planes went missing or twice: how do the blocks share the planes?", POOL_REST),
    "ArgumentError": (
        "A mask, repeat or stride is outside what Max accepts: the error names the value and the limit.",
        "One repeat covers 8 DataBlocks (128 halves); a mask of rest * 16 covers the last rest pixels; "
        "repeats is at most 255.",
        POOL_HORIZONTAL,
    ),
    "OutOfBoundsError": (
        "An operand runs past its tensor: count the pixels a repeat reads with block stride 2 (16 per repeat).",
        POOL_REST,
    ),
    "QueueError": QUEUE_HINTS,
    "*": (POOL_LAYOUT, POOL_HORIZONTAL, POOL_REST),
})
def _ex2(ctx: Context) -> None:
    kern = ctx.answer("maxpool_custom")
    ramp = np.arange(2 * 6 * 8, dtype=np.float16).reshape(1, 2, 6, 8)
    cases = [("all-ones 2x6x28x28 (every maximum is 1)", np.ones((2, 6, 28, 28), np.float16),
              np.ones((2, 6, 14, 14), np.float16), 4),
             ("ramp 1x2x6x8 (x = row * 8 + col: every maximum is the bottom-right corner)", ramp,
              ramp[:, :, 1::2, 1::2], 2),
             ("LeNet Pool2 20x16x10x10", _halves(ctx, (20, 16, 10, 10)), None, 3)]
    for _ in range(3):
        n, c, h, w = (int(ctx.rng.integers(1, 40)), int(ctx.rng.integers(1, 9)), int(ctx.rng.integers(2, 31)),
                      int(ctx.rng.integers(2, 31)))
        cases.append((f"random {n}x{c}x{h}x{w}", _halves(ctx, (n, c, h, w)), None, int(ctx.rng.choice([1, 3, 8]))))
    for label, x, golden, blocks in cases:
        with ctx.case(f"{label}, {blocks} blocks"):
            y, _ = ctx.call(run_maxpool, kern, x, blocks)
            ctx.expect_close(y, maxpool2d_ref(x) if golden is None else golden, sentinel=np.nan)


# ----------------------------------------------------------------------------- ex3 Conv2D
CONV_SYNC = (
    "The scalar unit reads the weights (GetValue) while the MTE2 copy that brings them may still be running. The "
    "toolchain's auto-sync (on by default) would insert the flag for you; this check builds your kernel with "
    "--cce-auto-sync=off so that you place it.",
    "TODO 1: after the DataCopy of w and b to UB, the scalar unit may read them only once MTE2 has landed: a "
    "SetFlag/WaitFlag pair on the MTE2 -> S event («SetFlag(HardEvent.MTE2_S, 0)»; «WaitFlag(HardEvent.MTE2_S, 0)»).",
    "TODO 1 in full: the flag pair right after the two DataCopy calls, before the first GetValue. Then «read them "
    "once into lists: self.wv = [wLocal.GetValue(i) for i in range(O * taps)] and the same for the bias|read "
    "wLocal.GetValue(index) where Compute needs a weight, and bLocal.GetValue(o) for the bias».",
)


@LAB.exercise("ex3", points=4, title="Conv2D: sliding window and bias", hints={
    "RaceError": CONV_SYNC,
    "UninitializedReadError": CONV_SYNC,
    "SyncError": CONV_SYNC,
    "values": (
        "The all-ones case has a known answer (taps inside the image + 0.5): is every pixel off by the same "
        "amount (the bias) or by a pattern (the taps)?",
        "TODO 2: Duplicate(acc, bias of channel o, count) starts every output pixel at the bias («self.bv[o]|"
        "bLocal.GetValue(o) as a float»). TODO 3: for every tap (c, i, j), the input pixel under output pixel p is "
        "p + (c * Hp + i) * Wp + j of the padded planes.",
        "One Axpy(acc, xf[((c * Hp + i) * Wp + j) * nb], weight, count) per tap, with the weight of tap (c, i, j) "
        "for channel o at index ((o * C + c) * KH + i) * KW + j («self.wv[index]|wLocal.GetValue(index) as a float»).",
    ),
    "QueueError": QUEUE_HINTS,
    "*": (
        "Fill in the three TODOs in order: the sync before reading weights, the bias, the taps.",
        "TODO 2: Duplicate(acc, bias of channel o, count) starts every output pixel at the bias («self.bv[o]|"
        "bLocal.GetValue(o)»).",
    ),
})
def _ex3(ctx: Context) -> None:
    kern = ctx.answer("conv2d_custom")
    bias = 0.5
    with ctx.case("all-ones 28x28 image, 5x5 all-ones filter, pad 2, bias 0.5"):
        y, _ = ctx.call(run_conv2d, kern, np.ones((1, 1, 28, 28)), np.ones((1, 1, 5, 5)), np.array([bias]), 2,
                        auto_sync=False)
        ctx.expect_close(y[0, 0], ones_conv_golden(28, 5, 2, bias), sentinel=np.nan)
    cases = [((2, 1, 28, 28), (6, 1, 5, 5), 2, 4), ((40, 6, 14, 14), (16, 6, 5, 5), 0, 2)]
    for _ in range(2):
        k = int(ctx.rng.choice([1, 3, 5]))
        shape = (int(ctx.rng.integers(1, 40)), int(ctx.rng.integers(1, 4)), int(ctx.rng.integers(k, 16)),
                 int(ctx.rng.integers(k, 16)))
        cases.append((shape, (int(ctx.rng.integers(1, 7)), shape[1], k, k), int(ctx.rng.integers(0, 3)),
                      int(ctx.rng.choice([1, 2, 5]))))
    for xs, ws, pad, blocks in cases:
        x = ctx.rng.uniform(0, 1, xs).astype(np.float16)
        w = ctx.rng.uniform(-0.5, 0.5, ws).astype(np.float16)
        b = ctx.rng.uniform(-1, 1, ws[0]).astype(np.float16)
        with ctx.case(f"x {xs}, w {ws}, pad {pad}, {blocks} blocks"):
            y, _ = ctx.call(run_conv2d, kern, x, w, b, pad, blocks, auto_sync=False)
            ctx.expect_close(y, conv2d_ref(x, w, b, pad=pad), sentinel=np.nan)


# ----------------------------------------------------------------------------- ex4 FC
@LAB.exercise("ex4", points=2, title="fully connected layer on the cube", hints=(
    "Follow ascend_sim/kernels/matmul.py: queues at A1, B1 (L1), A2 (L0A), B2 (L0B), CO1 (L0C). W' goes to "
    "L1 once, ND -> NZ: DataCopy(a1, wGm, «Nd2NzParams(1, M, K, 0, K, M, 1, 0)»); per chunk of nb images and per K "
    "step: Nd2Nz the [baseK, nb] slice of X'^T to B1, LoadData both tiles to L0A/L0B, Mmad into the CO1 tensor.«| Braces "
    "do not narrow: a uint32_t value goes into a uint16_t field as static_cast<uint16_t>(M).»",
    "The X'^T slice: DataCopy(b1, xGm[k0 * N + n0], «Nd2NzParams(1, baseK, nb, 0, N, baseK, 1, 0)»). L0A is ZZ: "
    "one LoadData per 16-row block i, LoadData(a2[i * baseK * 16], a1[k0 * M + i * 256], «LoadData2DParams(0, "
    "baseK // 16, M // 16, 0, 0, False, 0)»); L0B is ZN: per 16-row block of the slice, the same with ifTranspose "
    "«True» («LoadData2DParams(0, nb // 16, baseK // 16, 0, 0, True, 0)»).",
    "Mmad(c1, a2, b2, «MmadParams(M, nb, baseK, 0, False, k0 == 0)») (C++ order: m, n, k, unitFlag, cmatrixSource, "
    "cmatrixInitVal): zero only at the first K step, then accumulate. After the K loop: Fixpipe(yGm[n0], c1, "
    "«FixpipeParamsV220(nb, M, M, N, False, QuantMode_t.F322F16)») (srcStride M: rows of L0C between column blocks).",
))
def _ex4(ctx: Context) -> None:
    kern = ctx.answer("linear_custom")
    with ctx.case("all-ones x [2, 400], all-ones w [3, 400], bias 0.5 (every output is 400.5)"):
        y, _ = ctx.call(run_linear, kern, np.ones((2, 400)), np.ones((3, 400)), np.full(3, 0.5))
        ctx.expect_close(y, np.full((2, 3), 400.5, np.float16), sentinel=np.nan)
    shapes = [(8, 400, 120, 2), (300, 84, 10, 2)]
    shapes += [tuple(int(v) for v in ctx.rng.integers(1, 200, 3)) + (int(ctx.rng.choice([1, 3])),) for _ in range(2)]
    for n, k, o, blocks in shapes:
        x = ctx.rng.uniform(0, 1, (n, k)).astype(np.float16)
        w = ctx.rng.uniform(-0.2, 0.2, (o, k)).astype(np.float16)
        b = ctx.rng.uniform(-1, 1, o).astype(np.float16)
        with ctx.case(f"x [{n}, {k}], w [{o}, {k}], {blocks} blocks"):
            y, _ = ctx.call(run_linear, kern, x, w, b, blocks)
            ctx.expect_close(y, linear_ref(x, w, b), sentinel=np.nan)


LAB.add_hints("ex4", {          # by diagnosis; the decorator's hints stay the fallback ("*")
    "values": (
        "The all-ones case must give K + bias = 400.5: what do you get? One K step's worth (16.5) means the "
        "accumulator restarts at every K step; another value means an operand is laid out wrongly for the cube "
        "(L0B holds B as ZN: each fractal column-major).",
        "Mmad either starts L0C at zero (cmatrixInitVal true) or adds to what L0C holds: only the first K step "
        "may start at zero.",
        "Pass cmatrixInitVal = (k0 == 0) to every Mmad of the K loop, and Fixpipe the CO1 tensor to GM once, "
        "after the loop.",
    ),
    "CubeFormatError": (
        "The cube works on 16 x 16 fractals (16 x 16 x 16 for half): the error names the shape that is off.",
        "M, baseK and nb are multiples of 16 here: check the counts you pass to LoadData and Mmad.",
    ),
    "AlignmentError": ("LoadData moves 512-byte fractals and DataCopy 32-byte blocks: check the units of the "
                       "offsets and lengths in the error.",),
    "OutOfBoundsError": ("A copy runs past its tensor: compare the sizes in the error with M, K, N and baseK.",),
    "QueueError": QUEUE_HINTS,
})


# ----------------------------------------------------------------------------- ex5 Softmax
SOFTMAX_STEPS = ("Per tile: copy in the C rows; m = Max over the rows; Sub(row, row, m) for every row; Exp; "
                 "s = sum of the rows with Add; Div(row, row, s); copy out.")


@LAB.exercise("ex5", points=3, title="Softmax, numerically stable", hints={
    "values": (
        "Small logits pass and large ones fail? Think about what exp does with a logit of a few hundred.",
        "exp overflows above about 88.7 in float (about 11.1 in half): softmax(x) = softmax(x - max(x)), and "
        "after the subtraction every exponent is at most 0.",
        "Class-major layout: row c holds class c of tileLength images, so the max over classes is an elementwise "
        f"Max over the C rows. {SOFTMAX_STEPS}",
    ),
    "QueueError": QUEUE_HINTS,
    "OutOfBoundsError": BYTES_HINTS,
    "*": (
        "Class-major layout: row c of x holds class c of tileLength images, so the max over classes is an "
        "elementwise Max over the C rows.",
        SOFTMAX_STEPS,
    ),
})
def _ex5(ctx: Context) -> None:
    kern = ctx.answer("softmax_custom")
    with ctx.case("equal logits (all-ones test): every probability is 1/10"):
        y, _ = ctx.call(run_softmax, kern, np.ones((3, 10)))
        ctx.expect_close(y, np.full((3, 10), 0.1, np.float16))
    cases = [(64, 10, 30.0), (100, 10, 60.0)]
    cases += [(int(ctx.rng.integers(1, 130)), int(ctx.rng.integers(2, 17)), 20.0) for _ in range(2)]
    for n, c, scale in cases:
        x = (ctx.rng.standard_normal((n, c)) * scale).astype(np.float16)
        with ctx.case(f"x [{n}, {c}], logits up to +-{np.abs(x).max():g} (standard deviation {scale:g})"):
            y, _ = ctx.call(run_softmax, kern, x)
            ctx.expect_close(y, softmax_ref(x))


# ----------------------------------------------------------------------------- ex6 LeNet-5
LENET_KERNELS = ("conv2d_custom", "linear_custom", "softmax_custom")     # ReLU may be fused (Fixpipe reluEn)


LENET_CLASSES = 10
LENET_WEIGHT_ORDER = ("conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc1.w", "fc1.b", "fc2.w", "fc2.b", "fc3.w", "fc3.b")


def lenet_weights_flat() -> np.ndarray:
    """The LeNet-5 weights as one fp16 array, each tensor row-major in LENET_WEIGHT_ORDER: what a C++
    ``lenet_forward`` reads, as a deployed model reads its weight file."""
    from ascend_sim.models.lenet_reference import load_lenet_weights
    w = load_lenet_weights()
    return np.concatenate([np.asarray(w[k], np.float16).ravel() for k in LENET_WEIGHT_ORDER])


def run_lenet(forward, images: np.ndarray) -> np.ndarray:
    """fp16 probabilities ``[N, 10]`` of a ``lenet_forward`` in either language: a Python one returns them; a C++
    one, ``void lenet_forward(const uint8_t* images, uint32_t n, const half* weights, half* probs)``, writes them."""
    from ascend_sim.engine.spelling import CPP, language_of
    if language_of(forward) != CPP:
        return forward(images)
    probs = np.full((len(images), LENET_CLASSES), np.nan, np.float16)
    forward(np.ascontiguousarray(images, np.uint8), len(images), lenet_weights_flat(), probs)
    return probs


def _softmax_rows(launch) -> np.ndarray:
    """The grader's view of one softmax launch: its [10, N] float32 output (class-major; a C++ launch's is the
    device allocation's bytes) as rows of fp16 probabilities."""
    y = np.ascontiguousarray(launch.output(1)).reshape(-1).view(np.float32)
    return y.reshape(LENET_CLASSES, -1).T.astype(np.float16)


LENET_GRAPH = ("Chain «run_conv2d(conv2d_custom, ...), run_relu, run_maxpool, ...|Conv(...), Relu(...), "
               "MaxPool(...), ...» as in the graph: conv1 (pad 2), "
               "ReLU, pool, conv2, ReLU, pool, flatten to [N, 400], fc1 + ReLU, fc2 + ReLU, fc3, softmax.")


@LAB.exercise("ex6", points=4, title="LeNet-5 from your kernels", hints={
    "lenet/accuracy": (
        "Every layer ran, but the digits come out wrong: compare your chain with the graph, layer by layer.",
        LENET_GRAPH,
        "Two classic slips: a ReLU missing after a conv or fc layer, and flattening Pool2's [N, 16, 5, 5] in "
        "another order than C, H, W («reshape(N, 400) of the NCHW array|feature f = c * 25 + h * 5 + w of "
        "Pool2's chunked output»).",
    ),
    "lenet/shape": (
        "lenet_forward must return one row of 10 probabilities per image.",
        "Every run_* helper returns (output, LaunchResult): keep the output, index [0].",
    ),
    "lenet/probabilities": ("End with your softmax kernel: «run_softmax(softmax_custom, logits)[0]|Softmax(logits, "
                            "10, n, probs, stream)».", LENET_GRAPH),
    "*": (
        LENET_GRAPH,
        "«Input: normalize(images).astype(np.float16); weights: load_lenet_weights() cast to float16.|The weights "
        "are one half array: weights + CONV1_W ... weights + FC3_B.»",
        "«Every run_* helper returns (output, LaunchResult): keep the output, index [0]. More blocks "
        "(run_conv2d(..., block_dim=8)) spread the chunks of images over more cores.|The activations stay on the "
        "device from conv1 to pool2: each launch reads the buffer the previous one wrote.»",
    ),
})
def _ex6(ctx: Context) -> None:
    from ascend_sim.models.datasets import load_mnist_subset
    from ascend_sim.models.lenet_reference import lenet_predict_ref, load_lenet_weights
    forward = ctx.answer("lenet_forward")
    images, labels = load_mnist_subset("heldout")
    images, labels = images[:LENET_IMAGES], labels[:LENET_IMAGES]
    watch = dict(kernels=LENET_KERNELS, output_from=("softmax_custom", _softmax_rows))
    if ctx.language == CPP:        # the host function writes into the buffer the check allocates
        probs = np.full((LENET_IMAGES, LENET_CLASSES), np.nan, np.float16)
        ctx.call(forward, images, LENET_IMAGES, lenet_weights_flat(), probs, output_arg=3, **watch)
    else:
        probs = np.asarray(ctx.call(forward, images, **watch))
    if probs.shape != (LENET_IMAGES, 10):
        ctx.fail(f"lenet_forward returned shape {probs.shape}, expected ({LENET_IMAGES}, 10): one row of 10 "
                 "class probabilities per image", ("lenet/shape",))
    sums = probs.astype(np.float32).sum(axis=1)
    if not np.allclose(sums, 1, atol=1e-2):
        ctx.fail(f"the rows are not probabilities: row sums range {sums.min():.3f}..{sums.max():.3f}; "
                 "end with your softmax", ("lenet/probabilities",))
    pred = probs.astype(np.float32).argmax(axis=1)
    acc = float((pred == labels).mean())
    agree = float((pred == lenet_predict_ref(load_lenet_weights(), images, dtype=np.float16)).mean())
    if acc < MIN_ACCURACY:
        ctx.fail(f"accuracy {acc:.1%} on {LENET_IMAGES} held-out digits, at least {MIN_ACCURACY:.0%} needed; "
                 f"your predictions agree with the fp16 reference network on {agree:.1%} of them", ("lenet/accuracy",))
    ctx.note(f"accuracy {acc:.1%} on {LENET_IMAGES} held-out digits ({agree:.1%} agreement with the reference)")
