"""%%ascendc binds a cell's kernels, structs and functions; printf and std::cout print as C++ does."""
import numpy as np
import pytest

from ascend_sim import launch
from ascend_sim.ascendc import CompileError
from ascend_sim.ascendc.magic import parse_line, run_cell
from cxx_util import HEADER, load_src

CELL = HEADER + """
struct ScaleTiling { uint32_t n; float scale; };
float Twice(float v) { return v * 2.0f; }
extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(ScaleTiling, t, tiling);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, t.n);
    for (uint32_t i = 0; i < t.n; i++) {
        float v = g.GetValue(i);
        SetFlag<HardEvent::MTE2_S>(EVENT_ID0);      // the GM read (MTE2) before the scalar write
        WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
        g.SetValue(i, v * t.scale);
    }
}
"""


def test_cell_magic_binds_kernels_structs_and_functions():
    ns = {}
    run_cell("scaler -D UNUSED=1", CELL, ns)
    assert {"scale", "ScaleTiling", "Twice", "scaler"} <= set(ns)
    x = np.arange(8, dtype=np.float32)
    launch(ns["scale"], 1, x, ns["ScaleTiling"](n=8, scale=0.5))
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32) * np.float32(0.5))
    assert ns["Twice"](np.float32(1.5)) == 3.0
    assert "def scale(x, tiling):" in ns["scaler"].python_source


def test_cell_magic_line_parsing():
    assert parse_line("mine -D A=1 -DB -I inc -Iother") == ("mine", {"A": "1", "B": None}, ["inc", "other"], True)
    assert parse_line("mine --cce-auto-sync=off").auto_sync is False
    assert parse_line("--cce-auto-sync=on").auto_sync is True


def test_a_compile_error_renders_as_compiler_lines():
    with pytest.raises(CompileError) as e:
        run_cell("broken", HEADER + "void f() { g(); }\n", {})
    lines = e.value._render_traceback_()
    # line 4 of the cell: the %%ascendc line is line 1, as JupyterLab numbers the cell
    assert lines[1].startswith("<ascendc:broken>:4:12: error: use of undeclared identifier 'g'")


def test_printf_and_cout(capsys):
    mod = load_src("""
#include <cstdio>
#include <iostream>
void Show(int32_t n, float f, uint32_t u) {
    printf("n=%d f=%.2f u=%u %s\\n", n, f, u, "ok");
    std::cout << "n=" << n << " f=" << f << " b=" << (n > 0) << std::endl;
}
""", name="io")
    mod.Show(-3, np.float32(0.125), 4000000000)
    assert capsys.readouterr().out == "n=-3 f=0.12 u=4000000000 ok\nn=-3 f=0.125 b=0\n"


def test_to_string_has_every_standard_overload():
    # "x" + std::to_string(i) with a uint32_t i: with only the long long / unsigned long long / double overloads
    # the call was ambiguous (clang's error), as in the official atomic sample's host code
    mod = load_src("""
#include <string>
std::string name(uint32_t i, int32_t j, float f) { return "x" + std::to_string(i) + "_" + std::to_string(j) + "_" +
                                                       std::to_string(f); }
""", name="to_string")
    assert mod.name(7, -3, 1.5) == "x7_-3_1.500000"


def test_each_cell_keeps_its_own_source_lines_in_errors():
    # two cells of one notebook: an error of the first cell's kernel, raised after the second cell ran, quotes
    # the first cell's line (each cell is labelled by its execution count, <ascendc:In[N]>)
    from ascend_sim.engine.errors import KernelError
    first = HEADER + 'extern "C" __global__ __aicore__ void k1(GM_ADDR x) { ascendc_assert(false, "first"); }\n'
    second = HEADER + '\n\nextern "C" __global__ __aicore__ void k2(GM_ADDR x) { }\n'
    ns: dict = {}
    run_cell("", first, ns, label="In[1]")
    run_cell("", second, ns, label="In[2]")
    with pytest.raises(KernelError) as e:
        launch(ns["k1"], 1, np.zeros(16, np.float32))
    assert "<ascendc:In[1]>:" in str(e.value) and "ascendc_assert(false" in str(e.value), str(e.value)
