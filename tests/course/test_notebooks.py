"""Committed notebooks: stripped of outputs, labs valid, and nbval over the lessons and solved labs.

nbval runs in a subprocess (it is a pytest plugin that collects .ipynb files) so that `python -m pytest`
covers it: `--nbval-lax` over course/*.ipynb in place and over solution-filled copies of labs/*.ipynb made
in a temporary folder. The kernels get ASCEND_SIM_CHECK_STRICT=1, so a check that does not pass raises and
nbval fails; PYTHONHASHSEED=0 and the notebooks' own seeded RNGs make the runs repeatable.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ascend_sim.course.grading.check import STRICT_ENV
from ascend_sim.course.grading.clean import strip_problems
from ascend_sim.course.grading.labfiles import find_lab, list_labs
from ascend_sim.course.grading.notebook import load_template
from ascend_sim.course.grading.solutions import lint_lab, load_solutions, solved_notebook
from ascend_sim.tools import cli

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(p for d in ("course", "labs", "tests/course/fixtures") for p in (ROOT / d).rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)
LESSONS = sorted((ROOT / "course").glob("*.ipynb"))
LABS = list_labs(ROOT)
FIXTURE_LAB = ROOT / "tests" / "course" / "fixtures" / "fixture_lab.ipynb"
NBVAL_TIMEOUT = 600       # seconds for the whole nbval subprocess


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_notebooks_are_stripped(path):
    problems = strip_problems(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}: run `ascend-sim clean {path.relative_to(ROOT)}`:\n" + "\n".join(problems)


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.name)
def test_labs_follow_the_conventions(lab):
    assert lint_lab(lab) == []


def test_lint_reports_a_checks_module_not_named_by_the_stem(tmp_path):
    lab = next(lab for lab in LABS if lab.name == "lab00_warmup")
    (tmp_path / "labs").mkdir()
    nb = nbformat.read(lab.template, as_version=4)
    nb.metadata["course"]["checks"] = "ascend_sim.course.labs.lab01_lenet_ops"
    nbformat.write(nb, tmp_path / "labs" / lab.template.name)
    (tmp_path / "solutions").mkdir()
    shutil.copy(lab.solutions, tmp_path / "solutions")
    problems = lint_lab(find_lab("lab00", tmp_path))
    assert ("notebook metadata course.checks is 'ascend_sim.course.labs.lab01_lenet_ops'; lab00_warmup.ipynb must "
            "name its checks module 'ascend_sim.course.labs.lab00_warmup' (one stem per lab)") in problems


@pytest.mark.parametrize("template", [lab.template for lab in LABS] + [FIXTURE_LAB], ids=lambda p: p.stem)
def test_committed_stubs_are_generated_from_the_solutions(template, capsys):
    status = cli.main(["clean", "--check", str(template)])
    assert status == 0, capsys.readouterr().out


def test_clean_check_fails_on_a_drifted_stub_and_clean_regenerates_it(tmp_path, capsys):
    lab = next(lab for lab in LABS if lab.name == "lab01_lenet_ops")
    (tmp_path / "labs").mkdir()
    (tmp_path / "solutions").mkdir()
    path = tmp_path / "labs" / lab.template.name
    shutil.copy(lab.solutions, tmp_path / "solutions")
    nb = nbformat.read(lab.template, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == "ex3-answer")
    generated = cell.source
    cell.source = generated.replace("        DataCopy(bLocal, self.bGm, t.bLength)\n", "")     # an author's edit
    assert cell.source != generated
    nbformat.write(nb, path)
    drifted = path.read_bytes()
    assert cli.main(["clean", "--check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "cell ex3-answer: the stub differs from the one generated from" in out
    assert "+        DataCopy(bLocal, self.bGm, t.bLength)" in out
    assert path.read_bytes() == drifted
    assert cli.main(["clean", str(path)]) == 0
    assert "cell ex3-answer: stub regenerated" in capsys.readouterr().out
    cell = next(c for c in nbformat.read(path, as_version=4).cells if c.get("id") == "ex3-answer")
    assert cell.source == generated
    assert cli.main(["clean", "--check", str(path)]) == 0


def _nbval(targets: list[Path], workdir: Path, extra_path: list[Path]) -> subprocess.CompletedProcess:
    ini = workdir / "pytest.ini"
    ini.write_text("[pytest]\naddopts =\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in [ROOT, *extra_path]),
               MPLBACKEND="Agg", PYTHONHASHSEED="0", **{STRICT_ENV: "1"})
    cmd = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(workdir), "-p", "no:cacheprovider",
           "-q", "--nbval-lax", "--nbval-kernel-name", "python3", "--nbval-cell-timeout", "300",
           "--nbval-sanitize-with", str(ROOT / "tests" / "course" / "nbval_sanitize.cfg"), *map(str, targets)]
    return subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=NBVAL_TIMEOUT)


@pytest.mark.skipif(not LESSONS and not LABS, reason="no lesson or lab notebooks yet")
def test_nbval_over_lessons_and_solved_labs(tmp_path):
    solved_dir = tmp_path / "solved_labs"
    solved_dir.mkdir()
    targets = list(LESSONS)
    for lab in LABS:
        template = load_template(lab.template)
        target = solved_dir / lab.template.name
        sols = load_solutions(lab)
        nbformat.write(solved_notebook(template, sols["python"]), target)
        targets.append(target)
        if "cpp" in sols:          # the C++ answers, through the %%ascendc magic of a real kernel
            target = solved_dir / f"{lab.template.stem}_cpp.ipynb"
            nbformat.write(solved_notebook(template, {**sols["python"], **sols["cpp"]}), target)
            targets.append(target)
    result = _nbval(targets, tmp_path, [lab.template.parent for lab in LABS])
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
