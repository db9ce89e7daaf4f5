"""Study (issue 30, split-K): what if the rows of one GM -> L1 copy that share a 512 B window were served in turn?

The guide's 避免同地址访问 page (docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/ in
https://github.com/cannmirror/asc-devkit) says MTE2 requests are handled per 512 B window and that requests to one
window at the same time are served one after another. The model applies that between cores (gm_window_turns); this
study applies it inside one copy too: a row that starts in the window where the previous row of the same copy ended
waits ``--extra-cycles`` more. The split-K document (Matmul高阶API使能多核切K.md) is the case: with CANN's base block a
core copies B as 1,024 rows of 32 B, 16 to a window, and its aic_mte2_time (13.72 us) is ~24 cycles a row where the
model charges 8 (one HBM package); 16 extra cycles a row fits it, so that number is fitted [CAL], not derived.
The engine is not changed: ``core.gm_cycles`` is wrapped for the run, then ``validate_timing`` prints its table.

    python benchmarks/same_window_rows_study.py --extra-cycles 16 [validate_timing.py options, e.g. --only split-K]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import ascend_sim.engine.core as core_mod
from ascend_sim.engine.instr import PIPE_INDEX

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate_timing  # noqa: E402

WINDOW = 512
_MTE2 = PIPE_INDEX["MTE2"]


def rows_in_previous_window(addr: int, count: int, blen: int, pitch: int) -> int:
    """Rows 1..count-1 of a copy whose first byte lies in the 512 B window holding the previous row's last byte."""
    i = np.arange(1, count, dtype=np.int64)
    start = (addr % WINDOW + i * pitch) // WINDOW
    prev_end = (addr % WINDOW + (i - 1) * pitch + blen - 1) // WINDOW
    return int(np.count_nonzero(start == prev_end))


def install(extra_cycles: float) -> None:
    """Wrap ``core.gm_cycles``: a cube core's GM -> L1 copy pays ``extra_cycles`` per row in its predecessor's
    window."""
    real = core_mod.gm_cycles

    def gm_cycles(core, start, cost):
        total = real(core, start, cost)
        if cost[0] == _MTE2 and core.core_type == "AIC" and cost[2] > 1:
            _, _nb, count, _aligned, buf, off, blen, pitch, _mode = cost
            total += extra_cycles * rows_in_previous_window(buf.base_addr + off, count, blen, pitch)
        return total
    core_mod.gm_cycles = gm_cycles


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extra-cycles", type=float, default=16.0)
    args, rest = ap.parse_known_args(argv)
    install(args.extra_cycles)
    return validate_timing.main(rest)


if __name__ == "__main__":
    sys.exit(main())
