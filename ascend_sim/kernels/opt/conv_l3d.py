"""Conv2D on the cube with LoadData3D: the feature map read once into L1, img2col done by the MTE1 into L0A.

The path (the (image, chunk of output pixels) work items split evenly over the cube cores):

* the host lays the input out as NC1HWC0 (5HD, the format LoadData3D documents: "将NC1HWC0格式的Feature Map完成
  Image to Column展开"; channels padded to C0 = 16) and the weights as FRACTAL_Z rows ``(c1, kh, kw, c0) x Cout``;
  these are layout conversions (TransData on a device), not simulated here (``conv_pool_mix_5hd`` takes the
  NC1HWC0 map another kernel wrote, ``s2d_transdata`` builds one on the AIVs);
* the weights go GM -> L1 (Nd2Nz) -> L0B (transposed to ZN) **once per core** and stay there; the float bias
  goes GM -> C1 -> the BT buffer once;
* per image: one DataCopy of its feature map into L1 (double-buffered: the next image's copy runs while
  the cube works on this one);
* per image and per chunk of ``m_chunk`` output pixels: ``LoadData3DParamsV2`` unfolds the rows (img2col,
  图像转列) into L0A, one Mmad with the bias from BT, one Fixpipe writes the rows (NHWC, fp32 -> fp16 and ReLU
  on the way).

GM traffic: the 5HD input once (C padded to 16: 16/C times the NCHW bytes) instead of the host-side img2col
matrix (KH*KW times the input, ``conv_cube.conv2d_cube``, kept as the "before" step).

Float inputs (``dtype`` float32): C0 = 8, so NC1HWC0 groups 8 channels and LoadData3D unfolds 16 x 8 fractals
(the simulator's LoadData3D takes C0 = 32 B / sizeof(T)); L1 -> L0B cannot transpose b32 ("开启转置功能时，
源操作数、目的操作数仅支持b16数据类型"), so the host stores the FRACTAL_Z weights transposed (``Op`` rows of K)
and their NZ fractals load into L0B as they are. Images are not packed (``pack`` 1) for float.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (CFG_NZ, CFG_ROW_MAJOR, DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GetBlockNum,
                        GlobalTensor, LoadData, LoadData2DParams, LoadData3DParamsV2, Mmad, MmadParams, Nd2NzParams,
                        QuantMode_t, TPipe, TPosition, TQue, float32, half, kernel, launch)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES, get_chip
from ascend_sim.kernels._common import round_up
from ascend_sim.kernels.opt.cube_common import C0, FRACTAL, ROWS, c0_of, cube_dtype, fractal_elems, load_bias_table
from ascend_sim.kernels.opt.tiled_matmul import b_for_gm, b_is_transposed

@dataclass(frozen=True)
class ConvL3DTiling:
    """Host tiling: the problem (NC1HWC0 input, padded channels ``Cp``, padded outputs ``Op``) and the split."""

    N: int
    Cp: int
    H: int
    W: int
    Op: int
    KH: int
    KW: int
    pad: int
    m_chunk: int              # output pixels per LoadData3D / Mmad / Fixpipe (a multiple of 16)
    cores: int = 24
    relu: bool = False
    out_dtype: np.dtype = np.dtype(np.float16)
    nz_out: bool = False      # Fixpipe CFG_NZ: the output as NC1HWC0 (one contiguous run per 16 channels)
    dtype: np.dtype = np.dtype(np.float16)     # the cube's inputs: half, or float (C0 = 8, weights transposed)

    @property
    def OH(self) -> int:
        return self.H + 2 * self.pad - self.KH + 1

    @property
    def OW(self) -> int:
        return self.W + 2 * self.pad - self.KW + 1

    @property
    def M(self) -> int:
        return self.OH * self.OW

    @property
    def K(self) -> int:
        return self.Cp * self.KH * self.KW

    @property
    def fmap(self) -> int:
        return self.Cp * self.H * self.W

    @property
    def items(self) -> int:
        """Work items: (image, chunk of ``m_chunk`` output pixels)."""
        return self.N * -(-self.M // self.m_chunk)

    @property
    def block_dim(self) -> int:
        return max(1, min(self.cores, self.items))


def choose_conv_tiling(N: int, C: int, H: int, W: int, O: int, KH: int, KW: int, pad: int = 0, *, relu: bool = False,
                       out_dtype=np.float16, cores: int | None = None, nz_out: bool = False,
                       chip=None, dtype=np.float16) -> ConvL3DTiling:
    """Two L0A and two L0C buffers of the largest 16-row chunk that fits, at most one image's output."""
    chip = get_chip(chip)
    cores = cores or chip.aic_count
    dt = cube_dtype(dtype=dtype)
    isz = dt.itemsize
    cp, op = round_up(C, c0_of(dt)), round_up(O, ROWS)
    K = cp * KH * KW
    M = (H + 2 * pad - KH + 1) * (W + 2 * pad - KW + 1)
    if K * op * isz > chip.l0b_bytes or K * ROWS * isz * 2 > chip.l0a_bytes:
        raise ValueError(f"conv2d_l3d: the weights ({K} x {op} {dt}) must stay in L0B ({chip.l0b_bytes} B) and "
                         f"two 16-row chunks in L0A; split the output channels or the kernel first")
    m_chunk = min(round_up(M, ROWS), (chip.l0a_bytes // 2) // (K * isz) // ROWS * ROWS,
                  (chip.l0c_bytes // 2) // (op * 4) // ROWS * ROWS)
    return ConvL3DTiling(N, cp, H, W, op, KH, KW, pad, m_chunk, cores, relu, np.dtype(out_dtype), nz_out, dt)


class KernelConvL3D:
    """One cube core: weights resident in L0B, bias in BT, its images streamed through L1."""

    def Init(self, x, w, bias, y, t: ConvL3DTiling) -> None:
        self.t = t
        self.dt = dt = np.dtype(getattr(t, "dtype", half))       # subclasses' tilings may predate the field
        isz = dt.itemsize
        self.xGm, self.wGm, self.yGm = GlobalTensor(dt), GlobalTensor(dt), GlobalTensor(t.out_dtype)
        self.xGm.SetGlobalBuffer(x, t.N * t.fmap)
        self.wGm.SetGlobalBuffer(w, t.K * t.Op)      # half: [K, Op]; float: [Op, K] (no b32 transposing load)
        self.yGm.SetGlobalBuffer(y, t.N * t.M * t.Op)
        self.pipe = TPipe()
        self.qF = TQue(TPosition.A1, 2)
        self.pipe.InitBuffer(self.qF, 2, t.fmap * isz)
        self.qW1, self.qW2 = TQue(TPosition.B1, 1), TQue(TPosition.B2, 1)
        self.pipe.InitBuffer(self.qW1, 1, t.K * t.Op * isz)
        self.pipe.InitBuffer(self.qW2, 1, t.K * t.Op * isz)
        self.qA2, self.qCO1 = TQue(TPosition.A2, 2), TQue(TPosition.CO1, 2)
        self.pipe.InitBuffer(self.qA2, 2, t.m_chunk * t.K * isz)
        self.pipe.InitBuffer(self.qCO1, 2, t.m_chunk * t.Op * 4)
        self.biasGm = GlobalTensor(float32)
        self.biasGm.SetGlobalBuffer(bias, t.Op)
        self.qC1, self.qC2 = TQue(TPosition.C1, 1), TQue(TPosition.C2, 1)
        self.pipe.InitBuffer(self.qC1, 1, t.Op * 4)
        self.pipe.InitBuffer(self.qC2, 1, t.Op * 4)

    def Process(self) -> None:
        """This core's contiguous share of the (image, chunk) work items: every core gets the same number of
        Fixpipe rows (+- one chunk) even when the images do not divide evenly; each image it touches is
        copied into L1 once, the next one while the cube works on this one."""
        t = self.t
        chunks = -(-t.M // t.m_chunk)
        lo, hi = self.ItemRange(chunks)
        if lo >= hi:
            return
        first, last = lo // chunks, (hi - 1) // chunks
        self.CopyInFmap(first)
        w2, bt = self.LoadWeights(), self.LoadBias()
        for img in range(first, last + 1):
            if img < last:                      # prefetch the next image while the cube works on this one
                self.CopyInFmap(img + 1)
            f1 = self.qF.DeQue(self.dt)
            for c in range(max(lo, img * chunks) - img * chunks, min(hi, (img + 1) * chunks) - img * chunks):
                self.Chunk(f1, img, c * t.m_chunk, w2, bt)
            self.qF.FreeTensor(f1)
            self.ImageDone(img)
        self.qW2.FreeTensor(w2)
        self.qC2.FreeTensor(bt)

    def ItemRange(self, chunks: int) -> tuple[int, int]:
        """This core's contiguous share [lo, hi) of the N * chunks (image, chunk) items."""
        items, cores, me = self.t.N * chunks, GetBlockNum(), GetBlockIdx()
        return items * me // cores, items * (me + 1) // cores

    def ImageDone(self, img: int) -> None:
        """Called after the last chunk of an image this core computes (a MIX kernel signals its AIVs here)."""

    def CopyInFmap(self, img: int) -> None:
        """One contiguous copy of the image's NC1HWC0 feature map into L1."""
        t = self.t
        f1 = self.qF.AllocTensor(self.dt)
        DataCopy(f1, self.xGm[img * t.fmap], t.fmap)
        self.qF.EnQue(f1)

    def LoadWeights(self):
        """Weights GM -> L1 (ND -> NZ) -> L0B (per 16-row K block, its Cout fractals transposed: ZN), kept."""
        t = self.t
        if b_is_transposed(self.dt):
            return self.LoadWeightsTransposed()
        w1 = self.qW1.AllocTensor(half)
        # {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(w1, self.wGm, Nd2NzParams(1, t.K, t.Op, 0, t.Op, t.K, 1, 0))
        self.qW1.EnQue(w1)
        w1 = self.qW1.DeQue(half)
        w2 = self.qW2.AllocTensor(half)
        kb, nb = t.K // C0, t.Op // C0
        # {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for i in range(kb):
            LoadData(w2[i * nb * FRACTAL], w1[i * FRACTAL], LoadData2DParams(0, nb, kb, 0, 0, True, 0))
        self.qW1.FreeTensor(w1)
        self.qW2.EnQue(w2)
        return self.qW2.DeQue(half)

    def LoadWeightsTransposed(self):
        """Float: the [Op, K] weights GM -> L1 (NZ: per K block of C0 = 8, its Op/16 fractals) -> L0B as they are
        (those fractals are ZN's), one LoadData per K block."""
        t, dt = self.t, self.dt
        w1 = self.qW1.AllocTensor(dt)
        DataCopy(w1, self.wGm, Nd2NzParams(1, t.Op, t.K, 0, t.K, t.Op, 1, 0))
        self.qW1.EnQue(w1)
        w1 = self.qW1.DeQue(dt)
        w2 = self.qW2.AllocTensor(dt)
        kb, nb, fr = t.K // c0_of(dt), t.Op // ROWS, fractal_elems(dt)
        for i in range(kb):
            LoadData(w2[i * nb * fr], w1[i * nb * fr], LoadData2DParams(0, nb, 1, 0, 0, False, 0))
        self.qW1.FreeTensor(w1)
        self.qW2.EnQue(w2)
        return self.qW2.DeQue(dt)

    def LoadBias(self):
        """Bias GM -> C1 (L1) -> C2 (the BT buffer), where each chunk's Mmad reads it."""
        return load_bias_table(self.qC1, self.qC2, self.biasGm, self.t.Op)

    def Chunk(self, f1, img: int, m0: int, w2, bt) -> None:
        """Output pixels [m0, m0 + rows) of one image: LoadData3D -> Mmad (+ bias) -> Fixpipe (ReLU, cast)."""
        t = self.t
        rows = min(t.m_chunk, t.M - m0)
        a2 = self.qA2.AllocTensor(self.dt)
        p = t.pad
        # {padList, l1H, l1W, channelSize, kExtension, mExtension, kStartPt, mStartPt, strideW, strideH, filterW,
        #  filterH, dilationFilterW, dilationFilterH, enTranspose, enSmallK, padValue}
        LoadData(a2, f1, LoadData3DParamsV2([p, p, p, p], t.H, t.W, t.Cp, t.K, rows, 0, m0, 1, 1, t.KW, t.KH, 1, 1,
                                            False, False, 0))
        self.qA2.EnQue(a2)
        a2 = self.qA2.DeQue(self.dt)
        co1 = self.qCO1.AllocTensor(float32)
        Mmad(co1, a2, w2, bt, MmadParams(rows, t.Op, t.K, 0, True, False))
        self.qA2.FreeTensor(a2)
        self.qCO1.EnQue(co1)
        co1 = self.qCO1.DeQue(float32)
        quant = QuantMode_t.F322F16 if t.out_dtype == np.float16 else QuantMode_t.NoQuant
        if t.nz_out:        # NC1HWC0: channel block k of the image at k * M * 16; dstStride in 32-byte blocks
            # {nSize, mSize, srcStride (rows rounded up to 16), dstStride, reluEn, quantPre}
            Fixpipe(CFG_NZ, self.yGm[img * t.M * t.Op + m0 * ROWS], co1,
                    FixpipeParamsV220(t.Op, rows, round_up(rows, ROWS),
                                      t.M * ROWS * t.out_dtype.itemsize // DATA_BLOCK_BYTES, t.relu,
                                      quant))
        else:               # NHWC rows of Op channels (NZ2ND)
            Fixpipe(CFG_ROW_MAJOR, self.yGm[(img * t.M + m0) * t.Op], co1,
                    FixpipeParamsV220(t.Op, rows, round_up(rows, ROWS), t.Op, t.relu, quant))
        self.qCO1.FreeTensor(co1)


@kernel(core="AIC")
def conv_l3d_kernel(x, w, bias, y, tiling: ConvL3DTiling) -> None:
    op = KernelConvL3D()
    op.Init(x, w, bias, y, tiling)
    op.Process()


def to_5hd(x: np.ndarray, cp: int, dtype=np.float16) -> np.ndarray:
    """``[N, C, H, W]`` -> NC1HWC0 ``[N, C1, H, W, C0]`` (C0 = 16 half, 8 float), channels zero-padded to ``cp``
    (host TransData)."""
    n, c, h, w = x.shape
    c0 = c0_of(dtype)
    xp = np.zeros((n, cp, h, w), dtype)
    xp[:, :c] = x
    return np.ascontiguousarray(xp.reshape(n, cp // c0, c0, h, w).transpose(0, 1, 3, 4, 2))


def weights_fractal_z(w: np.ndarray, cp: int, op: int, dtype=np.float16) -> np.ndarray:
    """``[O, C, KH, KW]`` -> ``[(c1, kh, kw, c0), Op]``: the column order LoadData3D unfolds to."""
    o, c, kh, kw = w.shape
    c0 = c0_of(dtype)
    wp = np.zeros((op, cp, kh, kw), dtype)
    wp[:o, :c] = w
    return np.ascontiguousarray(wp.reshape(op, cp // c0, c0, kh, kw).transpose(1, 3, 4, 2, 0).reshape(-1, op))


def choose_pack(C: int, O: int, KH: int, KW: int, out_dtype=np.float16, chip=None) -> int:
    """Images packed side by side in one 16-channel C0 group (``pack * C <= 16``, block-diagonal weights
    ``16 * KH * KW`` x ``pack * O`` half within L0B): the pack with the fewest GM packages per image written
    by Fixpipe (each output row is one burst: 128 B costs one package, 160 B two; engine/timing)."""
    chip = get_chip(chip)
    osz = np.dtype(out_dtype).itemsize

    def packages(g: int) -> float:
        row = round_up(g * O, C0) * osz
        return (row // 512 + (row % 512) // 256 + (row % 256) // 128 + bool(row % 128)) / g

    fits = [g for g in range(1, max(1, C0 // C) + 1)
            if C0 * KH * KW * round_up(g * O, C0) * 2 <= chip.l0b_bytes or g == 1]
    return min(fits, key=lambda g: (packages(g), -g)) if C * 2 <= C0 else 1


def pack_images(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, g: int):
    """``g`` images per channel group: x ``[N, C, H, W]`` -> ``[ceil(N/g), g*C, H, W]`` (zero images at the
    end), w -> block-diagonal ``[g*O, g*C, KH, KW]`` (image i's channels feed only image i's outputs), b tiled."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    xp = np.zeros((-(-n // g) * g, c, h, wd), np.float16)
    xp[:n] = x
    wb = np.zeros((g * o, g * c) + w.shape[2:], np.float16)
    for i in range(g):
        wb[i * o:(i + 1) * o, i * c:(i + 1) * c] = w
    return xp.reshape(-1, g * c, h, wd), wb, None if b is None else np.tile(np.asarray(b, np.float32).reshape(o), g)


def conv2d_l3d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, pad: int = 0, *, relu: bool = False,
               out_dtype=np.float16, cores: int | None = None, pack: int | None = None, nz_out: bool = False,
               tiling: ConvL3DTiling | None = None, chip=None, dtype=None,
               kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Simulated Conv2D (stride 1) on the cube via LoadData3D: ``x [N, C, H, W]``, ``w [O, C, KH, KW]``,
    ``b [O]`` (float) -> ``relu?(conv + b)`` NCHW in ``out_dtype``.

    ``pack`` images share one 16-channel group (default ``choose_pack``: LeNet's conv1 has C = 1, conv2
    C = 6, so most of C0 would be zero padding): the weights become block-diagonal, each output row holds
    ``pack`` images' channels, so one LoadData3D / Mmad / Fixpipe serves ``pack`` images and Fixpipe
    writes ``pack`` times longer GM rows. ``nz_out``: Fixpipe writes NC1HWC0 (CFG_NZ) instead of NHWC rows:
    one contiguous run per 16 output channels of a chunk, instead of one GM burst per output pixel.
    ``dtype``: the cube's inputs, by default float when x and w are both float32 (then ``pack`` 1), else half.
    ``kernel`` launches another kernel with the same arguments (``x, w, bias, y, tiling``) in place of the
    library's, e.g. the C++ twin ``kernels/cpp/conv_l3d.cpp`` (half in and out).
    """
    x, w = np.asarray(x), np.asarray(w)
    if x.ndim != 4 or w.ndim != 4 or w.shape[1] != x.shape[1]:
        raise ValueError(f"conv2d_l3d: x {x.shape} and w {w.shape}: expected x [N, C, H, W], w [O, C, KH, KW]")
    dt = tiling.dtype if tiling is not None and dtype is None else cube_dtype(x, w, dtype=dtype)
    n0, c0, o0 = x.shape[0], x.shape[1], w.shape[0]
    if dt != half and (pack or 1) != 1:
        raise ValueError(f"conv2d_l3d: pack {pack} with {dt} inputs: images are packed for half only")
    g = pack or (choose_pack(c0, o0, w.shape[2], w.shape[3], out_dtype, chip) if dt == half else 1)
    if g > 1:
        x, w, b = pack_images(x, w, b, g)
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    t = tiling or choose_conv_tiling(n, c, h, wd, o, kh, kw, pad, relu=relu, out_dtype=out_dtype, cores=cores,
                                     nz_out=nz_out, chip=chip, dtype=dt)
    bias = np.zeros(t.Op, np.float32)
    if b is not None:
        bias[:o] = np.asarray(b, np.float32).reshape(o)
    y = np.zeros((n, t.Op // ROWS, t.OH, t.OW, ROWS) if t.nz_out else (n, t.OH, t.OW, t.Op), t.out_dtype)
    res = launch(kernel or conv_l3d_kernel, t.block_dim, to_5hd(x.astype(dt), t.Cp, dt),
                 b_for_gm(weights_fractal_z(w, t.Cp, t.Op, dt), dt), bias, y, t, chip=chip,
                 gm_names=["x", "w", "bias", "y"])
    if t.nz_out:            # NC1HWC0 -> NHWC (the host's TransData)
        y = y.transpose(0, 2, 3, 1, 4).reshape(n, t.OH, t.OW, t.Op)
    y = y[..., :o].reshape(n, t.OH, t.OW, g, o0).transpose(0, 3, 4, 1, 2).reshape(n * g, o0, t.OH, t.OW)
    return np.ascontiguousarray(y[:n0]), res


__all__ = ["ConvL3DTiling", "choose_conv_tiling", "choose_pack", "pack_images", "conv2d_l3d", "conv_l3d_kernel",
           "to_5hd", "weights_fractal_z"]
