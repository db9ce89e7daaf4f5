"""``ascend-sim export KERNEL.cpp --out DIR``: a kernel as a project for a real NPU, in the layout of the
current asc-devkit examples (``examples/01_simd_cpp_api/00_introduction/01_add/``).

The project: ``<kernel>.asc`` (the kernel file unchanged, then a host ``main()`` that reads the inputs, makes
the ACL memory calls and the ``<<<blocks, nullptr, stream>>>`` launch, and writes the outputs),
``CMakeLists.txt`` (CMake's ``ASC`` language through ``find_package(ASC)``), ``data_utils.h``,
``scripts/gen_data.py`` (inputs and golden), ``scripts/verify_result.py`` and a README. The host code is
generated from the kernel's signature (GM buffers, scalars, the tiling struct: ``signature.py``) and the sizes,
dtypes and values of an :class:`ExportSpec`. Every file is our own text. The same project runs on the
simulator with ``ascend-sim run``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ascend_sim.ascendc.signature import KernelSignature, Param, read_kernels, todo_lines

__all__ = ["ExportSpec", "ExportError", "export", "plan", "NUMPY_DTYPES"]

#: C++ element type -> numpy dtype name in the generated scripts
NUMPY_DTYPES = {"float": "float32", "half": "float16", "bfloat16_t": "bfloat16", "double": "float64",
                "int8_t": "int8", "uint8_t": "uint8", "int16_t": "int16", "uint16_t": "uint16",
                "int32_t": "int32", "uint32_t": "uint32", "int64_t": "int64", "uint64_t": "uint64"}
_ARCH = "dav-2201"      # CMAKE_ASC_ARCHITECTURES of Atlas A2 (910B), the asc-devkit examples' default


class ExportError(ValueError):
    """The kernel or the spec cannot make a project: names what is missing and how to give it."""


@dataclass
class ExportSpec:
    """Sizes, dtypes and values the kernel's signature does not say (a JSON object with these keys)."""

    kernel: str | None = None           # which __global__ function (default: the file's only one)
    blocks: int = 8                     # numBlocks of the launch
    length: int = 8 * 2048              # elements of every GM buffer without its own "elements"
    dtype: str = "float"                # element type of GM_ADDR buffers without their own "dtype"
    buffers: dict = field(default_factory=dict)     # name -> {"dtype": "half", "elements": 4096}
    outputs: list = field(default_factory=list)     # default: the last GM buffer
    values: dict = field(default_factory=dict)      # template arguments, scalars and tiling fields, by name
    tiling: str | None = None           # the GM_ADDR parameter that carries the tiling struct (default "tiling")
    tiling_struct: str | None = None    # its struct (default: the file's only struct)
    golden: dict = field(default_factory=dict)      # output -> numpy expression over inputs and values
    range: list = field(default_factory=lambda: [-1.0, 1.0])    # inputs are uniform in [low, high)
    seed: int = 0

    @classmethod
    def from_json(cls, text_or_path: str) -> "ExportSpec":
        """A spec from a JSON string or the path of a JSON file."""
        p = Path(text_or_path)
        text = p.read_text(encoding="utf-8") if not text_or_path.lstrip().startswith("{") and p.is_file() \
            else text_or_path
        data = json.loads(text)
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ExportError(f"unknown export spec keys {sorted(unknown)}; known: {[f.name for f in fields(cls)]}")
        return cls(**data)


# ----------------------------------------------------------------------------- the plan (what main does)
@dataclass
class Buffer:
    name: str
    ctype: str              # element type
    elements: int
    output: bool
    pointer_type: str       # the C++ type of the device pointer variable

    @property
    def bytes_expr(self) -> str:
        return f"{self.elements} * sizeof({self.ctype})"


@dataclass
class Plan:
    sig: KernelSignature
    spec: ExportSpec
    buffers: list           # Buffer per GM data parameter
    tiling_param: Param | None      # GM_ADDR tiling
    tiling_struct: str | None
    template_args: list     # C++ spellings

    @property
    def inputs(self) -> list:
        return [b for b in self.buffers if not b.output]

    @property
    def outputs(self) -> list:
        return [b for b in self.buffers if b.output]


