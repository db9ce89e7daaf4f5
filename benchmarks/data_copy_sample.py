"""The DataCopy best-practice sample's scenarios and tile orders, shared by its GM -> UB and GM -> L1 replicas.

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/
data_copy/`` (``data_copy.asc``: the scenario table; ``data_copy_ub.h`` / ``data_copy_l1.h``: the kernels; README.md:
the Atlas A2/A3 measurements). Every scenario copies a half matrix [M, N] from GM, nothing else: each core takes
``M / blocks`` rows (``singleCoreM``) and walks them in [tileM, tileN] tiles into one buffer at address 0, back to
back, with no queue and no flag (the kernels only issue copies; a PipeBarrier<PIPE_ALL> ends them). The kernels
differ only in the copy (``DataCopyPad`` into UB on an AIV, ``DataCopy`` with ``Nd2NzParams`` into L1 on an AIC)
and in the order of their tiles, which the three generators below give, as the headers' Process(),
RepeatCopy() and FullMatrixCopy() walk them:

- :func:`process`: the core's rows, tile row by tile row, N in tiles of tileN (the last one ``curCols`` wide);
- :func:`repeat`: RepeatCopy(nStart, nCount, times): the core's rows over N columns [nStart, nStart + nCount),
  ``times`` times (scenario "whole 4 times": once with all of N; "split in 4": once per quarter of N);
- :func:`full_matrix`: FullMatrixCopy(offsetAddr): every core reads the whole matrix, M block by M block, the
  blocks in the same order or, rotated, core ``b`` starting at block ``b`` within each group of ``blocks``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

#: a tile: (first row, first column, columns)
Tile = tuple[int, int, int]


@dataclass(frozen=True)
class Scenario:
    """One scenario of the sample (``ScenarioConfig`` in data_copy.asc) with its Atlas A2/A3 measurement.

    ``order``: "process", "whole4" (RepeatCopy of all N, 4 times), "split4" (each quarter of N 4 times), "same"
    or "rotated" (FullMatrixCopy without / with offsetAddr). ``measured``: the README's figures, us, by name
    (``mte2``: aiv/aic_mte2_time; ``task``: Task Duration; ``time``: aiv_time / aicore_time).
    """

    number: int
    m: int
    n: int
    blocks: int
    tile_m: int
    tile_n: int
    order: str
    measured: dict

    @property
    def single_m(self) -> int:
        """Rows per core (``SINGLE_CORE_M = M / NUM_BLOCKS``)."""
        return self.m // self.blocks

    def tiles(self, block: int) -> Iterator[Tile]:
        """The tiles core ``block`` copies, in the kernel's order."""
        if self.order == "process":
            return process(self, block)
        if self.order == "whole4":
            return repeat(self, block, 0, self.n, 4)
        if self.order == "split4":
            quarter = self.n // 4
            return (t for k in range(4) for t in repeat(self, block, k * quarter, quarter, 4))
        return full_matrix(self, block, self.order == "rotated")


def process(s: Scenario, block: int) -> Iterator[Tile]:
    """Process(): this core's rows in tiles of tileM, each row of tiles across N in tiles of tileN."""
    start = block * s.single_m
    for row in range(start, start + s.single_m, s.tile_m):
        for col in range(0, s.n, s.tile_n):
            yield row, col, min(s.tile_n, s.n - col)


