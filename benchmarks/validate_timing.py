"""Every public timing point in one table: measured, simulated, error, calibration or validation (issue 30).

The points and their kernels are the existing benchmarks' (imported, not copied): the Add case study
(``add_case_study.py``) and its sample's Cases 3-6 (``add_high_performance.py``), the UB bank-conflict sample (``bank_conflicts.py``), CATLASS's matmul
(``catlass_matmul.py``), the DataCopy sample's GM -> L1 scenarios (tile sizes, rows on or off 512 B windows, L2
reuse: ``data_copy_l1.py``), its cores reading one matrix in the same or in rotated order
(``data_copy_same_addr.py``) and its GM -> UB scenarios on 48 AIV (``data_copy_ub.py``), the
Tiling-strategy case T1-T4 and the MDL document M1/M2 (``matmul_tiling_case.py``)
and the single-feature documents of the guide's Matmul tuning chapter, split-K among them
(``matmul_features.py``); the best-practice samples' Atlas A2 tables: the Matmul API's tuning path, Cases 1-8
(``matmul_high_performance.py``), the basic-API Matmul and its L2 split (``matmul_basic_api_hp.py``), the ND -> NZ
bank-conflict sample (``bank_conflict_nd2nz.py``) and the vector Gelu (``gelu_vector.py``); and the rest of
CATLASS's tuning page (``catlass_tuning.py``). Each module's docstring names its public source and what its figure
is.

A point whose measurement set a parameter of ``ascend_sim/hw/chips.py`` (a [CAL] tag) is *calibration*
(``CALIBRATION`` below names the parameters) and stops counting as validation. A step is the gain of one
optimisation, ``1 - after / before`` in per cent, measured against simulated, in percentage points; the
Add case study's later fixes (double buffer, CACHE_MODE_DISABLE, UB offsets) are steps between the sample's own
Cases 3-6, each simulated on the sample's kernel.

    python benchmarks/validate_timing.py             # every point (~13 minutes: the 8192^3 samples, T1-T4)
    python benchmarks/validate_timing.py --quick     # the cheap points and the steps between them
    python benchmarks/validate_timing.py --only T3 --only T4   # the points and steps naming T3 or T4
    python benchmarks/validate_timing.py --quick --inject "*=0" --inject "bank 1=+16"   # exits 1
    python benchmarks/validate_timing.py --what-if aic_gm_l2_hit_bytes_per_cycle=110.0   # a chips.py what-if, every point

Exit 0 only when every validation point is within +-15 % and every step goes the measured way within 10
points. A configuration the simulator cannot express (the documents' MIX-mode runs, ...) is listed as "not
modelled" with the reason and is not counted either way. ``--inject NAME=PCT`` sets the simulated figure of
the points whose name starts with NAME (``*``: every point) to measured x (1 + PCT / 100) instead of simulating
them: a check of this script's verdict (tests/sim/test_validate_timing.py).
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import sys
from dataclasses import dataclass, field
from typing import Callable

import ascend_sim
from ascend_sim.hw import chips

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_case_study as add  # noqa: E402
import add_high_performance as add_hp  # noqa: E402
import bank_conflicts as bank  # noqa: E402
import catlass_matmul as catlass  # noqa: E402
import data_copy_l1 as data_copy  # noqa: E402
import data_copy_same_addr as same_addr  # noqa: E402
import data_copy_ub  # noqa: E402
import matmul_features as features  # noqa: E402
import matmul_tiling_case as tiling  # noqa: E402
import bank_conflict_nd2nz as nd2nz, gelu_vector as gelu  # noqa: E402,E401
import catlass_tuning  # noqa: E402
import matmul_basic_api_hp as basic_mm  # noqa: E402
import matmul_high_performance as mmhp  # noqa: E402

POINT_TOLERANCE = 0.15      # a validation point: |simulated / measured - 1| <= 15 %
STEP_TOLERANCE = 10.0       # a step: the simulated gain within 10 percentage points of the measured one

#: points whose measurement set a [CAL] parameter of hw/chips.py, and which parameters
CALIBRATION = {
    "Add case 1": "gm_read/write_startup, gm_read/write_bytes_per_cycle, event_latency_cycles, vec_startup",
    "Add case 2": "the same [CAL] parameters as case 1",
    "T2 aic_time": "aic_gm_row_floor_cycles (the 128 B rows of B)",
    "T2 aic_mte2_time": "aic_gm_row_floor_cycles",
    "const tiling before": "matmul_tiling_copy_cycles + matmul_init_cycles (its first MTE2 at 3.536 us)",
    "const tiling after": "matmul_init_cycles (its first MTE2 at 2.185 us)",
    "pure Cube vs MIX before": "kfc_serve_cycles (the AIC's cost of one KFC message)",
}


# ----------------------------------------------------------------------------- simulated runs (memoised)
class Runs:
    """Each simulated figure computed once: ``get(key)`` runs ``RUNS[key]`` the first time."""

    def __init__(self, table: dict[str, Callable[[], float | None]]):
        self.table, self.cache = table, {}

    def get(self, key: str) -> float | None:
        if key not in self.cache:
            self.cache[key] = self.table[key]()
        return self.cache[key]


def _tiling_figures(cfg_name: str) -> Callable[[], dict]:
    cfg = next(c for c in tiling.CONFIGS if c.name.split()[0] == cfg_name)
    return lambda: tiling.measure(cfg)


def _feature(case: features.Case) -> Callable[[], list]:
    return lambda: features.simulate(case)


def _add_hp_us(number: int) -> Callable[[], float]:
    return lambda: add_hp.run(number, bank.Ascend910B())[0].us


def _bank_cycles(k: int) -> Callable[[], float]:
    return lambda: float(bank.run_scenario(k)[0])


def _add_us(cores: int, **fixes) -> Callable[[], float]:
    return lambda: add.run_case(cores, numerics=False, **fixes)[0].us


def _catlass_us(m1: int, n1: int) -> Callable[[], float]:
    return lambda: catlass.run_case(m1, n1)[0].us


def _data_copy_us(n: int) -> Callable[[], float]:
    return lambda: data_copy.mte2_us(n, bank.Ascend910B())


def _same_addr_us(rotate: bool) -> Callable[[], float]:
    return lambda: same_addr.task_us(rotate, bank.Ascend910B())


def _sample_run(module, number: int) -> Callable[[], dict]:
    """The DataCopy sample's scenario ``number`` through ``module`` (data_copy_ub or data_copy_l1): its figures."""
    return lambda: module.run(number, bank.Ascend910B())


