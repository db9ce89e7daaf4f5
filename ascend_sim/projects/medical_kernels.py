"""Medical imaging (医疗影像) kernels: stain separation, 5x5 Gaussian, threshold, 3x3 erosion and dilation.

Images live in GM as float16 rows of ``width`` elements (a multiple of 128) with a 32-byte guard before and
after, so the column-shifted reads of the first and last pixels stay inside the buffer. Every kernel tiles the
rows (``tile_rows`` per tile), splits the tiles over the blocks and double-buffers its queues.

A stencil of radius r writes rows ``r .. height - r - 1`` only; in those rows the first and last r columns
mix in the neighbouring row's pixels (the shifted reads wrap), so a chain of stencils is exact on the interior
that :func:`valid` gives, and that is where the tests and the Dice score look.

The horizontal pass combines 2r+1 copies of the rows read at column shifts -r..r (GM addresses may be
unaligned, UB ones may not); the vertical pass combines row offsets of the result (multiples of ``width``
elements, so aligned). The float16 operations run in a fixed order that :func:`reference` repeats in numpy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (CMPMODE, SELMODE, Add, Axpy, Cast, Compare, DataCopy, DataCopyExtParams, DataCopyPad,
                        Duplicate, Ln, Max, Maxs, Min, Muls, RoundMode, Select, TBuf, TilingError, TPipe,
                        TPosition, TQue, half, launch, uint8)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.projects.tiles import as_kernel, blocks_for, gm, grid, my_tiles, user_site

GUARD = 16                  # float16 elements (32 bytes) before and after an image in its GM buffer
RADIUS = {"gauss5": 2, "erode3": 1, "dilate3": 1}
BINOMIAL = (1.0, 4.0, 6.0, 4.0, 1.0)        # the 5-tap binomial, a Gaussian with sigma 1; /16 per pass
#: Ruifrok and Johnston's stain vectors (optical density of hematoxylin, eosin, DAB in R, G, B); the first
#: column of their inverse, over ln(1e-6), turns -ln(intensity) per channel into the hematoxylin amount
#: (the same constants and scaling as scikit-image's ``rgb2hed``).
RGB_FROM_HED = np.array([[0.65, 0.70, 0.29], [0.07, 0.99, 0.11], [0.27, 0.57, 0.78]])
HEMATOXYLIN = tuple(float(v) for v in np.linalg.inv(RGB_FROM_HED)[:, 0] / np.log(1e-6))
LOG_FLOOR = 1e-6            # intensities are clamped here before the logarithm, as rgb2hed does


@dataclass(frozen=True)
class MedTiling:
    """An image of ``height x width`` and the row tiles of one kernel."""

    height: int
    width: int
    tile_rows: int = 8
    op: str = "gauss5"                          # the stencil's operation
    weights: tuple = HEMATOXYLIN                # stain = sum_c w_c ln(max(I_c / 255, 1e-6)), then max(., 0)
    threshold: float = 0.5                      # foreground where value > threshold

    def __post_init__(self):
        if self.width % 128:
            raise TilingError(f"image width {self.width} is not a multiple of 128 ({self.width} % 128 = "
                              f"{self.width % 128}): Compare works on whole 256-byte repeats of half",
                              fix="crop or pad the image to a width that is a multiple of 128", site=user_site())
        if self.op not in RADIUS:
            raise TilingError(f"unknown stencil {self.op!r}", fix=f"use one of {sorted(RADIUS)}", site=user_site())

    @property
    def radius(self) -> int:
        return RADIUS[self.op]

    @property
    def size(self) -> int:
        """Elements of an image's GM buffer (guards included)."""
        return GUARD + self.height * self.width + GUARD


# ----------------------------------------------------------------------------- the stencil kernel
def combine(op: str, dst, taps: list, n: int) -> None:
    """``dst[0:n]`` = the op's combination of the 2r+1 ``taps`` (same-shaped UB operands)."""
    if op == "gauss5":
        Add(dst, taps[0], taps[4], n)
        Axpy(dst, taps[1], BINOMIAL[1], n)
        Axpy(dst, taps[3], BINOMIAL[3], n)
        Axpy(dst, taps[2], BINOMIAL[2], n)
        Muls(dst, dst, 1 / 16, n)
    else:
        f = Min if op == "erode3" else Max
        f(dst, taps[0], taps[1], n)
        f(dst, dst, taps[2], n)


