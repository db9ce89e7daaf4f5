"""The DataCopy best-practice sample's GM -> L1 scenarios 6 and 7 (Atlas A2, 24 AIC): every core reading one matrix
in the same order, or each core starting at its own block (optimisation point 4, 多核同地址访问冲突规避).

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/
data_copy/README.md`` (优化点4, GM 到 L1): a half matrix [6144, 512], L2 cache hint off (CACHE_MODE_DISABLE); each of
24 AIC loads the whole matrix, M block by M block (256 rows), each block in [256, 64] tiles with Nd2Nz (rows of
128 B, 1 KB apart: every row of a tile in its own 512 B window). Same order (scenario 6): Task Duration 278.56 us,
aic_mte2_time 240.198 us; rotated, block ``(b + blockIdx) % 24`` first (scenario 7): 221.34 us and 209.8 us.
The kernel is ``data_copy_l1.gm_to_l1`` (the sample's FullMatrixCopy order, ``data_copy_sample.full_matrix``).
The simulated figure is the launch's time (msprof's Task Duration), timing only. The contrast is the
same-address rule (engine/bandwidth.WindowTurns, ``gm_window_turns`` in hw/chips.py; ``--no-turns``): without it both
orders take the same time. Every row bypasses L2 (CACHE_MODE_DISABLE), so it costs a whole HBM package, 8 cycles
(``aic_gm_miss_row_packages``, CANN's GetBandwidthUsageNd2Nz; the chip's aic_mte2_time of the rotated order is
7.9 cycles a row); before that rule a 128 B row cost the 3-cycle floor of L2 hits and both orders ran 34-41 % short.
The GM -> UB pair (scenarios 7, 8 of the UB kernel) is in ``data_copy_ub.py``.

    python benchmarks/data_copy_same_addr.py [--turns | --no-turns]
"""
from __future__ import annotations

import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data_copy_l1  # noqa: E402
from ascend_sim import Ascend910B  # noqa: E402
from data_copy_sample import L1  # noqa: E402

#: scenario -> (Task Duration, aic_mte2_time), us; False: same order, True: rotated order
MEASURED = {rotate: (L1[k].measured["task"], L1[k].measured["mte2"]) for rotate, k in ((False, 6), (True, 7))}


def task_us(rotate: bool, chip) -> float:
    """Simulated Task Duration (us) of scenario 6 (``rotate`` False) or 7 (True)."""
    return data_copy_l1.run(7 if rotate else 6, chip)["task"]


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
