"""Industrial inspection (工业质检) kernels: AIPP-like preprocessing, Sobel gradient magnitude, thresholding.

Input: one YUV420SP (NV12) camera frame in GM, as DVPP decodes it; the kernels take its Y plane, which is the
AIPP colour-space conversion (色域转换, CSC) YUV -> gray. Output: the L1 gradient magnitude |Gx| + |Gy| of the
normalised gray image (float16) and the binary defect map ``magnitude > threshold`` (uint8 0/1). The first and
last rows and columns of the crop have no full 3x3 neighbourhood; their outputs are 0.

Two versions compute the same bits:

* **naive** (:func:`run_naive`): three kernels, three passes through GM (preprocess -> gray workspace, Sobel ->
  magnitude, threshold -> mask), one image row per iteration, single-buffered queues (depth 1).
* **fused** (:func:`run_fused`): one kernel; tiles of ``tile_rows`` rows (by default the most that fit in the
  chip's UB) x ``tile_cols`` columns with one halo row above and below, split over the blocks; double-buffered queues; the three column-shifted neighbourhoods
  are read straight from the uint8 frame (GM addresses may be unaligned, UB ones may not), and the mean
  subtraction is dropped because every Sobel kernel sums to zero, the scale is applied once to the magnitude.

Exactness: with an integer mean and a power-of-two scale (AIPP ``mean_chn_0 = 128``, ``var_reci_chn_0 = 1/128``)
every intermediate is exactly representable in float16 (|Gx| + |Gy| <= 2040 steps of 1/128), so both versions
equal the integer reference :func:`reference` bit for bit, whatever the order of their operations.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ascend_sim import (CMPMODE, SELMODE, Abs, Add, Adds, Axpy, Cast, Compare, DataCopy, DataCopyExtParams,
                        DataCopyPad, DataCopyParams, Duplicate, Muls, RoundMode, Select, Sub, TBuf, TilingError,
                        TPipe, TPosition, TQue, get_chip, half, launch, uint8)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.projects.tiles import as_kernel, blocks_for, gm, grid, my_rows, my_tiles, user_site

GUARD = 32          # bytes before a frame in its GM buffer: pixel (0, 0)'s left neighbour read stays inside
LANES = 128         # half lanes per 256-byte repeat; a crop row must be a whole number of repeats


@dataclass(frozen=True)
class InspectTiling:
    """The frame, the AIPP crop and normalisation, the threshold and the fused kernel's tile shape."""

    frame_w: int                # Y plane pitch (bytes per row of the NV12 frame)
    frame_h: int
    top: int = 0                # AIPP load_start_pos_h / load_start_pos_w
    left: int = 0
    height: int = 0             # AIPP crop_size_h / crop_size_w (0: the whole frame)
    width: int = 0
    mean: float = 128.0         # AIPP mean_chn_0
    scale: float = 1 / 128      # AIPP var_reci_chn_0
    threshold: float = 0.5      # defect if |Gx| + |Gy| (normalised units) > threshold
    tile_rows: int = 0          # 0: the most rows whose buffers fit in the chip's UB (:func:`fit_tile_rows`)
    tile_cols: int = 0          # 0: the widest multiple of 128 up to 640 that divides the width
    emit_magnitude: bool = True
    buffers: int = 2            # queue depth of the fused kernel: 2 = double buffering (双缓冲), 1 = none

    def __post_init__(self):
        if not self.height:
            object.__setattr__(self, "height", self.frame_h - self.top)
        if not self.width:
            object.__setattr__(self, "width", self.frame_w - self.left)
        if self.top < 0 or self.left < 0 or self.top + self.height > self.frame_h or \
                self.left + self.width > self.frame_w:
            raise TilingError(f"AIPP crop {self.height}x{self.width} at (row {self.top}, column {self.left}) leaves "
                              f"the {self.frame_h}x{self.frame_w} frame",
                              fix="keep load_start_pos + crop_size inside the frame on both axes", site=user_site())
        if not self.tile_cols and self.width % LANES == 0:
            object.__setattr__(self, "tile_cols", max(c for c in range(LANES, 641, LANES) if self.width % c == 0))
        if self.width % LANES or self.tile_cols % LANES or self.width % self.tile_cols:
            raise TilingError(f"crop width {self.width} and tile_cols {self.tile_cols}: both must be multiples of "
                              f"{LANES} (Compare works on whole 256-byte repeats of half) and tile_cols must divide "
                              f"the width ({self.width} % {LANES} = {self.width % LANES})",
                              fix=f"crop to a width that is a multiple of {LANES} (1920 = 15 x {LANES}) and leave "
                                  "tile_cols=0 to pick the tile width", site=user_site())
        if self.buffers not in (1, 2):
            raise TilingError(f"buffers {self.buffers}: the queue depth is 1 or 2",
                              fix="buffers=2 for double buffering, 1 for none", site=user_site())
        if self.height < 3:
            raise TilingError(f"crop height {self.height} < 3: Sobel needs a row above and below each output row",
                              fix="crop at least 3 rows", site=user_site())
        if self.mean != int(self.mean) or np.log2(self.scale) != int(np.log2(self.scale)):
            raise TilingError(f"mean {self.mean} must be an integer and scale {self.scale} a power of two, so that "
                              "every intermediate is exact in float16 and naive, fused and reference agree",
                              fix="use mean_chn 128 and var_reci_chn 1/128 (or another power of two)",
                              site=user_site())

    @property
    def threshold_h(self) -> float:
        return float(np.float16(self.threshold))


