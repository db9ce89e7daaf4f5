"""The DataCopy best-practice sample's GM -> UB scenarios (Atlas A2, 48 AIV, DataCopyPad): tile sizes, rows off
512 B windows, L2 reuse and cores reading one matrix in the same or a rotated order.

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/
data_copy/`` (``data_copy_ub.h``, ``kernel_data_copy_pad_gm2ub`` in ``data_copy.asc``; README.md 优化点1-4, GM 到 UB).
Each AIV copies its rows of a half matrix into one UB buffer at address 0 with ``DataCopyPad``: ``blockCount`` =
tileM rows of ``blockLen`` = curCols x 2 bytes, ``srcStride`` = (N - curCols) x 2 bytes, ``dstStride`` 0, no
padding; copies back to back, no queue, no flag (the tile orders: ``data_copy_sample.py``). The sample passes
``DataCopyParams`` with a ``DataCopyPadParams``; the replica passes the same numbers as ``DataCopyExtParams`` (the
same bursts: blockLen and the GM stride in bytes, the UB stride in 32 B blocks). Scenarios 7 and 8 turn L2 off
(``SetL2CacheHint(CACHE_MODE_DISABLE)``), as the sample's FullMatrixCopy does.

The simulated figures are timing only: the mean AIV MTE2 busy time (aiv_mte2_time, scenarios 1-4), the launch's
device time (Task Duration, 5-8).

    python benchmarks/data_copy_ub.py [SCENARIO ...]      # default: every scenario
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ascend_sim import (Ascend910B, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, GetBlockIdx,  # noqa: E402
                        LocalTensor, TPosition, half, kernel)
from data_copy_sample import UB, Scenario, gm_source, simulate  # noqa: E402

#: the figure each scenario is compared on (the README's column)
FIGURE = {1: "mte2", 2: "mte2", 3: "mte2", 4: "mte2", 5: "task", 6: "task", 7: "task", 8: "task"}


@kernel(core="AIV")
def gm_to_ub(src, s: Scenario) -> None:
    """KernelDataCopyPadGm2Ub: this core's tiles (in the scenario's order) into one UB buffer with DataCopyPad."""
    g = gm_source(src, s)
    ub = LocalTensor[half](TPosition.VECIN, 0, s.tile_m * s.tile_n)
    pad = DataCopyPadExtParams(False, 0, 0, 0)
    params = {}
    for row, col, cols in s.tiles(GetBlockIdx()):
        p = params.get(cols)
        if p is None:
            p = params[cols] = DataCopyExtParams(s.tile_m, cols * 2, (s.n - cols) * 2, 0, 0)
        DataCopyPad(ub, g[row * s.n + col], p, pad)


def run(number: int, chip=None) -> dict[str, float]:
    """Simulated figures (us) of GM -> UB scenario ``number`` (``data_copy_sample.simulate``)."""
    return simulate(gm_to_ub, UB[number], chip or Ascend910B())


def main(argv: list[str]) -> int:
    numbers = [int(a) for a in argv] or sorted(UB)
    print("| scenario | tile | figure | measured (us) | simulated (us) | error |")
    print("|---|---|---|---|---|---|")
    for k in numbers:
        s, fig = UB[k], FIGURE[k]
        sim = run(k)[fig]
        measured = s.measured[fig]
        print(f"| {k} ({s.order}, N={s.n}) | [{s.tile_m},{s.tile_n}] | {fig} | {measured:.1f} | {sim:.1f} | "
              f"{sim / measured - 1:+.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