@dataclass
class Point:
    """One published figure: measured, the run that simulates it, and whether it calibrated a parameter."""

    name: str
    source: str             # benchmark module and figure
    measured: float
    unit: str
    sim: Callable[["Runs"], float | None]
    quick: bool = False
    missing: str = ""       # why the configuration cannot be simulated (then not counted)
    simulated: float | None = None

    @property
    def role(self) -> str:
        return "calibration" if self.name in CALIBRATION else "validation"

    @property
    def error(self) -> float | None:
        return None if self.simulated is None else self.simulated / self.measured - 1


@dataclass
class Step:
    """The gain of one optimisation: ``1 - after / before``, measured and simulated (points or runs)."""

    name: str
    measured: tuple[float, float]
    before: Callable[["Runs"], float | None]
    after: Callable[["Runs"], float | None]
    quick: bool = False
    simulated: tuple = field(default=(None, None))
    ends: tuple = ()        # the points it compares, when it is built from points
    run: bool = False       # evaluated (not left out by --quick or --only)

    @property
    def role(self) -> str:
        """Calibration when either end is a calibration point (then not counted)."""
        return "calibration" if any(e in CALIBRATION for e in self.ends) else "validation"

    @property
    def measured_gain(self) -> float:
        return 100.0 * (1 - self.measured[1] / self.measured[0])

    @property
    def simulated_gain(self) -> float | None:
        b, a = self.simulated
        return None if b is None or a is None else 100.0 * (1 - a / b)


