"""Learner feedback: hints chosen by the diagnosed mistake, a stuck kernel's line, stale code, queue names."""
from __future__ import annotations

import json
import linecache
import time
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.course.grading.check import EVIDENCE_ENV, TIMEOUT_ENV, Lab
from ascend_sim.course.grading.hints import DEFAULT_HINTS, HintLog, HintTable
from ascend_sim.course.grading.judge import judge
from ascend_sim.course.grading.labfiles import list_labs
from ascend_sim.course.grading.solutions import parse_solutions
from ascend_sim.course.labs import lab00_warmup as lab00

ROOT = Path(__file__).resolve().parents[2]
ADD = parse_solutions(ROOT / "solutions" / "lab00_warmup.py")["ex1"].code
SETUP = "from ascend_sim import *\n"


def _namespace(code: str, filename: str = "<answer>") -> dict:
    ns: dict = {}
    exec(compile(SETUP + code, filename, "exec"), ns)  # noqa: S102 - the instructor's solution, edited
    return ns


def _without(line: str, code: str = ADD) -> str:
    assert code.count(line + "\n") == 1, line
    return code.replace(line + "\n", "")


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(lab00.LAB, "hint_log", HintLog())


# ----------------------------------------------------------------------------- hints keyed to diagnoses
@pytest.mark.parametrize("forgotten, queue", [("        inQueueX.EnQue(xLocal)", "inQueueX"),
                                              ("        outQueueZ.EnQue(zLocal)", "outQueueZ")])
def test_forgetting_enque_gives_a_hint_about_enque_not_gm_offsets(fresh, forgotten, queue):
    result = lab00.LAB.run("ex1", _namespace(_without(forgotten)))
    assert result.status == "fail"
    assert f"DeQue from {queue} while it is empty" in result.messages[0], "the learner's queue, not 'q'"
    assert len(result.hints) == 1 and "EnQue" in result.hints[0] and "GetBlockIdx" not in result.hints[0]


def test_forgetting_freetensor_gives_a_hint_about_freetensor(fresh):
    result = lab00.LAB.run("ex1", _namespace(_without("        inQueueX.FreeTensor(xLocal)")))
    assert "AllocTensor on inQueueX with all 1 buffer(s) in use" in result.messages[0]
    assert result.hints == [DEFAULT_HINTS["QueueError/alloc-full"][0]], "the shared specific entry beats ex1's own"
    assert "FreeTensor" in DEFAULT_HINTS["QueueError/alloc-full"][1]


def test_hint_levels_grow_with_failures_and_requests_never_before_an_attempt(capsys):
    lab = Lab("unit")

    @lab.exercise("ex1", points=1, hints={"python/ZeroDivisionError": ("nudge", "pointer", "explanation"),
                                          "python/KeyError": ("other nudge", "other pointer"),
                                          "*": ("start here",)})
    def _ex1(ctx):
        ctx.call(ctx.answer("f"))

    lab.hint("ex1")
    assert "run check('ex1') first" in capsys.readouterr().out
    lab.hint("ex1")
    assert "pointer" not in capsys.readouterr().out, "asking before a real attempt reveals nothing specific"

    def div():
        return 1 / 0
    assert lab.run("ex1", {"f": div}).hints == ["nudge"]
    lab.hint("ex1")
    assert capsys.readouterr().out.splitlines()[-1] == "[ex1] hint 2 of 3: pointer"
    lab.hint("ex1")                                 # asked twice after a failure: the explanation
    assert "[ex1] hint 3 of 3: explanation" in capsys.readouterr().out
    assert lab.run("ex1", {"f": lambda: {}["k"]}).hints == ["other nudge"], "a new mistake starts at its nudge"
    assert lab.run("ex1", {"f": lambda: {}["k"]}).hints == ["other nudge", "other pointer"]
    assert not lab.run("ex1", {"f": lambda: {}["k"]}).more_hints


def test_three_failed_runs_reveal_the_explanation():
    lab = Lab("unit")

    @lab.exercise("ex1", points=1, hints={"python": ("a", "b", "c")})
    def _ex1(ctx):
        ctx.call(ctx.answer("f"))
    assert [lab.run("ex1", {"f": lambda: 1 / 0}).hints for _ in range(4)] == [
        ["a"], ["a", "b"], ["a", "b", "c"], ["a", "b", "c"]]


def test_a_diagnosis_without_an_entry_falls_back_to_the_shared_table_then_the_generic_hint():
    table = HintTable.of({"offset": ("mine",), "*": ("generic",)}, "unit/ex1")
    assert table.pick(("offset/misplaced",)) == ("offset", ("mine",))
    assert table.pick(("QueueError/deque-empty", "QueueError", "KernelError")) == (
        "QueueError", DEFAULT_HINTS["QueueError"])
    assert table.pick(("no-such-diagnosis",)) == ("*", ("generic",))
    assert HintTable.of(("a", "b"), "legacy").pick(("values",)) == ("values", DEFAULT_HINTS["values"])
    with pytest.raises(ValueError, match="at most 3 hints per diagnosis"):
        HintTable.of({"values": ("a", "b", "c", "d")}, "unit/ex1")
    with pytest.raises(ValueError, match="must be a tuple of strings"):
        HintTable.of({"values": "one string"}, "unit/ex1")