# ----------------------------------------------------------------------------- shared vector steps
def sobel_l1(mag, L, C, R, D, n: int, w: int) -> None:
    """``mag[0:n]`` = |Gx| + |Gy| of the rows held as three column-shifted copies (L: x-1, C: x, R: x+1).

    L, C, R hold ``n / w + 2`` rows of ``w`` (one halo row above and below); L, C and D are overwritten.
    Row offsets are multiples of ``w`` elements, so every operand stays 32-byte aligned.
    """
    n2 = n + 2 * w
    Sub(D, R, L, n2)                        # D = x[c+1] - x[c-1]
    Add(L, L, R, n2)
    Axpy(L, C, 2.0, n2)                     # L = S = x[c-1] + 2 x[c] + x[c+1]
    Add(mag, D, D[2 * w], n)                # Gx = D[r-1] + 2 D[r] + D[r+1]
    Axpy(mag, D[w], 2.0, n)
    Sub(C, L[2 * w], L, n)                  # Gy = S[r+1] - S[r-1]
    Abs(mag, mag, n)
    Abs(C, C, n)
    Add(mag, mag, C, n)


def zero_edge_columns(mag, rows: int, w: int, left: bool, right: bool) -> None:
    """Set column 0 (``left``) and/or column ``w - 1`` (``right``) of ``rows`` rows to 0: one masked Duplicate
    each, one repeat per row (dstRepStride = one row)."""
    stride = w * 2 // 32
    if left:
        Duplicate(mag, 0.0, [1, 0], rows, 1, stride)
    if right:
        Duplicate(mag[w - LANES], 0.0, [0, 1 << 63], rows, 1, stride)