def repeat(s: Scenario, block: int, n_start: int, n_count: int, times: int) -> Iterator[Tile]:
    """RepeatCopy(nStart, nCount, repeatTimes): this core's rows over nCount columns from nStart, ``times`` times."""
    start = block * s.single_m
    for _ in range(times):
        for row in range(start, start + s.single_m, s.tile_m):
            for col in range(n_start, n_start + n_count // s.tile_n * s.tile_n, s.tile_n):
                yield row, col, s.tile_n


def full_matrix(s: Scenario, block: int, rotated: bool) -> Iterator[Tile]:
    """FullMatrixCopy(offsetAddr): the whole matrix, M block by M block; rotated, block ``(b + blockIdx) % blocks``
    of each group of ``blocks`` M blocks first."""
    for b in range(s.m // s.single_m):
        cur = (b // s.blocks) * s.blocks + (b + block) % s.blocks if rotated else b
        for row in range(cur * s.single_m, (cur + 1) * s.single_m, s.tile_m):
            for col in range(0, s.n // s.tile_n * s.tile_n, s.tile_n):
                yield row, col, s.tile_n


#: Atlas A2/A3: 48 AIV, 24 AIC (data_copy.asc); the README's measurements (us)
UB = {
    1: Scenario(1, 12288, 12288, 48, 1, 64, "process", {"task": 564.84, "mte2": 548.161}),
    2: Scenario(2, 12288, 12288, 48, 64, 64, "process", {"task": 233.54, "mte2": 220.772}),
    3: Scenario(3, 12288, 12288, 48, 64, 1024, "process", {"task": 215.82, "mte2": 202.657}),
    4: Scenario(4, 12288, 12287, 48, 64, 1024, "process", {"task": 275.3, "mte2": 259.047}),
    5: Scenario(5, 12288, 12288, 48, 64, 1024, "whole4", {"task": 828.06, "time": 816.05}),
    6: Scenario(6, 12288, 12288, 48, 64, 1024, "split4", {"task": 365.74, "time": 354.56}),
    7: Scenario(7, 6144, 512, 48, 128, 64, "same", {"task": 539.42, "mte2": 474.717}),
    8: Scenario(8, 6144, 512, 48, 128, 64, "rotated", {"task": 328.88, "mte2": 307.38}),
}
L1 = {
    1: Scenario(1, 12288, 12288, 24, 64, 64, "process", {"task": 300.7, "mte2": 283.508}),
    2: Scenario(2, 12288, 12288, 24, 64, 256, "process", {"task": 230.24, "mte2": 214.519}),
    3: Scenario(3, 12288, 12287, 24, 64, 256, "process", {"task": 438.76, "mte2": 422.515}),
    4: Scenario(4, 12288, 12288, 24, 64, 1024, "whole4", {"task": 899.34, "time": 872.19}),
    5: Scenario(5, 12288, 12288, 24, 64, 1024, "split4", {"task": 414.96, "time": 397.8}),
    6: Scenario(6, 6144, 512, 24, 256, 64, "same", {"task": 278.56, "mte2": 240.198}),
    7: Scenario(7, 6144, 512, 24, 256, 64, "rotated", {"task": 221.34, "mte2": 209.8}),
}


def gm_source(src, s: Scenario):
    """The kernels' Init(): the source matrix as a half GlobalTensor; L2 off for the same-address scenarios (their
    FullMatrixCopy sets ``CACHE_MODE_DISABLE`` first, to keep the access order apart from the cache's effect)."""
    from ascend_sim import CacheMode, GlobalTensor, half

    g = GlobalTensor(half)
    g.SetGlobalBuffer(src, s.m * s.n)
    if s.order in ("same", "rotated"):
        g.SetL2CacheHint(CacheMode.CACHE_MODE_DISABLE)
    return g


def simulate(kern, s: Scenario, chip) -> dict[str, float]:
    """Run scenario ``s`` with the replica kernel ``kern(src, s)`` on ``s.blocks`` cores, timing only.

    Returns the simulated figures by the README's names, us: ``task`` (the launch's device time, msprof's Task
    Duration), ``mte2`` (the mean MTE2 busy time of the cores, aiv/aic_mte2_time) and ``time`` (the mean core
    time from its start to its last instruction's end, aiv_time / aicore_time).
    """
    import numpy as np

    from ascend_sim import launch

    res = launch(kern, s.blocks, np.zeros(s.m * s.n, np.float16), s, chip=chip, numerics=False)
    us = res.chip.cycles_to_us
    return {"task": res.us, "mte2": us(float(np.mean([busy[4] for *_, busy in res.core_times]))),
            "time": us(float(np.mean([end - begin for _b, _t, begin, end, _busy in res.core_times])))}
