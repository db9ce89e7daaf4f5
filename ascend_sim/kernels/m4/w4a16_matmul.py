"""W4A16 prefill GEMM (4位权重矩阵乘) on a coupled AI Core: INT4 weights dequantised on chip, fed to Mmad.

``Y[M, N] = X[M, K] @ W^T`` with ``W [N, K] = codes * scales`` (torch layout: one row per output channel),
int4 codes and one fp16 scale per (output channel, group of ``group`` input channels): the group runs along
K, as in migrate/llm_quant.py. Prefill has M = prompt rows (64 .. 256), so unlike decode's GEMV
(kernels/m4/weight_gemv.py) the products belong on the cube.

The data path (数据通路) of a coupled AI Core (310B: cube and vector units in one core, so UB -> L1 is a
copy on MTE3; datacopy.py): per K step of ``base_k`` input channels of an N tile,

  GM int4 codes --MTE2--> UB --Cast(half <- int4b_t), Brcb + Mul by the group's scales--> UB half
     --MTE3--> L1 (B1) --LoadData--> L0B --Mmad (with X's rows, GM -> L1 NZ -> L0A)--> L0C --Fixpipe--> GM

The host prepacks the codes so that UB already holds L1's fractal order: per N tile, per 16-channel K
block, the tile's ``tile_n`` rows of 16 codes (``[tiles, K / 16, tile_n, 16]``, two codes a byte, low
nibble first). Such a block is one L0B fractal column of B^T (16 output channels x 16 input channels), so
the dequantised chunk goes to L1 in one contiguous copy and to L0B in one LoadData without transposing, as
the Matmul API loads a transposed B. Each 16-code row lies in one group, so its scale is one value per row:
``Brcb`` spreads the group's ``tile_n`` scales to one 32-byte block each, and one ``Mul`` per K block
multiplies the codes by them (AscendAntiQuant's ``scale * src``, offset 0, one rounding to half: the value
migrate/llm_quant.dequantize_groups gives).

A separated chip (910B) has no UB -> L1 path: its AIV and AIC meet in GM (aclnnWeightQuantBatchMatmulV2's
workspace); ``w4a16_matmul`` refuses it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (ArgumentError, Brcb, BrcbRepeatParams, Cast, DataCopy, Fixpipe, FixpipeParamsV220,
                        GetBlockIdx, GetBlockNum, GlobalTensor, HardEvent, LaunchResult, LoadData, LoadData2DParams, Mmad,
                        MmadParams, Mul, Nd2NzParams, QuantMode_t, RoundMode, SetFlag, TBuf, TPipe, TPosition, TQue,
                        WaitFlag, float32, get_chip, half, int4b_t, int8, kernel, launch)
from ascend_sim.kernels.opt.cube_common import load_bias_table

C0 = 16                 # half: a fractal is 16 x 16; a K block is 16 input channels
FRACTAL = C0 * C0


def _up(a: int, b: int) -> int:
    return -(-a // b) * b


@dataclass(frozen=True)
class W4A16Tiling:
    """``Y [M, N] = X [M, K] @ (codes * scales)^T``: N tiles of ``tile_n`` over ``block_dim`` cores, K in steps
    of ``base_k`` (whole groups, or a whole fraction of one), all M rows (``Mp``: M rounded up to 16) in one L0C
    accumulator."""

    M: int
    N: int
    K: int
    group: int
    tile_n: int
    base_k: int
    block_dim: int
    panel_k: int = 0           # X's columns per L1 load (whole K steps); K: X stays in L1 for the whole launch

    @property
    def a_resident(self) -> bool:
        return self.panel_k >= self.K

    @property
    def panel_steps(self) -> int:
        """K steps per L1 load of X."""
        return self.panel_k // self.base_k

    @property
    def Mp(self) -> int:
        return _up(self.M, C0)

    @property
    def tiles(self) -> int:
        return self.N // self.tile_n

    @property
    def steps(self) -> int:
        return self.K // self.base_k

    @property
    def step_groups(self) -> int:
        """Groups whose scales one K step reads (1 when a group spans several steps)."""
        return max(1, self.base_k // self.group)

    @property
    def chunk(self) -> int:
        """Codes of one K step of one tile."""
        return self.base_k * self.tile_n


def w4a16_tiling(M: int, N: int, K: int, group: int, *, tile_n: int | None = None, base_k: int | None = None,
                 chip=None) -> W4A16Tiling:
    """The K step (``base_k``: whole groups or a whole fraction of one, at most 128 channels, two buffers in L0A)
    and N tile (two B buffers in L0B, the float accumulator in L0C). When X fits L1 the deepest K step wins (fewest
    steps); when it does not, the widest N tile (X's panels are read again for every tile)."""
    c = get_chip(chip)
    site = ("<host w4a16_matmul>", 0)
    mp = _up(M, C0)

    def widest_tile(bk: int) -> int:
        return next((t for t in (256, 128, 64, 32, 16) if N % t == 0 and mp * t * 4 <= c.l0c_bytes
                     and 2 * bk * t * 2 <= c.l0b_bytes), 16)

    if base_k is None:
        steps = [bk for bk in (128, 64, 32, 16) if bk <= K and K % bk == 0 and 2 * mp * bk * 2 <= c.l0a_bytes
                 and (bk % group == 0 or group % bk == 0)] or [group]
        if mp * K * 2 > c.l1_bytes - c.l0b_bytes and tile_n is None:   # X in panels: fewer N tiles first
            steps.sort(key=lambda bk: -widest_tile(bk))
        base_k = steps[0]
    if tile_n is None:
        tile_n = widest_tile(base_k)
    if group % C0 or K % group or (base_k % group and group % base_k) or K % base_k or N % tile_n or tile_n % C0:
        raise ArgumentError(f"w4a16_matmul: K {K}, N {N}, group {group}, tile_n {tile_n}, base_k {base_k}: a group "
                            "must be whole 16-channel K blocks and divide K, a K step whole groups (or a whole "
                            "fraction of one) dividing K, N whole tiles of a multiple of 16",
                            fix="pad K and N, or choose base_k | K with group | base_k or base_k | group", site=site)
    if mp * tile_n * 4 > c.l0c_bytes or 2 * mp * base_k * 2 > c.l0a_bytes or 2 * base_k * tile_n * 2 > c.l0b_bytes:
        raise ArgumentError(f"w4a16_matmul: M {M} x tile_n {tile_n} x base_k {base_k} does not fit L0 "
                            f"(L0A {c.l0a_bytes}, L0B {c.l0b_bytes}, L0C {c.l0c_bytes} bytes, two buffers for A "
                            "and B)", fix="split the prompt's rows, or pass a smaller tile_n / base_k", site=site)
    room = c.l1_bytes - 2 * base_k * tile_n * 2             # L1 beside the two dequantised B buffers
    if mp * K * 2 <= room:
        panel = K                                           # all of X, loaded once
    else:                                                   # two panel buffers; the widest whole steps dividing K
        panel = max(s * base_k for s in range(1, K // base_k + 1)
                    if K % (s * base_k) == 0 and 2 * mp * s * base_k * 2 <= room)
    return W4A16Tiling(M, N, K, group, tile_n, base_k, min(c.aic_count, N // tile_n), panel)


def pack_w4a16(codes: np.ndarray, scales: np.ndarray, t: W4A16Tiling) -> tuple[np.ndarray, np.ndarray]:
    """Host prepacking: codes ``[N, K]`` (-8 .. 7) -> ``[tiles, K / 16, tile_n, 16]`` int4 two a byte (int8),
    scales ``[N, K / group]`` -> ``[tiles, K / group, tile_n]`` half."""
    c = np.asarray(codes, np.int8).reshape(t.tiles, t.tile_n, t.K // C0, C0).transpose(0, 2, 1, 3)
    packed = ((c[..., 0::2] & 0xF) | ((c[..., 1::2] & 0xF) << 4)).astype(np.uint8).view(np.int8)
    s = np.asarray(scales, np.float16).reshape(t.tiles, t.tile_n, t.K // t.group).transpose(0, 2, 1)
    return np.ascontiguousarray(packed), np.ascontiguousarray(s)


def dequantize_reference(x: np.ndarray, codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """numpy's ``X @ W^T`` with ``W = half(codes * scale)``, float64 sums, float32 out."""
    n, k = codes.shape
    g = k // scales.shape[1]
    w = (codes.reshape(n, -1, g).astype(np.float32) * scales.astype(np.float32)[..., None]).astype(np.float16)
    return (np.asarray(x, np.float64) @ w.reshape(n, k).astype(np.float64).T).astype(np.float32)


class KernelW4A16:
    """One core: its N tiles; per K step the vector unit dequantises the tile's codes while the cube multiplies."""

    def Init(self, x, codes, scales, bias, y, t: W4A16Tiling) -> None:
        self.t = t
        self.xGm, self.wGm, self.sGm, self.yGm = GlobalTensor(half), GlobalTensor(int8), GlobalTensor(half), \
            GlobalTensor(half)
        self.xGm.SetGlobalBuffer(x, t.M * t.K)
        self.wGm.SetGlobalBuffer(codes, t.N * t.K // 2)
        self.sGm.SetGlobalBuffer(scales, t.N * t.K // t.group)
        self.yGm.SetGlobalBuffer(y, t.M * t.N)
        pipe = self.pipe = TPipe()
        groups = t.step_groups                              # groups of one K step
        specs = (("qCode", TPosition.VECIN, t.chunk // 2), ("qScale", TPosition.VECIN, groups * t.tile_n * 2),
                 ("qW", TPosition.VECOUT, t.chunk * 2), ("qB1", TPosition.B1, t.chunk * 2),
                 ("qA1", TPosition.A1, t.Mp * t.panel_k * 2),
                 ("qA2", TPosition.A2, t.Mp * t.base_k * 2),
                 ("qB2", TPosition.B2, t.chunk * 2))
        for name, pos, nbytes in specs:
            depth = 1 if name == "qA1" and t.a_resident else 2      # X's panels: the next one loads during this
            q = TQue(pos, depth)
            pipe.InitBuffer(q, depth, nbytes)
            setattr(self, name, q)
        self.qCO1 = TQue(TPosition.CO1, 1)
        pipe.InitBuffer(self.qCO1, 1, t.Mp * t.tile_n * 4)
        sb = TBuf()
        pipe.InitBuffer(sb, groups * t.tile_n * 32)         # each scale spread to a 32-byte block
        self.scaleBlocks = sb.Get(half)
        self.biasGm = None
        if bias is not None:                                # float per column: GM -> C1 (L1) -> C2 (BT)
            self.biasGm = GlobalTensor(float32)
            self.biasGm.SetGlobalBuffer(bias, t.N)
            self.qC1, self.qC2 = TQue(TPosition.C1, 1), TQue(TPosition.C2, 1)
            pipe.InitBuffer(self.qC1, 1, t.tile_n * 4)
            pipe.InitBuffer(self.qC2, 1, t.tile_n * 4)

    def Process(self) -> None:
        t = self.t
        self.step = 0                                       # K steps so far: the B1 buffer of a step is step % 2
        self.a1 = self.CopyInA(0, t.K) if t.a_resident else None
        for tile in range(GetBlockIdx(), t.tiles, GetBlockNum()):
            co1 = self.qCO1.AllocTensor(float32)
            bt = None if self.biasGm is None else load_bias_table(self.qC1, self.qC2, self.biasGm[tile * t.tile_n],
                                                                   t.tile_n)
            for kk in range(t.steps):
                self.AntiQuant(tile, kk)
                self.CopyToL1()
                j = kk % t.panel_steps                      # this step's place in X's panel
                if not t.a_resident and j == 0:
                    self.a1 = self.CopyInA(kk * t.base_k, t.panel_k)
                self.SplitLoad(self.a1, j)
                if not t.a_resident and j == t.panel_steps - 1:
                    self.qA1.FreeTensor(self.a1)
                self.Compute(co1, bt, kk)
            if bt is not None:
                self.qC2.FreeTensor(bt)
            self.qCO1.EnQue(co1)
            self.CopyOut(tile)
        if t.a_resident:
            self.qA1.FreeTensor(self.a1)
        for s in range(max(0, self.step - 2), self.step):   # the last two steps' SetFlags have their WaitFlags
            WaitFlag(HardEvent.MTE1_MTE3, s % 2)

    def AntiQuant(self, tile: int, kk: int) -> None:
        """Vector: this K step's codes and scales in, codes -> half, each 16-code row times its group's scale."""
        t = self.t
        groups, kb, g0 = t.step_groups, t.K // C0, kk * t.base_k // t.group       # g0: the step's first group
        codes, sc = self.qCode.AllocTensor(int8), self.qScale.AllocTensor(half)
        DataCopy(codes, self.wGm[(tile * kb + kk * t.base_k // C0) * t.tile_n * C0 // 2], t.chunk // 2)
        DataCopy(sc, self.sGm[(tile * (t.K // t.group) + g0) * t.tile_n], groups * t.tile_n)
        self.qCode.EnQue(codes)
        self.qScale.EnQue(sc)
        codes, sc = self.qCode.DeQue(int8), self.qScale.DeQue(half)
        w = self.qW.AllocTensor(half)
        Cast(w, codes.ReinterpretCast(int4b_t), RoundMode.CAST_NONE, t.chunk)      # exact: -8 .. 7
        Brcb(self.scaleBlocks, sc, groups * t.tile_n // 8, BrcbRepeatParams(1, 8))   # scale n -> block n
        block = t.tile_n * C0                               # one K block: tile_n rows of 16 codes
        for b in range(t.base_k // C0):
            g = (kk * t.base_k + b * C0) // t.group - g0   # K block b's group, counted from g0
            Mul(w[b * block], w[b * block], self.scaleBlocks[g * block], block)
        self.qCode.FreeTensor(codes)
        self.qScale.FreeTensor(sc)
        self.qW.EnQue(w)

    def CopyToL1(self) -> None:
        """MTE3: the dequantised chunk UB -> L1, already in fractal order. A B1 queue orders MTE2 and MTE1; this
        copy is MTE3's, so the two L1 buffers are handed over by flags, one event id each (ping-pong)."""
        w = self.qW.DeQue(half)
        b1 = self.qB1.AllocTensor(half)
        slot, self.step = self.step % 2, self.step + 1
        if self.step > 2:                                   # LoadData has finished reading this buffer
            WaitFlag(HardEvent.MTE1_MTE3, slot)
        DataCopy(b1, w, self.t.chunk)
        SetFlag(HardEvent.MTE3_MTE1, slot)
        WaitFlag(HardEvent.MTE3_MTE1, slot)
        self.qW.FreeTensor(w)
        self.qB1.EnQue(b1)

    def CopyInA(self, k0: int, width: int):
        """X's rows, columns ``k0 .. k0 + width``, GM -> L1 as NZ."""
        t = self.t
        a1 = self.qA1.AllocTensor(half)
        DataCopy(a1, self.xGm[k0], Nd2NzParams(1, t.M, width, 0, t.K, t.Mp, 1, 0))
        self.qA1.EnQue(a1)
        return self.qA1.DeQue(half)

    def SplitLoad(self, a1, kk: int) -> None:
        # kk: the step's index in X's panel
        """L1 -> L0A (per 16-row block its K fractals) and L1 -> L0B (the chunk's fractals as they are)."""
        t = self.t
        kB, rB = t.base_k // C0, t.Mp // C0
        first = kk * kB * rB                                # X's K block kk * kB in the NZ panel
        b1 = self.qB1.DeQue(half)
        a2, b2 = self.qA2.AllocTensor(half), self.qB2.AllocTensor(half)
        for i in range(rB):
            LoadData(a2[i * kB * FRACTAL], a1[first * FRACTAL + i * FRACTAL], LoadData2DParams(0, kB, rB, 0, 0, False, 0))
        LoadData(b2, b1, LoadData2DParams(0, kB * t.tile_n // C0, 1, 0, 0, False, 0))
        SetFlag(HardEvent.MTE1_MTE3, (self.step - 1) % 2)    # the B1 buffer may be written again
        self.qB1.FreeTensor(b1)
        self.qA2.EnQue(a2)
        self.qB2.EnQue(b2)

    def Compute(self, co1, bt, kk: int) -> None:
        """One Mmad per K step into the tile's accumulator; the first starts from the bias (BT) or zero."""
        t = self.t
        a2, b2 = self.qA2.DeQue(half), self.qB2.DeQue(half)
        if kk == 0 and bt is not None:
            Mmad(co1, a2, b2, bt, MmadParams(t.M, t.tile_n, t.base_k, 0, True, False))
        else:
            Mmad(co1, a2, b2, MmadParams(t.M, t.tile_n, t.base_k, 0, False, kk == 0))
        self.qA2.FreeTensor(a2)
        self.qB2.FreeTensor(b2)

    def CopyOut(self, tile: int) -> None:
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.yGm[tile * t.tile_n], co1, FixpipeParamsV220(t.tile_n, t.M, t.Mp, t.N, False,
                                                                  QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)


@kernel(core="MIX")
def w4a16_matmul_kernel(x, codes, scales, bias, y, t: W4A16Tiling) -> None:
    op = KernelW4A16()
    op.Init(x, codes, scales, bias, y, t)
    op.Process()


def w4a16_matmul(x: np.ndarray, codes: np.ndarray, scales: np.ndarray, bias: np.ndarray | None = None, *,
                 chip="Ascend310B", numerics: bool = True, **tiling) -> tuple[np.ndarray, LaunchResult]:
    """``x [M, K] @ (codes [N, K] * scales [N, K / group])^T (+ bias [N])`` as half ``[M, N]`` on a coupled
    chip; ``numerics=False`` times only."""
    c = get_chip(chip)
    site = ("<host w4a16_matmul>", 0)
    if c.separated:
        raise ArgumentError(f"w4a16_matmul: {c.name} separates its AIC and AIV cores, so UB -> L1 has no path",
                            fix="run it on a coupled chip (chip='Ascend310B'), or dequantise on the AIVs into a GM "
                            "workspace the AICs read (kernels/m4/antiquant.py, then kernels/m4/gemm.py)", site=site)
    x = np.ascontiguousarray(x, np.float16)
    (M, K), (N, K2) = x.shape, codes.shape
    if K != K2 or K % scales.shape[1] or scales.shape[0] != N:
        raise ArgumentError(f"w4a16_matmul: x {list(x.shape)}, codes {list(codes.shape)}, scales "
                            f"{list(scales.shape)}: expected x [M, K], codes [N, K], scales [N, K / group]",
                            fix="pass llm_quant.rtn_groups(w, 4, group)'s codes and scales of w [N, K]", site=site)
    t = w4a16_tiling(M, N, K, K // scales.shape[1], chip=c, **tiling)
    packed, sp = pack_w4a16(codes, scales, t)
    bv = None if bias is None else np.asarray(bias, np.float32).reshape(N)
    y = np.zeros((M, N), np.float16)
    res = launch(w4a16_matmul_kernel, t.block_dim, x, packed, sp, bv, y, t, chip=c,
                 gm_names=["x", "codes", "scales", "bias", "y"], numerics=numerics)
    return y, res


__all__ = ["W4A16Tiling", "w4a16_tiling", "pack_w4a16", "dequantize_reference", "KernelW4A16",
           "w4a16_matmul_kernel", "w4a16_matmul"]
