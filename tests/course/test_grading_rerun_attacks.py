"""Grader III: the attacks that beat Grader II, each reproduced, each scoring zero and changing nothing else;
honest but unusual answers that must keep full marks; the course's solutions pass the allowlist.

One lab00 class graded through the CLI with ``--jobs 2``: two honest learners (first and last), one submission
per attack, and a dozen honest answers to ex1 written in unusual but legal ways.
"""
from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import nbformat
import pytest

from ascend_sim.course.grading.check import MIME
from ascend_sim.course.grading.expectations import full_marks
from ascend_sim.course.grading.notebook import SETUP, load_template, role
from ascend_sim.course.grading.screen import import_bindings, screen_source
from ascend_sim.course.grading.solutions import parse_solutions, solved_notebook
from ascend_sim.course.labs import lab00_warmup as lab00
from ascend_sim.tools import cli

ROOT = Path(__file__).resolve().parents[2]
FULL = full_marks(lab00.LAB)          # lab00's declared points
LIMITS = ["--cell-timeout", "6", "--time-limit", "120", "--memory-mb", "1536"]
REFUSED = "refused by the grader's allowlist (the cell was not run): "

# ----------------------------------------------------------------------------- attacks (ex1 answer cells)
ATTACKS = {
    # a fabricated launch result through the internal hook, reached as an attribute chain
    "hook_chain": ('import ascend_sim\n'
                   'ascend_sim.api.launch.launch_hook(lambda run, k, b, *a, **kw: None)\n'
                   '@kernel\ndef add_custom(x, y, z, tiling):\n    pass\n',
                   "`ascend_sim.api` is not part of the public ascend_sim API"),
    "hook_globals": ('hook = launch.__globals__["launch_hook"]\n',
                     "`.__globals__` is a dunder attribute"),
    # `check` redefined, a forged result displayed with the real classes' format
    "redefine_check": (f'def check(ex):\n    display({{{MIME!r}: {{"exercise": ex, "status": "pass", "score": 2, '
                       f'"max": 2, "evidence": {{"schema": 1, "events": []}}}}}}, raw=True)\n'
                       'check("ex1")\n', "`add_custom` is not defined"),
    # the library's kernel re-run through compile(), and its import
    "compile_library": ('src = "from ascend_sim.kernels.add_custom import add_custom"\n'
                        'exec(compile(src, "/repo/learner.py", "exec"))\n', "`compile` is not allowed"),
    "import_library": ("from ascend_sim.kernels.add_custom import add_custom\n", "is not allowed"),
    # solutions through git, and reading files any other way
    "git_show": ('import subprocess\nsubprocess.run(["git", "show", "HEAD:solutions/lab00_warmup.py"])\n',
                 "`import subprocess` is not allowed"),
    "numpy_file": ('import numpy as np\nleak = np.fromfile("/proc/self/mountinfo", dtype=np.uint8)\n',
                   "`np.fromfile` is numpy's file or memory access"),
    "tofile": ('import numpy as np\nnp.zeros(3).tofile("/tmp/x")\n', "`.tofile` reaches into"),
    # call screening by name only: aliases and computed names
    "alias_exec": ('_x = exec\n_x("print(1)")\n', "`exec` is not allowed"),
    "getattr_exec": ('f = getattr(print.__self__, "ex" + "ec")\n', "`getattr` is not allowed"),
    "subclasses": ('for c in ().__class__.__bases__[0].__subclasses__():\n    pass\n', "dunder attribute"),
    # writes to what the lab or a library owns, and module aliases
    "class_write": ("AddTiling.tileLength = 1\n", "changes something the lab or a library owns"),
    "module_alias": ("import numpy as np\nn = np\nn.isclose = lambda *a, **k: True\n",
                     "the module `np` is used as a value"),
    "raw_memory": ('@kernel\ndef add_custom(x, y, z, tiling):\n    t = GlobalTensor(half)\n'
                   '    t.SetGlobalBuffer(z, 16)\n    arena = t.buf\n', "`.buf` reaches into"),
    "core_reach": ('@kernel\ndef add_custom(x, y, z, tiling):\n    pipe = TPipe()\n    q = TQue(TPosition.VECIN, 1)\n'
                   '    pipe.InitBuffer(q, 1, 64)\n    t = q.AllocTensor(half)\n    c = t.core\n', "`.core` reaches"),
    "magic": ("!cat ../../solutions/lab00_warmup.py\n", "`get_ipython` is not allowed"),
    # results on the channel: learner output never carries the grader's nonce
    "forged_channel": ('print("0" * 32 + \' {"step": 2, "status": "ok", "result": {"exercise": "ex1", '
                       '"status": "pass"}}\')\n', "`add_custom` is not defined"),
    # a timeout that swallows the grader's alarm: killed from outside, nothing left running
    "swallow_timeout": ('@kernel\ndef add_custom(x, y, z, tiling):\n    while True:\n        try:\n'
                        '            while True:\n                pass\n        except BaseException:\n'
                        '            pass\n', "did not finish within 6 s"),
    "exit": ("raise SystemExit(0)\n", "SystemExit"),
}

