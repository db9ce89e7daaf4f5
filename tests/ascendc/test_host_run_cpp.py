"""Whole C++ programs through the front end: host mistakes stop at the C++ line; an exported project runs and
passes its own verify script."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.ascendc.export import ExportSpec, export
from ascend_sim.ascendc.host.acl import AclError
from ascend_sim.ascendc.host.run import run_file

KERNEL = """\
#include "acl/acl.h"
#include "kernel_operator.h"

__global__ __vector__ void touch_custom(__gm__ float* x, __gm__ float* y)
{
    AscendC::GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(x, 256);
}

int32_t main(int32_t argc, char* argv[])
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    float* xDevice = nullptr;
    float* yDevice = nullptr;
    uint8_t* xHost = nullptr;
    aclrtMalloc((void**)&xDevice, 1024, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&yDevice, 1024, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMallocHost((void**)&xHost, 2048);
    MISTAKE
    return 0;
}
"""

MISTAKES = {
    "out-of-bounds": "aclrtMemcpy(xDevice, 2048, xHost, 2048, ACL_MEMCPY_HOST_TO_DEVICE);",
    "dest-max": "aclrtMemcpy(xDevice, 512, xHost, 1024, ACL_MEMCPY_HOST_TO_DEVICE);",
    "memcpy-direction": "aclrtMemcpy(xHost, 1024, xDevice, 1024, ACL_MEMCPY_HOST_TO_DEVICE);",
    "double-free": "aclrtFree(xDevice); aclrtFree(xDevice);",
    "use-after-free": "aclrtFree(yDevice); touch_custom<<<1, nullptr, stream>>>(xDevice, yDevice);",
    "host-pointer-launch": "float* h = nullptr; aclrtMallocHost((void**)&h, 1024); "
                           "touch_custom<<<1, nullptr, stream>>>(xDevice, h);",
    "unsynchronized": "touch_custom<<<1, nullptr, stream>>>(xDevice, yDevice); "
                      "aclrtMemcpy(xHost, 1024, yDevice, 1024, ACL_MEMCPY_DEVICE_TO_HOST);",
}


@pytest.mark.parametrize("kind", sorted(MISTAKES))
def test_a_host_mistake_stops_at_its_cpp_line(kind, tmp_path):
    path = tmp_path / f"{kind}.asc"
    path.write_text(KERNEL.replace("MISTAKE", MISTAKES[kind]))
    with pytest.raises(AclError) as e:
        run_file(path)
    line = KERNEL.splitlines().index("    MISTAKE") + 1
    assert e.value.kind == kind
    assert e.value.site == (str(path), line), e.value.site      # the .asc file and line, not generated Python
    assert f"{kind}.asc:{line}" in str(e.value) and "Fix:" in str(e.value)
    if kind in ("host-pointer-launch", "use-after-free"):
        assert "argument 1 (y) of touch_custom<<<...>>>" in str(e.value)       # the C++ parameter's name


def test_a_correct_program_runs_and_records_its_launch(tmp_path):
    path = tmp_path / "ok.asc"
    path.write_text(KERNEL.replace("MISTAKE", "touch_custom<<<2, nullptr, stream>>>(xDevice, yDevice); "
                                              "aclrtSynchronizeStream(stream); "
                                              "aclrtMemcpy(xHost, 1024, yDevice, 1024, ACL_MEMCPY_DEVICE_TO_HOST);")
                    .replace("return 0;", "return 3;"))
    outcome = run_file(path)
    assert outcome.returncode == 3 and [(n, b) for n, b, _ in outcome.launches] == [("touch_custom", 2)]
    assert len(outcome.leaks) == 3


SCALE = """\
#include "kernel_operator.h"

constexpr uint32_t TILE = 256;

template <uint32_t blockLength>
__global__ __vector__ void scale_custom(__gm__ half* x, __gm__ half* y, float scale)
{
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer(x + AscendC::GetBlockIdx() * blockLength, blockLength);
    yGm.SetGlobalBuffer(y + AscendC::GetBlockIdx() * blockLength, blockLength);
    pipe.InitBuffer(inQueue, 1, TILE * sizeof(half));
    pipe.InitBuffer(outQueue, 1, TILE * sizeof(half));
    for (uint32_t i = 0; i < blockLength / TILE; ++i) {
        AscendC::LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[i * TILE], TILE);
        inQueue.EnQue(xLocal);
        xLocal = inQueue.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        AscendC::Muls(yLocal, xLocal, static_cast<half>(scale), TILE);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
        yLocal = outQueue.DeQue<half>();
        AscendC::DataCopy(yGm[i * TILE], yLocal, TILE);
        outQueue.FreeTensor(yLocal);
    }
}
"""


SCALE_OLD_STYLE = """\
#include "kernel_operator.h"