class KernelStencil:
    """One block: its row tiles, each CopyIn (2r+1 shifted copies) -> horizontal -> vertical -> CopyOut."""

    def Init(self, src, dst, t: MedTiling) -> None:
        self.t, r, T, W = t, t.radius, t.tile_rows, t.width
        self.M = (T + 2 * r) * W
        self.srcGm, self.dstGm = gm(src, half, t.size), gm(dst, half, t.size)
        self.pipe = TPipe()
        self.inQue, self.outQue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
        self.pipe.InitBuffer(self.inQue, 2, (2 * r + 1) * self.M * 2)
        self.pipe.InitBuffer(self.outQue, 2, T * W * 2)
        self.work = TBuf()
        self.pipe.InitBuffer(self.work, self.M * 2)

    def Process(self) -> None:
        t = self.t
        for tile in my_tiles(grid(t.radius, t.height - t.radius, t.tile_rows, t.width, t.width)):
            self.CopyIn(tile)
            self.Compute(tile)
            self.CopyOut(tile)

    def CopyIn(self, tile) -> None:
        r, W = self.t.radius, self.t.width
        m = (tile.rows + 2 * r) * W
        x = self.inQue.AllocTensor(half)
        rows = DataCopyExtParams(1, m * 2, 0, 0, 0)
        for k, shift in enumerate(range(-r, r + 1)):
            DataCopyPad(x[k * m], self.srcGm[GUARD + (tile.row - r) * W + shift], rows)
        self.inQue.EnQue(x)

    def Compute(self, tile) -> None:
        t, r, W = self.t, self.t.radius, self.t.width
        m, n = (tile.rows + 2 * r) * W, tile.rows * W
        x = self.inQue.DeQue(half)
        hz = self.work.Get(half)
        combine(t.op, hz, [x[k * m:(k + 1) * m] for k in range(2 * r + 1)], m)      # along the row
        self.inQue.FreeTensor(x)
        y = self.outQue.AllocTensor(half)
        combine(t.op, y, [hz[k * W:k * W + n] for k in range(2 * r + 1)], n)        # across rows
        self.outQue.EnQue(y)

    def CopyOut(self, tile) -> None:
        y = self.outQue.DeQue(half)
        DataCopy(self.dstGm[GUARD + tile.row * self.t.width], y, tile.rows * self.t.width)
        self.outQue.FreeTensor(y)


stencil = as_kernel(KernelStencil, "stencil")


# ----------------------------------------------------------------------------- pointwise kernels
class KernelGray:
    """Planar RGB uint8 -> float16 hematoxylin amount (colour deconvolution): Cast, / 255, clamp, Ln over the
    three planes at once, then w_r ln R + w_g ln G + w_b ln B (Muls, Axpy, Axpy) clamped at 0."""

    def Init(self, rgb, gray, t: MedTiling) -> None:
        self.t, T, W = t, t.tile_rows, t.width
        self.rgbGm, self.grayGm = gm(rgb, uint8, 3 * t.height * W), gm(gray, half, t.size)
        self.pipe = TPipe()
        self.inQue, self.outQue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
        self.pipe.InitBuffer(self.inQue, 2, 3 * T * W)
        self.pipe.InitBuffer(self.outQue, 2, T * W * 2)
        self.work = TBuf()
        self.pipe.InitBuffer(self.work, 3 * T * W * 2)

    def Process(self) -> None:
        t, W = self.t, self.t.width
        for tile in my_tiles(grid(0, t.height, t.tile_rows, W, W)):
            n = tile.rows * W
            x = self.inQue.AllocTensor(uint8)
            for c in range(3):
                DataCopy(x[c * n], self.rgbGm[c * t.height * W + tile.row * W], n)
            self.inQue.EnQue(x)
            x = self.inQue.DeQue(uint8)
            f = self.work.Get(half)
            for c in range(3):
                Cast(f[c * n], x[c * n], RoundMode.CAST_NONE, n)
            self.inQue.FreeTensor(x)
            Muls(f, f, 1 / 255, 3 * n)                  # the three planes are contiguous: one call each
            Maxs(f, f, LOG_FLOOR, 3 * n)
            Ln(f, f, 3 * n)
            g = self.outQue.AllocTensor(half)
            Muls(g, f, t.weights[0], n)
            Axpy(g, f[n], t.weights[1], n)
            Axpy(g, f[2 * n], t.weights[2], n)
            Maxs(g, g, 0.0, n)
            self.outQue.EnQue(g)
            g = self.outQue.DeQue(half)
            DataCopy(self.grayGm[GUARD + tile.row * W], g, n)
            self.outQue.FreeTensor(g)


