"""``ascend-sim export``: the project's files exist, its C++ passes g++ against our headers, its scripts work.

Kernels are our own (written from the API docs); the spec gives what the signature does not say.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.ascendc.export import ExportError, ExportSpec, export
from ascend_sim.ascendc.signature import read_kernels, todo_lines
from ascend_sim.ascendc.syntax import find_gxx, gxx_check
from ascend_sim.tools import cli

ADD = """\
#include "kernel_operator.h"
using namespace AscendC;

template <uint32_t blockLength>
__global__ __vector__ void add_custom(__gm__ float* x, __gm__ float* y, __gm__ float* z)
{
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(x + GetBlockIdx() * blockLength, blockLength);
}
"""

TWO_STYLES = """\
#include "kernel_operator.h"
using namespace AscendC;

struct ScaleTiling {
    uint32_t blockLength;
    float scale;
};

extern "C" __global__ __aicore__ void scale_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTiling);
    GET_TILING_DATA(tilingData, tiling);
}

__global__ __vector__ void axpy(__gm__ half* x, __gm__ half* y, ScaleTiling t, float alpha)
{
}
"""

FILES = ["add_custom.asc", "CMakeLists.txt", "data_utils.h", "scripts/gen_data.py", "scripts/verify_result.py",
         "README.md"]
needs_gxx = pytest.mark.skipif(find_gxx() is None, reason="g++ is not installed")


@pytest.fixture
def add_kernel(tmp_path):
    path = tmp_path / "add_custom.cpp"
    path.write_text(ADD)
    return path


@pytest.fixture
def two_styles(tmp_path):
    path = tmp_path / "kernels.cpp"
    path.write_text(TWO_STYLES)
    return path


def test_signatures_of_both_kernel_styles(two_styles):
    old, new = read_kernels(two_styles)
    assert (old.name, old.qualifier, old.extern_c) == ("scale_custom", "__aicore__", True)
    assert (old.tiling_struct, old.tiling_param) == ("ScaleTiling", "tiling")
    assert [(p.name, p.kind, p.gm_addr) for p in old.params] == [("x", "gm", True), ("y", "gm", True),
                                                                 ("tiling", "gm", True)]
    assert (new.name, new.qualifier) == ("axpy", "__vector__")
    assert [(p.name, p.kind, p.ctype) for p in new.params] == [("x", "gm", "half"), ("y", "gm", "half"),
                                                               ("t", "struct", "ScaleTiling"),
                                                               ("alpha", "scalar", "float")]
    assert new.structs["ScaleTiling"] == [("blockLength", "uint32_t"), ("scale", "float")]


@needs_gxx
def test_the_project_files_and_the_syntax_check(add_kernel, tmp_path):
    out = tmp_path / "project"
    spec = ExportSpec(blocks=4, length=4096, values={"blockLength": 1024}, golden={"z": "x + y"})
    written = export(add_kernel, out, spec)
    assert sorted(p.relative_to(out).as_posix() for p in written) == sorted(FILES)
    asc = (out / "add_custom.asc").read_text()
    assert ADD.strip() in asc                                           # the kernel, unchanged
    assert "add_custom<1024><<<numBlocks, nullptr, stream>>>(xDevice, yDevice, zDevice);" in asc
    assert "constexpr size_t zBytes = 4096 * sizeof(float);" in asc
    assert gxx_check(asc, str(out / "add_custom.asc")) == []
    broken = asc.replace("aclrtSynchronizeStream(stream);", "aclrtSynchronizeStream(stream, 0);")
    assert gxx_check(broken, str(out / "add_custom.asc")) != []         # the check does reject wrong C++
    done = subprocess.run([find_gxx(), "-std=c++17", "-fsyntax-only", "-x", "c++", str(out / "data_utils.h")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cmake = (out / "CMakeLists.txt").read_text()
    assert "find_package(ASC REQUIRED)" in cmake and "LANGUAGES ASC CXX" in cmake and "add_custom.asc" in cmake


@needs_gxx
def test_tiling_by_gm_addr_and_by_value(two_styles, tmp_path):
    values = {"blockLength": 2048, "scale": 0.5, "alpha": 2}
    for kernel, golden, dtype in (("scale_custom", {"y": "x * scale"}, "half"), ("axpy", {"y": "alpha * x + y"}, None)):
        spec = ExportSpec(kernel=kernel, values=dict(values), golden=golden, outputs=["y"], dtype=dtype or "float")
        asc = export(two_styles, tmp_path / kernel, spec)[0]
        text = asc.read_text()
        assert "tiling.scale = static_cast<float>(0.5);" in text
        assert gxx_check(text, str(asc)) == [], kernel
    assert "scale_custom<<<numBlocks, nullptr, stream>>>(xDevice, yDevice, tilingDevice);" in \
        (tmp_path / "scale_custom" / "scale_custom.asc").read_text()
    assert "axpy<<<numBlocks, nullptr, stream>>>(xDevice, yDevice, tiling, alpha);" in \
        (tmp_path / "axpy" / "axpy.asc").read_text()


def test_the_scripts_generate_and_judge(add_kernel, tmp_path):
    out = tmp_path / "project"
    export(add_kernel, out, ExportSpec(length=2048, values={"blockLength": 256}, golden={"z": "x + y"}))
    subprocess.run([sys.executable, "scripts/gen_data.py"], cwd=out, check=True)
    x, y = (np.fromfile(out / "input" / f"input_{n}.bin", np.float32) for n in "xy")
    golden = np.fromfile(out / "output" / "golden_z.bin", np.float32)
    assert x.size == 2048 and np.array_equal(golden, x + y)
    verify = [sys.executable, "scripts/verify_result.py"]
    done = subprocess.run(verify, cwd=out, capture_output=True, text=True)
    assert done.returncode == 1 and "output_z.bin is missing" in done.stdout and not done.stderr
    (x + y).tofile(out / "output" / "output_z.bin")
    assert subprocess.run(verify, cwd=out, capture_output=True, text=True).stdout.endswith("test pass!\n")
    wrong = x + y
    wrong[::100] += 1                                                   # 21 of 2048 wrong: over the 1e-4 ratio
    wrong.tofile(out / "output" / "output_z.bin")
    done = subprocess.run(verify, cwd=out, capture_output=True, text=True)
    assert done.returncode == 1 and "21 of 2048 elements differ" in done.stdout


def test_gaps_in_the_spec_are_named(add_kernel, two_styles, tmp_path):
    with pytest.raises(ExportError, match="--set blockLength=VALUE"):
        export(add_kernel, tmp_path / "a", ExportSpec(golden={"z": "x + y"}))
    with pytest.raises(ExportError, match="no golden for output"):
        export(add_kernel, tmp_path / "b", ExportSpec(values={"blockLength": 8}))
    with pytest.raises(ExportError, match="choose one with --kernel"):
        export(two_styles, tmp_path / "c", ExportSpec())
    with pytest.raises(ExportError, match="no value for the field of ScaleTiling 'scale'"):
        export(two_styles, tmp_path / "d", ExportSpec(kernel="scale_custom", values={"blockLength": 8},
                                                      golden={"tiling": "x"}, outputs=["y"]))
    assert not (tmp_path / "a").exists()                                # nothing written on an error


def test_the_command_line(add_kernel, tmp_path, capsys):
    status = cli.main(["export", str(add_kernel), "--out", str(tmp_path / "cli"), "--set", "blockLength=2048",
                       "--golden", "z=x + y", "--blocks", "2", "--length", "4096"])
    assert status == 0 and len(capsys.readouterr().out.splitlines()) == len(FILES)
    assert "numBlocks = 2;" in (tmp_path / "cli" / "add_custom.asc").read_text()
    assert cli.main(["export", str(add_kernel), "--out", str(tmp_path / "x")]) == 2
    assert "--set blockLength" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake")
def test_cmake_file_parses(add_kernel, tmp_path):
    """cmake accepts the file's syntax (it stops at find_package(ASC), which needs CANN)."""
    out = tmp_path / "p"
    export(add_kernel, out, ExportSpec(values={"blockLength": 8}, golden={"z": "x + y"}))
    done = subprocess.run(["cmake", "-S", str(out), "-B", str(tmp_path / "build")], capture_output=True, text=True)
    assert "Parse error" not in done.stderr and "ASC" in done.stderr