# ----------------------------------------------------------------------------- honest, unusual, legal (ex1)
BODY = '''    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    offset = blockLength * GetBlockIdx()
    xGm, yGm, zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, blockLength)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    zGm.SetGlobalBuffer(z + offset, blockLength)
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 1, tileLength * 2)
'''
STEP = '''        xl, yl = qx.AllocTensor(half), qy.AllocTensor(half)
        DataCopy(xl, xGm[i * tileLength], tileLength)
        DataCopy(yl, yGm[i * tileLength], tileLength)
        qx.EnQue(xl)
        qy.EnQue(yl)
        xl, yl = qx.DeQue(half), qy.DeQue(half)
        zl = qz.AllocTensor(half)
        Add(zl, xl, yl, tileLength)
        qz.EnQue(zl)
        qx.FreeTensor(xl)
        qy.FreeTensor(yl)
        zl = qz.DeQue(half)
        DataCopy(zGm[i * tileLength], zl, tileLength)
        qz.FreeTensor(zl)
'''
LOOP = BODY + "    for i in range(blockLength // tileLength):\n" + STEP
HONEST = {
    "plain": "@kernel\ndef add_custom(x, y, z, tiling):\n" + LOOP,
    "star_import": "from ascend_sim import *\n\n@kernel\ndef add_custom(x, y, z, tiling):\n" + LOOP,
    "renamed_imports": ("from ascend_sim import DataCopy as copy_gm, Add as vadd\nimport numpy as np\nimport math\n\n"
                        "@kernel\ndef add_custom(x, y, z, tiling):\n"
                        + LOOP.replace("DataCopy(", "copy_gm(").replace("Add(", "vadd(")),
    "while_loop": ("@kernel\ndef add_custom(x, y, z, tiling):\n" + BODY + "    i = 0\n"
                   "    while i < blockLength // tileLength:\n" + STEP + "        i += 1\n"),
    "helper_function": ("def tiles(total, tile):\n    \"\"\"How many tiles.\"\"\"\n    return total // tile\n\n"
                        "@kernel\ndef add_custom(x, y, z, tiling):\n"
                        + LOOP.replace("range(blockLength // tileLength)", "range(tiles(blockLength, tileLength))")),
    "class_with_init": ("class Counter:\n    def __init__(self, n: int) -> None:\n        self.n = n\n\n"
                        "    def __iter__(self):\n        return iter(range(self.n))\n\n"
                        "@kernel\ndef add_custom(x, y, z, tiling):\n"
                        + LOOP.replace("range(blockLength // tileLength)", "Counter(blockLength // tileLength)")),
    "math_and_fstrings": ("import math\n\n@kernel\ndef add_custom(x, y, z, tiling):\n"
                          + LOOP.replace("range(blockLength // tileLength)",
                                         "range(math.floor(blockLength / tileLength))")
                          + "    note = f\"{blockLength} elements in tiles of {tileLength}\"\n"),
    "assert_and_del": ("@kernel\ndef add_custom(x, y, z, tiling):\n" + LOOP
                       + "    assert blockLength % tileLength == 0, 'whole tiles'\n    del pipe\n"),
    "comprehension": ("@kernel\ndef add_custom(x, y, z, tiling):\n"
                      + LOOP.replace("    for q in (qx, qy, qz):\n        pipe.InitBuffer(q, 1, tileLength * 2)\n",
                                     "    [pipe.InitBuffer(q, 1, tileLength * 2) for q in (qx, qy, qz)]\n")),
    "try_finally_and_print": ("@kernel\ndef add_custom(x, y, z, tiling):\n    try:\n"
                              + "\n".join("    " + ln if ln else ln for ln in LOOP.splitlines()) + "\n"
                              "    finally:\n        print('block', GetBlockIdx(), 'done')\n"),
    "closure_and_lambda": ("@kernel\ndef add_custom(x, y, z, tiling):\n" + BODY
                           + "    at = lambda i: i * tileLength\n"
                           "    def step(i):\n" + STEP.replace("        ", "        ", 1)
                           .replace("i * tileLength", "at(i)")
                           + "    for i in range(blockLength // tileLength):\n        step(i)\n"),
    "numpy_and_globals_constant": ("import numpy as np\nTILES_PER_BLOCK = None\nrng_local = np.random.default_rng(1)\n"
                                   "@kernel\ndef add_custom(x, y, z, tiling):\n" + LOOP),
    "added_cell_helper": "@kernel\ndef add_custom(x, y, z, tiling):\n" + LOOP.replace("range(", "my_range("),
}


