"""STUDY, not the model: a proposed GM -> L1 (Nd2Nz) copy model for the cube core, applied by monkeypatching.

CHANGELOG.md (2026-12-01, 1e; the full tables in git: `git show 83440cf:benchmarks/RESULTS.md`). Nothing in engine/, hw/ or api/ changes: importing this module changes nothing;
``apply_proposal()`` wraps ``engine.core.gm_cycles`` (and ``engine.timing._gm_path``) for the rest of the process,
and only for MTE2 copies on AIC blocks (every AIV path, so Add cases 1-2, keeps the calibrated model).

The proposal, per GM -> L1 copy of ``count`` rows of ``blen`` bytes (its L2 hit share ``h`` from the L2 model):

1. a row costs ``max(ROW_FLOOR, blen * (h / L2_HIT_RATE + (1 - h) / HBM_MISS_RATE))`` cycles, not whole 512 B
   packages (CANN ``GetBandwidthUsageNd2Nz`` prices a 128 B row as a 512 B one; the Tiling case's T2 allows at most
   ~3.3 cycles per 128 B row);
2. L2 hits at ``L2_HIT_RATE`` (T4's implied 102 B/cycle per AIC, the L2 case's 79-88), misses at the present 64
   (CANN ``l0c2out::kHbmBandwidth``), both still under the model's L2 and HBM shares (the original ``gm_cycles``
   runs first and books them; its HBM bins are booked at the old path rate);
3. the 210-cycle Nd2Nz start (``kNd2NzStartCost``) only when MTE2 was idle: a copy queued behind the previous
   one overlaps its start with that copy's data;
4. no flat unaligned penalty: a row that crosses a 512 B window costs one ``ROW_FLOOR`` more per extra window;
5. ``--miss-latency``: a copy also waits ``MISS_LATENCY`` cycles times its HBM-miss share (the M1 / T3 pair).

What-ifs of RESULTS 1e: ``--hit-rate R`` (B/cycle for L2 hits), ``--straddle-free`` (4 without its floor),
``--window-rows`` (rows sharing a 512 B window within one copy served one after another, ``WINDOW_ROW`` cycles
each), ``--no-mte1-start`` (LoadData without its 26-cycle start: a bound); ``--only TEXT`` runs the points whose
name contains TEXT.

    python benchmarks/gm_l1_fit_study.py                  # the table (proposal 1-4), ~70 s CPU
    python benchmarks/gm_l1_fit_study.py --miss-latency   # with 5
    python benchmarks/gm_l1_fit_study.py --current        # re-simulate the "current" column instead of the proposal
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ascend_sim import launch
from ascend_sim.engine import core as engine_core
from ascend_sim.engine import timing
from ascend_sim.engine.instr import PIPE_INDEX
from ascend_sim.engine.l2 import GM_BASE

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_case_study  # noqa: E402
import catlass_matmul  # noqa: E402
import matmul_features  # noqa: E402
import matmul_tiling_case  # noqa: E402

L2_HIT_RATE = 110.0     # B/cycle per AIC for L2 hits [DER] T4 102 (all overheads in), L2-split case 79-88
HBM_MISS_RATE = 64.0    # B/cycle per AIC for misses [OFF] CANN l0c2out::kHbmBandwidth (unchanged)
ROW_FLOOR = 3.0         # cycles per Nd2Nz row at least [DER] T2: <= 3.3 per 128 B row; colleagues' 2.4-3.2
WINDOW = 512            # GM request window [OFF] optimisation.md s3
MISS_LATENCY = 800.0    # cycles per copy x its miss share [DER] M1 vs T3 (same copies; M1's B from HBM)
WINDOW_ROW = 24.0       # what-if: cycles per row when a copy's rows share 512 B windows [DER] split-K, 1 core
_MTE2 = PIPE_INDEX["MTE2"]
_original_path, _original_cycles = timing._gm_path, engine_core.gm_cycles
_seen: dict = {}        # what the original model found for the copy being priced: L2 split, HBM wait
_options = {"miss_latency": False, "hit_rate": L2_HIT_RATE, "straddle_floor": ROW_FLOOR, "window_rows": False}
_original_local_transfer = timing.local_transfer


class _HbmProbe:
    """The launch's HBM bookings, remembering the wait the original model computed for the last copy."""

    def __init__(self, hbm):
        self.hbm = hbm

    def reserve(self, start, nbytes, rate):
        _seen["wait"] = wait = self.hbm.reserve(start, nbytes, rate)
        return wait


def _probed_path(core, pipe: int) -> tuple:
    """``timing._gm_path`` with the L2 access and the HBM bookings of AIC MTE2 watched (their results kept)."""
    path = list(_original_path(core, pipe))
    if pipe == _MTE2 and core.core_type == "AIC":
        l2_transfer = path[6]

        def transfer(*args):
            _seen["split"] = split = l2_transfer(*args)
            return split
        path[6] = transfer
        path[7] = _HbmProbe(path[7]) if path[7] is not None else None
    return tuple(path)


