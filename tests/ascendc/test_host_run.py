"""``ascend-sim run``: main runs in the working folder on a fresh ACL runtime, prints, and sets the exit status.

The front end is replaced here by a stand-in ``load`` returning a module whose ``main`` is Python written as
the front end lowers host code (Ref for ``&x``); test_host_run_cpp.py runs real .asc files.
"""
from __future__ import annotations

import types

import numpy as np
import pytest

import ascend_sim.ascendc as front
from ascend_sim.ascendc.host import acl
from ascend_sim.ascendc.host.data_utils import ReadFile, WriteFile
from ascend_sim.ascendc.host.run import run_file
from ascend_sim.tools import cli

from test_host_acl import BLOCKS, N, Var, add_f32


def _program(status_if_ok=0):
    """main(argc, argv) of an add example: read input/, launch, write output/, verify, return the status."""
    def main(argc, argv):
        nbytes = N * BLOCKS * 4
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        stream, xh, yh, zh, xd, yd, zd = (Var() for _ in range(7))
        acl.aclrtCreateStream(stream.ref())
        for h in (xh, yh, zh):
            acl.aclrtMallocHost(h.ref(), nbytes)
        for d in (xd, yd, zd):
            acl.aclrtMalloc(d.ref(), nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        ReadFile("./input/input_x.bin", nbytes, xh.value, nbytes)
        ReadFile("./input/input_y.bin", nbytes, yh.value, nbytes)
        acl.aclrtMemcpy(xd.value, nbytes, xh.value, nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        acl.aclrtMemcpy(yd.value, nbytes, yh.value, nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        acl.launch_kernel(add_f32, BLOCKS, stream.value, xd.value, yd.value, zd.value, N)
        acl.aclrtSynchronizeStream(stream.value)
        acl.aclrtMemcpy(zh.value, nbytes, zd.value, nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        WriteFile("./output/output.bin", zh.value, nbytes)
        print(f"argv[0] = {argv[0].rsplit('/', 1)[-1]}")
        for d in (xd, yd):                       # zd and the host buffers are left for the leak notes
            acl.aclrtFree(d.value)
        acl.aclrtDestroyStream(stream.value)
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
        return status_if_ok
    return types.SimpleNamespace(main=main)


@pytest.fixture
def example(tmp_path, monkeypatch):
    src = tmp_path / "add.asc"
    src.write_text("// stands in for a real program\n")
    for d in ("input", "output"):
        (tmp_path / d).mkdir()
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, (2, N * BLOCKS)).astype(np.float32)
    x.tofile(tmp_path / "input" / "input_x.bin")
    y.tofile(tmp_path / "input" / "input_y.bin")
    return src, x + y


def test_run_file_runs_main_in_the_file_folder(example, monkeypatch, capsys, tmp_path):
    src, golden = example
    monkeypatch.setattr(front, "load", lambda path, **kw: _program(), raising=False)
    monkeypatch.chdir("/")
    outcome = run_file(src)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "output" / "output.bin", np.float32), golden)
    assert outcome.returncode == 0 and [(n, b) for n, b, _ in outcome.launches] == [("add_f32", BLOCKS)]
    assert len(outcome.leaks) == 4                  # zd and three host buffers
    assert capsys.readouterr().out == "argv[0] = add.asc\n"


def test_the_command_prints_the_launches_and_exits_with_mains_status(example, monkeypatch, capsys, tmp_path):
    src, _ = example
    work = tmp_path / "elsewhere"
    (work / "input").mkdir(parents=True)
    (work / "output").mkdir()
    for f in ("input_x.bin", "input_y.bin"):
        (work / "input" / f).write_bytes((tmp_path / "input" / f).read_bytes())
    monkeypatch.setattr(front, "load", lambda path, **kw: _program(status_if_ok=257), raising=False)
    status = cli.main(["run", str(src), "--workdir", str(work), "--chip", "Ascend310B", "--blocks-profile",
                       "--profile"])
    out = capsys.readouterr().out.splitlines()
    assert status == 1                              # 257 & 0xFF, as a process's exit status
    assert (work / "output" / "output.bin").stat().st_size == N * BLOCKS * 4
    launch = next(line for line in out if line.startswith("launch 1:"))
    assert "add_f32<<<4>>>" in launch and "cycles" in launch and "at 1 GHz (Ascend310B)" in launch
    assert sum(line.strip().split()[0].isdigit() for line in out if line.startswith("    ")) == BLOCKS
    assert sum("never freed" in line for line in out) == 4
    assert any("launch 1 profile:" in line for line in out) and any("MTE2" in line for line in out)


def test_an_acl_error_in_main_is_reported_with_status_1(example, monkeypatch, capsys):
    src, _ = example

    def main():
        acl.aclrtSetDevice(0)
        acl.aclrtFree(Var().value or acl.DevicePtr(acl.DeviceAllocation(1, np.zeros(4, np.uint8), freed=True)))
    monkeypatch.setattr(front, "load", lambda path, **kw: types.SimpleNamespace(main=main), raising=False)
    assert cli.main(["run", str(src)]) == 1
    err = capsys.readouterr().err
    assert "[acl]" in err and "double free" in err and "Fix:" in err


def test_a_file_without_main(example, monkeypatch, capsys):
    src, _ = example
    monkeypatch.setattr(front, "load", lambda path, **kw: types.SimpleNamespace(), raising=False)
    assert cli.main(["run", str(src)]) == 2
    assert "no host main()" in capsys.readouterr().err
