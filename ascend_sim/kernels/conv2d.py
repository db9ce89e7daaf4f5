"""Conv2D (stride 1, zero padding) as a direct sliding-window kernel on the vector unit.

Per chunk of ``nb`` images the padded input ``[C, Hp, Wp, nb]`` sits in UB
(batch innermost; GM holds the chunked layout of ``_common``). Flatten a
plane to ``p = y * Wp + x``: output pixel ``p`` of channel ``o`` is
``bias[o] + sum_{c,i,j} w[o,c,i,j] * in[c, p + i*Wp + j]``, so each
weight tap is ONE ``Axpy`` over a contiguous range of
``((rows - 1) * Wp + OW) * nb`` elements that updates every output pixel of
every image of the chunk. Columns ``x >= OW`` of that range are garbage and
are skipped when the rows are copied out. The weights are scalars read once
per block with ``GetValue``.

Blocks: a 2-D grid, ``block = batch_part * o_groups + o_group``. Each block
takes a contiguous range of chunks and one group of output channels, so it
reads only that group's weights (the scalar reads are otherwise a large
share of the work); the input chunk is loaded once per group.

Precision: float16 inputs and outputs, float32 accumulation (the input chunk
is Cast to float in UB, the sum is Cast back once), as the cube accumulates
and as ``lenet_reference.conv2d_ref`` rounds: once per op. float32 runs
without the casts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Axpy, Cast, DataCopy, DataCopyParams, Duplicate, GetBlockIdx, GetBlockNum, RoundMode, TBuf,
                        TPipe, TPosition, TQue, float32, kernel)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES, get_chip
from ascend_sim.kernels._common import (MAX_STRIDE, check_batch, from_chunks, gm, data_block_lanes, load_scalars,
                                        resolve_dtype, run, share, to_chunks, ub_bytes)

US_PER_INSTR = 30.0        # host cost model of one simulated instruction (for the tiling choice only)
US_PER_KELEM = 2.5


@dataclass(frozen=True)
class Conv2dTiling:
    """Host-side tiling: shapes, lanes, the chunk width ``nb``, band rows, buffer depths, output-channel groups."""

    C: int
    H: int
    W: int
    O: int
    KH: int
    KW: int
    pad: int
    lanes: int          # Np: images rounded up to a DataBlock of lanes
    nb: int             # lanes per chunk
    rows: int           # output rows per band
    in_depth: int       # VECIN buffers (2: the next chunk loads during compute)
    dtype: np.dtype
    out_depth: int = 2  # VECOUT buffers
    o_groups: int = 1   # output-channel groups (blocks per batch part)

    @property
    def Hp(self) -> int:
        return self.H + 2 * self.pad

    @property
    def Wp(self) -> int:
        return self.W + 2 * self.pad

    @property
    def OH(self) -> int:
        return self.Hp - self.KH + 1

    @property
    def OW(self) -> int:
        return self.Wp - self.KW + 1

    @property
    def cast(self) -> bool:
        """True when the kernel accumulates in float32 for a narrower dtype."""
        return self.dtype.itemsize < 4

    @property
    def chunks(self) -> int:
        return -(-self.lanes // self.nb)

    def __post_init__(self) -> None:
        g = data_block_lanes(self.dtype)
        if self.nb % g or self.lanes % g or not 1 <= self.o_groups <= self.O or min(self.rows, self.nb) < 1:
            raise ValueError(f"Conv2dTiling: nb ({self.nb}) and lanes ({self.lanes}) must be multiples of {g}, "
                             f"rows >= 1 and 1 <= o_groups ({self.o_groups}) <= O ({self.O})")


def conv_ub_bytes(C, H, W, O, KH, KW, pad, nb, rows, in_depth, dtype, out_depth: int = 2) -> int:
    """UB bytes the conv kernel allocates for one tiling choice (all of O's weights, the worst case)."""
    isz = np.dtype(dtype).itemsize
    plane = C * (H + 2 * pad) * (W + 2 * pad) * nb
    band = rows * (W + 2 * pad) * nb
    sizes = [plane * isz] * in_depth + [band * isz] * out_depth + [O * C * KH * KW * isz, O * isz]
    if isz < 4:
        sizes += [plane * 4, band * 4]
    return ub_bytes(*sizes)


def choose_tiling(C, H, W, O, KH, KW, pad, n, dtype, chip=None, block_dim: int | None = None) -> Conv2dTiling:
    """A tiling that fits UB with about the fewest host-simulated instructions.

    Chunk width, band height and buffer depths set the work per chunk; the
    output-channel groups trade one more input load per group for fewer
    scalar weight reads per block. Among the choices within 5 % of the
    cheapest, the one with the most blocks (then the deepest buffers) wins:
    the simulated time. With ``block_dim`` given, the groups divide it.
    """
    dtype = resolve_dtype(dtype)
    if pad < 0:
        raise ValueError(f"conv2d: pad must be >= 0, got {pad}")
    g = data_block_lanes(dtype)
    lanes = -(-n // g) * g
    chip = get_chip(chip)
    Wp, Hp = W + 2 * pad, H + 2 * pad
    OH, OW = Hp - KH + 1, Wp - KW + 1
    if OH < 1 or OW < 1:
        raise ValueError(f"conv2d: a {KH}x{KW} kernel does not fit a {H}x{W} input with pad {pad}")
    taps = C * KH * KW
    options: list[tuple[float, int, int, Conv2dTiling]] = []     # (host cost, blocks, buffers, tiling)
    for nb in range(g, min(lanes, 8 * g) + 1, g):
        chunks = -(-lanes // nb)
        for in_depth, out_depth in ((2, 2), (1, 2), (2, 1), (1, 1)):
            rows = next((r for r in range(OH, 0, -1) if conv_ub_bytes(
                C, H, W, O, KH, KW, pad, nb, r, in_depth, dtype, out_depth) <= chip.ub_usable_bytes), 0)
            if not rows:
                continue
            bands = -(-OH // rows)
            axpy = US_PER_INSTR + US_PER_KELEM * ((rows - 1) * Wp + OW) * nb / 1000
            per_o = bands * ((taps + 2) * axpy + US_PER_INSTR)
            load = (C if pad else 1) * US_PER_INSTR + 4 * US_PER_INSTR
            for groups in range(1, min(O, chip.aiv_count) + 1):
                if block_dim is not None and block_dim % groups:
                    continue
                blocks = block_dim or min(chip.aiv_count // groups, chunks) * groups
                cost = chunks * (O * per_o + groups * load) + blocks * -(-O // groups) * (taps + 1) * US_PER_INSTR
                options.append((cost, blocks, in_depth + out_depth, Conv2dTiling(
                    C, H, W, O, KH, KW, pad, lanes, nb, rows, in_depth, dtype, out_depth, groups)))
    if not options:
        raise ValueError(f"conv2d: one chunk of {g} images of a {C}x{H}x{W} input does not fit the "
                         f"{chip.ub_usable_bytes}-byte UB; split the channels or the image")
    cheapest = min(o[0] for o in options)          # within 5 % of it: most blocks, then deepest buffers
    return max((o for o in options if o[0] <= 1.05 * cheapest), key=lambda o: (o[1], o[2], -o[0]))[3]


def conv_blocks(t: Conv2dTiling, chip=None, block_dim: int | None = None) -> int:
    """Blocks of the launch: batch parts x output-channel groups (``block_dim`` must be a multiple of the groups)."""
    if block_dim is not None:
        if block_dim % t.o_groups:
            raise ValueError(f"conv2d: block_dim {block_dim} is not a multiple of the tiling's {t.o_groups} "
                             "output-channel groups")
        return int(block_dim)
    return min(get_chip(chip).aiv_count // t.o_groups, t.chunks) * t.o_groups


def pad_runs(C: int, H: int, W: int, pad: int) -> list[tuple[int, int]]:
    """Contiguous zero runs ``(start_pixel, pixels)`` of the padded planes ``[C, Hp, Wp]``."""
    Hp, Wp = H + 2 * pad, W + 2 * pad
    runs: list[tuple[int, int]] = []

    def add(start: int, length: int) -> None:
        if length <= 0:
            return
        if runs and runs[-1][0] + runs[-1][1] == start:
            runs[-1] = (runs[-1][0], runs[-1][1] + length)
        else:
            runs.append((start, length))

    for c in range(C):
        for y in range(Hp):
            base = (c * Hp + y) * Wp
            if pad <= y < pad + H:
                add(base, pad)
                add(base + pad + W, Wp - pad - W)
            else:
                add(base, Wp)
    return runs


def zero_runs(buf, runs: list[tuple[int, int]], nb: int) -> None:
    """Duplicate(0) over each run; equal runs at a constant pitch go in one repeat-form instruction."""
    isz = buf.dtype.itemsize
    lanes_per_repeat = 256 // isz
    i = 0
    while i < len(runs):
        start, length = runs[i]
        j = i + 1
        if length * nb <= lanes_per_repeat and j < len(runs) and runs[j][1] == length:
            pitch = runs[j][0] - start
            while j < len(runs) and runs[j][1] == length and runs[j][0] - runs[j - 1][0] == pitch:
                j += 1
            rep_stride = pitch * nb * isz // DATA_BLOCK_BYTES
            if rep_stride <= MAX_STRIDE:
                for r0 in range(i, j, 255):
                    r = min(255, j - r0)
                    Duplicate(buf[runs[r0][0] * nb], 0.0, length * nb, r, 1, rep_stride)
                i = j
                continue
            j = i + 1
        Duplicate(buf[start * nb], 0.0, length * nb)
        i = j


class KernelConv2d:
    """One block: its output-channel group over its chunks: load + pad, then per channel and band compute."""

    def Init(self, x, w, b, y, t: Conv2dTiling) -> None:
        self.t = t
        dt = t.dtype
        if GetBlockNum() % t.o_groups:
            raise ValueError(f"conv2d_kernel: {GetBlockNum()} blocks do not split into {t.o_groups} output-channel "
                             "groups; launch a multiple of tiling.o_groups blocks")
        part, group = divmod(GetBlockIdx(), t.o_groups)
        self.chunks = share(t.chunks, GetBlockNum() // t.o_groups, part)
        self.outs = share(t.O, t.o_groups, group)
        self.xGm = gm(x, dt, t.C * t.H * t.W * t.lanes)
        self.yGm = gm(y, dt, t.O * t.OH * t.OW * t.lanes)
        self.pipe = TPipe()
        plane = t.C * t.Hp * t.Wp * t.nb
        band = t.rows * t.Wp * t.nb
        self.inQueue = TQue(TPosition.VECIN, t.in_depth)
        self.outQueue = TQue(TPosition.VECOUT, t.out_depth)
        self.pipe.InitBuffer(self.inQueue, t.in_depth, plane * dt.itemsize)
        self.pipe.InitBuffer(self.outQueue, t.out_depth, band * dt.itemsize)
        if t.cast:
            self.xBuf, self.accBuf = TBuf(), TBuf()
            self.pipe.InitBuffer(self.xBuf, plane * 4)
            self.pipe.InitBuffer(self.accBuf, band * 4)
        taps, o0, no = t.C * t.KH * t.KW, self.outs.start, len(self.outs)
        self.wv = load_scalars(self.pipe, w + o0 * taps, no * taps, dt) if no else []
        self.bv = load_scalars(self.pipe, b + o0, no, dt) if no else []
        self.runs = pad_runs(t.C, t.H, t.W, t.pad)

    def Process(self) -> None:
        t = self.t
        if not self.outs:
            return
        for chunk in self.chunks:
            n0 = chunk * t.nb
            nb = min(t.nb, t.lanes - n0)
            self.CopyIn(n0, nb)
            src = self.Prepare(nb)
            for o in self.outs:
                for y0 in range(0, t.OH, t.rows):
                    rows = min(t.rows, t.OH - y0)
                    self.Compute(src, o, y0, rows, nb)
                    self.CopyOut(o, y0, rows, n0, nb)
            if not t.cast:
                self.inQueue.FreeTensor(src)

    def CopyIn(self, n0: int, nb: int) -> None:
        """The chunk (contiguous in GM) into the padded planes: one strided DataCopy per channel."""
        t = self.t
        blk = nb * t.dtype.itemsize // DATA_BLOCK_BYTES       # DataBlocks per pixel
        src = self.xGm[n0 * t.C * t.H * t.W]
        xLocal = self.inQueue.AllocTensor(t.dtype)
        if t.pad:
            for c in range(t.C):
                DataCopy(xLocal[((c * t.Hp + t.pad) * t.Wp + t.pad) * nb], src[c * t.H * t.W * nb],
                         DataCopyParams(t.H, t.W * blk, 0, 2 * t.pad * blk))
        else:
            DataCopy(xLocal, src, t.C * t.H * t.W * nb)
        self.inQueue.EnQue(xLocal)

    def Prepare(self, nb: int):
        """Zero the padding, then the chunk in the accumulation dtype: Cast to float (freeing the input) or as is."""
        t = self.t
        xLocal = self.inQueue.DeQue(t.dtype)
        if t.pad:                 # after the copy: the simulator counts a strided copy's gaps as written
            zero_runs(xLocal, self.runs, nb)
        if not t.cast:
            return xLocal
        xf = self.xBuf.Get(float32)
        Cast(xf, xLocal, RoundMode.CAST_NONE, t.C * t.Hp * t.Wp * nb)
        self.inQueue.FreeTensor(xLocal)
        return xf

    # --- SHOW conv2d-compute: course/01_basics.ipynb cell basics-17
    def Compute(self, src, o: int, y0: int, rows: int, nb: int) -> None:
        t = self.t
        acc = self.accBuf.Get(float32) if t.cast else self.outQueue.AllocTensor(t.dtype)
        count = ((rows - 1) * t.Wp + t.OW) * nb
        k = o - self.outs.start                               # index into this block's weights
        Duplicate(acc, self.bv[k], count)
        taps = t.C * t.KH * t.KW
        for c in range(t.C):
            for i in range(t.KH):
                row = ((c * t.Hp + y0 + i) * t.Wp) * nb
                for j in range(t.KW):
                    wv = self.wv[k * taps + (c * t.KH + i) * t.KW + j]
                    Axpy(acc, src[row + j * nb], wv, count)
        if t.cast:
            yLocal = self.outQueue.AllocTensor(t.dtype)
            Cast(yLocal, acc, RoundMode.CAST_NONE, count)
        else:
            yLocal = acc
        self.outQueue.EnQue(yLocal)
    # --- END SHOW

    def CopyOut(self, o: int, y0: int, rows: int, n0: int, nb: int) -> None:
        """``rows`` output rows, skipping the garbage columns: one strided DataCopy."""
        t = self.t
        blk = nb * t.dtype.itemsize // DATA_BLOCK_BYTES
        yLocal = self.outQueue.DeQue(t.dtype)
        DataCopy(self.yGm[n0 * t.O * t.OH * t.OW + (o * t.OH + y0) * t.OW * nb], yLocal,
                 DataCopyParams(rows, t.OW * blk, (t.Wp - t.OW) * blk, 0))
        self.outQueue.FreeTensor(yLocal)


@kernel
def conv2d_kernel(x, w, b, y, tiling: Conv2dTiling) -> None:
    """x ``[chunk][C, H, W, nb]``, w ``[O, C, KH, KW]``, b ``[O]`` -> y ``[chunk][O, OH, OW, nb]`` (chunked layout)."""
    op = KernelConv2d()
    op.Init(x, w, b, y, tiling)
    op.Process()


def conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int = 0, *, dtype="float16",
           block_dim: int | None = None, chip=None, tiling: Conv2dTiling | None = None, kernel=None
           ) -> tuple[np.ndarray, LaunchResult]:
    """Simulated Conv2D, stride 1: ``x [N, C, H, W]``, ``w [O, C, KH, KW]``, ``b [O]`` -> ``[N, O, OH, OW]``.

    Runs ``conv2d_kernel`` with the batch (and the output channels) split
    over ``block_dim`` blocks (default: up to the chip's vector cores; see
    ``choose_tiling``). Returns the output in ``dtype`` and the LaunchResult.
    ``kernel`` launches another kernel with the same arguments (``x, w, b, y, tiling``) in place of
    ``conv2d_kernel``, e.g. its C++ twin ``kernels/cpp/conv2d.cpp``.
    """
    d = resolve_dtype(dtype)
    x = check_batch(x, 4, "conv2d")
    w, b = np.asarray(w), np.asarray(b)
    n, C, H, W = x.shape
    if w.ndim != 4 or w.shape[1] != C or b.shape != (w.shape[0],):
        raise ValueError(f"conv2d: weights {w.shape} and bias {b.shape} do not match an input with {C} channels; "
                         "expected w [O, C, KH, KW] and b [O]")
    O, _, KH, KW = w.shape
    t = tiling or choose_tiling(C, H, W, O, KH, KW, int(pad), n, d, chip, block_dim)
    if (t.C, t.H, t.W, t.O, t.KH, t.KW, t.pad, t.dtype) != (C, H, W, O, KH, KW, pad, d) or t.lanes < n:
        raise ValueError(f"conv2d: the tiling {t} does not describe this call ({n} images {C}x{H}x{W}, "
                         f"{O} filters {KH}x{KW}, pad {pad}, {d})")
    y = np.zeros(O * t.OH * t.OW * t.lanes, d)
    res = run(kernel or conv2d_kernel, conv_blocks(t, chip, block_dim), to_chunks(x, d, t.nb),
              np.ascontiguousarray(w, d), np.ascontiguousarray(b, d), y, t, chip=chip, names=["x", "w", "b", "y"])
    return from_chunks(y, n, t.nb, (O, t.OH, t.OW)), res


__all__ = ["Conv2dTiling", "choose_tiling", "conv_blocks", "conv2d", "conv2d_kernel", "conv_ub_bytes", "pad_runs",
           "zero_runs"]