def row_cycles(blen: int, hit: float, window_offset: int) -> float:
    """One Nd2Nz row: its bytes at the hit / miss rates, at least ROW_FLOOR, plus a floor per extra 512 B window."""
    cycles = max(ROW_FLOOR, blen * (hit / _options["hit_rate"] + (1 - hit) / HBM_MISS_RATE))
    extra_windows = math.ceil((window_offset + blen) / WINDOW) - math.ceil(blen / WINDOW)
    return cycles + extra_windows * _options["straddle_floor"]


def proposed_gm_cycles(core, start: float, cost: tuple) -> float:
    """``gm_cycles`` with the proposal for AIC GM -> L1 copies; every other transfer as the model prices it."""
    if cost[0] != _MTE2 or core.core_type != "AIC":
        return _original_cycles(core, start, cost)
    queued = start == core.tail[_MTE2] and core.busy[_MTE2] > 0
    _seen.clear()
    _original_cycles(core, start, cost)          # L2 and HBM accounting, the HBM wait
    _, nbytes, count, _, buf, off, blen, pitch, _ = cost
    l2_bytes, hbm_bytes = _seen.get("split", (0.0, nbytes))
    hit = l2_bytes / nbytes if nbytes else 0.0
    moving = count * row_cycles(blen, hit, (buf.base_addr - GM_BASE + off) % WINDOW)
    if _options["window_rows"] and count > 1 and pitch < WINDOW:
        moving = max(moving, count * WINDOW_ROW)
    startup = 0 if queued else core.chip.aic_gm_read_startup
    latency = MISS_LATENCY * (1 - hit) if _options["miss_latency"] else 0.0
    return startup + max(moving, _seen.get("wait", 0.0)) + latency


def _without_mte1_start(core, nbytes: int, bytes_per_cycle: float, startup: int, bursts: int = 1) -> float:
    """What-if: an L1 -> L0 / BT copy without its per-instruction start (a bound on one start per L0 block)."""
    if startup == core.chip.mte1_startup:
        startup = 0
    return _original_local_transfer(core, nbytes, bytes_per_cycle, startup, bursts)


def apply_proposal(miss_latency: bool = False, hit_rate: float = L2_HIT_RATE, straddle_free: bool = False,
                   window_rows: bool = False, mte1_start: bool = True) -> None:
    """Price AIC GM -> L1 copies with the proposal for the rest of the process (a study: never in the package)."""
    _options.update(miss_latency=miss_latency, hit_rate=hit_rate, window_rows=window_rows,
                    straddle_floor=0.0 if straddle_free else ROW_FLOOR)
    timing._gm_path = _probed_path
    engine_core.gm_cycles = proposed_gm_cycles
    if not mte1_start:
        timing.local_transfer = _without_mte1_start


# ----------------------------------------------------------------------------- the validation points
@dataclass
class Point:
    """One published figure: measured (us), the model's figure as of RESULTS 1b-1d, and how to simulate it."""

    name: str
    figure: str
    measured: float
    current: float
    simulate: Callable[[], float]


