"""The Gelu vector task of the Matmul + Gelu sample (Atlas A2, 48 AIV, 8192 x 8192 float32): the MemBase Gelu,
eight vector instructions a tile between PipeBarrier<PIPE_V>, with ping-pong UB buffers.

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/03_fusion_compute/
matmul_gelu_high_performance/`` (README.md, 性能数据, "Atlas A2训练系列芯片", row "Gelu计算": AI_VECTOR_CORE, 48
blocks; ``mmad_gelu.asc``, ``GeluMemBaseCompute``, the A2/A3 path). The row is the Gelu alone, as a vector task; its
kernel is the one the README points to for the Gelu part, ``02_reg_compute/gelu_high_performance/gelu.asc``
(``KernelGelu::Process`` with ``GeluCompute``, that sample's Case 0 = the A2 MemBase instructions): Mul x.x, Mul .x,
Muls 0.044715, Add x, Muls -1.595769, Exp, Adds 1, Div x / ., each over the tile in the count form with a
PipeBarrier<PIPE_V> between them; x and y in ping and pong buffers (``xAddrPing`` 0, ``xAddrPong``, ``yAddrPing``,
``yAddrPong`` tileLen x 4 bytes apart), V_MTE2 and MTE3_V flags on two event ids, MTE2_V and V_MTE3 waited at once;
each tile one ``DataCopyPad`` of copyRows rows of singleCoreN floats in (GM stride (N - singleCoreN) x 4 bytes) and
one out. The A2 row's split is not in the sources: the replica takes ``gelu.asc``'s singleCoreN = 4096 and tileLen
= 2 x singleCoreN and splits M in 24 (singleCoreM = ceil(8192 / 24) = 342, the last core 326 rows) for 24 x 2 = 48
blocks. (The fused kernel's own AIV path, ``GeluFromGM``, is no stand-alone kernel: one xUB and one geluOutUB with
no V_MTE2 or MTE3_V flag between tiles, so run alone the next tile's DataCopyPad overwrites the xUB the Gelu before
may still read; the simulator's race check stops it there. In the fused kernel only the wait for the AIC's next
block, CrossCoreWaitFlag, stands between them.)

Simulated figures (us): ``task`` the launch's device time (Task Duration); ``vec``, ``mte2``, ``mte3``, ``scalar``
the mean over the 48 AIV of each pipe's busy time (aiv_vec_time, ...); ``time`` the mean AIV time (aiv_time).

    python benchmarks/gelu_vector.py          # the A2 row, timing only
"""
from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ascend_sim import (PIPE_V, Add, Adds, Ascend910B, DataCopyExtParams, DataCopyPad,  # noqa: E402
                        DataCopyPadExtParams, Div, Exp, GetBlockIdx, GlobalTensor, HardEvent, LocalTensor, Mul, Muls,
                        PipeBarrier, SetFlag, TPosition, WaitFlag, float32, kernel, launch)
from bank_conflict_nd2nz import figures  # noqa: E402

COEFF_A = 0.044715
COEFF_B = -1.595769
#: the README's Atlas A2 "Gelu计算" row (us)
MEASURED = {"task": 369.827, "time": 358.91, "vec": 236.506, "scalar": 8.293, "mte2": 316.672, "mte3": 150.033}
FIGURES = ("task", "vec", "mte2", "mte3")     # the figures compared as points


