"""``--cce-auto-sync=off`` as a build option of C++ kernels: the ``%%ascendc`` line, ``load`` and the grader.

The compiler option belongs to the build (the official projects' compile options), so a kernel built with it off
launches with auto-sync off from ``launch``, from a cell's host code and from the grader alike; the default build
(on) makes the scalar's wait itself (docs/architecture.md, "Auto-sync"; tests/sim/test_auto_sync.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import RaceError, half, launch
from ascend_sim.ascendc import load
from ascend_sim.ascendc.magic import parse_line, run_cell
from ascend_sim.course.grading.runner import _run_cxx

N = 64
CELL = """#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void copy_then_get(GM_ADDR x, GM_ADDR z)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 128);
    LocalTensor<half> t = buf.Get<half>();
    GlobalTensor<half> xg, zg;
    xg.SetGlobalBuffer((__gm__ half*)x, 64);
    zg.SetGlobalBuffer((__gm__ half*)z, 64);
    DataCopy(t, xg, 64);
    zg.SetValue(0, t.GetValue(5));      // MTE2 then the scalar: no flag of the kernel's own
}
"""


def run(k):
    x = np.arange(N, dtype=half)
    z = np.zeros(N, half)
    launch(k, 1, x, z)
    return z


def test_the_default_cell_makes_the_scalar_wait():
    ns: dict = {}
    run_cell("synced", CELL, ns)
    assert ns["copy_then_get"].auto_sync is True
    assert run(ns["copy_then_get"])[0] == 5


def test_a_cell_built_with_auto_sync_off_races_and_names_the_line():
    ns: dict = {}
    run_cell("unsynced --cce-auto-sync=off", CELL, ns)
    with pytest.raises(RaceError) as e:
        run(ns["copy_then_get"])
    text = str(e.value)
    assert "auto-sync" in text and "off" in text
    assert "<ascendc:unsynced>:14" in text          # the cell's line of GetValue (the magic line is line 1)


def test_load_takes_the_option():
    mod = load(CELL, name="off", auto_sync=False)
    assert mod.copy_then_get.auto_sync is False
    with pytest.raises(RaceError):
        run(mod.copy_then_get)
    with pytest.raises(TypeError, match="True or False"):
        load(CELL, name="bad", auto_sync="off")


def test_launch_cannot_turn_a_build_option_back_on():
    mod = load(CELL, name="off2", auto_sync=False)
    x, z = np.arange(N, dtype=half), np.zeros(N, half)
    with pytest.raises(RaceError):
        launch(mod.copy_then_get, 1, x, z, auto_sync=True)


def test_the_grader_honours_the_option_on_an_answer_cell():
    ns: dict = {}
    _run_cxx("%%ascendc --cce-auto-sync=off\n" + CELL, "answer-cell", ns)
    assert ns["copy_then_get"].auto_sync is False
    with pytest.raises(RaceError):
        run(ns["copy_then_get"])


@pytest.mark.parametrize("line, words", [("--cce-auto-sync=maybe", "takes on or off"),
                                         ("--cce-auto-sync", "takes on or off"),
                                         ("--O3", "unknown option '--O3'")])
def test_a_bad_option_names_the_rule_and_the_fix(line, words):
    with pytest.raises(ValueError, match=words) as e:
        parse_line(line)
    assert "--cce-auto-sync=on|off" in str(e.value)
