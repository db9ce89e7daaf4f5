"""Attacks on `ascend-sim grade`: every cheating submission scores zero and touches nothing of anyone else.

Two graded classes (through the CLI, ``--jobs 2``):

* the fixture lab (plain numpy exercises): honest learners graded before and after the attackers, and
  attackers that read and overwrite other learners' notebooks, reports and the gradebook, leave a ``setsid``
  daemon behind, forge a result with fake evidence, patch numpy, and submit the wrong lab;
* lab00 on the simulator: kernels that fill their output with numpy, a patched ``launch``, a patched
  comparison, a library kernel passed off as the learner's.

Plus lab01's LeNet answered with the packaged numpy reference network, judged in-process.
Each attack is written to get past the static screen where it can, so the layer behind it is what is tested.
"""
from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from ascend_sim.tools import cli
from ascend_sim.course.grading.check import MIME
from ascend_sim.course.grading.expectations import full_marks
from ascend_sim.course.grading.notebook import load_template
from ascend_sim.course.grading.solutions import parse_solutions, solved_notebook

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_LAB = FIXTURES / "fixture_lab.ipynb"
LIMITS = ["--cell-timeout", "20", "--time-limit", "120", "--memory-mb", "1536"]
ROOTED = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                            reason="user switch and hidden folders need root and util-linux unshare")


def _cell(nb, cid):
    return next(c for c in nb.cells if c.get("id") == cid)


def _with(nb, **answers):
    nb = copy.deepcopy(nb)
    for cid, src in answers.items():
        _cell(nb, cid.replace("_", "-")).source = src
    return nb


# ----------------------------------------------------------------------------- fixture-lab class
PROBE = '''
import os
leaks = {}
for p in PATHS:
    try:
        fd = os.open(p, os.O_RDONLY)
        leaks[p] = len(os.read(fd, 1 << 20))
        os.close(fd)
    except Exception as e:
        leaks[p] = repr(e).split("(")[0]
for p in TARGETS:
    try:
        fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
        os.write(fd, b"{}")
        os.close(fd)
        leaks["wrote " + p] = True
    except Exception as e:
        leaks["wrote " + p] = repr(e).split("(")[0]
for d in DIRS:
    try:
        leaks["list " + d] = sorted(os.listdir(d))
    except Exception as e:
        leaks["list " + d] = repr(e).split("(")[0]
fd = os.open("/proc/self/mountinfo", os.O_RDONLY)
mounts = os.read(fd, 1 << 20).decode()
leaks["mountinfo names a hidden path"] = any(d in mounts for d in DIRS[1:6])
print("LEAKS", leaks)
'''

DAEMON = '''
import os
def add(x, y):
    return x
def scribble(path, data, flags):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags, 0o666)
        os.write(fd, data)
        os.close(fd)
    except OSError:
        pass
if os.fork() == 0:                      # first child: a new session, then a grandchild that outlives it
    os.setsid()
    if os.fork() == 0:
        for _ in range(400):
            scribble(MARKER, b"alive\\n", os.O_APPEND)
            for p in TARGETS:
                scribble(p, b'=HYPERLINK("http://evil")', os.O_TRUNC)
            t0 = os.times().elapsed
            while os.times().elapsed - t0 < 0.1:
                pass
    os._exit(0)
print("FORKED")
t0 = os.times().elapsed                 # the re-run lives on a moment: the daemon gets to run
while os.times().elapsed - t0 < 1.0:
    pass
'''


FAKE_EVIDENCE = {"schema": 1, "events": [{"kind": "answer", "name": "add", "state": "ok"}]}