def _catlass_us(m1: int, n1: int) -> float:
    """CATLASS M1024 N576 K6144 with L1 tile <m1, n1, 256> on 20 AIC, timing only: the launch's time."""
    m, n, k = catlass_matmul.M, catlass_matmul.N, catlass_matmul.K
    a, bt, c = np.zeros((m, k), np.float16), np.zeros((n, k), np.float16), np.zeros((m, n), np.float16)
    return launch(catlass_matmul.catlass_matmul, (m // m1) * -(-n // n1), a, bt, c, catlass_matmul.Tiling(m1, n1),
                  chip=catlass_matmul.chip_20aic(), numerics=False).us


_tiling_rows: dict = {}


def _tiling_case(index: int, figure: str) -> Callable[[], float]:
    """A figure of matmul_tiling_case's configuration ``index`` (each configuration simulated once)."""
    def figure_us() -> float:
        cfg = matmul_tiling_case.CONFIGS[index]
        if cfg.name not in _tiling_rows:
            _tiling_rows[cfg.name] = matmul_tiling_case.measure(cfg)
        return _tiling_rows[cfg.name][figure]
    return figure_us


def _feature(run: Callable, how: str) -> Callable[[], float]:
    return lambda: matmul_features.core_us(run(), how)


def _split_k_mte2_us() -> float:
    res = matmul_features.run_split_k(1)[0]
    return res.chip.cycles_to_us(sum(busy[_MTE2] for *_, busy in res.core_times))


_CASES = matmul_features.CASES
POINTS = [
    Point("CATLASS <128,256,256>, 24 blocks", "task time", 72.5, 74.30, lambda: _catlass_us(128, 256)),
    Point("CATLASS <256,128,256>, 20 blocks", "task time", 48.6, 50.97, lambda: _catlass_us(256, 128)),
    Point("Add case 1, 1 AIV", "task time", 6909.6, 7138.30,
          lambda: add_case_study.run_case(1, numerics=False)[0].us),
    Point("Add case 2, 48 AIV", "task time", 306.58, 322.13,
          lambda: add_case_study.run_case(48, numerics=False)[0].us),
    Point("T1 4 AIC, [64,64,256] Norm", "aic_time", 12045, 40290.09, _tiling_case(0, "aic_time")),
    Point("T2 20 AIC, [64,64,256] Norm", "aic_time", 2532, 8284.37, _tiling_case(1, "aic_time")),
    Point("T2", "aic_mte2_time", 2452, 8057.58, _tiling_case(1, "aic_mte2_time")),
    Point("T3 20 AIC, [128,256,64] Norm", "aic_mte2_time", 808, 3270.01, _tiling_case(2, "aic_mte2_time")),
    Point("T4 T3 + CFG_MDL", "aic_mte2_time", 591, 1365.81, _tiling_case(3, "aic_mte2_time")),
    Point("M1 MDL doc, CFG_NORM", "aic_time", 83.68, 106.13, _tiling_case(4, "aic_time")),
    Point("M1", "aic_mte2_time", 75.64, 103.86, _tiling_case(4, "aic_mte2_time")),
    Point("M2 MDL doc, CFG_MDL", "aic_time", 53.4, 65.52, _tiling_case(5, "aic_time")),
    Point("M2", "aic_mte2_time", 46.24, 47.47, _tiling_case(5, "aic_mte2_time")),
    Point("split-K 1 AIC", "aic_time", 19.60, 9.78, _feature(lambda: matmul_features.run_split_k(1)[0], "mean")),
    Point("split-K 1 AIC", "aic_mte2_time", 13.72, 9.54, _split_k_mte2_us),
    Point("split-K 2 AIC", "aic_time (mean)", 13.70, 5.01,
          _feature(lambda: matmul_features.run_split_k(2)[0], "mean")),
    Point("MTE2 Preload, before", "aic_time (mean)", 30.88, 26.59, _feature(_CASES[1].before, "mean")),
    Point("K-axis stagger, before", "task time", 98.72, 97.76, _feature(_CASES[6].before, "task")),
    Point("L2 split, before", "aic_time", 867.0, 1276.70,
          _feature(lambda: matmul_features.run_l2_tiled(False)[0], "max")),
    Point("L2 split, after", "aic_time", 805.6, 1262.08,
          _feature(lambda: matmul_features.run_l2_tiled(True)[0], "max")),
]


def _arguments(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--current", action="store_true", help="re-simulate today's model instead of the proposal")
    ap.add_argument("--miss-latency", action="store_true", help="add mechanism 5 (HBM latency per missing copy)")
    ap.add_argument("--hit-rate", type=float, default=L2_HIT_RATE, help="B/cycle for L2 hits (default %(default)s)")
    ap.add_argument("--straddle-free", action="store_true", help="mechanism 4 without its floor per extra window")
    ap.add_argument("--window-rows", action="store_true", help="rows sharing a 512 B window served in turn")
    ap.add_argument("--no-mte1-start", action="store_true", help="LoadData without its 26-cycle start (a bound)")
    ap.add_argument("--only", default="", metavar="TEXT", help="run only the points whose name contains TEXT")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    label = "current (re-simulated)"
    if not args.current:
        apply_proposal(args.miss_latency, args.hit_rate, args.straddle_free, args.window_rows, not args.no_mte1_start)
        options = [f"--hit-rate {args.hit_rate:g}"] if args.hit_rate != L2_HIT_RATE else []
        options += [f"--{name}" for name in ("straddle-free", "window-rows", "no-mte1-start")
                    if getattr(args, name.replace("-", "_"))]
        label = " ".join(["proposal 1-" + ("5" if args.miss_latency else "4")] + options)
    print(f"| point | figure | measured (us) | current model (us) | error | {label} (us) | error |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for p in (p for p in POINTS if args.only in p.name):
        sim = p.simulate()
        err = sim / p.measured - 1
        worst = max(worst, abs(err))
        print(f"| {p.name} | {p.figure} | {p.measured:,.2f} | {p.current:,.2f} | {p.current / p.measured - 1:+.1%} | "
              f"{sim:,.2f} | {err:+.1%} |", flush=True)
    print(f"(largest error: {worst:.0%}; a study: nothing here changes the simulator outside this process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