class KernelThreshold:
    """float16 image -> 1.0 where value > threshold else 0.0 (Compare GT -> Select)."""

    def Init(self, src, dst, t: MedTiling) -> None:
        self.t, n = t, t.tile_rows * t.width
        self.srcGm, self.dstGm = gm(src, half, t.size), gm(dst, half, t.size)
        self.pipe = TPipe()
        self.inQue, self.outQue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
        self.pipe.InitBuffer(self.inQue, 2, n * 2)
        self.pipe.InitBuffer(self.outQue, 2, n * 2)
        self.consts, self.bits = TBuf(), TBuf()
        self.pipe.InitBuffer(self.consts, 2 * n * 2)
        self.pipe.InitBuffer(self.bits, max(32, n // 8))
        c = self.consts.Get(half)
        Duplicate(c, float(np.float16(t.threshold)), n)
        Duplicate(c[n], 1.0, n)

    def Process(self) -> None:
        t, W, N = self.t, self.t.width, self.t.tile_rows * self.t.width
        c = self.consts.Get(half)
        for tile in my_tiles(grid(0, t.height, t.tile_rows, W, W)):
            n, at = tile.rows * W, GUARD + tile.row * W
            x = self.inQue.AllocTensor(half)
            DataCopy(x, self.srcGm[at], n)
            self.inQue.EnQue(x)
            x = self.inQue.DeQue(half)
            y = self.outQue.AllocTensor(half)
            bits = self.bits.Get(uint8)
            Compare(bits, x, c, CMPMODE.GT, n)
            Select(y, bits, c[N], 0.0, SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
            self.inQue.FreeTensor(x)
            self.outQue.EnQue(y)
            y = self.outQue.DeQue(half)
            DataCopy(self.dstGm[at], y, n)
            self.outQue.FreeTensor(y)


gray_kernel = as_kernel(KernelGray, "gray_kernel")
threshold_kernel = as_kernel(KernelThreshold, "threshold_kernel")


# ----------------------------------------------------------------------------- host side
def image_buffer(img: np.ndarray | None, t: MedTiling) -> np.ndarray:
    """A GM buffer for one float16 image (zeros, or ``img``) with its guards."""
    buf = np.zeros(t.size, np.float16)
    if img is not None:
        buf[GUARD:GUARD + t.height * t.width] = np.asarray(img, np.float16).reshape(-1)
    return buf


def unpack(buf: np.ndarray, t: MedTiling) -> np.ndarray:
    return buf[GUARD:GUARD + t.height * t.width].reshape(t.height, t.width).copy()


def launch_on(k, src: np.ndarray, t: MedTiling, *, chip=None, block_dim: int | None = None
              ) -> tuple[np.ndarray, LaunchResult]:
    """Run one kernel from a GM buffer (or planar uint8 RGB for the gray kernel) to a new image buffer."""
    dst = image_buffer(None, t)
    res = launch(k, blocks_for(-(-t.height // t.tile_rows), chip, block_dim), src, dst, t, chip=chip,
                 gm_names=["src", "dst"])
    return dst, res


def valid(t: MedTiling, ops: tuple[str, ...]) -> tuple[slice, slice]:
    """The interior where a chain of ``ops`` stencils is exact (each shrinks it by its radius)."""
    m = sum(RADIUS[o] for o in ops)
    return slice(m, t.height - m), slice(m, t.width - m)


# ----------------------------------------------------------------------------- numpy reference (same op order)
def ref_gray(rgb: np.ndarray, t: MedTiling) -> np.ndarray:
    f = [np.log(np.maximum(np.asarray(rgb[..., c], np.float16) * np.float16(1 / 255), np.float16(LOG_FLOOR)))
         for c in range(3)]
    w = [np.float16(x) for x in t.weights]
    g = f[0] * w[0]
    g = f[1] * w[1] + g
    return np.maximum(f[2] * w[2] + g, np.float16(0))


def ref_stencil(img: np.ndarray, op: str) -> np.ndarray:
    """The stencil on the interior (rows and columns r.. -r); the frame of r pixels is left 0."""
    r = RADIUS[op]
    x = np.asarray(img, np.float16)
    h, w = x.shape

    def comb(taps):
        if op == "gauss5":
            d = taps[0] + taps[4]
            for k in (1, 3, 2):
                d = taps[k] * np.float16(BINOMIAL[k]) + d
            return d * np.float16(1 / 16)
        f = np.minimum if op == "erode3" else np.maximum
        return f(f(taps[0], taps[1]), taps[2])

    hz = comb([x[:, r + s:w - r + s] for s in range(-r, r + 1)])
    out = np.zeros_like(x)
    out[r:h - r, r:w - r] = comb([hz[k:k + h - 2 * r] for k in range(2 * r + 1)])
    return out


def ref_threshold(img: np.ndarray, threshold: float) -> np.ndarray:
    return (np.asarray(img, np.float16) > np.float16(threshold)).astype(np.float16)


__all__ = ["BINOMIAL", "GUARD", "HEMATOXYLIN", "LOG_FLOOR", "RGB_FROM_HED", "MedTiling", "RADIUS", "combine",
           "gray_kernel", "image_buffer", "launch_on", "ref_gray", "ref_stencil", "ref_threshold", "stencil",
           "threshold_kernel", "unpack", "valid"]