struct ScaleTiling {
    uint32_t blockLength;
    float scale;
};

extern "C" __global__ __aicore__ void scale_old(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTiling);
    GET_TILING_DATA(tilingData, tiling);
    uint32_t n = tilingData.blockLength;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + AscendC::GetBlockIdx() * n, n);
    yGm.SetGlobalBuffer((__gm__ float*)y + AscendC::GetBlockIdx() * n, n);
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(t, t, tilingData.scale, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, n);
}
"""

PROJECTS = {    # kernel source, its name, the spec, the output's dtype
    "vector-template": (SCALE, "scale_custom", ExportSpec(blocks=4, length=4 * 1024, golden={"y": "x * scale"},
                                                          values={"blockLength": 1024, "scale": 0.5}), np.float16),
    "gm_addr-tiling": (SCALE_OLD_STYLE, "scale_old", ExportSpec(blocks=8, length=8 * 512, golden={"y": "x * scale"},
                                                                dtype="float", values={"blockLength": 512,
                                                                                       "scale": 0.25}), np.float32),
}


@pytest.mark.parametrize("style", sorted(PROJECTS))
def test_an_exported_project_runs_and_passes_its_own_verify(style, tmp_path):
    source, name, spec, dtype = PROJECTS[style]
    kernel = tmp_path / f"{name}.cpp"
    kernel.write_text(source)
    out = tmp_path / "project"
    export(kernel, out, spec)
    subprocess.run([sys.executable, "scripts/gen_data.py"], cwd=out, check=True)
    outcome = run_file(out / f"{name}.asc")
    assert outcome.returncode == 0 and outcome.leaks == [] and len(outcome.launches) == 1
    verify = subprocess.run([sys.executable, "scripts/verify_result.py"], cwd=out, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout
    y = np.fromfile(out / "output" / "output_y.bin", dtype)
    np.testing.assert_array_equal(y, np.fromfile(out / "output" / "golden_y.bin", dtype))


def test_the_command_prints_compile_errors_and_acl_errors_as_diagnostics(tmp_path, capsys):
    from ascend_sim.tools import cli
    bad = tmp_path / "bad.asc"
    bad.write_text(KERNEL.replace("MISTAKE", "aclrtMemcpy(xDevice, 1024, xHost);"))
    assert cli.main(["run", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"bad.asc:{KERNEL.splitlines().index('    MISTAKE') + 1}:" in err and "error" in err
    wrong = tmp_path / "wrong.asc"
    wrong.write_text(KERNEL.replace("MISTAKE", MISTAKES["double-free"]))
    assert cli.main(["run", str(wrong)]) == 1
    err = capsys.readouterr().err
    assert "[acl] wrong.asc:" in err and "double free" in err and "Traceback" not in err


def test_an_unexpected_exception_names_the_program_line(tmp_path, capsys, monkeypatch):
    from ascend_sim.ascendc.host import acl
    from ascend_sim.tools import cli

    def broken(*args):
        raise RuntimeError("planted")
    monkeypatch.setattr(acl, "aclrtMallocHost", broken)
    prog = tmp_path / "p.asc"
    prog.write_text(KERNEL.replace("MISTAKE", ""))
    assert cli.main(["run", str(prog)]) == 1
    err = capsys.readouterr().err
    line = next(i for i, t in enumerate(KERNEL.splitlines(), 1) if "aclrtMallocHost" in t)
    assert f"p.asc:{line}: `aclrtMallocHost((void**)&xHost, 2048);`: RuntimeError: planted" in err


ASSERTS = """\
#include <cassert>
#include "acl/acl.h"

int32_t main()
{
    aclError ret = aclInit(nullptr);
    assert(ret == ACL_SUCCESS && "aclInit failed!");
    assert(ret != ACL_SUCCESS && "the second assert fails");
    return 0;
}
"""


def test_cassert_in_host_code_stops_at_the_failing_assert(tmp_path):
    """<cassert> (the official samples check every ACL call with it): a true assert passes, a false one stops the
    program at its own line; with NDEBUG, as in C, assert does nothing."""
    from ascend_sim import KernelError
    src = tmp_path / "asserts.asc"
    src.write_text(ASSERTS)
    with pytest.raises(KernelError) as err:
        run_file(src)
    assert err.value.site[1] == 8 and "Assertion failed" in str(err.value)
    assert run_file(src, defines={"NDEBUG": None}).returncode == 0
