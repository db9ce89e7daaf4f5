"""CONTRIBUTING.md's "Adding an exercise", followed on a fresh exercise in a temporary copy of lab00.

The author writes two files — the check in the checks module, the answer and a wrong answer in the solutions
file — and runs ``ascend-sim clean``, which writes the notebook's part (heading, answer cell with the generated
stub, locked check cell, points). Then ``ascend-sim solve`` gives full marks (the old total plus the new points),
the new exercise's wrong answer fails with the hint its label names, and the blank lab is not attempted.
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks, key_levels
from ascend_sim.course.grading.judge import load_lab
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.notebook import load_template
from ascend_sim.course.grading.solution_file import parse_solutions
from ascend_sim.course.grading.solutions import solve_lab
from ascend_sim.course.labs import lab00_warmup as lab00

ROOT = Path(__file__).resolve().parents[2]
NAME, CHECKS = "walk_lab", "walk_lab_checks"      # the copy's lab name and its checks module, next to it

# Step 1 of the walkthrough: the check, appended to the checks module.
ABS_CHECK = '''

@LAB.exercise("ex4", points=2, title="vector Abs", hints={
    "values": ("Negative inputs came out wrong: which instruction gives |x|?",
               "Abs(dst, src, count) writes |src| per element; Relu keeps the positive half only."),
    "*": ("Start from your ex1 kernel with one input: CopyIn x, Abs, CopyOut y.",),
})
def _ex4(ctx: Context) -> None:
    """Write `abs_custom(x, y, tiling)` computing `y = |x|` on `half` data, with exercise 1's `AddTiling`."""
    from ascend_sim import launch
    kern = ctx.answer("abs_custom")
    for blocks, n, tile in [(1, 2048, 256), (4, 4 * 2048, 256)]:
        x = _halves(ctx, n)
        y = np.full(n, np.nan, np.float16)
        with ctx.case(_case(n, blocks, tile)):
            ctx.call(launch, kern, blocks, x, y, AddTiling(n, tile), gm_names=["x", "y"])
            ctx.expect_close(y, np.abs(x), sentinel=np.nan, segment=n // blocks, tile=tile)
'''

# Step 2: the answer (its sentinels give the stub) and one wrong answer with its diagnosis key, in the solutions file.
ABS_SOLUTION = '''
# %% ex4
from ascend_sim import Abs


@kernel
def abs_custom(x, y, tiling):
    """y = |x|, tiling.totalLength halves over GetBlockNum() blocks, tiling.tileLength per tile."""
    # --- BEGIN SOLUTION hint="write the Abs kernel"
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    offset = blockLength * GetBlockIdx()
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, blockLength)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    pipe = TPipe()
    inQueueX, outQueueY = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(inQueueX, 1, tileLength * 2)
    pipe.InitBuffer(outQueueY, 1, tileLength * 2)
    for i in range(blockLength // tileLength):
        xLocal = inQueueX.AllocTensor(half)
        DataCopy(xLocal, xGm[i * tileLength], tileLength)
        inQueueX.EnQue(xLocal)
        xLocal = inQueueX.DeQue(half)
        yLocal = outQueueY.AllocTensor(half)
        Abs(yLocal, xLocal, tileLength)
        outQueueY.EnQue(yLocal)
        inQueueX.FreeTensor(xLocal)
        yLocal = outQueueY.DeQue(half)
        DataCopy(yGm[i * tileLength], yLocal, tileLength)
        outQueueY.FreeTensor(yLocal)
    # --- END SOLUTION

# %% ex4 wrong: Relu instead of Abs (negative inputs become 0) [key: values]
# replace: Abs(yLocal, xLocal, tileLength) -> Relu(yLocal, xLocal, tileLength)
'''


def _copy_of_lab00(folder: Path) -> tuple[Path, Path, Path]:
    """lab00 as a lab of its own in ``folder``: notebook, checks module beside it, solutions/ (paths returned)."""
    (folder / "solutions").mkdir(parents=True)
    checks = folder / f"{CHECKS}.py"
    text = Path(lab00.__file__).read_text()
    assert 'LAB = Lab("lab00_warmup")' in text
    checks.write_text(text.replace('LAB = Lab("lab00_warmup")', f'LAB = Lab("{NAME}")'))
    solutions = folder / "solutions" / f"{NAME}.py"
    shutil.copy(ROOT / "solutions" / "lab00_warmup.py", solutions)
    if (ROOT / "solutions" / "lab00_warmup.cpp").is_file():             # its C++ answers, for %%ascendc cells
        shutil.copy(ROOT / "solutions" / "lab00_warmup.cpp", solutions.with_suffix(".cpp"))
    nb = nbformat.read(ROOT / "labs" / "lab00_warmup.ipynb", as_version=4)
    nb.metadata.course.update(lab=NAME, checks=CHECKS)
    for cell in nb.cells:
        if "lab" in cell.metadata.get("course", {}):
            cell.metadata.course.lab = NAME
        cell.source = cell.source.replace(lab00.__name__, CHECKS)        # the setup cell imports the copy's check
    notebook = folder / f"{NAME}.ipynb"
    nbformat.write(nb, notebook)
    return notebook, checks, solutions


def _clean(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_sim", "clean", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_a_fresh_exercise_needs_two_files_and_clean(tmp_path):
    notebook, checks, solutions = _copy_of_lab00(tmp_path / "lab")
    assert _clean("--check", notebook).returncode == 0, "the copy of lab00 starts clean"
    old_total = load_template(notebook).max_score

    checks.write_text(checks.read_text() + ABS_CHECK)                      # file 1
    solutions.write_text(solutions.read_text() + ABS_SOLUTION)             # file 2
    authored = _digests(tmp_path)

    check = _clean("--check", notebook)
    assert check.returncode == 1 and "ex4 is declared in the checks module but the notebook has no cells" \
        in check.stdout, check.stdout + check.stderr
    assert _digests(tmp_path) == authored, "--check changes nothing"
    run = _clean(notebook)
    assert run.returncode == 0, run.stdout + run.stderr
    changed = {f for f, h in _digests(tmp_path).items() if authored.get(f) != h}
    assert changed == {f"lab/{notebook.name}"}, "clean writes the notebook only"
    assert _clean("--check", notebook).returncode == 0

    nb = nbformat.read(notebook, as_version=4)
    ids = [c.get("id") for c in nb.cells]
    at = ids.index("ex3-check") + 1
    assert ids[at:at + 3] == ["ex4-text", "ex4-answer", "ex4-check"], ids
    text, answer, check_cell = nb.cells[at:at + 3]
    assert text.source.startswith("## Exercise 4 — vector Abs (2 points)\n\nWrite `abs_custom(x, y, tiling)`")
    assert answer.source == parse_solutions(solutions)["ex4"].stub.rstrip("\n")
    assert 'raise NotImplementedError("ex4: write the Abs kernel")' in answer.source
    assert (answer.metadata.course.role, answer.metadata.course.points, answer.metadata.tags) == ("answer", 2,
                                                                                                 ["exercise"])
    assert check_cell.source == 'check("ex4")' and check_cell.metadata.course.points == 2
    assert check_cell.metadata.editable is False and check_cell.metadata.deletable is False

    declared = load_lab(CHECKS, notebook.parent)
    assert full_marks(declared) == old_total + 2
    outcome = solve_lab(find_lab(notebook), limits=Limits(cell_timeout=60), out_dir=tmp_path / "solve")
    assert outcome.ok, outcome.all_problems()
    runs = {r.name: {e.exercise: e for e in r.report.exercises} for r in outcome.runs}
    solved = next(r.report for r in outcome.runs if r.name == "solved")
    assert solved.score == solved.max_score == full_marks(declared)
    assert runs["solved"]["ex4"].status == "pass"
    assert runs["blank"]["ex4"].status == "not_attempted"
    wrong = runs["ex4-wrong-1"]["ex4"]
    assert wrong.status == "fail" and wrong.hints == [key_levels(declared, "ex4", "values")[0]]
