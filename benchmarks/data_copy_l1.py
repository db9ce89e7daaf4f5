"""The DataCopy best-practice sample's GM -> L1 scenarios (Atlas A2, 24 AIC, DataCopy with Nd2NzParams): tile
sizes, rows on or off 512 B windows, L2 reuse (the same-address pair: ``data_copy_same_addr.py``).

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/
data_copy/`` (``data_copy_l1.h``, ``kernel_data_copy_gm2l1`` in ``data_copy.asc``; README.md 优化点1-3, GM 到 L1):
each AIC copies its rows of a half matrix tile by tile into one L1 buffer at address 0 with Nd2Nz (``nValue`` =
tileM, ``dValue`` = curCols, ``srcDValue`` = N, ``dstNzC0Stride`` = tileM), back to back (the tile orders:
``data_copy_sample.py``). Scenario 1: tiles [64, 64], aic_mte2_time 283.508 us; 2: [64, 256], N = 12288 (rows of
512 B on 512 B windows) 214.519 us; 3: N = 12287 (every row 2 B further than the one before: most cross a window)
422.515 us; 4: the whole matrix 4 times in [64, 1024] tiles, Task Duration 899.34 us; 5: each quarter of N 4
times, 414.96 us. The simulated figure is the mean AIC MTE2 busy time (1-3) or the launch's time (4, 5), timing
only. The rows miss L2 (read once), so each costs the HBM packages of its pieces between 512 B windows
(``aic_gm_miss_row_packages``, engine/timing.aic_miss_packages): 1 on a window, about 4 across one (31.8 cycles a
row measured at N = 12287, against 32). ``--windows`` turns on the older 512 B window rule for every row
(engine/timing.aic_window_rows, a what-if of hw/chips.py).

    python benchmarks/data_copy_l1.py [--windows] [SCENARIO ...]     # default: scenarios 1-5
"""
from __future__ import annotations

import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ascend_sim import (Ascend910B, DataCopy, GetBlockIdx, LocalTensor, Nd2NzParams, TPosition, half,  # noqa: E402
                        kernel)
from data_copy_sample import L1, Scenario, gm_source, simulate  # noqa: E402

#: the figure each scenario is compared on (the README's column)
FIGURE = {1: "mte2", 2: "mte2", 3: "mte2", 4: "task", 5: "task", 6: "task", 7: "task"}
MEASURED = {L1[k].n: L1[k].measured["mte2"] for k in (2, 3)}      # aic_mte2_time by N, us (scenarios 2, 3)


@kernel(core="AIC")
def gm_to_l1(src, s: Scenario) -> None:
    """KernelDataCopyGm2L1: this core's tiles (in the scenario's order) into one L1 buffer with Nd2Nz."""
    g = gm_source(src, s)
    l1 = LocalTensor[half](TPosition.A1, 0, s.tile_m * s.tile_n)
    params = {}
    for row, col, cols in s.tiles(GetBlockIdx()):
        p = params.get(cols)
        if p is None:
            p = params[cols] = Nd2NzParams(1, s.tile_m, cols, 0, s.n, s.tile_m, 1, 0)
        DataCopy(l1, g[row * s.n + col], p)


def run(number: int, chip=None) -> dict[str, float]:
    """Simulated figures (us) of GM -> L1 scenario ``number`` (``data_copy_sample.simulate``)."""
    return simulate(gm_to_l1, L1[number], chip or Ascend910B())


def mte2_us(n: int, chip) -> float:
    """Mean AIC MTE2 busy time (us) of scenario 2 (``n`` = 12288) or 3 (12287)."""
    return run(2 if n == 12288 else 3, chip)["mte2"]


def main(argv: list[str]) -> int:
    chip = dataclasses.replace(Ascend910B(), aic_gm_row_windows="--windows" in argv)
    numbers = [int(a) for a in argv if a != "--windows"] or [1, 2, 3, 4, 5]
    print("| scenario | tile | figure | measured (us) | simulated (us) | error |")
    print("|---|---|---|---|---|---|")
    sim = {}
    for k in numbers:
        s, fig = L1[k], FIGURE[k]
        sim[k] = run(k, chip)[fig]
        print(f"| {k} ({s.order}, N={s.n}) | [{s.tile_m},{s.tile_n}] | {fig} | {s.measured[fig]:.1f} | {sim[k]:.1f} | "
              f"{sim[k] / s.measured[fig] - 1:+.1%} |")
    if 2 in sim and 3 in sim:
        print(f"unaligned / aligned: measured {L1[3].measured['mte2'] / L1[2].measured['mte2']:.2f}x, simulated "
              f"{sim[3] / sim[2]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