def test_the_grader_replay_shows_the_nudge_of_the_same_diagnosis(fresh, monkeypatch):
    monkeypatch.setenv(EVIDENCE_ENV, "1")
    learner = lab00.LAB.run("ex1", _namespace(_without("        inQueueX.EnQue(xLocal)")))
    graded, tamper = judge(lab00.LAB, "ex1", learner.evidence)
    assert tamper == "" and graded.status == "fail"
    assert graded.hints == learner.hints == [lab00.QUEUE_HINTS[0]]


# ----------------------------------------------------------------------------- a kernel stuck in a loop
STUCK_ADD = ADD.replace("    for i in range(blockLength // tileLength):\n",
                        "    i = 0\n    while i < blockLength // tileLength:   # i never grows\n")


def _lab_running_add_custom() -> Lab:
    """A one-exercise lab whose check launches the answer's add_custom on 2048 halves, one block."""
    lab = Lab("unit")

    @lab.exercise("ex1", points=1)
    def _ex1(ctx):
        n = 2048
        ctx.call(__import__("ascend_sim").launch, ctx.answer("add_custom"), 1, np.ones(n, np.float16),
                 np.ones(n, np.float16), np.zeros(n, np.float16), lab00.AddTiling(n, 256))
    return lab


def test_a_stuck_kernel_is_stopped_with_its_line(monkeypatch, capsys):
    code = STUCK_ADD
    assert code != ADD
    lab = _lab_running_add_custom()
    monkeypatch.setenv(TIMEOUT_ENV, "2")
    t = time.monotonic()
    lab.check("ex1", _namespace(code))
    out = capsys.readouterr().out
    assert time.monotonic() - t < 20
    assert "ERROR 0/1 points: the check was stopped after 2 s of wall-clock time: your kernel seems stuck in line " \
           in out
    line = int(out.split("stuck in line ")[1].split()[0].rstrip(":"))
    body = (SETUP + code).splitlines()
    loop = next(k for k, text in enumerate(body, 1) if "while i <" in text)
    end = next((k - 1 for k, text in enumerate(body, 1) if k > loop and text.strip()
                and len(text) - len(text.lstrip()) <= 4), len(body))          # the loop body's last line
    assert loop <= line <= end, "the line is inside the endless loop"
    assert "Fix: make the loop's condition change" in out


def test_a_kernel_issuing_instructions_forever_is_stopped_by_the_instruction_limit(monkeypatch, capsys):
    from ascend_sim.course.grading import check as check_module
    code = STUCK_ADD
    lab = _lab_running_add_custom()
    monkeypatch.setenv(TIMEOUT_ENV, "60")
    monkeypatch.setattr(check_module, "MAX_INSTRUCTIONS", 20_000)
    t = time.monotonic()
    lab.check("ex1", _namespace(code))
    assert time.monotonic() - t < 30, "stopped by the instruction count, long before the 60 s clock"
    out = capsys.readouterr().out
    assert "the check was stopped after one block issued " in out and "your kernel seems stuck in line" in out


