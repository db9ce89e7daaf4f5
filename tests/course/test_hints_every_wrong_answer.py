"""Every wrong answer of every lab's solutions file, run through its check: the first hint is the one keyed to that
mistake (never the exercise's generic fallback), and the message's Fix text fits the mistake.

The expected diagnosis key of each wrong answer is declared where the wrong answer is written, at the end of its label
in the solutions file (``# %% ex2 wrong: forgets the tail [key: tail]``, ``// %% ...`` in a C++ file): nothing to add
here for a new one. The C++ solutions files' answers (solutions/labNN_topic.cpp) are loaded as the grader loads a
%%ascendc cell (runner._run_cxx) and run through the same check.
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from ascend_sim.course.grading.expectations import wrong_key
from ascend_sim.course.grading.hints import DEFAULT_HINTS, GENERIC, HintLog
from ascend_sim.course.grading.runner import _run_cxx
from ascend_sim.course.grading.solution_file import CXX_MAGIC
from ascend_sim.course.grading.solutions import parse_solutions
from ascend_sim.engine.spelling import CPP, PYTHON, render

ROOT = Path(__file__).resolve().parents[2]

SUFFIXES = (".py", ".cpp")
LABS = {suffix: sorted(p.stem for p in (ROOT / "solutions").glob(f"lab*{suffix}")) for suffix in SUFFIXES}

#: (lab, exercise, wrong index) -> text the message must contain, and text it must not (a Fix for another mistake);
#: a C++ wrong answer's entry names its lab "cpp:<lab>".
MESSAGE: dict[tuple[str, str, int], tuple[str, str]] = {
    ("lab02_optimization", "ex5", 4): ("Fix: FixpipeParamsV220(nSize, mSize, srcStride, dstStride, ...) takes the "
                                       "tile's columns (N) first", "srcStride is mSize rounded up"),
    ("lab02_optimization", "ex4", 3): ("is in the library's tiled_matmul.py; your call: line ", ""),
    ("lab02_optimization", "ex7", 0): ("it equals b * scale + beta, the running mean is not subtracted", ""),
    ("lab02_optimization", "ex3", 3): ("tiles: the first copy in and the last copy out overlap nothing",
                                       "two buffers per queue"),
    ("cpp:lab02_optimization", "ex5", 4): ("Fix: FixpipeParamsV220{nSize, mSize, srcStride, dstStride, ...} takes "
                                           "the tile's columns (N) first", "srcStride is mSize rounded up"),
    # the Fix of a C++ kernel's error spells its code in C++ (engine/spelling.py), a Python kernel's in Python
    ("lab00_warmup", "ex1", 0): ("call SetAtomicAdd(dtype) if", "SetAtomicAdd<T>()"),
    ("cpp:lab00_warmup", "ex1", 0): ("call SetAtomicAdd<T>() if", "SetAtomicAdd(dtype)"),
    ("cpp:lab01_lenet_ops", "ex1", 0): ("(with the Matmul API: IterateAll(c, 1))", "enAtomic="),
    ("cpp:lab02_optimization", "ex3", 3): ("tiles: the first copy in and the last copy out overlap nothing",
                                           "two buffers per queue"),
    ("cpp:lab02_optimization", "ex4", 1): ("copy the weights into L1 once per core, not per image", ""),
    # ex7's host code in C++: the fold's own check diagnoses it as it does the Python fold
    ("cpp:lab02_optimization", "ex7", 0): ("it equals b * scale + beta, the running mean is not subtracted", ""),
    ("cpp:lab02_optimization", "ex7", 3): ("fold_bn_host wrote the folded weights transposed", ""),
    ("lab02_optimization", "ex7", 3): ("fold_bn_host wrote the folded weights transposed", ""),
    ("lab04_migration", "ex2", 3): ("case 1 elements of 1 bytes on 1 cores", ""),
    ("lab04_migration", "ex5", 2): ("outside int8's [-128, 127]", ""),
    ("lab05_engineering", "ex4", 2): ("DeadlockError", ""),
    ("cpp:lab01_lenet_ops", "ex3", 1): ("`Duplicate(acc, static_cast<float>(bLocal.GetValue(o)), count);`: GetValue on "
                                        "pipe S reads UB bytes", ""),      # the learner's C++ line, quoted
    ("cpp:lab01_lenet_ops", "ex4", 0): ("got 16.5 expected 400.5", ""),
    ("cpp:lab01_lenet_ops", "ex4", 1): ("got 50.5 expected 400.5", ""),
}


def _setup(lab: str) -> str:
    nb = json.loads((ROOT / "labs" / f"{lab}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"]
                     if c["metadata"].get("course", {}).get("role") == "setup")


def _cases() -> list[tuple[str, str, str, int]]:
    return [(suffix, lab, ex, k) for suffix, labs in LABS.items() for lab in labs
            for ex, sol in sorted(parse_solutions(ROOT / "solutions" / f"{lab}{suffix}").items())
            for k in range(len(sol.wrong))]


def _run_cell(source: str, name: str, ns: dict) -> None:
    """A solutions cell as the grader runs it: Python executed, a %%ascendc cell compiled and its kernels bound."""
    if source.lstrip().startswith(CXX_MAGIC):
        _run_cxx(source, name, ns)
    else:
        exec(compile(source, f"<{name}>", "exec"), ns)  # noqa: S102 - the lab's own solutions


def test_every_wrong_answer_declares_its_expected_key():
    assert LABS[".py"], "no solutions files found"
    for suffix, labs in LABS.items():
        for lab in labs:
            for ex, sol in parse_solutions(ROOT / "solutions" / f"{lab}{suffix}").items():
                for label, _ in sol.wrong:
                    assert wrong_key(label), f"{lab}{suffix} {ex} wrong '{label}': end the label with [key: <key>]"


@pytest.mark.parametrize("suffix, lab, ex, k", _cases(), ids=lambda v: str(v))
def test_the_first_hint_is_keyed_to_the_mistake(suffix, lab, ex, k, monkeypatch):
    mod = importlib.import_module(f"ascend_sim.course.labs.{lab}")
    monkeypatch.setattr(mod.LAB, "hint_log", HintLog())          # a fresh session: no earlier failures
    python = parse_solutions(ROOT / "solutions" / f"{lab}.py")
    sols = {**python, **parse_solutions(ROOT / "solutions" / f"{lab}{suffix}")}   # C++ where it has an answer
    label, wrong = sols[ex].wrong[k]
    ns: dict = {}
    exec(compile(_setup(lab), "<setup>", "exec"), ns)  # noqa: S102 - the lab's own setup cell
    for other, sol in sorted(sols.items()):                         # the other exercises solved
        _run_cell(wrong if other == ex else sol.code, other, ns)
    result = mod.LAB.run(ex, ns)
    assert result.status == "fail", f"{label}: {result.status} {result.messages[:1]}"
    key, levels = mod.LAB.hint_log.last[ex]
    assert key == wrong_key(label), f"{label}: hint chosen by {key!r}; message: {result.messages[0][:300]}"
    own = mod.LAB.get(ex).hints.table
    assert key != GENERIC and (key in own or key in DEFAULT_HINTS), key
    assert levels == own.get(key, DEFAULT_HINTS.get(key))
    assert result.hints == [render(levels[0], CPP if suffix == ".cpp" else PYTHON)]     # in the answer's language
    want, unwanted = MESSAGE.get((lab if suffix == ".py" else f"cpp:{lab}", ex, k), ("", ""))
    assert want in result.messages[0], result.messages[0]
    assert not unwanted or unwanted not in result.messages[0], result.messages[0]


def test_hint_is_imported_by_every_lab_setup_cell():
    for lab in LABS[".py"]:
        ns: dict = {}
        exec(compile(_setup(lab), "<setup>", "exec"), ns)  # noqa: S102
        assert callable(ns.get("check")) and callable(ns.get("hint")), f"{lab}: the setup cell imports check and hint"
