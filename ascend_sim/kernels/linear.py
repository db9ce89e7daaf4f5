"""Fully connected layer ``y = x @ w.T + b``: float16 on the cube, float32 on the vector unit.

Both kernels compute the transposed product in the lane layout,
``Y^T [O, Np] = W [O, K] @ X^T [K, Np]``, so the output is already the next
layer's input layout (features first, images innermost).

float16 (``linear_cube_kernel``, AIC)
    The bias rides along as one more input feature: the host packs
    ``W' = [W | b]`` (``[Mp, Kp]``, zero padded to whole 16 x 16 fractals)
    and ``X'^T`` with a row of ones at ``K`` (zero rows below). ``W'`` stays
    in L1 (NZ, from one DataCopy with Nd2NzParams) for the whole block; per
    chunk of ``nb`` images and per K step: DataCopy X' tile -> L1 (Nd2Nz),
    LoadData both tiles -> L0A (ZZ) / L0B (ZN, fractals transposed), Mmad
    (fp32 accumulation in L0C, NZ), then one Fixpipe (F322F16, NZ2ND) to GM.

float32 (``linear_vector_kernel``, AIV)
    float32 runs on the vector unit (the cube's float Mmad would round
    through its own fp32 path; the course's float32 reference is exact here) as a sum of outer products: for each
    input feature k, ``Mul`` (repeat form: one repeat per output row o, the
    weight ``W[o, k]`` read as a DataBlock of 8 copies with block stride
    0, the image row ``X^T[k]`` with repeat stride 0) then ``Add``. The host
    packs the weights as those DataBlocks, ``[K, O, 8]`` (a weight-format
    conversion done once, like the FRACTAL formats of CANN).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Add, BinaryRepeatParams, DataCopy, Fixpipe, FixpipeParamsV220, LaunchResult, LoadData,
                        LoadData2DParams, Mmad, MmadParams, Mul, Nd2NzParams, QuantMode_t, TBuf, TPipe, TPosition,
                        TQue, float32, half, kernel)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES, get_chip
from ascend_sim.kernels._common import (block_range, check_batch, copy_flat, copy_lanes, default_blocks,
                                        from_lanes, gm, data_block_lanes, resolve_dtype, round_up, run, to_lanes,
                                        ub_bytes)

FRACTAL = 16                # fp16 fractal edge
L0_TILE_BYTES = 32 * 1024   # one of two L0A/L0B buffers
L0C_TILE_BYTES = 64 * 1024  # one of two L0C buffers
CUBE_CHUNK = 128            # images per cube chunk
VEC_CHUNK = 64              # images per vector chunk: 64 floats = one 256-byte repeat per output row
MAX_REPEAT = 255


# ----------------------------------------------------------------------------- cube (float16)
@dataclass(frozen=True)
class LinearCubeTiling:
    """``O`` outputs (``Mp`` padded), ``Kp`` inputs incl. the bias row, ``lanes`` images, chunks ``nb``, K step."""

    O: int
    Mp: int
    Kp: int
    lanes: int
    nb: int
    baseK: int


def cube_tiling(O: int, K: int, n: int, chip=None) -> LinearCubeTiling:
    """Tiles that fit two L0A/L0B buffers of 32 KB, two L0C buffers of 64 KB and L1."""
    Mp, Kp, lanes = round_up(O, FRACTAL), round_up(K + 1, FRACTAL), round_up(n, FRACTAL)
    nb = min(lanes, CUBE_CHUNK, L0C_TILE_BYTES // (Mp * 4) // FRACTAL * FRACTAL)
    if nb < FRACTAL:
        raise ValueError(f"linear: {O} outputs need {Mp * 4 * FRACTAL} bytes of L0C per 16 images; "
                         "split the layer's outputs over several launches")
    base_k = min(Kp, L0_TILE_BYTES // (2 * max(Mp, nb)) // FRACTAL * FRACTAL)
    if base_k < FRACTAL:
        raise ValueError(f"linear: a {Mp} x 16 weight tile does not fit a 32 KB L0A buffer")
    l1 = Mp * Kp * 2 + 2 * base_k * nb * 2
    if l1 > get_chip(chip).l1_bytes:
        raise ValueError(f"linear: the packed weights ({Mp} x {Kp} half) and two input tiles need {l1} bytes "
                         f"of L1, more than the chip's {get_chip(chip).l1_bytes}")
    return LinearCubeTiling(O, Mp, Kp, lanes, nb, base_k)


class KernelLinearCube:
    """One AIC block: W' to L1 once, then per chunk a K loop of LoadData + Mmad and one Fixpipe."""

    def Init(self, w, x, y, t: LinearCubeTiling) -> None:
        self.t = t
        self.wGm, self.xGm = gm(w, half, t.Mp * t.Kp), gm(x, half, t.Kp * t.lanes)
        self.yGm = gm(y, half, t.O * t.lanes)
        self.pipe = TPipe()
        self.inQueueA1, self.inQueueB1 = TQue(TPosition.A1, 1), TQue(TPosition.B1, 2)
        self.inQueueA2, self.inQueueB2 = TQue(TPosition.A2, 2), TQue(TPosition.B2, 2)
        self.outQueueCO1 = TQue(TPosition.CO1, 2)
        self.pipe.InitBuffer(self.inQueueA1, 1, t.Mp * t.Kp * 2)
        self.pipe.InitBuffer(self.inQueueB1, 2, t.baseK * t.nb * 2)
        self.pipe.InitBuffer(self.inQueueA2, 2, t.Mp * t.baseK * 2)
        self.pipe.InitBuffer(self.inQueueB2, 2, t.baseK * t.nb * 2)
        self.pipe.InitBuffer(self.outQueueCO1, 2, t.Mp * t.nb * 4)

    def Process(self) -> None:
        t = self.t
        chunks = block_range(-(-t.lanes // t.nb))
        if not chunks:
            return
        a1 = self.LoadWeights()
        for chunk in chunks:
            n0 = chunk * t.nb
            nb = min(t.nb, t.lanes - n0)
            c1 = self.outQueueCO1.AllocTensor(float32)
            for k0 in range(0, t.Kp, t.baseK):
                bk = min(t.baseK, t.Kp - k0)
                self.CopyIn(k0, bk, n0, nb)
                self.SplitLoad(a1, k0, bk, nb)
                self.Compute(c1, bk, nb, first=k0 == 0)
            self.outQueueCO1.EnQue(c1)
            self.CopyOut(n0, nb)
        self.inQueueA1.FreeTensor(a1)

    def LoadWeights(self):
        """W' into L1 in NZ: column blocks of 16 inputs, each ``Mp`` rows (a K step is a run of blocks)."""
        t = self.t
        a1 = self.inQueueA1.AllocTensor(half)
        # {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, self.wGm, Nd2NzParams(1, t.Mp, t.Kp, 0, t.Kp, t.Mp, 1, 0))
        self.inQueueA1.EnQue(a1)
        return self.inQueueA1.DeQue(half)

    def CopyIn(self, k0: int, bk: int, n0: int, nb: int) -> None:
        t = self.t
        b1 = self.inQueueB1.AllocTensor(half)
        DataCopy(b1, self.xGm[k0 * t.lanes + n0], Nd2NzParams(1, bk, nb, 0, t.lanes, bk, 1, 0))   # [bk, nb] -> NZ
        self.inQueueB1.EnQue(b1)

    def SplitLoad(self, a1, k0: int, bk: int, nb: int) -> None:
        t = self.t
        b1 = self.inQueueB1.DeQue(half)
        a2, b2 = self.inQueueA2.AllocTensor(half), self.inQueueB2.AllocTensor(half)
        mB, kB, nB = t.Mp // FRACTAL, bk // FRACTAL, nb // FRACTAL
        # {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        for i in range(mB):         # W' K step: Nz -> Zz, one 16-row block per call (blocks mB fractals apart)
            LoadData(a2[i * bk * FRACTAL], a1[t.Mp * k0 + i * FRACTAL * FRACTAL],
                     LoadData2DParams(0, kB, mB, 0, 0, False, 0))
        for i in range(kB):         # X' tile: Nz -> Zn, each fractal transposed
            LoadData(b2[i * nb * FRACTAL], b1[i * FRACTAL * FRACTAL], LoadData2DParams(0, nB, kB, 0, 0, True, 0))
        self.inQueueA2.EnQue(a2)
        self.inQueueB2.EnQue(b2)
        self.inQueueB1.FreeTensor(b1)

    # --- SHOW linear-cube-compute: course/01_basics.ipynb cell basics-23
    def Compute(self, c1, bk: int, nb: int, first: bool) -> None:
        a2, b2 = self.inQueueA2.DeQue(half), self.inQueueB2.DeQue(half)
        Mmad(c1, a2, b2, MmadParams(self.t.O, nb, bk, 0, False, first))     # {m, n, k, unitFlag, cmatrixSource, init}
        self.inQueueA2.FreeTensor(a2)
        self.inQueueB2.FreeTensor(b2)
    # --- END SHOW

    def CopyOut(self, n0: int, nb: int) -> None:
        t = self.t
        c1 = self.outQueueCO1.DeQue(float32)
        # NZ -> ND: srcStride = O rounded up to 16 (= Mp), dstStride = the GM row length
        Fixpipe(self.yGm[n0], c1, FixpipeParamsV220(nb, t.O, t.Mp, t.lanes, False, QuantMode_t.F322F16))
        self.outQueueCO1.FreeTensor(c1)


@kernel(core="AIC")
def linear_cube_kernel(w, x, y, tiling: LinearCubeTiling) -> None:
    """w ``[Mp, Kp]`` (bias in column K), x ``[Kp, Np]`` (ones in row K) -> y ``[O, Np]``, all half."""
    op = KernelLinearCube()
    op.Init(w, x, y, tiling)
    op.Process()


def pack_cube(x: np.ndarray, w: np.ndarray, b: np.ndarray, t: LinearCubeTiling) -> tuple[np.ndarray, np.ndarray]:
    """Host packing for the cube kernel: ``W' = [W | b]`` padded, ``X'^T`` with the ones row, in half."""
    O, K = w.shape
    wp = np.zeros((t.Mp, t.Kp), np.float16)
    wp[:O, :K], wp[:O, K] = w, b
    xt = to_lanes(x, np.float16, FRACTAL)
    xp = np.zeros((t.Kp, t.lanes), np.float16)
    xp[:K], xp[K] = xt, 1.0
    return wp, xp


# ----------------------------------------------------------------------------- vector (float32)
@dataclass(frozen=True)
class LinearVectorTiling:
    """``K`` inputs, ``O`` outputs, ``lanes`` images in chunks of ``nb``, ``kt`` inputs per weight tile."""

    K: int
    O: int
    lanes: int
    nb: int
    kt: int


def vector_tiling(O: int, K: int, n: int, chip=None) -> LinearVectorTiling:
    """The largest K tile whose double-buffered weight and input tiles fit UB beside acc and tmp."""
    lanes = round_up(n, data_block_lanes(np.float32))
    nb = min(lanes, VEC_CHUNK)
    cap = get_chip(chip).ub_usable_bytes
    kt = next((k for k in range(K, 0, -1)
               if ub_bytes(*[k * nb * 4] * 2, *[k * O * DATA_BLOCK_BYTES] * 2, O * nb * 4, O * nb * 4,
                           O * DATA_BLOCK_BYTES) <= cap), 0)
    if not kt:
        raise ValueError(f"linear: {O} outputs do not fit UB for the vector kernel; split the outputs")
    return LinearVectorTiling(K, O, lanes, nb, kt)


class KernelLinearVector:
    """One AIV block: per chunk, acc = sum over k of W[:, k] (x) X^T[k] + b, streamed in K tiles."""

    def Init(self, w, x, b, y, t: LinearVectorTiling) -> None:
        self.t = t
        self.wGm, self.xGm = gm(w, float32, t.K * t.O * 8), gm(x, float32, t.K * t.lanes)
        self.bGm, self.yGm = gm(b, float32, t.O * 8), gm(y, float32, t.O * t.lanes)
        self.pipe = TPipe()
        self.wQueue, self.xQueue, self.bQueue = (TQue(TPosition.VECIN, 2), TQue(TPosition.VECIN, 2),
                                                 TQue(TPosition.VECIN, 1))
        self.outQueue, self.tmpBuf = TQue(TPosition.VECOUT, 1), TBuf()
        self.pipe.InitBuffer(self.wQueue, 2, t.kt * t.O * DATA_BLOCK_BYTES)
        self.pipe.InitBuffer(self.xQueue, 2, t.kt * t.nb * 4)
        self.pipe.InitBuffer(self.bQueue, 1, t.O * DATA_BLOCK_BYTES)
        self.pipe.InitBuffer(self.outQueue, 1, t.O * t.nb * 4)
        self.pipe.InitBuffer(self.tmpBuf, t.O * t.nb * 4)

    def Process(self) -> None:
        t = self.t
        chunks = block_range(-(-t.lanes // t.nb))
        if not chunks:
            return
        bias = self.bQueue.AllocTensor(float32)
        copy_flat(bias, self.bGm, t.O * 8)
        self.bQueue.EnQue(bias)
        bias = self.bQueue.DeQue(float32)
        for chunk in chunks:
            n0 = chunk * t.nb
            nb = min(t.nb, t.lanes - n0)
            acc = self.outQueue.AllocTensor(float32)
            for k0 in range(0, t.K, t.kt):
                kk = min(t.kt, t.K - k0)
                self.CopyIn(k0, kk, n0, nb)
                self.Compute(acc, bias, k0, kk, nb)
            self.outQueue.EnQue(acc)
            self.CopyOut(n0, nb)
        self.bQueue.FreeTensor(bias)

    def CopyIn(self, k0: int, kk: int, n0: int, nb: int) -> None:
        t = self.t
        wLocal, xLocal = self.wQueue.AllocTensor(float32), self.xQueue.AllocTensor(float32)
        copy_flat(wLocal, self.wGm[k0 * t.O * 8], kk * t.O * 8)
        copy_lanes(xLocal, self.xGm[k0 * t.lanes + n0], kk, nb, t.lanes)
        self.wQueue.EnQue(wLocal)
        self.xQueue.EnQue(xLocal)

    def Compute(self, acc, bias, k0: int, kk: int, nb: int) -> None:
        t = self.t
        wLocal, xLocal = self.wQueue.DeQue(float32), self.xQueue.DeQue(float32)
        tmp = self.tmpBuf.Get(float32)
        rep = nb * 4 // DATA_BLOCK_BYTES
        outer = BinaryRepeatParams(1, 0, 1, rep, 1, 0)       # dst row o; W[o, k] block; X^T[k] row
        for i in range(kk):
            first = k0 + i == 0
            for o0 in range(0, t.O, MAX_REPEAT):
                r = min(MAX_REPEAT, t.O - o0)
                Mul((acc if first else tmp)[o0 * nb], wLocal[(i * t.O + o0) * 8], xLocal[i * nb], nb, r, outer)
            if first:
                for o0 in range(0, t.O, MAX_REPEAT):
                    r = min(MAX_REPEAT, t.O - o0)
                    Add(acc[o0 * nb], acc[o0 * nb], bias[o0 * 8], nb, r, BinaryRepeatParams(1, 1, 0, rep, rep, 1))
            else:
                Add(acc, acc, tmp, t.O * nb)
        self.wQueue.FreeTensor(wLocal)
        self.xQueue.FreeTensor(xLocal)

    def CopyOut(self, n0: int, nb: int) -> None:
        t = self.t
        acc = self.outQueue.DeQue(float32)
        copy_lanes(self.yGm[n0], acc, t.O, nb, t.lanes, to_gm=True)
        self.outQueue.FreeTensor(acc)


@kernel
def linear_vector_kernel(w, x, b, y, tiling: LinearVectorTiling) -> None:
    """w ``[K, O, 8]`` (each weight as a block), x ``[K, Np]``, b ``[O, 8]`` -> y ``[O, Np]``, all float."""
    op = KernelLinearVector()
    op.Init(w, x, b, y, tiling)
    op.Process()


def pack_vector(w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Host packing for the vector kernel: every weight and bias as a DataBlock of 8 copies."""
    wexp = np.repeat(np.ascontiguousarray(w.T, np.float32)[:, :, None], 8, axis=2)
    bexp = np.repeat(np.asarray(b, np.float32)[:, None], 8, axis=1)
    return np.ascontiguousarray(wexp), np.ascontiguousarray(bexp)


# ----------------------------------------------------------------------------- host wrapper
def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray, *, dtype="float16", block_dim: int | None = None,
           chip=None, engine: str | None = None, kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Simulated fully connected layer: ``x [N, K]``, ``w [O, K]``, ``b [O]`` -> ``[N, O]``.

    ``engine`` is ``"cube"`` (float16) or ``"vector"`` (float32); by default
    the one for ``dtype``. ``kernel`` launches another kernel with the engine's arguments in place of the
    library's (cube: ``w, x, y, tiling``, e.g. the C++ twin ``kernels/cpp/linear.cpp``).
    """
    d = resolve_dtype(dtype)
    x = check_batch(x, 2, "linear")
    w, b = np.asarray(w), np.asarray(b)
    n, K = x.shape
    if w.ndim != 2 or w.shape[1] != K or b.shape != (w.shape[0],):
        raise ValueError(f"linear: weights {w.shape} and bias {b.shape} do not match {K} input features; "
                         "expected w [O, K] and b [O]")
    O = w.shape[0]
    engine = engine or ("cube" if d == np.float16 else "vector")
    if (engine, d) not in (("cube", np.dtype(np.float16)), ("vector", np.dtype(np.float32))):
        raise ValueError(f"linear: engine {engine!r} runs {'float16' if engine == 'cube' else 'float32'} here, "
                         f"not {d}: the cube takes half inputs (fp32 accumulation); float32 uses the vector unit")
    xd, wd, bd = x.astype(d), w.astype(d), b.astype(d)
    if engine == "cube":
        t = cube_tiling(O, K, n, chip)
        wp, xp = pack_cube(xd, wd, bd, t)
        y = np.zeros((O, t.lanes), np.float16)
        blocks = default_blocks(-(-t.lanes // t.nb), "AIC", chip, block_dim)
        res = run(kernel or linear_cube_kernel, blocks, wp, xp, y, t, chip=chip, names=["w", "x", "y"])
    else:
        t = vector_tiling(O, K, n, chip)
        wexp, bexp = pack_vector(wd, bd)
        y = np.zeros((O, t.lanes), np.float32)
        blocks = default_blocks(-(-t.lanes // t.nb), "AIV", chip, block_dim)
        res = run(kernel or linear_vector_kernel, blocks, wexp, to_lanes(xd, d), bexp, y, t, chip=chip,
                  names=["w", "x", "b", "y"])
    return from_lanes(y, n), res


__all__ = ["LinearCubeTiling", "LinearVectorTiling", "cube_tiling", "vector_tiling", "linear",
           "linear_cube_kernel", "linear_vector_kernel", "pack_cube", "pack_vector"]