def _choose(sigs: list, name: str | None, path: Path) -> KernelSignature:
    if not sigs:
        raise ExportError(f"{path} defines no __global__ kernel: export takes a kernel file (a `__global__` "
                          "function with `__vector__`, `__cube__`, `__mix__(1, 2)` or `__aicore__`)")
    if name is None:
        if len(sigs) > 1:
            raise ExportError(f"{path} defines {len(sigs)} kernels ({', '.join(s.name for s in sigs)}): "
                              "choose one with --kernel NAME")
        return sigs[0]
    for s in sigs:
        if s.name == name:
            return s
    raise ExportError(f"no kernel {name!r} in {path}; it defines {', '.join(s.name for s in sigs)}")


def _value(spec: ExportSpec, name: str, what: str) -> Any:
    if name not in spec.values:
        raise ExportError(f"no value for the {what} {name!r}: pass --set {name}=VALUE (or \"values\" in the "
                          "JSON spec)")
    return spec.values[name]


def plan(kernel_path: str | Path, spec: ExportSpec, include_dirs: tuple = ()) -> Plan:
    """What the generated main does for this kernel and spec (raises ExportError on a gap)."""
    path = Path(kernel_path)
    todo = todo_lines(path, include_dirs)
    if todo:
        raise ExportError(f"{path}:{todo[0]}: ASCEND_SIM_TODO is the simulator-only placeholder of an unfinished "
                          f"exercise ({len(todo)} left); CANN does not have it, so the project would not build: "
                          "replace each ASCEND_SIM_TODO line with your code, then export")
    sig = _choose(read_kernels(path, include_dirs), spec.kernel, path)
    types = {n: str(_value(spec, n, "template type parameter")) for n, k in sig.template_params if k == "typename"}
    targs = [types[n] if k == "typename" else str(_value(spec, n, "template parameter"))
             for n, k in sig.template_params]
    gm = [p for p in sig.params if p.kind == "gm"]
    tiling_name = spec.tiling or sig.tiling_param or (
        "tiling" if any(p.name == "tiling" and p.gm_addr for p in gm) else None)
    tiling = next((p for p in gm if p.name == tiling_name), None)
    if spec.tiling and tiling is None:
        raise ExportError(f"--tiling {spec.tiling}: the kernel has no GM parameter of that name")
    data = [p for p in gm if p is not tiling]
    if not data:
        raise ExportError(f"{sig.name} has no GM buffer parameter (`__gm__ T*` or `GM_ADDR`) to feed")
    outs = spec.outputs or [data[-1].name]
    unknown = set(outs) - {p.name for p in data}
    if unknown:
        raise ExportError(f"outputs {sorted(unknown)} are not GM buffers of {sig.name} "
                          f"({', '.join(p.name for p in data)})")
    buffers = []
    for p in data:
        own = spec.buffers.get(p.name, {})
        ctype = own.get("dtype") or (types.get(p.ctype, p.ctype) if p.ctype else spec.dtype)
        if ctype not in NUMPY_DTYPES:
            raise ExportError(f"buffer {p.name}: element type {ctype!r} is not one of {sorted(NUMPY_DTYPES)}; "
                              f"give it with \"buffers\": {{\"{p.name}\": {{\"dtype\": \"half\"}}}}")
        pointer = "uint8_t*" if p.gm_addr else f"{ctype}*"
        buffers.append(Buffer(p.name, ctype, int(own.get("elements", spec.length)), p.name in outs, pointer))
    struct = None
    by_value = [p for p in sig.params if p.kind == "struct"]
    if tiling is not None or by_value:
        struct = by_value[0].ctype if by_value else spec.tiling_struct or sig.tiling_struct or (
            next(iter(sig.structs)) if len(sig.structs) == 1 else None)
        if struct not in sig.structs:
            raise ExportError(f"which struct does {tiling.name if tiling else by_value[0].name} carry? the file "
                              f"defines {sorted(sig.structs) or 'none'}: pass --tiling-struct NAME")
        for f, _ in sig.structs[struct]:
            _value(spec, f, f"field of {struct}")
    for p in sig.params:
        if p.kind == "scalar":
            _value(spec, p.name, "scalar parameter")
    missing = [b.name for b in buffers if b.output and b.name not in spec.golden]
    if missing:
        raise ExportError(f"no golden for output(s) {missing}: pass --golden \"{missing[0]}=<numpy expression "
                          f"over {', '.join(b.name for b in buffers if not b.output)}>\", e.g. \"x + y\"")
    return Plan(sig, spec, buffers, tiling, struct, targs)


