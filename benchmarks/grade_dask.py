"""Grading on Dask: a class on a LocalCluster of 2 workers against ``--jobs 2``, and a model for a large class.

    python benchmarks/grade_dask.py                     # both parts (the class of 40, then the model)
    python benchmarks/grade_dask.py --part class --n 40 # 40 lab00 submissions: --jobs 2, then --dask local:2
    python benchmarks/grade_dask.py --part model        # each lab's per-submission cost, then the model's table
    python benchmarks/grade_dask.py --part model --learners 1000 --workers 1 8 32 128

Part *class*: the submissions of ``grade_jobs.make_class`` (solved, blank and wrong answers, repeated to N), graded
into fresh folders with ``--jobs 2`` and with ``--dask local:2``; prints both wall times (the Dask one includes
starting the LocalCluster, also timed alone) and whether the two gradebooks are byte for byte the same.

Part *model*: each lab's solved notebook graded once, alone: the CPU seconds of the grader's thread and of its
confined re-run (sampled with psutil every 0.05 s: what one worker's core spends on one submission, whatever the
machine's load), the wall time (``report.seconds``) and the peak memory; then the wall time of grading
``--learners`` submissions of every lab on N worker processes:

    T(N) = sum over labs l of ( s + ceil(L / N) * c_l )

with ``c_l`` the measured CPU seconds per submission of lab l, ``L`` learners and ``s`` the start of a LocalCluster
of 2 workers measured here (the fixed cost of one ``ascend-sim grade --dask`` command). Assumptions
(docs/grading.md, "Measured, and a model for a large class"): one worker process per free core, each submission on
one core (the re-run is one single-threaded process; ``threads_per_worker=1``), every submission of a lab costs what
its solved notebook costs (blank and wrong answers cost less: an upper bound), labs graded one after another, the
grader's own work per submission (read the bytes, write three files) and the network (under 100 KB each way: a
lab template and a notebook) negligible against seconds of grading, and a core as fast as the one measured here.
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_learner import TreeSampler  # noqa: E402
from grade_jobs import make_class  # noqa: E402

from ascend_sim.course.grading.execute import Limits  # noqa: E402
from ascend_sim.course.grading.grade import grade_many  # noqa: E402
from ascend_sim.course.grading.labfiles import find_lab  # noqa: E402
from ascend_sim.course.grading.notebook import load_template  # noqa: E402
from ascend_sim.course.grading.solutions import parse_solutions, solved_notebook  # noqa: E402
from ascend_sim.tools import cli  # noqa: E402

LABS = ("lab00", "lab01", "lab02", "lab03", "lab03b", "lab04", "lab05")
QUIET = ["--cell-timeout", "300", "--time-limit", "1800"]


def cluster_start_seconds(workers: int = 2) -> float:
    """Start a LocalCluster of ``workers`` processes, connect, run one trivial task on each, close it."""
    from distributed import Client, LocalCluster
    import logging
    t = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        client.run(lambda: None)
    return time.perf_counter() - t


def run_class(n: int, work: Path) -> dict[str, float]:
    subs = work / "subs"
    subs.mkdir()
    make_class(subs, n)
    walls = {}
    for name, how in (("jobs2", ["--jobs", "2"]), ("dask", ["--dask", "local:2"])):
        t = time.perf_counter()
        cli.main(["grade", "lab00", str(subs), "--root", str(ROOT), "--out", str(work / name), *QUIET, *how])
        walls[name] = time.perf_counter() - t
    same = (work / "jobs2" / "gradebook.csv").read_bytes() == (work / "dask" / "gradebook.csv").read_bytes()
    start = cluster_start_seconds(2)
    print(f"RESULT n={n} --jobs 2: {walls['jobs2']:.1f} s", flush=True)
    print(f"RESULT n={n} --dask local:2: {walls['dask']:.1f} s (of which starting the LocalCluster alone: "
          f"{start:.1f} s)", flush=True)
    print(f"RESULT gradebooks byte for byte identical: {'yes' if same else 'NO'}", flush=True)
    return walls


class ReRunSampler(TreeSampler):
    """Every 0.05 s: the CPU seconds of each process below this one (the confined re-run, which the grader ends
    with SIGKILL, so ``getrusage`` never sees it) and the peak resident memory of the whole tree."""

    def __init__(self) -> None:
        super().__init__(os.getpid(), every=0.05)
        self.cpu: dict[int, float] = {}

    def run(self) -> None:
        while not self._halt.is_set():
            for p in self.tree()[1:]:
                try:
                    t = p.cpu_times()
                    self.cpu[p.pid] = max(self.cpu.get(p.pid, 0.0), t.user + t.system)
                except psutil.Error:
                    pass
            self.peak = max(self.peak, self.rss())
            time.sleep(self.every)


def lab_costs(work: Path, labs: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """(CPU seconds, wall seconds) one worker spends grading each lab's solved notebook, one submission alone.

    CPU: this thread's (rebuild, allowlist, judge, report) plus every process of the re-run, sampled (up to its
    last 0.05 s): what a worker's core spends, whatever the machine's load; wall: ``report.seconds``."""
    costs = {}
    for name in labs:
        lab = find_lab(name, ROOT)
        template = load_template(lab.template)
        path = work / f"{template.name}.ipynb"
        nbformat.write(solved_notebook(template, parse_solutions(lab.solutions)), path)
        limits = Limits(cell_timeout=300, time_limit=1800)
        sampler = ReRunSampler()
        sampler.start()
        started = time.thread_time()
        (report,), _ = grade_many(template, [path], work / f"cost-{name}", limits=limits)
        grader = time.thread_time() - started
        sampler.stop()
        cpu = grader + sum(sampler.cpu.values())
        costs[name] = (cpu, report.seconds)
        status = "full marks" if report.score == report.max_score else f"{report.score}/{report.max_score} (!)"
        print(f"COST {name}: {cpu:.1f} CPU s (grader {grader:.1f}), {report.seconds:.1f} s wall, peak RSS "
              f"{sampler.peak / 2**20:.0f} MiB (grader + re-run) per submission ({status})", flush=True)
    return costs


def model_table(costs: dict[str, tuple[float, float]], learners: int, workers: list[int], start: float) -> str:
    """The model's wall time, per lab and in total, for ``learners`` submissions of each lab on N workers (each
    submission costing its lab's CPU seconds: a worker on a core of its own)."""
    def shown(seconds: float) -> str:
        return f"{seconds / 3600:.2f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"

    def wall(c: float, n: int) -> float:
        return start + math.ceil(learners / n) * c
    head = "| lab | CPU s (wall s) per submission | " + " | ".join(f"N = {n}" for n in workers) + " |"
    rows = [head, "|" + "---|" * (len(workers) + 2)]
    for lab, (c, w) in costs.items():
        rows.append(f"| {lab} | {c:.1f} ({w:.1f}) | " + " | ".join(shown(wall(c, n)) for n in workers) + " |")
    graded = {lab: cw for lab, cw in costs.items() if lab != "lab00"}
    totals = ((f"all {len(costs)} labs", costs), (f"{len(graded)} labs (without the warm-up lab00)", graded))
    for label, group in totals:
        if group:
            rows.append(f"| **{label}** | {sum(c for c, _ in group.values()):.1f} | " + " | ".join(
                f"**{shown(sum(wall(c, n) for c, _ in group.values()))}**" for n in workers) + " |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=["class", "model", "both"], default="both")
    ap.add_argument("--n", type=int, default=40, help="submissions in the class part (default 40)")
    ap.add_argument("--labs", nargs="+", default=list(LABS))
    ap.add_argument("--learners", type=int, default=1000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 8, 32, 128])
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="grade-dask-bench-"))
    try:
        walls = run_class(args.n, work) if args.part in ("class", "both") else {}
        if args.part in ("model", "both"):
            costs = lab_costs(work, tuple(args.labs))
            start = cluster_start_seconds(2)
            print(f"MODEL s = {start:.1f} s (a LocalCluster of 2 started, used once and closed: the fixed cost of "
                  f"one `ascend-sim grade --dask` command); {args.learners} learners per lab", flush=True)
            print(model_table(costs, args.learners, args.workers, start), flush=True)
            if walls and "lab00" in costs:
                cpu, wall = costs["lab00"]
                waves = math.ceil(args.n / 2)
                print(f"MODEL CHECK {args.n} lab00 submissions on 2 workers: the model says "
                      f"{start + waves * cpu:.0f} s with idle cores (CPU cost), {start + waves * wall:.0f} s at this "
                      f"machine's load (wall cost of a solved notebook; blank ones cost less); measured "
                      f"{walls['dask']:.0f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