def _runs_table() -> dict:
    table = {f"add{c}": _add_us(c) for c in add.MEASURED}
    table.update({f"add_hp{k}": _add_hp_us(k) for k in add_hp.MEASURED})
    table.update({f"bank{k}": _bank_cycles(k) for k in bank.SCENARIOS})
    table.update({f"catlass{m1}x{n1}": _catlass_us(m1, n1) for m1, n1 in catlass.MEASURED})
    table.update({f"data_copy{n}": _data_copy_us(n) for n in data_copy.MEASURED})
    table.update({f"same_addr{int(r)}": _same_addr_us(r) for r in same_addr.MEASURED})
    table.update({f"ub{k}": _sample_run(data_copy_ub, k) for k in UB_SCENARIOS})
    table.update({f"l1_{k}": _sample_run(data_copy, k) for k in L1_SCENARIOS})
    table.update({c.name.split()[0]: _tiling_figures(c.name.split()[0]) for c in tiling.CONFIGS})
    table.update({f"feature {c.name}": _feature(c) for c in features.CASES})
    # --- ND2NZ bank conflicts and the A2 vector Gelu (helper tbanknz)
    table.update({**{f"nd2nz{k}": (lambda k=k: nd2nz.run(k, bank.Ascend910B())) for k in nd2nz.CASES},
                  "gelu_a2": lambda: gelu.run(bank.Ascend910B())})
    # --- CATLASS Matmul tuning page (helper tcat2)
    table.update({f"catlass_tuning {c.key}": (lambda key=c.key: catlass_tuning.run(key)) for c in catlass_tuning.CASES})
    table.update({f"basic_mm{k}": (lambda k=k: basic_mm.run(k)) for k in basic_mm.MEASURED})
    table.update({f"mmhp{n}": (lambda n=n: mmhp.run(n)) for n in mmhp.CASES if n not in mmhp.LONG_CASES})
    return table


def _fig(key: str, figure: str | None = None, index: int | None = None) -> Callable[[Runs], float | None]:
    """The simulated figure of run ``key``: the run itself, a field of its dict or an entry of its list."""
    def get(runs: Runs):
        v = runs.get(key)
        if figure is not None:
            return v[figure]
        if index is not None:
            return v[index]
        return v
    return get


def _point_fig(points: dict[str, Point], name: str) -> Callable[[Runs], float | None]:
    return lambda runs: points[name].simulated


CLOCK_HZ = bank.Ascend910B().clock_hz
#: the DataCopy sample's scenarios simulated here beyond GM -> L1 2, 3, 6, 7 (their figure: data_copy_*.FIGURE)
UB_SCENARIOS = (1, 2, 3, 4, 5, 6, 7, 8)
L1_SCENARIOS = (1, 4, 5)
#: scenarios too long for --quick (GM -> UB 1: 2.4 million copies; the whole-matrix-4-times pairs)
SLOW_SCENARIOS = {("UB", 1), ("UB", 5), ("UB", 6), ("L1", 4), ("L1", 5)}
FIGURE_NAME = {"mte2": "{core}_mte2_time, mean of {n} {core_u}", "task": "task time, {n} {core_u}"}
CHEAP_TILING = {"M1", "M2"}
#: the basic-API Matmul sample's figures compared (the README's columns; both launches are minutes long)
BASIC_MM_FIGURES = {"task": "Task Duration", "aic_mte2_time": "aic_mte2_time"}
#: feature documents cheap enough for --quick (the others are launches of many large blocks)
CHEAP_FEATURES = {"split-K 1 -> 2 cores", "UnitFlag", "pure Cube vs MIX", "const tiling", "NBuffer33",
                  "MTE2 Preload (N)", "IBShare B"}