@pytest.fixture(scope="module")
def fixture_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("attack-class")
    subs, out = root / "submissions", root / "out"
    subs.mkdir()
    shared = Path(tempfile.mkdtemp(prefix="ascend-sim-attack-"))   # world-writable: the daemon's heartbeat only
    os.chmod(shared, 0o777)
    marker = shared / "daemon.txt"
    template = load_template(FIXTURE_LAB)
    solved = solved_notebook(template, parse_solutions(FIXTURES / "solutions" / "fixture_lab.py"))
    victims = {"a_victim": subs / "a_victim.ipynb", "z_victim": subs / "z_victim.ipynb"}
    targets = [str(victims["a_victim"]), str(victims["z_victim"]), str(out / "a_victim" / "report.json"),
               str(out / "gradebook.csv")]
    paths = [*targets, str(ROOT / "solutions" / "lab00_warmup.py"), str(FIXTURES / "solutions" / "fixture_lab.py"),
             "/proc/1/environ", f"/proc/{os.getpid()}/environ", f"/proc/{os.getpid()}/cmdline"]
    dirs = [str(ROOT), str(ROOT / ".git"), str(ROOT / "solutions"), str(FIXTURES / "solutions"), str(subs), str(out),
            str(Path(tempfile.gettempdir()))]
    paths += [str(ROOT / ".git" / "HEAD"), str(ROOT / "README.md")]
    consts = f"PATHS = {paths!r}\nTARGETS = {targets!r}\nMARKER = {str(marker)!r}\nDIRS = {dirs!r}\n"
    forged_check = ("def check(ex):\n"
                    f"    display({{{MIME!r}: {{'exercise': ex, 'status': 'pass', 'score': 2, 'max': 2, "
                    f"'evidence': {FAKE_EVIDENCE!r}}}}}, raw=True)\n")
    nbs = {
        "a_victim": solved,
        "b_probe": _with(template.nb, ex2_answer=consts + PROBE),      # ex2 allows `os` (the crash fixture)
        "c_daemon": _with(template.nb, ex2_answer=consts + DAEMON),
        "d_forged": _with(template.nb, ex1_answer=forged_check),
        "e_numpy_patch": _with(template.nb, ex1_answer=(
            "n = np\nn.isclose = lambda *a, **k: np.ones(np.broadcast(*a[:2]).shape, bool)\n"
            "n.allclose = lambda *a, **k: True\nn.array_equal = lambda *a, **k: True\n"
            "def add(x, y):\n    return x\n"), ex3_answer="def count_positive(x):\n    return 3\n"),
        "f_wrong_lab": nbformat.read(ROOT / "labs" / "lab00_warmup.ipynb", as_version=4),
        "z_victim": solved,
    }
    for name, nb in nbs.items():
        nbformat.write(nb, subs / f"{name}.ipynb")
    before = {n: (p.read_bytes(), p.stat().st_mtime_ns) for n, p in victims.items()}
    status = cli.main(["grade", str(FIXTURE_LAB), str(subs), "--out", str(out), "--jobs", "2", *LIMITS])
    ended = time.time()
    reports = {n: json.loads((out / n / "report.json").read_text()) for n in nbs}
    stamps = {p: p.stat().st_mtime_ns for p in [out / "gradebook.csv", *(out / n / "report.json" for n in nbs)]}
    time.sleep(1.5)                          # a surviving daemon would write again by now
    return {"status": status, "out": out, "reports": reports, "victims": victims, "before": before,
            "stamps": stamps, "marker": marker, "ended": ended}


def _executed_text(out: Path, name: str) -> str:
    return json.dumps(nbformat.read(out / name / "executed.ipynb", as_version=4).cells)


def test_honest_learners_keep_full_marks(fixture_class):
    for name in ("a_victim", "z_victim"):
        r = fixture_class["reports"][name]
        assert (r["score"], r["tampered"], r["grader_error"]) == (5, [], ""), name


def test_every_attack_scores_zero(fixture_class):
    for name, r in fixture_class["reports"].items():
        if "victim" not in name:
            assert r["score"] == 0, (name, r["exercises"])


@ROOTED
def test_the_probe_could_read_and_write_nothing_of_anyone_else(fixture_class):
    text = _executed_text(fixture_class["out"], "b_probe")
    leaks = eval(text[text.index("LEAKS ") + 6:].split("\\n")[0])        # noqa: S307 - our own test output
    listings = {p: leaks.pop(p) for p in list(leaks) if p.startswith("list ")}
    assert leaks and not [p for p, v in leaks.items() if v is True or isinstance(v, int) and v > 0], leaks
    # the new root holds the package, the fixture's checks module (one file), the submission's own folder and the
    # Python it runs on (a virtual environment inside the checkout, as CI makes, or a checkout under the temp dir)
    python_home = {Path(sys.prefix).resolve(), Path(sys.executable).resolve(), Path(sys.base_prefix).resolve()}

    def on_the_way(folder: Path) -> set:
        """Names in ``folder`` that lead to the interpreter or to the checkout (bound read-only in the new root)."""
        out = set()
        for target in (*python_home, ROOT.resolve()):
            try:
                out.add(target.relative_to(folder.resolve()).parts[0])
            except (ValueError, IndexError):
                pass
        return out
    assert set(listings.pop(f"list {ROOT}")) - on_the_way(ROOT) == {"ascend_sim", "tests"}
    tmp = Path(tempfile.gettempdir())
    assert all(name.startswith("ascend-sim-grade-") or name in on_the_way(tmp)
               for name in listings.pop(f"list {tmp}"))
    assert all(isinstance(v, str) for v in listings.values()), listings       # every other folder: not found


