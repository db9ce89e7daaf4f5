"""Grading a class beyond one process: ``--dask local:2`` (a real dask.distributed LocalCluster) and
``--shard i/n`` + ``ascend-sim gradebook merge`` give byte-for-byte the sequential run's gradebook and reports
(apart from the timings in report.json), on real lab00 submissions: solved, blank, two wrong, and a broken file
whose stem repeats another's (its folder is ``wrong1-2``).
"""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from ascend_sim.course.grading.distribute import CourseMismatch, DaskTarget, check_course, course_fingerprint
from ascend_sim.course.grading.notebook import load_template
from ascend_sim.course.grading.shards import Shard, ShardError, merge_shards, shard_of
from ascend_sim.course.grading.solutions import parse_solutions, solved_notebook
from ascend_sim.tools import cli

ROOT = Path(__file__).resolve().parents[2]
LIMITS = ["--cell-timeout", "60", "--time-limit", "300", "--memory-mb", "1536"]
ID = ["--id-pattern", "^(?P<id>[a-z]+)"]            # 'wrong' twice: the options must survive a merge too
TIMINGS = ("graded_at", "seconds")


def _class(folder: Path) -> list[Path]:
    template = load_template(ROOT / "labs" / "lab00_warmup.ipynb")
    sols = parse_solutions(ROOT / "solutions" / "lab00_warmup.py")
    solved = solved_notebook(template, sols)
    notebooks = {"a/solved.ipynb": solved, "a/blank.ipynb": copy.deepcopy(template.nb)}
    for k in range(2):
        nb = copy.deepcopy(solved)
        for c in nb.cells:
            ex = c.get("metadata", {}).get("course", {}).get("ex")
            if c.get("id") == f"{ex}-answer" and ex == f"ex{k + 1}":
                c.source = sols[ex].wrong[k][1]
        notebooks[f"a/wrong{k + 1}.ipynb"] = nb
    for name, nb in notebooks.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / name)
    (folder / "b").mkdir()
    (folder / "b" / "wrong1.ipynb").write_text("{ not a notebook")
    return [folder / "a", folder / "b"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded sequentially, then with --dask local:2, then as two shards merged."""
    pytest.importorskip("distributed", reason="the dask extra (part of dev) is not installed")
    work = tmp_path_factory.mktemp("dask")
    subs = _class(work / "subs")
    grade = ["grade", "lab00", *map(str, subs), "--root", str(ROOT), *LIMITS, *ID]
    statuses = {"seq": cli.main([*grade, "--out", str(work / "seq")]),
                "dask": cli.main([*grade, "--out", str(work / "dask"), "--dask", "local:2"])}
    for i in (1, 2):
        statuses[f"shard{i}"] = cli.main([*grade, "--out", str(work / f"shard{i}"), "--shard", f"{i}/2"])
    statuses["merge"] = cli.main(["gradebook", "merge", str(work / "merged"), str(work / "shard2"),
                                  str(work / "shard1")])
    return work, statuses


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _without_timings(data: bytes) -> dict:
    report = json.loads(data)
    for key in TIMINGS:
        report.pop(key)
    for e in report["exercises"]:
        e.pop("seconds")
    return report


def _assert_same_as_sequential(work: Path, other: str) -> None:
    seq, theirs = _files(work / "seq"), _files(work / other)
    theirs.pop("shard.json", None)
    assert sorted(theirs) == sorted(seq)
    assert theirs["gradebook.csv"] == seq["gradebook.csv"]
    for name, data in seq.items():
        if name.endswith("report.json"):
            assert _without_timings(theirs[name]) == _without_timings(data), name
        else:
            assert theirs[name] == data, name


def test_the_sequential_run_grades_what_the_class_is(graded):
    work, statuses = graded
    rows = (work / "seq" / "gradebook.csv").read_text().splitlines()
    assert [r.split(",")[1] for r in rows[1:]] == [str(work / "subs" / n) for n in
                                                   ("a/blank.ipynb", "a/solved.ipynb", "a/wrong1.ipynb",
                                                    "a/wrong2.ipynb", "b/wrong1.ipynb")]
    assert [r.split(",")[4] for r in rows[1:]] == ["0", "7", "5", "5", "0"]     # a wrong answer costs its points
    assert (work / "seq" / "wrong1-2" / "report.json").is_file() and statuses["seq"] == 1   # the broken file


def test_dask_local_cluster_gives_the_sequential_gradebook_and_reports(graded):
    work, statuses = graded
    assert statuses["dask"] == statuses["seq"]
    _assert_same_as_sequential(work, "dask")


def test_two_shards_merged_are_the_whole_class(graded):
    work, statuses = graded
    shard1 = json.loads((work / "shard1" / "shard.json").read_text())["graded"]
    shard2 = json.loads((work / "shard2" / "shard.json").read_text())["graded"]
    assert shard1 and shard2 and sorted(shard1 + shard2) == list(range(5))       # disjoint, both non-empty
    assert statuses["merge"] == statuses["seq"]
    _assert_same_as_sequential(work, "merged")


def test_merge_refuses_what_is_not_one_whole_class(graded, tmp_path):
    work, _ = graded
    with pytest.raises(ShardError, match=r"shard\(s\) 2/2 missing"):
        merge_shards(tmp_path / "m1", [work / "shard1"])
    with pytest.raises(ShardError, match="shard 1/2 is given twice"):
        merge_shards(tmp_path / "m2", [work / "shard1", work / "shard1", work / "shard2"])
    with pytest.raises(ShardError, match="is not the --out folder"):
        merge_shards(tmp_path / "m3", [work / "shard1", work / "seq"])
    with pytest.raises(ShardError, match="would write over"):
        merge_shards(work / "shard1", [work / "shard1", work / "shard2"])
    broken = tmp_path / "shard2"
    shutil.copytree(work / "shard2", broken)
    slot = json.loads((broken / "shard.json").read_text())
    (broken / slot["slots"][slot["graded"][0]] / "report.json").unlink()
    with pytest.raises(ShardError, match="has no report for .*--resume"):
        merge_shards(tmp_path / "m4", [work / "shard1", broken])
    manifest = json.loads((broken / "shard.json").read_text())
    manifest["gradebook"]["bom"] = True
    (broken / "shard.json").write_text(json.dumps(manifest))
    with pytest.raises(ShardError, match="different gradebook options"):
        merge_shards(tmp_path / "m5", [work / "shard1", broken])


def test_the_shard_of_a_file_is_its_name_alone():
    names = [f"{2023000 + i}_学生{i}.ipynb" for i in range(400)]
    for n in (1, 2, 3, 7):
        parts = [shard_of(name, n) for name in names]
        assert set(parts) == set(range(1, n + 1))
        assert min(parts.count(i) for i in range(1, n + 1)) > 0.7 * len(names) / n      # roughly even
    assert [Shard(2, 3).holds(Path("x") / n) for n in names] == [Shard(2, 3).holds(Path("y/z") / n) for n in names]
    assert shard_of("e\u0301.ipynb", 5) == shard_of("\u00e9.ipynb", 5)                    # NFC, as the folder names


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_names_the_rule(text):
    with pytest.raises(ShardError, match=r"1 <= i <= n"):
        Shard.parse(text)


def test_dask_targets():
    assert DaskTarget.parse("local:3") == DaskTarget("", 3)
    assert DaskTarget.parse("local").workers >= 1
    assert DaskTarget.parse("tcp://10.0.0.5:8786") == DaskTarget("tcp://10.0.0.5:8786", 0)
    for bad in ("local:0", "10.0.0.5:8786", "tcp://", "locale"):
        with pytest.raises(ValueError, match="expected local, local:N"):
            DaskTarget.parse(bad)
    assert cli.main(["grade", "lab00", str(ROOT / "labs"), "--dask", "local:2", "--jobs", "2"]) == 2


def test_without_the_dask_extra_dask_is_named_with_the_fix(tmp_path, monkeypatch, capsys):
    import sys
    monkeypatch.setitem(sys.modules, "distributed", None)                # as if the extra were not installed
    status = cli.main(["grade", "lab00", str(ROOT / "labs" / "lab00_warmup.ipynb"), "--root", str(ROOT),
                       "--out", str(tmp_path / "out"), "--dask", "local:1"])
    assert status == 2 and 'Fix: pip install -e ".[dask]"' in capsys.readouterr().err


def test_no_scheduler_at_the_address_is_named_with_the_fix(tmp_path, monkeypatch, capsys):
    pytest.importorskip("distributed", reason="the dask extra (part of dev) is not installed")
    monkeypatch.setattr("ascend_sim.course.grading.distribute.CONNECT_SECONDS", 2.0)
    status = cli.main(["grade", "lab00", str(ROOT / "labs" / "lab00_warmup.ipynb"), "--root", str(ROOT),
                       "--out", str(tmp_path / "out"), "--dask", "tcp://127.0.0.1:9"])       # nothing listens on 9
    err = capsys.readouterr().err
    assert status == 2 and "no Dask scheduler answered" in err and "Fix: start one with `dask scheduler`" in err


def test_a_worker_with_another_course_refuses_to_grade(tmp_path, monkeypatch):
    lab = tmp_path / "labs"
    lab.mkdir()
    shutil.copy(ROOT / "labs" / "lab00_warmup.ipynb", lab)
    template = load_template(lab / "lab00_warmup.ipynb")
    expected = course_fingerprint(template)
    check_course(template, expected)                                    # the same course: no error
    nb = nbformat.read(lab / "lab00_warmup.ipynb", as_version=4)
    nb.cells[0].source += "\n"                                           # the worker's lab differs by one byte
    nbformat.write(nb, lab / "lab00_warmup.ipynb")
    with pytest.raises(CourseMismatch, match="another course than the grader"):
        check_course(template, expected)
    shutil.copy(ROOT / "labs" / "lab00_warmup.ipynb", lab)
    monkeypatch.setattr("ascend_sim.course.grading.distribute.versions", lambda: {"numpy": "0.0"})
    with pytest.raises(CourseMismatch, match="another course than the grader"):
        check_course(template, expected)                                # same files, another numpy
    monkeypatch.undo()
    monkeypatch.setattr("ascend_sim.course.grading.distribute._FIRST_SEEN", {str(ROOT / "ascend_sim"): "0" * 64})
    with pytest.raises(CourseMismatch, match="changed while the worker was running"):
        check_course(template, expected)                                # the package changed under the worker
    (lab / "lab00_warmup.ipynb").unlink()
    with pytest.raises(CourseMismatch, match="no lab template at"):
        check_course(template, expected)


FIXTURES = Path(__file__).parent / "fixtures"
PROBE = '''
import os
facts = {"uid": "own" if os.getuid() >= UID_BASE else "grader's" if os.getuid() == GRADER_UID else "other"}
for p in PATHS:
    try:
        fd = os.open(p, os.O_RDONLY)
        facts[p] = len(os.read(fd, 1 << 20))
        os.close(fd)
    except Exception as e:
        facts[p] = repr(e).split("(")[0]
facts["/"] = sorted(os.listdir("/"))
facts["pids"] = sorted(int(e) for e in os.listdir("/proc") if e.isdigit())
print("FACTS", facts)
'''


def test_a_dask_worker_confines_the_re_run_as_the_grader_does(tmp_path):
    """What a submission's code can see and be on a Dask worker is what it is in the sequential run (the fixture
    lab's ex2 allows ``os``): the same user kind, the same unreadable files, the same root, only its own PIDs."""
    pytest.importorskip("distributed", reason="the dask extra (part of dev) is not installed")
    import os
    from ascend_sim.course.grading.sandbox import UID_BASE, isolation_mode
    template = load_template(FIXTURES / "fixture_lab.ipynb")
    paths = [str(ROOT / "solutions" / "lab00_warmup.py"), str(ROOT / "README.md"), str(tmp_path / "subs" / "x")]
    nb = copy.deepcopy(template.nb)
    cell = next(c for c in nb.cells if c.get("id") == "ex2-answer")
    cell.source = f"PATHS = {paths!r}\nUID_BASE = {UID_BASE}\nGRADER_UID = {os.getuid()}\n" + PROBE
    (tmp_path / "subs").mkdir()
    nbformat.write(nb, tmp_path / "subs" / "probe.ipynb")
    facts = {}
    for how in ([], ["--dask", "local:1"]):
        out = tmp_path / ("dask" if how else "seq")
        cli.main(["grade", str(FIXTURES / "fixture_lab.ipynb"), str(tmp_path / "subs"), "--out", str(out), *how,
                  "--cell-timeout", "20", "--time-limit", "120"])
        text = json.dumps(nbformat.read(out / "probe" / "executed.ipynb", as_version=4).cells)
        facts[bool(how)] = text[text.index("FACTS "):].split("\\n")[0]
    assert facts[True] == facts[False]
    assert "'uid': 'own'" in facts[False] or isolation_mode() != "root"
    assert all(f"'{p}': 'FileNotFoundError'" in facts[False] for p in paths), facts[False]   # not in the new root
    assert "'pids': [1]" in facts[False]                                  # its own PID namespace


def _processes_holding(text: str) -> list[int]:
    """PIDs whose environment mentions ``text`` (TMPDIR below: the grader's Dask workers and their re-runs)."""
    import os
    out = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        if text.encode() in env and "State:\tZ" not in status:
            out.append(int(entry))
    return out


def test_sigterm_on_dask_ends_every_worker_and_re_run_and_resume_finishes(tmp_path):
    """SIGTERM while two LocalCluster workers run endless answers: exit 130, no worker or re-run left (each found
    by the TMPDIR it inherited), the finished reports kept; ``--resume`` grades the rest."""
    pytest.importorskip("distributed", reason="the dask extra (part of dev) is not installed")
    import os
    import signal
    import subprocess
    import sys
    import time
    fixture = FIXTURES / "fixture_lab.ipynb"
    solved = solved_notebook(load_template(fixture), parse_solutions(FIXTURES / "solutions" / "fixture_lab.py"))
    slow = copy.deepcopy(solved)
    next(c for c in slow.cells if c.get("id") == "ex2-answer").source = (
        "def relu_tiled(x, out, tile):\n    while True:\n        pass")
    subs, out, tmp = tmp_path / "subs", tmp_path / "out", tmp_path / "tmp"
    subs.mkdir()
    tmp.mkdir()
    names = ["s0", "s1", "s2", "s3"]
    for i, name in enumerate(names):
        nbformat.write(solved if i == 0 else slow, subs / f"{name}.ipynb")
    cmd = [sys.executable, "-m", "ascend_sim", "grade", str(fixture), str(subs), "--out", str(out),
           "--dask", "local:2", "--cell-timeout", "60", "--time-limit", "120"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    runners = []
    while time.monotonic() < deadline and not ((out / "s0" / "report.json").exists() and len(runners) >= 2):
        time.sleep(0.3)
        runners = [p for p in _processes_holding(str(tmp)) if b"grading.runner" in
                   Path(f"/proc/{p}/cmdline").read_bytes()]
    assert len(runners) >= 2, "the two workers were not both running a re-run: the test tested nothing"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 130 and "run the same command with --resume" in err, err[-2000:]
    left = _processes_holding(str(tmp))
    for _ in range(20):
        if not left:
            break
        time.sleep(0.5)
        left = _processes_holding(str(tmp))
    assert left == [], "a Dask worker or a re-run outlived the grader"
    assert (out / "s0" / "report.json").is_file() and not (out / "s3" / "report.json").exists()
    status = cli.main(["grade", str(fixture), str(subs), "--out", str(out), "--resume", "--cell-timeout", "2",
                       "--time-limit", "60"])
    assert status == 0
    rows = (out / "gradebook.csv").read_text().splitlines()
    assert len(rows) == 1 + len(names) and "timeout" in rows[-1]


def test_dask_at_a_scheduler_address_gives_the_sequential_reports(graded, tmp_path):
    """``--dask tcp://...``: the path of an existing cluster (here a LocalCluster's scheduler, one worker)."""
    import logging
    from distributed import LocalCluster
    work, statuses = graded
    subs = [work / "subs" / "a", work / "subs" / "b"]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster:
        assert cluster.scheduler_address.startswith("tcp://")
        status = cli.main(["grade", "lab00", *map(str, subs), "--root", str(ROOT), *LIMITS, *ID,
                           "--out", str(work / "tcp"), "--dask", cluster.scheduler_address])
    assert status == statuses["seq"]
    _assert_same_as_sequential(work, "tcp")