def build() -> tuple[list[Point], list[Step]]:
    """Every public point and every step, in the table's order."""
    pts: list[Point] = []
    for cores, (us, _mte2) in add.MEASURED.items():
        pts.append(Point(f"Add case {1 if cores == 1 else 2}", f"add_case_study: {cores} AIV, task time", us, "us",
                         _fig(f"add{cores}"), quick=False))
    for k, (us, _mte2) in add_hp.MEASURED.items():
        pts.append(Point(f"Add sample case {k}: {add_hp.CASE_TEXT[k]}", "add_high_performance: 48 AIV, task time", us,
                         "us", _fig(f"add_hp{k}"), quick=True))
    for k, (*_, ticks, what) in bank.SCENARIOS.items():
        pts.append(Point(f"bank {k}: {what}", "bank_conflicts: 1000 Adds", ticks / bank.TICK_HZ * CLOCK_HZ, "cycles",
                         _fig(f"bank{k}"), quick=True))
    for (m1, n1), us in catlass.MEASURED.items():
        pts.append(Point(f"CATLASS <{m1},{n1},256>", "catlass_matmul: task time", us, "us", _fig(f"catlass{m1}x{n1}"),
                         quick=True))
    for n, us in data_copy.MEASURED.items():
        pts.append(Point(f"DataCopy GM->L1 N={n}", "data_copy_l1: aic_mte2_time, mean of 24 AIC", us, "us",
                         _fig(f"data_copy{n}"), quick=True))
    for rotate, (us, _mte2) in same_addr.MEASURED.items():
        pts.append(Point(f"DataCopy same-address {'after' if rotate else 'before'}",
                         "data_copy_same_addr: task time, 24 AIC", us, "us", _fig(f"same_addr{int(rotate)}"), quick=True))
    for path, module, numbers, core in (("UB", data_copy_ub, UB_SCENARIOS, "aiv"),
                                        ("L1", data_copy, L1_SCENARIOS, "aic")):
        for k in numbers:
            s = module_scenario(path, k)
            fig = module.FIGURE[k]
            what = FIGURE_NAME[fig].format(core=core, core_u=core.upper(), n=s.blocks)
            pts.append(Point(f"DataCopy GM->{path} {k}: {SCENARIO_TEXT[s.order]} [{s.tile_m},{s.tile_n}] N={s.n}",
                             f"data_copy_{path.lower()}: {what}", s.measured[fig], "us",
                             _fig(f"{'ub' if path == 'UB' else 'l1_'}{k}", fig),
                             quick=(path, k) not in SLOW_SCENARIOS))
    for cfg in tiling.CONFIGS:
        key = cfg.name.split()[0]
        for figure, us in cfg.measured.items():
            pts.append(Point(f"{key} {figure}", f"matmul_tiling_case: {cfg.name}", us, "us", _fig(key, figure),
                             quick=key in CHEAP_TILING))
    for case in features.CASES:
        for i, when in enumerate(("before", "after")):
            missing = ""
            if (case.before, case.after)[i] is None and not (i == 1 and case.one_schedule):
                missing = case.missing
            pts.append(Point(f"{case.name} {when}", f"matmul_features: {case.figure}", case.measured[i], "us",
                             _fig(f"feature {case.name}", index=i), quick=case.name in CHEAP_FEATURES,
                             missing=missing))
    # --- ND2NZ bank conflicts and the A2 vector Gelu (helper tbanknz)
    for k in nd2nz.CASES:
        for fig in nd2nz.FIGURES:
            pts.append(Point(f"ND2NZ bank case {k} {nd2nz.FIGURE_TEXT[fig]}: {nd2nz.CASE_TEXT[k]}",
                             f"bank_conflict_nd2nz: {nd2nz.FIGURE_TEXT[fig]}, 48 AIV", nd2nz.MEASURED[k][fig], "us",
                             _fig(f"nd2nz{k}", fig), quick=True))
    for fig in gelu.FIGURES:
        pts.append(Point(f"Gelu A2 vector {nd2nz.FIGURE_TEXT[fig]}", f"gelu_vector: {nd2nz.FIGURE_TEXT[fig]}, 48 AIV",
                         gelu.MEASURED[fig], "us", _fig("gelu_a2", fig), quick=False))
    # --- CATLASS Matmul tuning page (helper tcat2)
    for c in catlass_tuning.CASES:
        pts.append(Point(f"CATLASS tuning {c.key}", f"catlass_tuning: {c.text}, task time", c.measured_us, "us",
                         _fig(f"catlass_tuning {c.key}"), quick=c.k < 10000))
    # --- matmul_basic_api_high_performance (helper tbasicmm)
    for k in basic_mm.MEASURED:
        for fig, what in BASIC_MM_FIGURES.items():
            pts.append(Point(f"basic-API matmul {k} ({basic_mm.SCENARIO_TEXT[k]}) {what}",
                             f"matmul_basic_api_hp: 8192^3 half, 24 AIC, {what}{'' if fig == 'task' else ', mean'}",
                             basic_mm.MEASURED[k][fig], "us", _fig(f"basic_mm{k}", fig)))
    # --- Matmul best-practice sample, Cases 0-8 (helper tmhp)
    for n, measured in mmhp.MEASURED.items():
        for figure in mmhp.POINT_FIGURES:
            pts.append(Point(f"Matmul HP case {n} {figure}", f"matmul_high_performance: {mmhp.CASES[n].text}, "
                             f"{mmhp.FIGURE_TEXT[figure]}", measured[figure], "us", _fig(f"mmhp{n}", figure),
                             missing=mmhp.MISSING.get(n, "")))
    by_name = {p.name: p for p in pts}

    def pair(before: str, after: str):
        return by_name[before], by_name[after]

    steps: list[Step] = []
    for b, a, figure in tiling.STEPS:
        pb, pa = pair(f"{b} {figure}", f"{a} {figure}")
        steps.append(Step(f"{b} -> {a} ({figure})", (pb.measured, pa.measured), _point_fig(by_name, pb.name),
                          _point_fig(by_name, pa.name), quick=pb.quick and pa.quick, ends=(pb.name, pa.name)))
    # the DataCopy sample: rows of 512 B on 512 B windows (N 12288) against rows 2 B apart from them (N 12287)
    pb, pa = pair("DataCopy GM->L1 N=12287", "DataCopy GM->L1 N=12288")
    steps.append(Step("DataCopy GM->L1: rows on 512 B windows", (pb.measured, pa.measured), _point_fig(by_name, pb.name),
                      _point_fig(by_name, pa.name), quick=True, ends=(pb.name, pa.name)))
    # the DataCopy sample's optimisation point 4: every core in the same order against each core at its own block
    pb, pa = pair("DataCopy same-address before", "DataCopy same-address after")
    steps.append(Step("DataCopy same-address: cores in rotated order", (pb.measured, pa.measured),
                      _point_fig(by_name, pb.name), _point_fig(by_name, pa.name), quick=True, ends=(pb.name, pa.name)))
    # the DataCopy sample's other steps: tile sizes, rows on 512 B windows (GM -> UB), L2 reuse, rotated order (UB)
    for path, before, after, what in SAMPLE_STEPS:
        pb, pa = pair(sample_point(by_name, path, before), sample_point(by_name, path, after))
        steps.append(Step(f"DataCopy GM->{path} {before} -> {after}: {what}", (pb.measured, pa.measured),
                          _point_fig(by_name, pb.name), _point_fig(by_name, pa.name), quick=pb.quick and pa.quick,
                          ends=(pb.name, pa.name)))
    # the Add case study's later fixes, on the sample's own kernel: Case 3 -> 4 -> 5 -> 6
    for before, after, what in ((3, 4, "double buffer"), (4, 5, "x, y CACHE_MODE_DISABLE"),
                                (5, 6, "y, z 256 B further in UB")):
        pb, pa = (next(p for p in pts if p.name.startswith(f"Add sample case {k}:")) for k in (before, after))
        steps.append(Step(f"Add: {what} (guide Case {before} -> {after})", (pb.measured, pa.measured),
                          _point_fig(by_name, pb.name), _point_fig(by_name, pa.name), quick=True,
                          ends=(pb.name, pa.name)))
    for case in features.CASES:
        pb, pa = pair(f"{case.name} before", f"{case.name} after")
        steps.append(Step(f"{case.name}", case.measured, _point_fig(by_name, pb.name), _point_fig(by_name, pa.name),
                          quick=pb.quick, ends=(pb.name, pa.name)))
    # --- ND2NZ bank conflicts and the A2 vector Gelu (helper tbanknz)
    for fig in ("task", "vec"):
        pb, pa = (by_name[f"ND2NZ bank case {k} {nd2nz.FIGURE_TEXT[fig]}: {nd2nz.CASE_TEXT[k]}"] for k in (1, 2))
        steps.append(Step(f"ND2NZ bank: C0 stride 144 -> 145 ({nd2nz.FIGURE_TEXT[fig]})", (pb.measured, pa.measured),
                          _point_fig(by_name, pb.name), _point_fig(by_name, pa.name), quick=True,
                          ends=(pb.name, pa.name)))
    # --- CATLASS Matmul tuning page (helper tcat2)
    for before, after, what in catlass_tuning.STEPS:
        pb, pa = pair(f"CATLASS tuning {before}", f"CATLASS tuning {after}")
        steps.append(Step(f"CATLASS tuning: {what}", (pb.measured, pa.measured), _point_fig(by_name, pb.name),
                          _point_fig(by_name, pa.name), quick=pb.quick and pa.quick, ends=(pb.name, pa.name)))
    # --- matmul_basic_api_high_performance (helper tbasicmm)
    for what in BASIC_MM_FIGURES.values():
        pb, pa = pair(*(f"basic-API matmul {k} ({basic_mm.SCENARIO_TEXT[k]}) {what}" for k in (1, 2)))
        steps.append(Step(f"basic-API matmul: L2 split, scenario 1 -> 2 ({what})", (pb.measured, pa.measured),
                          _point_fig(by_name, pb.name), _point_fig(by_name, pa.name), ends=(pb.name, pa.name)))
    # --- Matmul best-practice sample, Cases 0-8 (helper tmhp)
    for b, a, figure in mmhp.STEPS:
        pb, pa = pair(f"Matmul HP case {b} {figure}", f"Matmul HP case {a} {figure}")
        steps.append(Step(f"Matmul HP case {b} -> {a} ({figure})", (pb.measured, pa.measured),
                          _point_fig(by_name, pb.name), _point_fig(by_name, pa.name), ends=(pb.name, pa.name)))
    return pts, steps