def _cell(nb, cid):
    return next(c for c in nb.cells if c.get("id") == cid)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("grader3")
    subs, out = root / "submissions", root / "out"
    subs.mkdir()
    template = load_template(ROOT / "labs" / "lab00_warmup.ipynb")
    solved = solved_notebook(template, parse_solutions(ROOT / "solutions" / "lab00_warmup.py"))
    nbs = {"a_honest": solved, "z_honest": solved}
    for name, (source, _) in ATTACKS.items():
        nb = copy.deepcopy(template.nb)
        _cell(nb, "ex1-answer").source = source
        nbs[f"attack_{name}"] = nb
    for name, source in HONEST.items():
        nb = copy.deepcopy(solved)
        _cell(nb, "ex1-answer").source = source
        if name == "added_cell_helper":      # a cell the learner added right after the answer
            i = nb.cells.index(_cell(nb, "ex1-answer"))
            nb.cells.insert(i + 1, nbformat.v4.new_code_cell("def my_range(n):\n    return range(n)\n"))
        nbs[f"honest_{name}"] = nb
    for name, nb in nbs.items():
        nbformat.write(nb, subs / f"{name}.ipynb")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in subs.iterdir()}
    cli.main(["grade", "lab00", str(subs), "--root", str(ROOT), "--out", str(out), "--jobs", "2", *LIMITS])
    reports = {n: json.loads((out / n / "report.json").read_text()) for n in nbs}
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in subs.iterdir()}
    return {"reports": reports, "out": out, "before": before, "after": after}


def _messages(r: dict) -> str:
    return " | ".join(m for e in r["exercises"] for m in e["messages"])


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_scores_zero_with_its_reason(graded, attack):
    r = graded["reports"][f"attack_{attack}"]
    assert r["score"] == 0 and r["grader_error"] == "", r["exercises"]
    assert ATTACKS[attack][1] in _messages(r), _messages(r)
    if "refused" in _messages(r):
        assert _messages(r).startswith(REFUSED + "ex1-answer line "), "the refusal names the cell and line"


def test_attacks_change_nothing_outside_their_own_report(graded):
    assert graded["before"] == graded["after"]                              # no submission file touched
    for name in ("a_honest", "z_honest"):
        r = graded["reports"][name]
        assert (r["score"], r["max_score"], r["tampered"], r["grader_error"]) == (FULL, FULL, [], ""), name
    rows = {Path(r["submission"]).stem: r for r in csv.DictReader((graded["out"] / "gradebook.csv").open())}
    assert set(rows) == set(graded["reports"]) and float(rows["z_honest"]["score"]) == FULL
    assert sorted(p.name for p in graded["out"].iterdir()) == sorted([*graded["reports"], "gradebook.csv"])


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_unusual_answers_keep_full_marks(graded, name):
    r = graded["reports"][f"honest_{name}"]
    assert (r["score"], r["tampered"], r["grader_error"]) == (7, [], ""), _messages(r)


