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


def test_a_cell_links_the_kernels_an_earlier_answer_cell_bound():
    # lab01 ex6's shape: the host code declares a kernel of an earlier cell and launches it with <<<>>>
    from ascend_sim.ascendc import CompileError
    host = ('%%ascendc\n#include "kernel_operator.h"\n#include "acl/acl.h"\n'
            'extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);\n'
            'void run(uint8_t* x, uint8_t* y, uint8_t* z) { add_custom<<<1, nullptr, nullptr>>>(x, y, z); }\n')
    with pytest.raises(CompileError, match=r"<ascendc:ex6>:4:\d+: error: undefined kernel 'add_custom'"):
        _run_cxx(host, "ex6", {})
    namespace = {}
    _run_cxx(ADD, "ex1", namespace)
    _run_cxx(host, "ex6", namespace)
    assert set(namespace) == {"add_custom", "run"}