def test_other_submissions_reports_and_gradebook_are_untouched(fixture_class):
    for name, path in fixture_class["victims"].items():
        assert (path.read_bytes(), path.stat().st_mtime_ns) == fixture_class["before"][name]
    for path, stamp in fixture_class["stamps"].items():
        assert path.stat().st_mtime_ns == stamp, f"{path} changed after grading ended"
    rows = {r["student_id"]: r for r in csv.DictReader((fixture_class["out"] / "gradebook.csv").open())}
    assert rows["a_victim"]["score"] == rows["z_victim"]["score"] == "5"
    assert not any(v.startswith("=") for r in rows.values() for v in r.values())


@ROOTED
def test_a_setsid_daemon_does_not_outlive_its_re_run(fixture_class):
    from ascend_sim.course.grading.sandbox import UID_BASE
    assert "FORKED" in _executed_text(fixture_class["out"], "c_daemon"), "the attack did not test anything"
    assert not fixture_class["marker"].exists()          # the daemon cannot even see the shared folder
    ours = UID_BASE + (os.getpid() % 10_000) * 100_000          # this test process's sandbox users (sandbox_for)
    survivors = [pid for pid in _sandbox_pids(ours) if pid]
    assert survivors == [], "a process of a sandbox user outlived grading"


def _sandbox_pids(base: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        uid = next((int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("Uid:")), 0)
        if base <= uid < base + 100_000 and "State:\tZ" not in status:
            out.append(int(entry))
    return out


def test_a_redefined_check_with_fake_evidence_changes_nothing(fixture_class):
    r = fixture_class["reports"]["d_forged"]          # the re-run calls the lab's own check, not the learner's
    assert [e["status"] for e in r["exercises"]] == ["not_attempted"] * 3


def test_patched_numpy_is_refused_before_it_runs(fixture_class):
    r = fixture_class["reports"]["e_numpy_patch"]
    assert [e["status"] for e in r["exercises"]] == ["error", "not_attempted", "fail"]
    assert "line 1: the module `np` is used as a value" in r["exercises"][0]["messages"][0]


def test_a_notebook_of_another_lab_is_named_as_such(fixture_class):
    r = fixture_class["reports"]["f_wrong_lab"]
    assert r["grader_error"].startswith("this notebook is lab00_warmup, not fixture_lab")
    assert {e["status"] for e in r["exercises"]} == {"not_run"}


# ----------------------------------------------------------------------------- lab00 on the simulator
NUMPY_FILL = '''
@kernel
def add_custom(x, y, z, tiling):
    if GetBlockIdx() == 0:                      # getattr: past the screen's `.buf` rule
        out = getattr(getattr(z, "bu" + "f"), "array")
        out[:] = getattr(getattr(x, "bu" + "f"), "array") + getattr(getattr(y, "bu" + "f"), "array")

@kernel
def relu_custom(x, y, tiling):
    if GetBlockIdx() == 0:
        out = getattr(getattr(y, "bu" + "f"), "array")
        out[:] = np.maximum(getattr(getattr(x, "bu" + "f"), "array"), 0)

add_double_buffer = add_custom
'''

PATCH_LAUNCH = '''
import ascend_sim
m = ascend_sim                                  # an alias: past the screen's module-write rule

class Result:
    cycles = 1.0
    class trace:
        records = []

def fake_launch(k, blocks, *args, **kw):
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if len(arrays) == 3:
        arrays[2][:] = arrays[0] + arrays[1]
    else:
        arrays[1][:] = np.maximum(arrays[0], 0)
    return Result()

m.launch = fake_launch

@kernel
def add_custom(x, y, z, tiling):
    pass

relu_custom = add_double_buffer = add_custom
'''

PATCH_COMPARE = '''
import ascend_sim
v = ascend_sim.analysis.verify                  # reached through attributes: past the import rule

class Passed:
    passed = True

v.compare = lambda *a, **k: Passed()

@kernel
def add_custom(x, y, z, tiling):
    pass

relu_custom = add_double_buffer = add_custom
'''

LIBRARY = "from ascend_sim.kernels.add_custom import add_custom\nadd_double_buffer = add_custom\n"


@pytest.fixture(scope="module")
def lab00_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("attack-lab00")
    subs, out = root / "submissions", root / "out"
    subs.mkdir()
    template = load_template(ROOT / "labs" / "lab00_warmup.ipynb")
    solved = solved_notebook(template, parse_solutions(ROOT / "solutions" / "lab00_warmup.py"))
    nbs = {"honest": solved, "numpy_fill": _with(template.nb, ex1_answer=NUMPY_FILL),
           "patch_launch": _with(template.nb, ex1_answer=PATCH_LAUNCH),
           "patch_compare": _with(template.nb, ex1_answer=PATCH_COMPARE),
           "library": _with(template.nb, ex1_answer=LIBRARY)}
    for name, nb in nbs.items():
        nbformat.write(nb, subs / f"{name}.ipynb")
    cli.main(["grade", "lab00", str(subs), "--root", str(ROOT), "--out", str(out), "--jobs", "2", *LIMITS])
    return {n: json.loads((out / n / "report.json").read_text()) for n in nbs}


def _messages(r: dict) -> str:
    return " | ".join(m for e in r["exercises"] for m in e["messages"])


def test_lab00_honest_learner_keeps_full_marks(lab00_class):
    r = lab00_class["honest"]
    from ascend_sim.course.labs import lab00_warmup as lab00
    full = full_marks(lab00.LAB)
    assert (r["score"], r["max_score"], r["tampered"]) == (full, full, [])


@pytest.mark.parametrize("attack, reason", [
    ("numpy_fill", "`getattr` is not allowed"),
    ("patch_launch", "the module `ascend_sim` is used as a value"),
    ("patch_compare", "`ascend_sim.analysis` is not part of the public ascend_sim API"),
    ("library", "`from ascend_sim.kernels.add_custom import add_custom` is not allowed")])
def test_lab00_attacks_score_zero_with_the_reason(lab00_class, attack, reason):
    r = lab00_class[attack]
    assert r["score"] == 0, r["exercises"]
    assert reason in _messages(r), _messages(r)


def test_a_library_kernel_wrapped_as_the_learner_s_is_rejected(monkeypatch):
    """Past the screen (the object is handed over directly), the provenance names the library file."""
    from ascend_sim import GetBlockNum, kernel
    from ascend_sim.course.grading.check import EVIDENCE_ENV
    from ascend_sim.course.grading.judge import judge
    from ascend_sim.course.labs import lab00_warmup as lab00
    from ascend_sim.kernels import add_custom as lib

    monkeypatch.setenv(EVIDENCE_ENV, "1")

    @kernel
    def add_custom(x, y, z, tiling):
        lib.add_custom.fn(x, y, z, lib.AddCustomTilingData(tiling.totalLength,
                                                           tiling.totalLength // GetBlockNum() // tiling.tileLength, 1))

    learner = lab00.LAB.run("ex1", {"add_custom": add_custom})
    assert learner.status == "pass"
    verdict, _ = judge(lab00.LAB, "ex1", json.loads(json.dumps(learner.evidence)))
    assert verdict.status == "fail" and "written by library code (ascend_sim/kernels/add_custom.py)" in verdict.messages[0]


# ----------------------------------------------------------------------------- lab01: the reference network
def test_lenet_answered_with_the_reference_network_is_rejected(monkeypatch):
    from ascend_sim.course.grading.check import EVIDENCE_ENV
    from ascend_sim.course.grading.judge import judge
    from ascend_sim.course.labs import lab01_lenet_ops as lab01
    from ascend_sim.models.lenet_reference import lenet_forward_ref, load_lenet_weights

    monkeypatch.setenv(EVIDENCE_ENV, "1")

    def lenet_forward(images):
        return lenet_forward_ref(load_lenet_weights(), images, np.float16)

    learner = lab01.LAB.run("ex6", {"lenet_forward": lenet_forward})
    assert learner.status == "pass"                  # the learner's own process is fooled ...
    verdict, tamper = judge(lab01.LAB, "ex6", json.loads(json.dumps(learner.evidence)))
    assert verdict.status == "fail" and tamper == ""     # ... the grader is not
    assert "launched no kernel named conv2d_custom" in verdict.messages[0]