SCENARIO_TEXT = {"process": "tiles", "whole4": "whole matrix 4 times", "split4": "each N quarter 4 times",
                 "same": "same-address, same order", "rotated": "same-address, rotated order"}
#: (path, before, after, what): the README's comparisons (优化点1-4) not already a step above
SAMPLE_STEPS = (("UB", 1, 2, "tile [1,64] -> [64,64]"), ("UB", 2, 3, "tile [64,64] -> [64,1024]"),
                ("UB", 4, 3, "rows on 512 B windows"), ("UB", 5, 6, "L2 reuse: N split in 4"),
                ("UB", 7, 8, "cores in rotated order"), ("L1", 1, 2, "tile [64,64] -> [64,256]"),
                ("L1", 4, 5, "L2 reuse: N split in 4"))


def module_scenario(path: str, k: int):
    """The DataCopy sample's scenario ``k`` of ``path`` (UB or L1)."""
    return (data_copy_ub.UB if path == "UB" else data_copy.L1)[k]


def sample_point(by_name: dict, path: str, k: int) -> str:
    """The name of the point of the DataCopy sample's scenario ``k`` of ``path`` (the older GM -> L1 points too)."""
    if path == "L1" and k in (2, 3):
        return f"DataCopy GM->L1 N={data_copy.L1[k].n}"
    return next(n for n in by_name if n.startswith(f"DataCopy GM->{path} {k}: "))


