"""The grader's runner binds a `%%ascendc` answer's kernels by name through the real C++ front end."""
import pytest

pytest.importorskip("ascend_sim.ascendc")
from ascend_sim.course.grading.runner import _run_cxx  # noqa: E402

ADD = '''%%ascendc
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z) {}
'''


def test_cxx_answer_kernels_are_bound_by_name():
    namespace = {}
    _run_cxx(ADD, "ex1", namespace)
    assert list(namespace) == ["add_custom"]
    assert "add_custom" in repr(namespace["add_custom"])


def test_cxx_answer_that_does_not_compile_raises_compile_error():
    from ascend_sim.ascendc import CompileError
    with pytest.raises(CompileError):
        _run_cxx(ADD.replace("{}", "{ undeclared_name(); }"), "ex1", {})


def test_the_runner_reads_the_magic_line_as_jupyterlab_does():
    # -D macros apply, -I folders are refused, and a diagnostic's line is the cell's (the magic line is line 1)
    from ascend_sim.ascendc import CompileError
    namespace = {}
    uses_macro = ADD.replace("{}", "{ uint32_t tile = TILE_LEN; }")
    _run_cxx(uses_macro.replace("%%ascendc", "%%ascendc -D TILE_LEN=8"), "ex1", namespace)
    assert list(namespace) == ["add_custom"]
    with pytest.raises(CompileError, match="TILE_LEN"):
        _run_cxx(uses_macro, "ex1", {})
    with pytest.raises(RuntimeError, match="does not take -I folders"):
        _run_cxx(ADD.replace("%%ascendc", "%%ascendc -I /etc"), "ex1", {})
    with pytest.raises(CompileError, match=r"<ascendc:ex1>:4:\d+: error"):
        _run_cxx(ADD.replace("{}", "{ undeclared_name(); }"), "ex1", {})
