"""The ND -> NZ bank-conflict sample (Atlas A2, 48 AIV, 8192 x 8192 half): a vector copy whose 8 writes a
repeat all land in one UB bank group (Case 1, C0 columns 144 blocks apart) or in 8 groups (Case 2, 145 apart).

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/
bank_conflict_nd2nz/`` (``bank_conflict_nd2nz.asc``: ``KernelNd2Nz::Process``, ``ComputeTileNd2nzWithCopy``;
README.md, "Atlas A2/A3 系列产品（dav-2201）", Case 1 紧凑排放 and Case 2 nzBuf 多申请一行, and 理论性能分析).
The matrix is cut into row tiles of 144 rows (the last one 128) and column tiles of 128 halves; 6 row splits x 8
column splits give 48 blocks (block b: row split b // 8, column split b % 8; the 57 row tiles split 10, 10, 10, 9, 9,
9; 8 column tiles each), each walking its tiles with ping-pong buffers in the order ``[ndPing | ndPong | nzPing |
nzPong]`` at UB 0, 36864, 73728 and 73728 + nzBuf bytes. Per tile: ``DataCopy`` of actualTileH rows of 8 blocks (GM
stride 504 blocks) into ndBuf; one ``Copy`` of 128 halves a repeat, actualTileH repeats, ``CopyRepeatParams``
dstStride = dstNzC0Stride (144 or 145), srcStride 1, dstRepeatSize 1, srcRepeatSize 8; ``DataCopy`` of 8 bursts of
actualTileH blocks (UB gap dstNzC0Stride - actualTileH, GM gap 8192 - actualTileH) to the NZ output; V_MTE2 and
MTE3_V flags on two event ids, MTE2_V and V_MTE3 waited at once.

The simulator has no ``Copy`` (UBToUB掩码式高维数据搬运): the replica issues ``Muls(dst, src, 1.0, 128,
actualTileH, UnaryRepeatParams(dstNzC0Stride, 1, 1, 8))`` instead: the same lanes, strides and repeats on PIPE_V,
one 256 B repeat a cycle ("simple", as the README's 理论性能分析 counts vcopy: 128 halves a cycle), and exact in half
(x * 1 = x).

Simulated figures (us): ``task`` the launch's device time (Task Duration); ``vec``, ``mte2``, ``mte3``, ``scalar``:
the mean over the 48 AIV of each pipe's busy time (aiv_vec_time, aiv_mte2_time, aiv_mte3_time, aiv_scalar_time);
``time`` the mean AIV time from its start to its last instruction's end (aiv_time).

    python benchmarks/bank_conflict_nd2nz.py [CASE ...]      # default: cases 1 and 2, timing only
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

import numpy as np

from ascend_sim import (Ascend910B, DataCopy, DataCopyParams, GetBlockIdx, GlobalTensor, HardEvent, LocalTensor,
                        Muls, SetFlag, TPosition, UnaryRepeatParams, WaitFlag, half, kernel, launch)

C0 = 16                     # halves in one DataBlock / C0 column
#: the README's Atlas A2/A3 figures (us), 144 x 128 tiles on 48 AIV
MEASURED = {1: {"task": 151.42, "time": 138.00, "vec": 47.790, "scalar": 6.586, "mte2": 113.856, "mte3": 76.760},
            2: {"task": 144.00, "time": 131.44, "vec": 7.133, "scalar": 7.760, "mte2": 115.405, "mte3": 76.532}}
CASE_TEXT = {1: "C0 columns 144 blocks apart (one bank group)", 2: "C0 columns 145 blocks apart (8 bank groups)"}
FIGURES = ("task", "vec", "mte2", "mte3")     # the figures compared as points
#: the README's name of each figure
FIGURE_TEXT = {"task": "Task Duration", "time": "aiv_time", "vec": "aiv_vec_time", "scalar": "aiv_scalar_time",
               "mte2": "aiv_mte2_time", "mte3": "aiv_mte3_time"}


@dataclass(frozen=True)
class Case:
    """The sample's template arguments (dav-2201) and SCENARIO; ``m``, ``n`` smaller in tests."""

    scenario: int
    m: int = 8192
    n: int = 8192
    tile_h: int = 144
    tile_w: int = 128
    vec_len: int = 128          # vecLenHalf
    row_splits: int = 6
    col_splits: int = 8

    def __post_init__(self):
        if self.scenario not in (1, 2):
            raise ValueError(f"SCENARIO {self.scenario}: the sample has cases 1 (stride tileH) and 2 (tileH + 1)")
        if self.n % self.tile_w or (self.n // self.tile_w) % self.col_splits:
            raise ValueError(f"n = {self.n}: the column tiles (n / {self.tile_w}) must split evenly in "
                             f"{self.col_splits} (the sample's static_asserts)")

    @property
    def blocks(self) -> int:
        return self.row_splits * self.col_splits

    @property
    def c0_stride(self) -> int:
        """dstNzC0Stride: blocks between the starts of neighbouring C0 columns in nzBuf."""
        return self.tile_h if self.scenario == 1 else self.tile_h + 1

    @property
    def nd_elems(self) -> int:
        return self.tile_h * self.tile_w

    @property
    def nz_elems(self) -> int:
        """nzBufElems: (tileH - 1) + (tileC0Cols - 1) x stride + 1 blocks, one more in case 2."""
        data = (self.tile_h - 1) + (self.tile_w // C0 - 1) * self.c0_stride + 1
        return (data + (1 if self.scenario == 2 else 0)) * C0

    def tiles(self, block: int) -> list[tuple[int, int]]:
        """(first row, first column) of block ``block``'s tiles, in the order it walks them."""
        row_tiles = -(-self.m // self.tile_h)
        per_split = self.n // self.tile_w // self.col_splits
        rs, cs = divmod(block, self.col_splits)
        base, extra = divmod(row_tiles, self.row_splits)
        begin = rs * base + min(rs, extra)
        count = base + (1 if rs < extra else 0)
        return [((begin + i // per_split) * self.tile_h, (cs * per_split + i % per_split) * self.tile_w)
                for i in range(count * per_split)]


CASES = {1: Case(1), 2: Case(2)}


@kernel(core="AIV")
def nd2nz(x, z, c: Case) -> None:
    """KernelNd2Nz::Process (dav-2201): ND tiles in, the vector copy into NZ order, NZ columns out, ping-pong."""
    xg, zg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x, c.m * c.n)
    zg.SetGlobalBuffer(z, c.m * c.n)
    nd_bytes, nz_bytes = c.nd_elems * 2, c.nz_elems * 2
    nd = [LocalTensor[half](TPosition.VECIN, a, c.nd_elems) for a in (0, nd_bytes)]
    nz = [LocalTensor[half](TPosition.VECOUT, a, c.nz_elems) for a in (2 * nd_bytes, 2 * nd_bytes + nz_bytes)]
    for eid in (0, 1):
        SetFlag(HardEvent.V_MTE2, eid)
        SetFlag(HardEvent.MTE3_V, eid)
    cols = c.tile_w // C0
    for i, (row, col) in enumerate(c.tiles(GetBlockIdx())):
        eid = i & 1
        h = min(c.tile_h, c.m - row)            # actualTileH
        WaitFlag(HardEvent.V_MTE2, eid)
        DataCopy(nd[eid], xg[row * c.n + col], DataCopyParams(h, cols, (c.n - c.tile_w) // C0, 0))
        SetFlag(HardEvent.MTE2_V, eid)
        WaitFlag(HardEvent.MTE2_V, eid)
        WaitFlag(HardEvent.MTE3_V, eid)
        vec_dbs = c.vec_len // C0
        for k in range(c.tile_w // c.vec_len):  # ComputeTileNd2nzWithCopy: Copy stands in as Muls by 1
            Muls(nz[eid][k * vec_dbs * c.c0_stride * C0], nd[eid][k * c.vec_len], 1.0, c.vec_len, h,
                 UnaryRepeatParams(c.c0_stride, 1, 1, cols))
        SetFlag(HardEvent.V_MTE2, eid)
        SetFlag(HardEvent.V_MTE3, eid)
        WaitFlag(HardEvent.V_MTE3, eid)
        DataCopy(zg[(row + col // C0 * c.m) * C0], nz[eid], DataCopyParams(cols, h, c.c0_stride - h, c.m - h))
        SetFlag(HardEvent.MTE3_V, eid)
    for eid in (0, 1):
        WaitFlag(HardEvent.V_MTE2, eid)
        WaitFlag(HardEvent.MTE3_V, eid)


def nz_of(x: np.ndarray, m: int, n: int) -> np.ndarray:
    """The compact NZ layout of the ND matrix ``x`` (m x n): C0 column after C0 column, each m rows of 16."""
    return x.reshape(m, n // C0, C0).transpose(1, 0, 2).reshape(-1)


def figures(res) -> dict[str, float]:
    """The README's figures of a launch, us: task, time and the mean busy time of the vec/mte2/mte3/scalar pipes."""
    us = res.chip.cycles_to_us
    busy = np.mean([b for *_, b in res.core_times], axis=0)
    return {"task": res.us, "time": us(float(np.mean([e - s for _b, _t, s, e, _ in res.core_times]))),
            "vec": us(float(busy[1])), "scalar": us(float(busy[0])), "mte2": us(float(busy[4])),
            "mte3": us(float(busy[5]))}


def launch_case(number: int, chip=None, numerics: bool = False, **changes):
    """Launch case ``number`` on its 48 AIV (``changes``: Case fields, e.g. a smaller ``m`` and ``n``); returns
    (LaunchResult, z == NZ(x) or None)."""
    c = dataclasses.replace(CASES[number], **changes)
    if numerics:
        x = np.random.default_rng(0).standard_normal(c.m * c.n, np.float32).astype(np.float16)
    else:
        x = np.zeros(c.m * c.n, np.float16)
    z = np.zeros(c.m * c.n, np.float16)
    res = launch(nd2nz, c.blocks, x, z, c, chip=chip or Ascend910B(), gm_names=["x", "z"], numerics=numerics)
    return res, bool(np.array_equal(z, nz_of(x, c.m, c.n))) if numerics else None


def run(number: int, chip=None) -> dict[str, float]:
    """Simulated figures (us) of case ``number`` at the sample's size, timing only."""
    return figures(launch_case(number, chip)[0])


def main(argv: list[str]) -> int:
    numbers = [int(a) for a in argv] or sorted(CASES)
    print("| case | figure | measured (us) | simulated (us) | error |")
    print("|---|---|---|---|---|")
    for k in numbers:
        sim = run(k)
        for fig in ("task", "time", "vec", "scalar", "mte2", "mte3"):
            m = MEASURED[k][fig]
            print(f"| {k} ({CASE_TEXT[k]}) | {fig} | {m:.3f} | {sim[fig]:.3f} | {sim[fig] / m - 1:+.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