# ----------------------------------------------------------------------------- evaluate and judge
def parse_injections(items: list[str]) -> dict[str, float]:
    """``NAME=PCT`` pairs: the points starting with NAME get simulated = measured x (1 + PCT / 100)."""
    out = {}
    for item in items:
        name, sep, pct = item.rpartition("=")
        if not sep or not name:
            raise SystemExit(f"--inject {item!r}: expected NAME=PCT, e.g. --inject 'bank 1=+16'")
        out[name] = float(pct)
    return out


def evaluate(points: list[Point], steps: list[Step], quick: bool, inject: dict[str, float],
             only: list[str] = ()) -> None:
    """Fill in the simulated figures (only the quick ones with ``quick``): an injected point takes measured x
    (1 + PCT / 100) without being simulated (the last injection that names it wins; ``*`` names every point)."""
    runs = Runs(_runs_table())
    for p in points:
        if p.missing or (quick and not p.quick) or (only and not any(o in p.name for o in only)):
            continue
        forced = [pct for name, pct in inject.items() if name == "*" or p.name.startswith(name)]
        p.simulated = p.measured * (1 + forced[-1] / 100) if forced else p.sim(runs)
    for s in steps:
        if (quick and not s.quick) or (only and not any(o in s.name for o in only)):
            continue
        s.simulated, s.run = (s.before(runs), s.after(runs)), True


def point_ok(p: Point) -> bool:
    return p.error is not None and abs(p.error) <= POINT_TOLERANCE + 1e-12


def step_ok(s: Step) -> bool:
    g = s.simulated_gain
    if g is None:
        return False
    same_way = (g > 0) == (s.measured_gain > 0) and g != 0
    return same_way and abs(g - s.measured_gain) <= STEP_TOLERANCE + 1e-9


def counted(s: Step) -> bool:
    """A step counts when both its ends were simulated."""
    return None not in s.simulated


