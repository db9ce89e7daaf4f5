"""The C++ solutions file (solutions/labNN.cpp): // markers, ASCEND_SIM_TODO stubs that grade *not attempted*,
wrong answers as one replacement, %%ascendc cells; and the notebook stubs of both languages (clean, --check)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("clang.cindex")

from ascend_sim.course.grading.notebook import ALT_STUB, ANSWER, lab_problems  # noqa: E402
from ascend_sim.course.grading.runner import _run_cxx  # noqa: E402
from ascend_sim.course.grading.solution_file import (CPP, SolutionsFormatError,  # noqa: E402
                                                     parse_solutions)
from ascend_sim.course.grading.stubs import stub_problems, write_stubs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KERNEL = '''\
// %% ex1
#include "kernel_operator.h"
using namespace AscendC;

struct T {
    uint32_t n;
};

__aicore__ inline uint32_t Offset(uint32_t n)
{
    // --- BEGIN SOLUTION hint="the offset of this block"
    return n * GetBlockIdx();
    // --- END SOLUTION
}

extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(T, t, tiling);
    // TODO: copy
    // --- BEGIN SOLUTION hint="TODO: copy"
    uint32_t off = Offset(t.n);
    // --- END SOLUTION
}

// %% ex1 wrong: no offset
// replace: return n * GetBlockIdx(); -> return 0;

// %% ex1 wrong: two lines
// replace:
//     uint32_t off = Offset(t.n);
// with:
//     uint32_t off = 0;
//     off += 1;
'''


def _parse(tmp_path: Path, text: str, name: str = "lab.cpp"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return parse_solutions(path)


def test_cpp_sentinels_give_the_answer_cell_and_the_todo_stub(tmp_path):
    sol = _parse(tmp_path, KERNEL)["ex1"]
    assert sol.language == "cpp"
    assert sol.code.startswith("%%ascendc\n#include") and "BEGIN" not in sol.code and "END SOLUTION" not in sol.code
    assert '    ASCEND_SIM_TODO("ex1: the offset of this block");\n}' in sol.stub
    assert '    // TODO: copy\n    ASCEND_SIM_TODO("ex1: TODO: copy");\n}' in sol.stub
    assert "GetBlockIdx" not in sol.stub and sol.stub.startswith("%%ascendc\n")
    (l1, w1), (l2, w2) = sol.wrong
    assert (l1, w1) == ("no offset", sol.code.replace("return n * GetBlockIdx();", "return 0;"))
    assert l2 == "two lines" and "    uint32_t off = 0;\n    off += 1;\n" in w2 and "Offset(t.n)" not in w2


@pytest.mark.parametrize("answer, message", [
    ('// %% ex1\n#include "kernel_operator.h"\nstruct S {\n// --- BEGIN SOLUTION hint="x"\nint a;\n'
     '// --- END SOLUTION\n};\n', "not valid C++"),                            # the stub puts a statement in a struct
    ('// %% ex1\n#include "kernel_operator.h"\n// --- BEGIN SOLUTION hint="x"\nint a = 1;\n// --- END SOLUTION\n',
     "not valid C++"),                                                          # ... or at namespace scope
    ('// %% ex1\n#include "kernel_operator.h"\nvoid f() {\n// --- BEGIN SOLUTION hint="a \\\\ b"\nint a;\n'
     '// --- END SOLUTION\n}\n', "no double quote or backslash"),
    ('// %% ex1\n#include "kernel_operator.h"\nvoid f() {\n}\n// %% ex1 wrong: x\n# replace: f -> g\n',
     "one replacement"),
    ('// %% ex1\n#include "kernel_operator.h"\nvoid f() {\n}\n// %% ex1 wrong: x\n// replace: g -> h\n',
     "matches 0 times"),
    ('// %% ex1 answer\n', "a block marker is '// %% exN'"),
])
def test_malformed_cpp_solutions_are_rejected(tmp_path, answer, message):
    with pytest.raises(SolutionsFormatError, match=message):
        _parse(tmp_path, answer)


def test_an_untouched_cpp_stub_is_not_attempted_and_the_answer_runs():
    from ascend_sim.course.labs import lab00_warmup as lab
    sols = parse_solutions(ROOT / "solutions" / "lab00_warmup.cpp")
    for ex in ("ex1", "ex3"):
        ns: dict = {}
        _run_cxx(sols[ex].stub, f"{ex}-answer", ns)
        result = lab.LAB.run(ex, ns)
        assert result.status == "not_attempted", result.messages
        assert "NotImplementedError" in result.messages[0]
    ns = {}
    _run_cxx(sols["ex1"].code, "ex1-answer", ns)
    assert lab.LAB.run("ex1", ns).status == "pass"


def test_ascend_sim_todo_raises_not_implemented_with_its_message():
    import numpy as np

    from ascend_sim import launch
    from ascend_sim.ascendc import load
    mod = load('#include "kernel_operator.h"\n'
               'extern "C" __global__ __aicore__ void k(GM_ADDR x) { ASCEND_SIM_TODO("ex9: write it"); }\n', name="t")
    with pytest.raises(NotImplementedError, match="^ex9: write it$"):
        launch(mod.k, 1, np.zeros(16, np.float16))


def _lab_nb(source: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["course"] = {"lab": "lab", "checks": "x"}
    answer = nbformat.v4.new_code_cell(source, id="ex1-answer")
    answer.metadata["course"] = {"lab": "lab", "ex": "ex1", "role": ANSWER, "points": 1}
    nb.cells = [nbformat.v4.new_markdown_cell("# Ex 1", id="ex1-text"), answer]
    return nb


def test_clean_writes_either_stub_and_offers_the_other_language(tmp_path):
    cpp = _parse(tmp_path, KERNEL)
    py = _parse(tmp_path, '# %% ex1\ndef k():\n    # --- BEGIN SOLUTION hint="do it"\n    return 1\n'
                          '    # --- END SOLUTION\n# %% ex1 wrong: w\n# replace: return 1 -> return 2\n', "lab.py")
    sols = {"python": py, "cpp": cpp}
    for start, want in (("%%ascendc\n// my old C++", cpp["ex1"].stub), ("x = 1", py["ex1"].stub),
                        ("", cpp["ex1"].stub)):          # a drifted cell keeps its language; C++ first otherwise
        nb = _lab_nb(start)
        assert stub_problems(nb, sols, tmp_path / "lab.py")            # drifted: reported
        write_stubs(nb, sols)
        answer = nb.cells[-1]
        assert answer.source == want.rstrip("\n")
        alt = nb.cells[-2]
        assert alt.metadata["course"]["role"] == ALT_STUB and alt.id == "ex1-alt-stub"
        other = py["ex1"].stub if want == cpp["ex1"].stub else CPP.block(cpp["ex1"].stub)
        assert other.rstrip("\n") in alt.source
        assert stub_problems(nb, sols, tmp_path / "lab.py") == [] and write_stubs(nb, sols) == []
        assert not [p for p in lab_problems(nb) if "alt-stub" in p]
    answer.source = py["ex1"].stub.rstrip("\n")          # the learner's other choice: --check accepts either stub
    problems = stub_problems(nb, sols, tmp_path / "lab.py")
    assert problems and all("other language's stub differs" in p for p in problems)   # the offer follows the cell
    write_stubs(nb, sols)
    assert answer.source == py["ex1"].stub.rstrip("\n") and "```cpp" in nb.cells[-2].source


def test_lint_covers_the_cpp_file(tmp_path):
    import shutil

    from ascend_sim.course.grading.labfiles import find_lab
    from ascend_sim.course.grading.solutions import lint_lab
    (tmp_path / "labs").mkdir()
    (tmp_path / "solutions").mkdir()
    shutil.copy(ROOT / "labs" / "lab00_warmup.ipynb", tmp_path / "labs")
    shutil.copy(ROOT / "solutions" / "lab00_warmup.py", tmp_path / "solutions")
    lab = find_lab("lab00", tmp_path)
    problems = lint_lab(lab)           # the answer cells are %%ascendc: each needs its C++ answer
    assert "ex1: the answer cell is %%ascendc but solutions/lab00_warmup.cpp has no '// %% ex1' block" in problems
    text = (ROOT / "solutions" / "lab00_warmup.cpp").read_text()
    cut = text.index("// %% ex2 wrong: forgets the tail")
    (tmp_path / "solutions" / "lab00_warmup.cpp").write_text(text[:cut] + text[text.index("// %% ex3\n"):])
    assert lint_lab(lab) == ["ex2 has no C++ wrong answer '// %% ex2 wrong: ...' to prove its check fails"]
