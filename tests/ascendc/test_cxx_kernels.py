"""Whole kernels in C++: add_tque.cpp, the C++ twin of ascend_sim/kernels/add_custom.py, gives the Python kernel's
cycles and instruction sequence; LeakyRelu with static tensors and flags is exact; the tiling argument is accepted
in each of its forms."""
from pathlib import Path

import numpy as np
import pytest

from ascend_sim import ArgumentError, launch
from ascend_sim.ascendc import load
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom

KERNELS = Path(__file__).parent / "kernels"


@pytest.fixture(scope="module")
def add_mod():
    return load(KERNELS / "add_tque.cpp")


def test_add_custom_twin_matches_the_python_kernel(add_mod):
    n = 8 * 2048
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, (2, n)).astype(np.float16)
    z_cpp, z_py = np.zeros_like(x), np.zeros_like(x)
    tiling = add_mod.structs.AddTqueTilingData(totalLength=n, tileNum=8)
    r_cpp = launch(add_mod.add_tque, 8, x, y, z_cpp, None, tiling)
    r_py = launch(add_custom, 8, x, y, z_py, AddCustomTilingData(totalLength=n, tileNum=8))
    np.testing.assert_array_equal(z_cpp, x + y)
    assert r_cpp.cycles == r_py.cycles
    assert [(r.op, r.pipe, r.start, r.end) for r in r_cpp.trace.records] == \
        [(r.op, r.pipe, r.start, r.end) for r in r_py.trace.records]
    # the records name the C++ lines
    copy = next(r for r in r_cpp.trace.records if r.op == "DataCopy")
    assert copy.line.startswith("add_tque.cpp:") and "DataCopy(" in copy.source


@pytest.mark.parametrize("form", ["struct", "dict", "bytes"])
def test_tiling_argument_forms(add_mod, form):
    n = 4 * 1024
    x = np.arange(n, dtype=np.float16) / 64
    y = np.ones(n, np.float16)
    z = np.zeros_like(x)
    t = add_mod.structs.AddTqueTilingData(totalLength=n, tileNum=2)
    arg = {"struct": t, "dict": {"totalLength": n, "tileNum": 2}, "bytes": t.to_bytes()}[form]
    launch(add_mod.add_tque, 4, x, y, z, None, arg)
    np.testing.assert_array_equal(z, x + y)


def test_tiling_of_the_wrong_type_is_named(add_mod):
    x = np.zeros(2048, np.float16)
    with pytest.raises(ArgumentError, match="AddTqueTilingData"):
        launch(add_mod.add_tque, 1, x, x.copy(), x.copy(), None, "tiling")


def test_leaky_relu_static_tensors_and_flags():
    mod = load(KERNELS / "leaky_relu_flags.cpp")
    n = 8 * 1024
    x = np.random.default_rng(2).uniform(-2, 2, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    tiling = mod.structs.LeakyReluTiling(totalLength=n, tileLength=256, slope=0.01)
    r = launch(mod.leaky_relu, 8, x, y, None, tiling)
    slope = np.float32(0.01)
    np.testing.assert_array_equal(y, np.where(x > 0, x, x * slope))
    assert {"LeakyRelu", "SetFlag", "WaitFlag", "DataCopy"} <= {rec.op for rec in r.trace.records}


def test_a_cpp_kernel_takes_arguments_by_parameter_name(add_mod):
    import re
    from ascend_sim import LaunchError
    mod = add_mod
    x = np.arange(8 * 2048, dtype=np.float16) / 4096
    y, z = x[::-1].copy(), np.zeros_like(x)
    tiling = mod.structs.AddTqueTilingData(totalLength=8 * 2048, tileNum=8)
    launch(mod.add_tque, 8, x, y, z, workspace=None, tiling=tiling)
    np.testing.assert_array_equal(z, x + y)
    for bad, words in ((dict(tiling=tiling), "no value for ['workspace']"),
                       (dict(workspace=None, tiling=tiling, tilling=1), "no parameter ['tilling']")):
        with pytest.raises(LaunchError, match=re.escape(words)):
            launch(mod.add_tque, 8, x, y, z, **bad)


def test_a_host_tiling_dataclass_fills_the_cpp_struct_by_field_name(add_mod):
    # a lab's check passes its own Python tiling dataclass: the fields the C++ struct has are read by name
    from dataclasses import dataclass
    import re
    x = np.arange(8 * 2048, dtype=np.float16) / 4096
    y, z = x[::-1].copy(), np.zeros_like(x)
    launch(add_mod.add_tque, 8, x, y, z, None, AddCustomTilingData(totalLength=8 * 2048, tileNum=8))
    np.testing.assert_array_equal(z, x + y)

    @dataclass
    class NoTiles:
        totalLength: int

    with pytest.raises(ArgumentError, match=re.escape("needs ['tileNum']")):
        launch(add_mod.add_tque, 8, x, y, z, None, NoTiles(8 * 2048))
