"""A chain of dense layers (LeNet's fc1 -> fc2 -> fc3) in one cube kernel, the activations kept per core.

``y = L_n(... relu(L_1(x)))`` with ``L_i(h) = h @ W_i + b_i``: one launch instead of one per layer. Each
core owns ``singleM`` rows of x and runs them through every layer:

* all the weights go to L1 once per core, already in the cube's NZ layout (laid out offline, as a
  framework stores FRACTAL_NZ weights: one contiguous copy each); all the biases sit in the BT buffer;
* per layer: K steps of L0A/L0B (double-buffered) feed one L0C accumulator (the bias from BT starts it);
* between layers, Fixpipe writes the activation **as NZ** (``CFG_NZ``, ReLU and fp32 -> fp16 on the way)
  into this core's slice of a GM workspace, and the next layer copies it back into L1 with one contiguous
  DataCopy: it is already the fractal layout L0A loads from (no Nd2Nz), and the bytes were just written,
  so the read finds them in L2 (Fixpipe to L1 directly is not in the simulator); a FIX -> MTE2 flag orders
  the write before the read;
* the last layer's Fixpipe writes the ND result.

Columns are padded to 16 (zero weights and bias: the padded activations are relu(0) = 0).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ascend_sim import (CFG_NZ, DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GlobalTensor, HardEvent, LoadData,
                        LoadData2DParams, Mmad, MmadParams, Nd2NzParams, QuantMode_t, SetFlag, TPipe, TPosition, TQue,
                        WaitFlag, float32, half, kernel, launch)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels._common import round_up
from ascend_sim.kernels.opt.cube_common import C0, FRACTAL, load_bias_table

@dataclass(frozen=True)
class MlpTiling:
    """Host tiling: rows ``M``, the layers' padded widths ``dims`` (K1, N1, N2, ...), ReLU per layer."""

    M: int
    K: int                    # x's real columns (GM row length)
    N: int                    # the last layer's real columns
    dims: tuple[int, ...]     # padded to 16: K1p, N1p, N2p, ..., Nnp
    relus: tuple[bool, ...]
    singleM: int
    baseK: int
    cores: int

    @property
    def layers(self) -> int:
        return len(self.dims) - 1

    @property
    def block_dim(self) -> int:
        return -(-self.M // self.singleM)

    @property
    def ws_per_core(self) -> int:
        """Workspace elements per core: the NZ activations of the hidden layers, one slice each."""
        return sum(self.singleM * n for n in self.dims[1:-1])


def choose_mlp_tiling(M: int, dims: list[int], relus: list[bool], *, chip=None, cores: int | None = None) -> MlpTiling:
    """Rows split evenly over the cube cores (16-row multiples); K steps that fit two L0B buffers."""
    chip = get_chip(chip)
    cores = cores or chip.aic_count
    dp = tuple(round_up(d, C0) for d in dims)
    single = round_up(-(-M // cores), C0)
    widest = max(dp[1:])
    base_k = min(round_up(max(dp[:-1]), C0), (chip.l0b_bytes // 2) // (widest * 2) // C0 * C0)
    if single * base_k * 2 * 2 > chip.l0a_bytes or single * widest * 4 * 2 > chip.l0c_bytes:
        raise ValueError(f"mlp_cube: {single} rows x {widest} columns do not fit L0A/L0C twice; use more cores")
    if sum(dp[1:]) * 4 > chip.bt_bytes:
        raise ValueError(f"mlp_cube: the biases ({sum(dp[1:])} floats) do not fit the {chip.bt_bytes} B BT buffer")
    return MlpTiling(M, dims[0], dims[-1], dp, tuple(relus), single, base_k, cores)


class KernelMlp:
    """One cube core: its rows through every layer; weights in L1, biases in BT, activations NZ via L2."""

    def Init(self, x, ws, bias, ws_act, y, t: MlpTiling) -> None:
        self.t = t
        self.xGm, self.yGm = GlobalTensor(half), GlobalTensor(half)
        self.xGm.SetGlobalBuffer(x, t.M * t.K)
        self.yGm.SetGlobalBuffer(y, t.M * t.N)
        self.wGm, self.actGm, self.biasGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(float32)
        self.wOff = np.cumsum([0] + [t.dims[i] * t.dims[i + 1] for i in range(t.layers)]).tolist()
        self.bOff = np.cumsum([0] + list(t.dims[1:])).tolist()
        self.wGm.SetGlobalBuffer(ws, self.wOff[-1])
        self.biasGm.SetGlobalBuffer(bias, self.bOff[-1])
        self.actGm.SetGlobalBuffer(ws_act, t.block_dim * t.ws_per_core)
        self.pipe = TPipe()
        rp, widest = t.singleM, max(t.dims[1:])
        self.qW, self.qA1 = TQue(TPosition.B1, 1), TQue(TPosition.A1, 2)
        self.pipe.InitBuffer(self.qW, 1, self.wOff[-1] * 2)
        self.pipe.InitBuffer(self.qA1, 2, rp * max(t.dims[:-1]) * 2)
        self.qA2, self.qB2, self.qCO1 = TQue(TPosition.A2, 2), TQue(TPosition.B2, 2), TQue(TPosition.CO1, 2)
        self.pipe.InitBuffer(self.qA2, 2, rp * t.baseK * 2)
        self.pipe.InitBuffer(self.qB2, 2, t.baseK * widest * 2)
        self.pipe.InitBuffer(self.qCO1, 2, rp * widest * 4)
        self.qC1, self.qC2 = TQue(TPosition.C1, 1), TQue(TPosition.C2, 1)
        self.pipe.InitBuffer(self.qC1, 1, self.bOff[-1] * 4)
        self.pipe.InitBuffer(self.qC2, 1, self.bOff[-1] * 4)

    def Process(self) -> None:
        t = self.t
        me = GetBlockIdx()
        self.row0 = me * t.singleM
        self.rows = min(t.singleM, t.M - self.row0)
        self.act0 = me * t.ws_per_core
        a1 = self.CopyInX()
        w1, bt = self.CopyInWeights(), self.CopyInBias()
        slot = self.act0
        for layer in range(t.layers):
            co1 = self.Layer(layer, a1, w1, bt)
            last = layer == t.layers - 1
            self.CopyOut(layer, co1, slot, last)
            if not last:
                SetFlag(HardEvent.FIX_MTE2, 0)          # the activation is in GM (L2) before it is read back
                WaitFlag(HardEvent.FIX_MTE2, 0)
                a1 = self.CopyInAct(slot, t.dims[layer + 1])
                slot += t.singleM * t.dims[layer + 1]
        self.qW.FreeTensor(w1)
        self.qC2.FreeTensor(bt)

    def CopyInX(self):
        """This core's rows of x into L1 as NZ (Nd2Nz: one burst per row), rows rounded up to 16."""
        t = self.t
        a1 = self.qA1.AllocTensor(half)
        # {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, self.xGm[self.row0 * t.K], Nd2NzParams(1, self.rows, t.K, 0, t.K, t.singleM, 1, 0))
        self.qA1.EnQue(a1)
        return self.qA1.DeQue(half)

    def CopyInWeights(self):
        """Every layer's weights, already NZ in GM, in one contiguous copy: resident in L1."""
        w1 = self.qW.AllocTensor(half)
        DataCopy(w1, self.wGm, self.wOff[-1])
        self.qW.EnQue(w1)
        return self.qW.DeQue(half)

    def CopyInBias(self):
        """Every layer's bias GM -> C1 -> the BT buffer (all of them fit its 1 KB)."""
        return load_bias_table(self.qC1, self.qC2, self.biasGm, self.bOff[-1])

    def CopyInAct(self, slot: int, n: int):
        """The previous layer's NZ activation back into L1: one contiguous copy (it is the L0A source layout)."""
        a1 = self.qA1.AllocTensor(half)
        DataCopy(a1, self.actGm[slot], self.t.singleM * n)
        self.qA1.EnQue(a1)
        return self.qA1.DeQue(half)

    def Layer(self, layer: int, a1, w1, bt):
        """K steps of L1 -> L0A (ZZ) / L0B (ZN) and one Mmad each into L0C, the bias from BT first."""
        t = self.t
        kp, np_ = t.dims[layer], t.dims[layer + 1]
        rB, sB, nB, kAll = -(-self.rows // C0), t.singleM // C0, np_ // C0, kp // C0   # sB: L1 blocks per column
        w = w1[self.wOff[layer]]
        co1 = self.qCO1.AllocTensor(float32)
        for k0 in range(0, kp, t.baseK):
            kB = min(t.baseK, kp - k0) // C0
            a2, b2 = self.qA2.AllocTensor(half), self.qB2.AllocTensor(half)
            # {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
            for i in range(rB):
                LoadData(a2[i * kB * FRACTAL], a1[((k0 // C0) * sB + i) * FRACTAL],
                         LoadData2DParams(0, kB, sB, 0, 0, False, 0))
            for j in range(kB):
                LoadData(b2[j * nB * FRACTAL], w[(k0 // C0 + j) * FRACTAL],
                         LoadData2DParams(0, nB, kAll, 0, 0, True, 0))
            self.qA2.EnQue(a2)
            self.qB2.EnQue(b2)
            a2, b2 = self.qA2.DeQue(half), self.qB2.DeQue(half)
            if k0 == 0:
                Mmad(co1, a2, b2, bt[self.bOff[layer]], MmadParams(self.rows, np_, kB * C0, 0, True, False))
            else:
                Mmad(co1, a2, b2, MmadParams(self.rows, np_, kB * C0, 0, False, False))
            self.qA2.FreeTensor(a2)
            self.qB2.FreeTensor(b2)
        self.qA1.FreeTensor(a1)
        self.qCO1.EnQue(co1)
        return self.qCO1.DeQue(float32)

    def CopyOut(self, layer: int, co1, slot: int, last: bool) -> None:
        """Hidden layers: NZ into the workspace (CFG_NZ, dstStride = singleM rows of 32 B); the last: ND rows."""
        t = self.t
        np_, rp = t.dims[layer + 1], round_up(self.rows, C0)
        if last:
            # {nSize, mSize, srcStride, dstStride, reluEn, quantPre}
            Fixpipe(self.yGm[self.row0 * t.N], co1, FixpipeParamsV220(t.N, self.rows, rp, t.N,
                                                                      t.relus[layer], QuantMode_t.F322F16))
        else:
            Fixpipe(CFG_NZ, self.actGm[slot], co1, FixpipeParamsV220(np_, self.rows, rp, t.singleM,
                                                                     t.relus[layer], QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)


@kernel(core="AIC")
def mlp_kernel(x, w, bias, ws, y, tiling: MlpTiling) -> None:
    op = KernelMlp()
    op.Init(x, w, bias, ws, y, tiling)
    op.Process()


def weights_nz(w: np.ndarray, kp: int, np_: int) -> np.ndarray:
    """``[K, N]`` -> NZ ``[Np/16, Kp, 16]`` half, zero-padded: the layout Nd2Nz would give in L1."""
    k, n = w.shape
    wp = np.zeros((kp, np_), np.float16)
    wp[:k, :n] = w
    return np.ascontiguousarray(wp.reshape(kp, np_ // C0, C0).transpose(1, 0, 2)).ravel()


def mlp_cube(x: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]], relus: list[bool] | None = None, *,
             cores: int | None = None, pad_out: bool = False, chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``x [M, K]`` through dense layers ``(w [K_i, N_i], b [N_i])`` (ReLU after each but the last unless
    ``relus`` says otherwise) in one launch; float16 out ``[M, N_last]``, or with ``pad_out`` the rows padded
    to whole 32-byte blocks (``[M, N_last rounded up to 16]``, the padded columns 0) for a vector kernel."""
    x = np.asarray(x)
    dims = [x.shape[1]] + [np.asarray(w).shape[1] for w, _ in layers]
    for i, (w, b) in enumerate(layers):
        if np.asarray(w).shape[0] != dims[i] or np.asarray(b).size != dims[i + 1]:
            raise ValueError(f"mlp_cube: layer {i} w {np.asarray(w).shape}, b {np.asarray(b).shape}: expected "
                             f"[{dims[i]}, N] and [N]")
    relus = relus if relus is not None else [True] * (len(layers) - 1) + [False]
    t = choose_mlp_tiling(x.shape[0], dims, relus, chip=chip, cores=cores)
    if pad_out:
        t = replace(t, N=t.dims[-1])
    wall = np.concatenate([weights_nz(np.asarray(w, np.float16), t.dims[i], t.dims[i + 1])
                           for i, (w, _) in enumerate(layers)])
    ball = np.concatenate([np.pad(np.asarray(b, np.float32).ravel(), (0, t.dims[i + 1] - np.asarray(b).size))
                           for i, (_, b) in enumerate(layers)])
    y = np.zeros((t.M, t.N), np.float16)
    ws = np.zeros(t.block_dim * t.ws_per_core, np.float16)
    res = launch(mlp_kernel, t.block_dim, np.ascontiguousarray(x, np.float16), wall, ball, ws, y, t, chip=chip,
                 gm_names=["x", "w", "bias", "workspace", "y"])
    return y, res


__all__ = ["MlpTiling", "choose_mlp_tiling", "mlp_cube", "mlp_kernel", "weights_nz"]