# ----------------------------------------------------------------------------- stale definitions
def _cell(source: str, name: str) -> dict:
    """Run ``source`` as a notebook cell would: its own file name, its text in linecache."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    ns: dict = {}
    exec(compile(source, name, "exec"), ns)  # noqa: S102 - test code
    return ns


BROKEN = "def helper(x):\n    return x / 0\n"
FIXED = "def helper(x):\n    return x + 1\n"


def _check_helper() -> Lab:
    lab = Lab("unit")

    @lab.exercise("ex1", points=1)
    def _ex1(ctx):
        if ctx.call(ctx.answer("helper"), 1) != 2:
            ctx.fail("helper(1) should be 2")
    return lab


def test_code_from_an_older_cell_version_is_called_stale():
    ns = _cell(BROKEN, "/tmp/ipykernel_0/cell-v1.py")
    # the learner fixed the cell, but the new version stopped before its def: the old helper is still defined
    history = ["", BROKEN, "oops(\n" + FIXED]
    result = _check_helper().run("ex1", {"helper": ns["helper"], "In": history})
    assert result.status == "error"
    assert "Stale code: line 2 of `helper` (the version run as In[1]) is an older definition: In[2] defines " \
           "`helper` again" in result.messages[0]
    assert result.messages[0].startswith("Stale code:"), "the stale note comes first: it explains the error"
    assert result.line().endswith("Fix: fix and re-run the cell that defines `helper` (it must run without an "
                                  "error), then the check.") and "of `helper`" in result.line()
    assert result.hints == [DEFAULT_HINTS["stale"][0]]


def test_code_defined_by_no_saved_cell_is_called_stale(tmp_path):
    ns = _cell(BROKEN, "/tmp/ipykernel_0/cell-v2.py")
    nb = tmp_path / "lab.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": ["def other():\n", "    pass\n"]}]}))
    result = _check_helper().run("ex1", {"helper": ns["helper"], "In": ["", BROKEN], "__session__": str(nb)})
    assert "Stale code: line 2 of `helper` (the version run as In[1]) is defined by no cell of lab.ipynb" \
           in result.messages[0]


def test_current_code_is_not_called_stale(tmp_path):
    ns = _cell(BROKEN, "/tmp/ipykernel_0/cell-v3.py")
    nb = tmp_path / "lab.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": BROKEN}]}))
    result = _check_helper().run("ex1", {"helper": ns["helper"], "In": ["", FIXED, BROKEN],
                                         "__session__": str(nb)})
    assert result.status == "error" and "Stale" not in result.messages[0]
    assert result.messages[0].startswith("ZeroDivisionError")


# ----------------------------------------------------------------------------- queue names and InitBuffer bytes
def test_initbuffer_in_elements_says_it_takes_bytes(fresh):
    code = ADD.replace("pipe.InitBuffer(q, 1, tileLength * 2)", "pipe.InitBuffer(q, 1, tileLength)")
    result = lab00.LAB.run("ex1", _namespace(code))
    assert ("InitBuffer takes bytes: you passed 256 for inQueueX, a tile of 256 elements of half needs "
            "2 * 256 = 512 bytes") in result.messages[0]
    assert "Fix: pipe.InitBuffer(inQueueX, num, 256 * 2)" in result.messages[0]
    assert result.hints == [lab00.BYTES_HINTS[0]]


def test_queue_errors_name_the_attribute_of_a_kernel_class():
    code = parse_solutions(ROOT / "solutions" / "lab00_warmup.py")["ex3"].code
    broken = code.replace("        self.inQueueY.EnQue(yLocal)\n", "")
    assert broken != code
    result = lab00.LAB.run("ex3", _namespace(broken))
    assert "DeQue from inQueueY while it is empty" in result.messages[0]


@pytest.mark.parametrize("body, words", [
    ("    inQueueX = TQue(TPosition.VECIN, 1)\n    inQueueX.AllocTensor(half)\n",
     ["AllocTensor on a queue that has no buffers: inQueueX was never given any by InitBuffer",
      "pipe.InitBuffer(inQueueX, num, bytes)"]),
    ("    calcBuf = TBuf(TPosition.VECCALC)\n    calcBuf.Get(half)\n",
     ["TBuf.Get before pipe.InitBuffer(tbuf, bytes) for calcBuf", "pipe.InitBuffer(calcBuf, bytes)"]),
])
def test_a_buffer_used_before_initbuffer_is_named(body, words):
    from ascend_sim import launch
    from ascend_sim.engine.errors import QueueError
    ns = _namespace("@kernel\ndef k(x):\n    pipe = TPipe()\n" + body)
    with pytest.raises(QueueError) as e:
        launch(ns["k"], 1, np.zeros(16, np.float16))
    assert all(w in str(e.value) for w in words), str(e.value)


@pytest.mark.parametrize("module", [lab.name for lab in list_labs(ROOT)])
def test_every_hint_key_is_a_diagnosis_something_can_give(module):
    """A misspelt key ('QueueEror') would never be chosen: each key names a sanitizer error class (and kind),
    a comparison diagnosis, a shared key, or a diagnosis the checks module passes to ctx.fail itself."""
    import importlib
    import inspect

    from ascend_sim.analysis.diagnose import DIAGNOSES
    from ascend_sim.engine import errors
    from ascend_sim.course.grading.hints import expand
    mod = importlib.import_module(f"ascend_sim.course.labs.{module}")
    source = inspect.getsource(mod)
    from ascend_sim.cluster import errors as cluster_errors       # raised by the cluster labs' helpers (lab03 ex6)
    classes = {n for m in (errors, cluster_errors) for n, c in vars(m).items()
               if isinstance(c, type) and issubclass(c, errors.KernelError)}
    known = classes | {k for d in DIAGNOSES for k in expand(d)} | set(DEFAULT_HINTS) | {"budget", "stuck", "stale"}
    for ex in mod.LAB.exercises.values():
        for key in ex.hints.table:
            python = key.startswith("python/") and isinstance(getattr(__import__("builtins"), key[7:], None), type)
            ok = key in known or key.split("/")[0] in classes or python or source.count(f'("{key}",)') >= 1
            assert ok, f"{module}/{ex.id}: hint key {key!r} is no diagnosis"
