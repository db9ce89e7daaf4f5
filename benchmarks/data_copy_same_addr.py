"""The DataCopy best-practice sample's GM -> L1 scenarios 6 and 7 (Atlas A2, 24 AIC): every core reading one matrix
in the same order, or each core starting at its own block (optimisation point 4, 多核同地址访问冲突规避).

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/
data_copy/README.md`` (优化点4, GM 到 L1): a half matrix [6144, 512], L2 cache hint off (CACHE_MODE_DISABLE); each of
24 AIC loads the whole matrix, M block by M block (256 rows), each block in [256, 64] tiles with Nd2Nz (rows of
128 B, 1 KB apart: every row of a tile in its own 512 B window). Same order (scenario 6): Task Duration 278.56 us,
aic_mte2_time 240.198 us; rotated, block ``(b + blockIdx) % 24`` first (scenario 7): 221.34 us and 209.8 us.
The simulated figure is the launch's time (msprof's Task Duration), timing only. The contrast is the
same-address rule (engine/bandwidth.WindowTurns, ``gm_window_turns`` in hw/chips.py; ``--no-turns``): without it both
orders take the same time. Every row bypasses L2 (CACHE_MODE_DISABLE), so it costs a whole HBM package, 8 cycles
(``aic_gm_miss_row_packages``, CANN's GetBandwidthUsageNd2Nz; the chip's aic_mte2_time of the rotated order is
7.9 cycles a row); before that rule a 128 B row cost the 3-cycle floor of L2 hits and both orders ran 34-41 % short.

    python benchmarks/data_copy_same_addr.py [--turns | --no-turns]
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np

from ascend_sim import (Ascend910B, CacheMode, DataCopy, GetBlockIdx, GlobalTensor, LocalTensor, Nd2NzParams,
                        TPosition, half, kernel, launch)

M, N, TILE_M, TILE_N, BLOCKS = 6144, 512, 256, 64, 24
#: scenario -> (Task Duration, aic_mte2_time), us; False: same order, True: rotated order
MEASURED = {False: (278.56, 240.198), True: (221.34, 209.8)}


@kernel(core="AIC")
def full_matrix_to_l1(src, rotate: bool) -> None:
    """The sample's FullMatrixCopy(offsetAddr): every M block of the matrix, tile by tile, into one L1 buffer."""
    g = GlobalTensor(half)
    g.SetGlobalBuffer(src, M * N)
    g.SetL2CacheHint(CacheMode.CACHE_MODE_DISABLE)
    l1 = LocalTensor[half](TPosition.A1, 0, TILE_M * TILE_N)
    single = M // BLOCKS
    for b in range(M // single):
        block = (b // BLOCKS) * BLOCKS + (b + GetBlockIdx()) % BLOCKS if rotate else b
        for m in range(block * single, (block + 1) * single, TILE_M):
            for c in range(0, N, TILE_N):
                DataCopy(l1, g[m * N + c], Nd2NzParams(1, TILE_M, TILE_N, 0, N, TILE_M, 1, 0))


def task_us(rotate: bool, chip) -> float:
    """Simulated Task Duration (us) of scenario 6 (``rotate`` False) or 7 (True)."""
    res = launch(full_matrix_to_l1, BLOCKS, np.zeros(M * N, np.float16), rotate, chip=chip, numerics=False)
    return res.us


def main() -> int:
    chip = Ascend910B()
    if "--turns" in sys.argv or "--no-turns" in sys.argv:
        chip = dataclasses.replace(chip, gm_window_turns="--turns" in sys.argv)
    print("| order | measured Task Duration (us) | simulated (us) | error |")
    print("|---|---|---|---|")
    sim = {}
    for rotate, (measured, _mte2) in MEASURED.items():
        sim[rotate] = task_us(rotate, chip)
        print(f"| {'rotated' if rotate else 'same'} | {measured:.1f} | {sim[rotate]:.1f} | "
              f"{sim[rotate] / measured - 1:+.1%} |")
    gain = lambda b, a: 100.0 * (1 - a / b)     # noqa: E731
    print(f"gain of the rotated order: measured {gain(MEASURED[False][0], MEASURED[True][0]):+.1f} %, simulated "
          f"{gain(sim[False], sim[True]):+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
