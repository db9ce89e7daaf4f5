"""The DataCopy best-practice sample's GM -> L1 scenarios 2 and 3 (Atlas A2, 24 AIC): 512 B rows aligned or not.

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/
data_copy/README.md`` (优化点2, GM 到 L1): each AIC copies its 512 rows of a half matrix in [64, 256] tiles with
Nd2Nz (one L1 buffer, back to back); N = 12288 (rows of 512 B on 512 B windows) took aic_mte2_time 214.519 us,
N = 12287 (every row 2 B further than the one before: most cross a window) 422.515 us. The simulated figure is
the mean AIC MTE2 busy time, timing only. The rows miss L2 (read once), so each costs the HBM packages of its pieces
between 512 B windows (``aic_gm_miss_row_packages``, engine/timing.aic_miss_packages): 1 on a window, about 4 across
one (31.8 cycles a row measured at N = 12287, against 32). ``--windows`` turns on the older 512 B window rule for
every row (engine/timing.aic_window_rows, a what-if of hw/chips.py).

    python benchmarks/data_copy_l1.py [--windows]
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np

from ascend_sim import Ascend910B, DataCopy, GetBlockIdx, GlobalTensor, LocalTensor, Nd2NzParams, TPosition, half, kernel, launch

M, TILE_M, TILE_N, BLOCKS = 12288, 64, 256, 24
MEASURED = {12288: 214.519, 12287: 422.515}      # aic_mte2_time, us


@kernel(core="AIC")
def gm_to_l1(src, n: int) -> None:
    """The sample's Process(): this core's rows, tile by tile, into one L1 buffer."""
    g = GlobalTensor(half)
    g.SetGlobalBuffer(src, M * n)
    l1 = LocalTensor[half](TPosition.A1, 0, TILE_M * TILE_N)
    rows = M // BLOCKS
    for m in range(GetBlockIdx() * rows, (GetBlockIdx() + 1) * rows, TILE_M):
        for c in range(0, n, TILE_N):
            DataCopy(l1, g[m * n + c], Nd2NzParams(1, TILE_M, min(TILE_N, n - c), 0, n, TILE_M, 1, 0))


def mte2_us(n: int, chip) -> float:
    res = launch(gm_to_l1, BLOCKS, np.zeros(M * n, np.float16), n, chip=chip, numerics=False)
    busy = np.mean([pipe_busy[4] for *_, pipe_busy in res.core_times])      # MTE2
    return res.chip.cycles_to_us(busy)


def main() -> int:
    chip = dataclasses.replace(Ascend910B(), aic_gm_row_windows="--windows" in sys.argv)
    print("| N | measured aic_mte2_time (us) | simulated (us) | error |")
    print("|---|---|---|---|")
    sim = {}
    for n, measured in MEASURED.items():
        sim[n] = mte2_us(n, chip)
        print(f"| {n} | {measured:.1f} | {sim[n]:.1f} | {sim[n] / measured - 1:+.1%} |")
    print(f"unaligned / aligned: measured {MEASURED[12287] / MEASURED[12288]:.2f}x, simulated "
          f"{sim[12287] / sim[12288]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