@dataclass(frozen=True)
class Split:
    """gelu.asc's template arguments: the matrix, one core's block (singleCoreM x singleCoreN), tileLen."""

    m: int = 8192
    n: int = 8192
    core_m: int = 342
    core_n: int = 4096

    def __post_init__(self):
        if self.core_n > self.n or self.n % self.core_n:
            raise ValueError(f"singleCoreN {self.core_n} must divide N = {self.n} (gelu.asc: tileLen is a whole "
                             "number of rows)")

    @property
    def tile_len(self) -> int:
        return 2 * self.core_n

    @property
    def blocks(self) -> int:
        return -(-self.m // self.core_m) * (self.n // self.core_n)

    def block(self, idx: int) -> tuple[int, int, int]:
        """(GM offset, rows, columns) of block ``idx`` (InitGMOffsets: M index = idx % mIndex)."""
        m_tiles = -(-self.m // self.core_m)
        mi, ni = idx % m_tiles, idx // m_tiles
        rows = self.m - (m_tiles - 1) * self.core_m if mi == m_tiles - 1 else self.core_m
        return mi * self.core_m * self.n + ni * self.core_n, rows, self.core_n


A2 = Split()


def gelu_compute(x: LocalTensor, y: LocalTensor, n: int) -> None:
    """GeluCompute / GeluMemBaseCompute: y = x / (1 + exp(-1.595769 (x + 0.044715 x^3)))."""
    Mul(y, x, x, n)
    PipeBarrier(PIPE_V)
    Mul(y, y, x, n)
    PipeBarrier(PIPE_V)
    Muls(y, y, COEFF_A, n)
    PipeBarrier(PIPE_V)
    Add(y, x, y, n)
    PipeBarrier(PIPE_V)
    Muls(y, y, COEFF_B, n)
    PipeBarrier(PIPE_V)
    Exp(y, y, n)
    PipeBarrier(PIPE_V)
    Adds(y, y, 1.0, n)
    PipeBarrier(PIPE_V)
    Div(y, x, y, n)


@kernel(core="AIV")
def gelu_custom(x, y, s: Split) -> None:
    """KernelGelu::Process with GeluCompute: ping-pong tiles of two rows of singleCoreN floats."""
    offset, rows, cols = s.block(GetBlockIdx())
    xg, yg = GlobalTensor(float32), GlobalTensor(float32)
    xg.SetGlobalBuffer(x + offset, s.m * s.n - offset)
    yg.SetGlobalBuffer(y + offset, s.m * s.n - offset)
    size = s.tile_len * 4
    xs = [LocalTensor[float32](TPosition.VECCALC, a, s.tile_len) for a in (0, size)]
    ys = [LocalTensor[float32](TPosition.VECCALC, a, s.tile_len) for a in (2 * size, 3 * size)]
    tile_rows = s.tile_len // s.core_n
    loops = -(-rows // tile_rows)
    for eid in (0, 1):
        SetFlag(HardEvent.V_MTE2, eid)
        SetFlag(HardEvent.MTE3_V, eid)
    pad = DataCopyPadExtParams(False, 0, 0, 0)
    for i in range(loops):
        eid = i & 1
        copy_rows = rows - (loops - 1) * tile_rows if i == loops - 1 else tile_rows
        WaitFlag(HardEvent.V_MTE2, eid)
        gap = (s.n - cols) * 4
        DataCopyPad(xs[eid], xg[i * tile_rows * s.n], DataCopyExtParams(copy_rows, cols * 4, gap, 0, 0), pad)
        SetFlag(HardEvent.MTE2_V, eid)
        WaitFlag(HardEvent.MTE2_V, eid)
        WaitFlag(HardEvent.MTE3_V, eid)
        gelu_compute(xs[eid], ys[eid], copy_rows * s.core_n)
        SetFlag(HardEvent.V_MTE2, eid)
        SetFlag(HardEvent.V_MTE3, eid)
        WaitFlag(HardEvent.V_MTE3, eid)
        DataCopyPad(yg[i * tile_rows * s.n], ys[eid], DataCopyExtParams(copy_rows, cols * 4, 0, gap, 0))
        SetFlag(HardEvent.MTE3_V, eid)
    for eid in (0, 1):
        WaitFlag(HardEvent.V_MTE2, eid)
        WaitFlag(HardEvent.MTE3_V, eid)


def gelu_of(x: np.ndarray) -> np.ndarray:
    """The formula in float64 (the sample's gen_data.py)."""
    v = x.astype(np.float64)
    return v / (1.0 + np.exp(np.clip(COEFF_B * (v + COEFF_A * v ** 3), -88.0, 88.0)))


def launch_split(chip=None, numerics: bool = False, **changes):
    """Launch the Gelu on its blocks (``changes``: Split fields, e.g. a smaller ``m``, ``n``); returns
    (LaunchResult, y close to the formula or None)."""
    s = dataclasses.replace(A2, **changes)
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, s.m * s.n).astype(np.float32) if numerics else np.zeros(s.m * s.n, np.float32)
    y = np.zeros(s.m * s.n, np.float32)
    res = launch(gelu_custom, s.blocks, x, y, s, chip=chip or Ascend910B(), gm_names=["x", "y"], numerics=numerics)
    return res, bool(np.allclose(y, gelu_of(x), rtol=1e-4, atol=1e-5)) if numerics else None


def run(chip=None) -> dict[str, float]:
    """Simulated figures (us) of the A2 row, timing only."""
    return figures(launch_split(chip)[0])


def main() -> int:
    sim = run()
    print("| figure | measured (us) | simulated (us) | error |")
    print("|---|---|---|---|")
    for fig in ("task", "time", "vec", "scalar", "mte2", "mte3"):
        print(f"| {fig} | {MEASURED[fig]:.3f} | {sim[fig]:.3f} | {sim[fig] / MEASURED[fig] - 1:+.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