def binarise(mask, mag, thr, ones, bits, sel, n: int) -> None:
    """``mask[0:n]`` (uint8) = 1 where mag > thr else 0: Compare -> Select -> Cast."""
    Compare(bits, mag, thr, CMPMODE.GT, n)
    Select(sel, bits, ones, 0.0, SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
    Cast(mask, sel, RoundMode.CAST_RINT, n)


class _Threshold:
    """The UB constants of :func:`binarise`: a threshold tensor, a ones tensor, the bit mask and Select's output."""

    def __init__(self, pipe: TPipe, n: int, threshold: float):
        self.consts, self.bits, self.sel = TBuf(), TBuf(), TBuf()
        pipe.InitBuffer(self.consts, 2 * n * 2)
        pipe.InitBuffer(self.bits, max(32, n // 8))
        pipe.InitBuffer(self.sel, n * 2)
        c = self.consts.Get(half)
        Duplicate(c, threshold, n)
        Duplicate(c[n], 1.0, n)
        self.thr, self.ones = c[0:n], c[n:2 * n]

    def __call__(self, mask, mag, n: int) -> None:
        binarise(mask, mag, self.thr, self.ones, self.bits.Get(uint8), self.sel.Get(half), n)


# ----------------------------------------------------------------------------- fused (optimised)
class KernelInspectFused:
    """One block: its tiles, each CopyIn (3 shifted uint8 copies) -> Compute (Sobel + threshold) -> CopyOut."""

    def Init(self, frame, mag, mask, t: InspectTiling) -> None:
        self.t = t
        H, w = t.tile_rows, t.tile_cols
        self.N2 = (H + 2) * w
        self.yGm = gm(frame, uint8, GUARD + t.frame_w * t.frame_h * 3 // 2)
        self.magGm, self.maskGm = gm(mag, half, t.height * t.width), gm(mask, uint8, t.height * t.width)
        self.pipe = TPipe()
        b = t.buffers
        self.inQue = TQue(TPosition.VECIN, b)
        self.magQue, self.maskQue = TQue(TPosition.VECOUT, b), TQue(TPosition.VECOUT, b)
        self.pipe.InitBuffer(self.inQue, b, 3 * self.N2)
        self.pipe.InitBuffer(self.magQue, b, H * w * 2)
        self.pipe.InitBuffer(self.maskQue, b, H * w)
        self.work = TBuf()
        self.pipe.InitBuffer(self.work, 4 * self.N2 * 2)
        self.threshold = _Threshold(self.pipe, H * w, t.threshold_h)

    def Process(self) -> None:
        t = self.t
        for tile in my_tiles(grid(1, t.height - 1, t.tile_rows, t.width, t.tile_cols)):
            self.CopyIn(tile)
            self.Compute(tile)
            self.CopyOut(tile)

    def CopyIn(self, tile) -> None:
        t, w = self.t, self.t.tile_cols
        n2 = (tile.rows + 2) * w
        x = self.inQue.AllocTensor(uint8)
        base = GUARD + (t.top + tile.row - 1) * t.frame_w + t.left + tile.col
        if w == t.frame_w:      # whole rows are contiguous in GM: one long burst (whole 512 B packages)
            rows = DataCopyExtParams(1, (tile.rows + 2) * w, 0, 0, 0)
        else:                   # one burst per row; the GM gap between rows in bytes
            rows = DataCopyExtParams(tile.rows + 2, w, t.frame_w - w, 0, 0)
        for k, shift in enumerate((-1, 0, 1)):
            DataCopyPad(x[k * n2], self.yGm[base + shift], rows)
        self.inQue.EnQue(x)

    def Compute(self, tile) -> None:
        t, w, N2 = self.t, self.t.tile_cols, self.N2
        n, n2 = tile.rows * w, (tile.rows + 2) * w
        x = self.inQue.DeQue(uint8)
        wk = self.work.Get(half)
        L, C, R, D = wk[0:n2], wk[N2:N2 + n2], wk[2 * N2:2 * N2 + n2], wk[3 * N2:3 * N2 + n2]
        for k, dst in enumerate((L, C, R)):
            Cast(dst, x[k * n2], RoundMode.CAST_NONE, n2)       # uint8 -> half is exact
        self.inQue.FreeTensor(x)
        mag = self.magQue.AllocTensor(half)
        sobel_l1(mag, L, C, R, D, n, w)
        Muls(mag, mag, t.scale, n)                              # the AIPP scale, once, after the gradient
        zero_edge_columns(mag, tile.rows, w, tile.col == 0, tile.col + w == t.width)
        mask = self.maskQue.AllocTensor(uint8)
        self.threshold(mask, mag, n)
        self.magQue.EnQue(mag)
        self.maskQue.EnQue(mask)

    def CopyOut(self, tile) -> None:
        t, w = self.t, self.t.tile_cols
        at = tile.row * t.width + tile.col
        mag = self.magQue.DeQue(half)
        if t.emit_magnitude:
            DataCopy(self.magGm[at], mag, DataCopyParams(tile.rows, w * 2 // 32, 0, (t.width - w) * 2 // 32))
        self.magQue.FreeTensor(mag)
        mask = self.maskQue.DeQue(uint8)
        DataCopy(self.maskGm[at], mask, DataCopyParams(tile.rows, w // 32, 0, (t.width - w) // 32))
        self.maskQue.FreeTensor(mask)


#: Crop + CSC + Sobel + scale + threshold in one pass through GM.
inspect_fused = as_kernel(KernelInspectFused, "inspect_fused")


# ----------------------------------------------------------------------------- naive: three passes, one row each
class KernelPreprocessRows:
    """Pass 1, AIPP: crop the Y plane row, uint8 -> half, (y - mean) * scale, to the gray workspace."""

    def Init(self, frame, gray, t: InspectTiling) -> None:
        self.t = t
        self.yGm = gm(frame, uint8, GUARD + t.frame_w * t.frame_h * 3 // 2)
        self.grayGm = gm(gray, half, GUARD + t.height * t.width + GUARD // 2)
        self.pipe = TPipe()
        self.inQue, self.outQue = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
        self.pipe.InitBuffer(self.inQue, 1, t.width)
        self.pipe.InitBuffer(self.outQue, 1, t.width * 2)

    def Process(self) -> None:
        t = self.t
        for r in my_rows(0, t.height):
            x = self.inQue.AllocTensor(uint8)
            DataCopy(x, self.yGm[GUARD + (t.top + r) * t.frame_w + t.left], t.width)
            self.inQue.EnQue(x)
            x = self.inQue.DeQue(uint8)
            g = self.outQue.AllocTensor(half)
            Cast(g, x, RoundMode.CAST_NONE, t.width)
            Adds(g, g, -t.mean, t.width)
            Muls(g, g, t.scale, t.width)
            self.inQue.FreeTensor(x)
            self.outQue.EnQue(g)
            g = self.outQue.DeQue(half)
            DataCopy(self.grayGm[GUARD // 2 + r * t.width], g, t.width)
            self.outQue.FreeTensor(g)


class KernelSobelRows:
    """Pass 2: for each row, read 3 rows of gray at 3 column shifts, |Gx| + |Gy|, write the magnitude row."""

    def Init(self, gray, mag, t: InspectTiling) -> None:
        self.t = t
        W = t.width
        self.grayGm = gm(gray, half, GUARD + t.height * W + GUARD // 2)
        self.magGm = gm(mag, half, t.height * W)
        self.pipe = TPipe()
        self.inQue, self.outQue = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
        self.pipe.InitBuffer(self.inQue, 1, 3 * 3 * W * 2)
        self.pipe.InitBuffer(self.outQue, 1, W * 2)
        self.work = TBuf()
        self.pipe.InitBuffer(self.work, 3 * W * 2)

    def Process(self) -> None:
        t, W = self.t, self.t.width
        three = DataCopyExtParams(1, 3 * W * 2, 0, 0, 0)
        for r in my_rows(1, t.height - 1):
            x = self.inQue.AllocTensor(half)
            for k, shift in enumerate((-1, 0, 1)):
                DataCopyPad(x[k * 3 * W], self.grayGm[GUARD // 2 + (r - 1) * W + shift], three)
            self.inQue.EnQue(x)
            x = self.inQue.DeQue(half)
            mag = self.outQue.AllocTensor(half)
            sobel_l1(mag, x[0:3 * W], x[3 * W:6 * W], x[6 * W:9 * W], self.work.Get(half), W, W)
            zero_edge_columns(mag, 1, W, True, True)
            self.inQue.FreeTensor(x)
            self.outQue.EnQue(mag)
            mag = self.outQue.DeQue(half)
            DataCopy(self.magGm[r * W], mag, W)
            self.outQue.FreeTensor(mag)


class KernelThresholdRows:
    """Pass 3: read a magnitude row, Compare/Select/Cast, write the uint8 mask row."""

    def Init(self, mag, mask, t: InspectTiling) -> None:
        self.t = t
        W = t.width
        self.magGm, self.maskGm = gm(mag, half, t.height * W), gm(mask, uint8, t.height * W)
        self.pipe = TPipe()
        self.inQue, self.outQue = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
        self.pipe.InitBuffer(self.inQue, 1, W * 2)
        self.pipe.InitBuffer(self.outQue, 1, W)
        self.threshold = _Threshold(self.pipe, W, t.threshold_h)

    def Process(self) -> None:
        t, W = self.t, self.t.width
        for r in my_rows(1, t.height - 1):
            m = self.inQue.AllocTensor(half)
            DataCopy(m, self.magGm[r * W], W)
            self.inQue.EnQue(m)
            m = self.inQue.DeQue(half)
            out = self.outQue.AllocTensor(uint8)
            self.threshold(out, m, W)
            self.inQue.FreeTensor(m)
            self.outQue.EnQue(out)
            out = self.outQue.DeQue(uint8)
            DataCopy(self.maskGm[r * W], out, W)
            self.outQue.FreeTensor(out)


preprocess_rows = as_kernel(KernelPreprocessRows, "preprocess_rows")
sobel_rows = as_kernel(KernelSobelRows, "sobel_rows")
threshold_rows = as_kernel(KernelThresholdRows, "threshold_rows")


# ----------------------------------------------------------------------------- host side
def frame_buffer(nv12: np.ndarray) -> np.ndarray:
    """The GM buffer of an NV12 frame: ``GUARD`` zero bytes, then the frame's bytes."""
    return np.concatenate([np.zeros(GUARD, np.uint8), np.ascontiguousarray(nv12, np.uint8).reshape(-1)])


def _blocks(t: InspectTiling, chip, block_dim) -> int:
    return blocks_for(t.height - 2, chip, block_dim)


def fused_ub_bytes(rows: int, cols: int, buffers: int = 2) -> int:
    """UB bytes the fused kernel's Init asks for with tiles of ``rows x cols`` (each buffer rounded to 32 B)."""
    r32 = lambda n: -(-n // 32) * 32       # noqa: E731
    n2, n = (rows + 2) * cols, rows * cols
    return (buffers * (r32(3 * n2) + r32(2 * n) + r32(n)) + r32(8 * n2)      # queues: in, magnitude, mask; work
            + r32(4 * n) + r32(max(32, n // 8)) + r32(2 * n))               # threshold + ones, bits, Select out


def fit_tile_rows(t: InspectTiling, chip=None, most: int = 64) -> int:
    """Host tiling: the most tile rows (up to ``most``) whose buffers fit in the chip's usable UB, as an Ascend C
    tiling function sizes its tiles from the platform's UB size."""
    ub = get_chip(chip).ub_usable_bytes
    fits = [r for r in range(1, most + 1) if fused_ub_bytes(r, t.tile_cols, t.buffers) <= ub]
    if not fits:
        raise TilingError(f"one row of {t.tile_cols} columns needs {fused_ub_bytes(1, t.tile_cols, t.buffers)} B of "
                          f"UB, more than the {ub} B of {get_chip(chip).name}", fix="use narrower tile_cols",
                          site=user_site())
    return fits[-1]


def run_fused(nv12: np.ndarray, t: InspectTiling, *, chip=None, block_dim: int | None = None
              ) -> tuple[np.ndarray, np.ndarray, LaunchResult]:
    """(magnitude float16 [h, w], mask uint8 [h, w], LaunchResult) of the fused kernel on one NV12 frame.

    ``t.tile_rows == 0`` is filled in by :func:`fit_tile_rows` for ``chip``.
    """
    if not t.tile_rows:
        t = replace(t, tile_rows=fit_tile_rows(t, chip))
    mag = np.zeros((t.height, t.width), np.float16)
    mask = np.zeros((t.height, t.width), np.uint8)
    n_tiles = len(grid(1, t.height - 1, t.tile_rows, t.width, t.tile_cols))
    res = launch(inspect_fused, blocks_for(n_tiles, chip, block_dim), frame_buffer(nv12), mag, mask, t,
              chip=chip, gm_names=["frame", "mag", "mask"])
    return mag, mask, res


def run_naive(nv12: np.ndarray, t: InspectTiling, *, chip=None, block_dim: int | None = None
              ) -> tuple[np.ndarray, np.ndarray, list[LaunchResult]]:
    """(magnitude, mask, [LaunchResult of each pass]) of the three-pass naive version."""
    t = replace(t, emit_magnitude=True)
    blocks = _blocks(t, chip, block_dim)
    gray = np.zeros(GUARD + t.height * t.width + GUARD // 2, np.float16)
    mag = np.zeros((t.height, t.width), np.float16)
    mask = np.zeros((t.height, t.width), np.uint8)
    results = [launch(preprocess_rows, blocks, frame_buffer(nv12), gray, t, chip=chip, gm_names=["frame", "gray"]),
               launch(sobel_rows, blocks, gray, mag, t, chip=chip, gm_names=["gray", "mag"]),
               launch(threshold_rows, blocks, mag, mask, t, chip=chip, gm_names=["mag", "mask"])]
    return mag, mask, results


def reference(nv12: np.ndarray, t: InspectTiling) -> tuple[np.ndarray, np.ndarray]:
    """Integer numpy reference: (magnitude float16, mask uint8) of the crop, edges 0."""
    y = np.asarray(nv12, np.uint8).reshape(-1)[:t.frame_w * t.frame_h].reshape(t.frame_h, t.frame_w)
    g = y[t.top:t.top + t.height, t.left:t.left + t.width].astype(np.int32)
    gx = (g[:-2, 2:] - g[:-2, :-2]) + 2 * (g[1:-1, 2:] - g[1:-1, :-2]) + (g[2:, 2:] - g[2:, :-2])
    gy = (g[2:, :-2] + 2 * g[2:, 1:-1] + g[2:, 2:]) - (g[:-2, :-2] + 2 * g[:-2, 1:-1] + g[:-2, 2:])
    mag = np.zeros(g.shape, np.float16)
    mag[1:-1, 1:-1] = (np.abs(gx) + np.abs(gy)) * t.scale        # exact: <= 2040 steps of a power of two
    return mag, (mag > np.float16(t.threshold)).astype(np.uint8)


__all__ = ["GUARD", "InspectTiling", "KernelInspectFused", "binarise", "fit_tile_rows", "frame_buffer",
           "fused_ub_bytes", "inspect_fused",
           "preprocess_rows", "reference", "run_fused", "run_naive", "sobel_l1", "sobel_rows", "threshold_rows",
           "zero_edge_columns"]