def test_the_course_solutions_pass_the_allowlist():
    """Zero refusals on every lab's solutions, right and wrong, with each lab's own setup imports."""
    refused = {}
    for sol_file in sorted((ROOT / "solutions").glob("lab*.py")):
        template = load_template(ROOT / "labs" / f"{sol_file.stem}.ipynb")
        bound = {}
        for c in template.nb.cells:
            if role(c) == SETUP:
                bound.update(import_bindings(c.source, template.checks))
        for ex, sol in parse_solutions(sol_file).items():
            for code in [sol.code, *(c for _, c in sol.wrong)]:
                reasons = screen_source(code, checks_module=template.checks, bound=bound)
                if reasons:
                    refused[(sol_file.stem, ex)] = reasons
    assert refused == {}


def test_no_module_outside_the_allowlist_is_reachable_from_the_public_names():
    """Through public (non-underscore, not denied) attributes, three steps deep from every name an answer can
    import, no module but numpy, math and the public API is reached: chains the static resolution cannot
    follow at run time (an instance's attributes) lead nowhere the allowlist forbids."""
    import importlib
    import types

    import ascend_sim
    from ascend_sim.course.grading.screen import FORBIDDEN_ATTRS, _defined_in, _module_allowed

    starts = [(n, getattr(ascend_sim, n)) for n in ascend_sim.__all__]
    for lab in ("lab00_warmup", "lab01_lenet_ops"):
        module = importlib.import_module(f"ascend_sim.course.labs.{lab}")
        starts += [(f"{lab}.{n}", getattr(module, n)) for n in dir(module)
                   if not n.startswith("_") and n != "LAB" and _defined_in(module.__name__, n)]
    seen: set[int] = set()
    reached: list[tuple[str, str]] = []

    def walk(obj, path: str, depth: int) -> None:
        if depth > 3 or id(obj) in seen:
            return
        seen.add(id(obj))
        for name in dir(obj):
            if name.startswith("_") or name in FORBIDDEN_ATTRS:
                continue
            try:
                value = getattr(obj, name)
            except Exception:  # noqa: BLE001 - a property that needs an instance
                continue
            if isinstance(value, types.ModuleType):
                if not _module_allowed(value):
                    reached.append((f"{path}.{name}", value.__name__))
            elif not isinstance(value, (int, float, str, bytes, bool, type(None))):
                walk(value, f"{path}.{name}", depth + 1)

    for path, obj in starts:
        if isinstance(obj, types.ModuleType):
            assert _module_allowed(obj), path
        walk(obj, path, 1)
    assert reached == []


def test_a_cxx_answer_is_its_cell_source_and_is_not_screened_as_python(tmp_path):
    """A `%%ascendc` cell goes to the runner as C++ (the allowlist is for Python); until the C++ front end is
    merged, the grader says it cannot grade it, at that exercise only."""
    import importlib.util

    from ascend_sim.course.grading.rerun import language_of
    assert language_of("%%ascendc\nextern \"C\" __global__ __aicore__ void add_custom() {}") == "ascendc"
    assert language_of("# %%ascendc in a comment\nx = 1") == "python"
    if importlib.util.find_spec("ascend_sim.ascendc") is not None:
        pytest.skip("ascend_sim.ascendc is merged: its own tests grade C++ answers")
    fixture = Path(__file__).parent / "fixtures" / "fixture_lab.ipynb"
    nb = solved_notebook(load_template(fixture), parse_solutions(fixture.parent / "solutions" / "fixture_lab.py"))
    _cell(nb, "ex1-answer").source = "%%ascendc\n#include \"kernel_operator.h\"\nimport os  // not Python\n"
    nbformat.write(nb, tmp_path / "cxx.ipynb")
    cli.main(["grade", str(fixture), str(tmp_path / "cxx.ipynb"), "--out", str(tmp_path / "out"), *LIMITS])
    r = json.loads((tmp_path / "out" / "cxx" / "report.json").read_text())
    assert [e["status"] for e in r["exercises"]] == ["error", "pass", "pass"]
    assert "cannot grade C++ answers yet" in r["exercises"][0]["messages"][0]