# ----------------------------------------------------------------------------- file renderers
def _literal(value: Any, ctype: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"static_cast<{ctype}>({value})"


def render_asc(p: Plan, kernel_text: str, kernel_file: str) -> str:
    """The program: the kernel file unchanged, then main()."""
    sig, spec = p.sig, p.spec
    ind = "    "
    body = [f"{ind}constexpr uint32_t numBlocks = {spec.blocks};"]
    for b in p.buffers:
        body.append(f"{ind}constexpr size_t {b.name}Bytes = {b.bytes_expr};")
    body += ["", f"{ind}aclInit(nullptr);", f"{ind}int32_t deviceId = 0;", f"{ind}aclrtSetDevice(deviceId);",
             f"{ind}aclrtStream stream = nullptr;", f"{ind}aclrtCreateStream(&stream);", ""]
    for b in p.buffers:
        body += [f"{ind}uint8_t* {b.name}Host = nullptr;", f"{ind}{b.pointer_type} {b.name}Device = nullptr;",
                 f"{ind}aclrtMallocHost((void**)&{b.name}Host, {b.name}Bytes);",
                 f"{ind}aclrtMalloc((void**)&{b.name}Device, {b.name}Bytes, ACL_MEM_MALLOC_HUGE_FIRST);"]
    body.append("")
    for b in p.inputs:
        body += [f"{ind}size_t {b.name}FileSize = 0;",
                 f"{ind}ReadFile(\"./input/input_{b.name}.bin\", {b.name}FileSize, {b.name}Host, {b.name}Bytes);",
                 f"{ind}aclrtMemcpy({b.name}Device, {b.name}Bytes, {b.name}Host, {b.name}Bytes, "
                 "ACL_MEMCPY_HOST_TO_DEVICE);"]
    if p.tiling_struct:
        body += ["", f"{ind}{p.tiling_struct} tiling{{}};"]
        body += [f"{ind}tiling.{f} = {_literal(spec.values[f], t)};" for f, t in p.sig.structs[p.tiling_struct]]
    if p.tiling_param is not None:
        body += [f"{ind}uint8_t* tilingDevice = nullptr;",
                 f"{ind}aclrtMalloc((void**)&tilingDevice, sizeof({p.tiling_struct}), ACL_MEM_MALLOC_HUGE_FIRST);",
                 f"{ind}aclrtMemcpy(tilingDevice, sizeof({p.tiling_struct}), &tiling, sizeof({p.tiling_struct}), "
                 "ACL_MEMCPY_HOST_TO_DEVICE);"]
    args = []
    for prm in sig.params:
        if prm is p.tiling_param:
            args.append("tilingDevice")
        elif prm.kind == "gm":
            args.append(f"{prm.name}Device")
        elif prm.kind == "struct":
            args.append("tiling")
        else:
            body.append(f"{ind}{prm.ctype} {prm.name} = {_literal(spec.values[prm.name], prm.ctype)};")
            args.append(prm.name)
    targs = f"<{', '.join(p.template_args)}>" if p.template_args else ""
    body += ["", f"{ind}{sig.name}{targs}<<<numBlocks, nullptr, stream>>>({', '.join(args)});",
             f"{ind}aclrtSynchronizeStream(stream);", ""]
    for b in p.outputs:
        body += [f"{ind}aclrtMemcpy({b.name}Host, {b.name}Bytes, {b.name}Device, {b.name}Bytes, "
                 "ACL_MEMCPY_DEVICE_TO_HOST);",
                 f"{ind}WriteFile(\"./output/output_{b.name}.bin\", {b.name}Host, {b.name}Bytes);"]
    body.append("")
    for b in p.buffers:
        body += [f"{ind}aclrtFree({b.name}Device);", f"{ind}aclrtFreeHost({b.name}Host);"]
    if p.tiling_param is not None:
        body.append(f"{ind}aclrtFree(tilingDevice);")
    body += [f"{ind}aclrtDestroyStream(stream);", f"{ind}aclrtResetDevice(deviceId);", f"{ind}aclFinalize();",
             f"{ind}return 0;"]
    head = (f"// {sig.name}.asc: the kernel of {kernel_file} with a host main() that runs it once.\n"
            f"// Generated by `ascend-sim export`; build it with CMake (see README.md) or run it on the simulator\n"
            f"// with `ascend-sim run {sig.name}.asc` after `python3 scripts/gen_data.py`.\n\n"
            "#include <cstdint>\n#include <cstddef>\n\n#include \"acl/acl.h\"\n#include \"data_utils.h\"\n\n"
            f"// ---------------------------------------------------------------- kernel ({kernel_file}, unchanged)\n")
    main = ("\n// ---------------------------------------------------------------- host\n"
            "// Inputs come from input/*.bin (scripts/gen_data.py); outputs go to output/*.bin "
            "(scripts/verify_result.py).\n"
            "int32_t main(int32_t argc, char* argv[])\n{\n" + "\n".join(body) + "\n}\n")
    return head + kernel_text.rstrip() + "\n" + main


def render_cmake(p: Plan) -> str:
    return (f"# Builds {p.sig.name}.asc into the program `demo` with the CANN toolkit's Ascend C compiler.\n"
            "# Generated by `ascend-sim export`. Configure with -DCMAKE_ASC_ARCHITECTURES=<your NPU's arch>.\n"
            "cmake_minimum_required(VERSION 3.16)\n\n"
            f"set(CMAKE_ASC_ARCHITECTURES \"{_ARCH}\" CACHE STRING \"NPU architecture of the target chip\")\n"
            "find_package(ASC REQUIRED)\n"
            "project(ascend_sim_export LANGUAGES ASC CXX)\n\n"
            f"add_executable(demo {p.sig.name}.asc)\n"
            "target_compile_options(demo PRIVATE\n"
            "    $<$<COMPILE_LANGUAGE:ASC>:--npu-arch=${CMAKE_ASC_ARCHITECTURES}>\n)\n")


DATA_UTILS_H = """\
// data_utils.h: raw binary files for the host main(), paths relative to the working folder.
// Generated by `ascend-sim export`.
#ifndef ASCEND_SIM_EXPORT_DATA_UTILS_H
#define ASCEND_SIM_EXPORT_DATA_UTILS_H

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <string>

// Reads the whole file into buffer (at most bufferSize bytes) and stores its size in fileSize.
inline bool ReadFile(const std::string& filePath, size_t& fileSize, void* buffer, size_t bufferSize)
{
    std::ifstream in(filePath, std::ios::binary | std::ios::ate);
    if (!in) {
        std::printf("[ERROR]  cannot open %s\\n", filePath.c_str());
        return false;
    }
    const std::streamoff size = in.tellg();
    if (size <= 0 || static_cast<size_t>(size) > bufferSize) {
        std::printf("[ERROR]  %s holds %lld bytes, the buffer %zu\\n", filePath.c_str(),
                    static_cast<long long>(size), bufferSize);
        return false;
    }
    in.seekg(0);
    in.read(static_cast<char*>(buffer), size);
    fileSize = static_cast<size_t>(size);
    return static_cast<bool>(in);
}

// Writes size bytes of buffer to the file (created or truncated).
inline bool WriteFile(const std::string& filePath, const void* buffer, size_t size)
{
    std::ofstream out(filePath, std::ios::binary | std::ios::trunc);
    if (buffer == nullptr || !out) {
        std::printf("[ERROR]  cannot write %s\\n", filePath.c_str());
        return false;
    }
    out.write(static_cast<const char*>(buffer), static_cast<std::streamsize>(size));
    return static_cast<bool>(out);
}

#endif  // ASCEND_SIM_EXPORT_DATA_UTILS_H
"""


def _np(ctype: str) -> str:
    name = NUMPY_DTYPES[ctype]
    return "bfloat16" if name == "bfloat16" else f"np.{name}"


def _uses_bf16(p: Plan) -> bool:
    return any(b.ctype == "bfloat16_t" for b in p.buffers)


def render_gen_data(p: Plan) -> str:
    spec = p.spec
    low, high = spec.range
    lines = ['"""Inputs and golden outputs of the ' + p.sig.name + ' project (generated by `ascend-sim export`).',
             "", "Writes input/input_<name>.bin and output/golden_<name>.bin in the working folder.", '"""',
             "import os", "", "import numpy as np"]
    if _uses_bf16(p):
        lines.append("from ml_dtypes import bfloat16")
    lines += ["", "", "def main():", f"    rng = np.random.default_rng({spec.seed})"]
    named = {k: v for k, v in spec.values.items() if str(k).isidentifier()}
    for k, v in named.items():
        lines.append(f"    {k} = {v!r}")
    lines += ['    os.makedirs("input", exist_ok=True)', '    os.makedirs("output", exist_ok=True)']
    for b in p.inputs:
        if NUMPY_DTYPES[b.ctype].startswith(("int", "uint")):
            lines.append(f"    {b.name} = rng.integers({int(low)}, {max(int(high), int(low) + 1)}, "
                         f"{b.elements}).astype({_np(b.ctype)})")
        else:
            lines.append(f"    {b.name} = rng.uniform({low}, {high}, {b.elements}).astype({_np(b.ctype)})")
        lines.append(f'    {b.name}.tofile("input/input_{b.name}.bin")')
    for b in p.outputs:
        lines += [f"    golden_{b.name} = np.asarray({spec.golden[b.name]}).astype({_np(b.ctype)})",
                  f"    assert golden_{b.name}.size == {b.elements}, "
                  f"\"the golden of {b.name} must have {b.elements} elements\"",
                  f'    golden_{b.name}.tofile("output/golden_{b.name}.bin")']
    lines += ["", "", 'if __name__ == "__main__":', "    main()", ""]
    return "\n".join(lines)


def render_verify(p: Plan) -> str:
    from ascend_sim.analysis.verify import tolerance_for
    import numpy as np
    from ascend_sim import bfloat16
    rows = []
    for b in p.outputs:
        dt = bfloat16 if b.ctype == "bfloat16_t" else np.dtype(NUMPY_DTYPES[b.ctype])
        t = tolerance_for(dt)
        rows.append(f"    ({b.name!r}, {_np(b.ctype)}, {t.rtol!r}, {t.atol!r}, {t.max_mismatch_ratio!r}),")
    bf16 = "from ml_dtypes import bfloat16\n" if any(b.ctype == "bfloat16_t" for b in p.outputs) else ""
    return f'''"""Compare output/output_<name>.bin with output/golden_<name>.bin (generated by `ascend-sim export`).

An element matches when np.isclose(output, golden, rtol, atol); an output passes when the share of elements
that do not match is at most its error ratio (ascend-sim's verify tolerances per dtype; integers exact).
Exit status 0 when every output passes.
"""
import os
import sys

import numpy as np
{bf16}
#: (output, dtype, rtol, atol, largest share of mismatching elements)
OUTPUTS = [
{chr(10).join(rows)}
]


def check(name, dtype, rtol, atol, max_ratio):
    if not os.path.isfile(f"output/output_{{name}}.bin"):
        print(f"{{name}}: output/output_{{name}}.bin is missing (run the program in this folder first)")
        return False
    out = np.fromfile(f"output/output_{{name}}.bin", dtype=dtype).astype(np.float64)
    gold = np.fromfile(f"output/golden_{{name}}.bin", dtype=dtype).astype(np.float64)
    if out.shape != gold.shape:
        print(f"{{name}}: {{out.size}} elements written, {{gold.size}} expected")
        return False
    bad = np.flatnonzero(~np.isclose(out, gold, rtol=rtol, atol=atol, equal_nan=True))
    for i in bad[:10]:
        print(f"{{name}}[{{i}}]: expected {{gold[i]:.9g}}, got {{out[i]:.9g}}")
    ratio = bad.size / max(gold.size, 1)
    print(f"{{name}}: {{bad.size}} of {{gold.size}} elements differ (ratio {{ratio:.4f}}, tolerance {{max_ratio}})")
    return ratio <= max_ratio


def main():
    ok = all([check(*row) for row in OUTPUTS])
    print("test pass!" if ok else "test failed!")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
'''


def render_readme(p: Plan, kernel_file: str) -> str:
    sig = p.sig
    files = "\n".join([f"| `{sig.name}.asc` | the kernel from `{kernel_file}` and a host `main()` that runs it once |",
                       "| `CMakeLists.txt` | builds `demo` with the CANN toolkit (`find_package(ASC)`, language `ASC`) |",
                       "| `data_utils.h` | `ReadFile` / `WriteFile` of raw binary files |",
                       "| `scripts/gen_data.py` | writes `input/` and the golden outputs |",
                       "| `scripts/verify_result.py` | compares `output/output_*.bin` with the golden |"])
    ins = ", ".join(f"`{b.name}` ({b.elements} x {b.ctype})" for b in p.inputs)
    outs = ", ".join(f"`{b.name}` ({b.elements} x {b.ctype}) = `{p.spec.golden[b.name]}`" for b in p.outputs)
    return f"""# {sig.name}

Generated by `ascend-sim export {kernel_file}`: the kernel as a project in the layout of the asc-devkit
examples, ready to build with CANN for an Ascend NPU and to run on the simulator.

| file | what |
|---|---|
{files}

The program launches `{sig.name}` on {p.spec.blocks} blocks with inputs {ins} and checks outputs {outs}.

## On an NPU (CANN installed)

```bash
source <CANN install path>/set_env.sh
mkdir -p build && cd build
cmake -DCMAKE_ASC_ARCHITECTURES={_ARCH} .. && make -j   # use your NPU's architecture
python3 ../scripts/gen_data.py
./demo
python3 ../scripts/verify_result.py
```

CMake's `-DCMAKE_ASC_RUN_MODE=cpu` (CPU twin debugging) or `=sim` builds the same sources for Huawei's CPU
debugger or simulator.

## On ascend-sim

```bash
python3 scripts/gen_data.py
ascend-sim run {sig.name}.asc
python3 scripts/verify_result.py
```
"""


# ----------------------------------------------------------------------------- export
def export(kernel_path: str | Path, out_dir: str | Path, spec: ExportSpec | None = None,
           include_dirs: tuple = ()) -> list[Path]:
    """Write the project for the kernel of ``kernel_path`` into ``out_dir``; returns the files written."""
    kernel_path, out = Path(kernel_path), Path(out_dir)
    p = plan(kernel_path, spec or ExportSpec(), include_dirs)
    from ascend_sim.ascendc.signature import local_includes
    files = {f.name: f.read_text(encoding="utf-8") for f in local_includes(kernel_path, include_dirs)
             if f.parent == kernel_path.resolve().parent}     # the kernel's own headers (its tiling struct)
    files |= {
        f"{p.sig.name}.asc": render_asc(p, kernel_path.read_text(encoding="utf-8"), kernel_path.name),
        "CMakeLists.txt": render_cmake(p),
        "data_utils.h": DATA_UTILS_H,
        "scripts/gen_data.py": render_gen_data(p),
        "scripts/verify_result.py": render_verify(p),
        "README.md": render_readme(p, kernel_path.name),
    }
    written = []
    for rel, text in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