def verdict(points: list[Point], steps: list[Step]) -> list[str]:
    """What fails: validation points off by more than 15 %, steps the wrong way or more than 10 points off
    (points and steps not simulated are not counted)."""
    bad = [p.name for p in points if p.role == "validation" and p.simulated is not None and not point_ok(p)]
    bad += [f"step {s.name}" for s in steps if counted(s) and s.role == "validation" and not step_ok(s)]
    return bad


def _num(v: float | None, unit: str = "") -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if unit == "cycles" else f"{v:,.2f}"


def print_tables(points: list[Point], steps: list[Step]) -> None:
    print("| point | source | measured | simulated | unit | error | role |")
    print("|---|---|---|---|---|---|---|")
    for p in points:
        if p.missing:
            err = "not modelled"
        elif p.simulated is None:
            err = "not run (--quick / --only)"
        else:
            err = f"{p.error:+.1%}" + ("" if point_ok(p) or p.role == "calibration" else " **")
        print(f"| {p.name} | {p.source} | {_num(p.measured, p.unit)} | {_num(p.simulated, p.unit)} | {p.unit} | "
              f"{err} | {p.role} |")
    print("\n| step | measured gain | simulated gain | difference (points) | verdict | role |")
    print("|---|---|---|---|---|---|")
    for s in steps:
        g = s.simulated_gain
        if not s.run:
            cells, mark = "-", "not run (--quick / --only)"
        elif g is None:
            cells, mark = "-", "not modelled"
        else:
            cells, mark = f"{g:+.1f} %", "ok" if step_ok(s) else ("**" if s.role == "validation" else "off")
        diff = f"{g - s.measured_gain:+.1f}" if g is not None else "-"
        print(f"| {s.name} | {s.measured_gain:+.1f} % | {cells} | {diff} | {mark} | {s.role} |")
    print("\nNot modelled (not counted):")
    for p in points:
        if p.missing:
            print(f"- {p.name}: {p.missing}")
    print("Calibration points (not counted): " + "; ".join(f"{k} ({v})" for k, v in CALIBRATION.items()))


def parse_field(text: str) -> tuple[str, object]:
    """``FIELD=VALUE`` of --what-if: VALUE as a Python literal (``110.0``, ``True``)."""
    name, _, value = text.partition("=")
    if name not in {f.name for f in dataclasses.fields(chips.ChipProfile)}:
        raise SystemExit(f"--what-if {text}: {name!r} is not a ChipProfile field (ascend_sim/hw/chips.py)")
    return name, ast.literal_eval(value)


def use_chip_fields(fields: dict) -> None:
    """Make every benchmark's chip (the default 910B and the profiles derived from it) carry ``fields``."""
    default = chips.Ascend910B

    def changed():
        return dataclasses.replace(default(), **fields)

    for module in (chips, ascend_sim, add, add_hp, bank, catlass, data_copy, same_addr, data_copy_ub, features, tiling):
        if hasattr(module, "Ascend910B"):
            module.Ascend910B = changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the cheap points and the steps between them")
    ap.add_argument("--inject", action="append", default=[], metavar="NAME=PCT",
                    help="set the simulated figure of the points named NAME... to measured x (1 + PCT/100)")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="only the points and steps whose name contains TEXT (repeatable)")
    ap.add_argument("--what-if", action="append", default=[], metavar="FIELD=VALUE",
                    help="run every point on the default chips with a ChipProfile field changed (repeatable), e.g. "
                         "--what-if aic_gm_l2_hit_bytes_per_cycle=110.0")
    args = ap.parse_args(argv)
    if args.what_if:
        use_chip_fields(dict(parse_field(f) for f in args.what_if))
    points, steps = build()
    evaluate(points, steps, args.quick, parse_injections(args.inject), args.only)
    print_tables(points, steps)
    bad = verdict(points, steps)
    n_points = sum(1 for p in points if p.role == "validation" and p.simulated is not None)
    within = n_points - sum(1 for b in bad if not b.startswith("step "))
    print(f"\n{within} of {n_points} validation points within 15 %; "
          f"{sum(1 for s in steps if counted(s) and s.role == 'validation' and step_ok(s))} of "
          f"{sum(1 for s in steps if counted(s) and s.role == 'validation')} validation steps the measured way within 10 points")
    if bad:
        print("FAIL: " + "; ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