@needs_gxx
def test_a_tiling_header_beside_the_kernel_ships_with_it(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "scale_tiling.h").write_text("#pragma once\n#include <cstdint>\nstruct ScaleTiling {\n"
                                        "    uint32_t blockLength;\n    float scale;\n};\n")
    kernel = TWO_STYLES.replace("struct ScaleTiling {\n    uint32_t blockLength;\n    float scale;\n};\n",
                                '#include "scale_tiling.h"\n')
    (src / "scale.cpp").write_text(kernel)
    spec = ExportSpec(kernel="scale_custom", dtype="half", outputs=["y"], values={"blockLength": 64, "scale": 2},
                      golden={"y": "x * scale"})
    written = export(src / "scale.cpp", tmp_path / "out", spec)
    assert (tmp_path / "out" / "scale_tiling.h") in written
    asc = tmp_path / "out" / "scale_custom.asc"
    assert "tiling.scale = static_cast<float>(2);" in asc.read_text()
    assert gxx_check(asc.read_text(), str(asc)) == []


def test_a_json_spec_file_or_inline(add_kernel, tmp_path, capsys):
    spec = tmp_path / "spec.json"
    spec.write_text('{"blocks": 2, "length": 512, "values": {"blockLength": 256}, "golden": {"z": "x - y"}}')
    assert cli.main(["export", str(add_kernel), "--out", str(tmp_path / "f"), "--spec", str(spec)]) == 0
    assert "golden_z = np.asarray(x - y)" in (tmp_path / "f" / "scripts" / "gen_data.py").read_text()
    inline = '{"values": {"blockLength": 256}, "golden": {"z": "x + y"}, "outputs": ["z"], "blocks": 3}'
    assert cli.main(["export", str(add_kernel), "--out", str(tmp_path / "i"), "--spec", inline]) == 0
    assert "numBlocks = 3;" in (tmp_path / "i" / "add_custom.asc").read_text()
    assert cli.main(["export", str(add_kernel), "--out", str(tmp_path / "u"), "--spec", '{"block": 2}']) == 2
    assert "unknown export spec keys ['block']" in capsys.readouterr().err


def test_an_unfinished_exercise_stub_is_not_exported(tmp_path):
    # the C++ stub of lab00 ex1 still holds ASCEND_SIM_TODO lines: CANN does not have the macro, export refuses
    from ascend_sim.course.grading.solution_file import CPP, parse_solutions
    sol = parse_solutions(Path(__file__).resolve().parents[2] / "solutions" / "lab00_warmup.cpp")["ex1"]
    stub = tmp_path / "add_custom.cpp"
    stub.write_text(CPP.block(sol.stub))
    line = CPP.block(sol.stub).splitlines().index(next(ln for ln in CPP.block(sol.stub).splitlines()
                                                       if "ASCEND_SIM_TODO" in ln)) + 1
    with pytest.raises(ExportError, match=rf"add_custom.cpp:{line}: ASCEND_SIM_TODO .* \(5 left\)"):
        export(stub, tmp_path / "out", ExportSpec(golden={"z": "x + y"}))
    assert not (tmp_path / "out").exists()
    answer = tmp_path / "answer.cpp"
    answer.write_text(CPP.block(sol.code))
    assert todo_lines(answer) == []
