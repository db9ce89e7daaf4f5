"""Grading throughput: N lab00 submissions graded sequentially and with --jobs 2.

    python benchmarks/grade_jobs.py --n 20 --jobs 1 2        # prints one line per run
    python benchmarks/grade_jobs.py --n 20 --jobs 1 --baseline ../main-checkout   # the same class graded by another
                                                                              # checkout's `ascend-sim grade`

The submissions are the solved lab, the blank lab and the two wrong-answer rounds, repeated to N
(what a class looks like: mostly attempts, some blank). Each run grades the same files into a fresh folder.
"""
from __future__ import annotations

import argparse
import copy
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_sim.course.grading.notebook import load_template  # noqa: E402
from ascend_sim.course.grading.solutions import parse_solutions, solved_notebook  # noqa: E402
from ascend_sim.tools import cli  # noqa: E402


def make_class(folder: Path, n: int) -> None:
    template = load_template(ROOT / "labs" / "lab00_warmup.ipynb")
    sols = parse_solutions(ROOT / "solutions" / "lab00_warmup.py")
    solved = solved_notebook(template, sols)
    kinds = [solved, copy.deepcopy(template.nb)]
    for k in range(2):
        nb = copy.deepcopy(solved)
        for c in nb.cells:
            ex = c.get("metadata", {}).get("course", {}).get("ex")
            if c.get("id") == f"{ex}-answer" and len(sols[ex].wrong) > k:
                c.source = sols[ex].wrong[k][1]
        kinds.append(nb)
    for i in range(n):
        nbformat.write(kinds[i % len(kinds)], folder / f"learner{i:02d}.ipynb")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--baseline", default="", help="a checkout whose sequential `ascend-sim grade` is timed too")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="grade-bench-"))
    subs = work / "subs"
    subs.mkdir()
    make_class(subs, args.n)
    if args.baseline:
        import os
        import subprocess
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ascend_sim", "grade", "lab00", str(subs), "--out", str(work / "base")],
                       cwd=args.baseline, env={**os.environ, "PYTHONPATH": args.baseline}, stdout=subprocess.DEVNULL)
        print(f"RESULT n={args.n} baseline {args.baseline} sequential: {time.perf_counter() - t:.1f} s", flush=True)
    for jobs in args.jobs:
        out = work / f"out{jobs}"
        t = time.perf_counter()
        cli.main(["grade", "lab00", str(subs), "--root", str(ROOT), "--out", str(out), "--jobs", str(jobs)])
        print(f"RESULT n={args.n} jobs={jobs}: {time.perf_counter() - t:.1f} s", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
