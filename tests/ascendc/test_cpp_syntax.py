"""Every C++ kernel in the repository passes `g++ -std=c++17 -fsyntax-only` against ascend_sim's headers.

Collected: every *.asc / *.cpp / *.h under ascend_sim/, tests/, course/, labs/ and docs/; every answer, stub and
wrong answer of every C++ solutions file (solutions/*.cpp: each block is one translation unit, the file as a whole
is not); every `%%ascendc` cell of a notebook; every ```cpp fence of docs/*.md and README.md that holds a kernel (one that
names `__global__`, `__aicore__` or includes kernel_operator.h). Skipped only when g++ is not installed
(.ci/run installs it).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ascend_sim.ascendc.syntax import find_gxx, gxx_check

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("ascend_sim", "tests", "course", "labs", "solutions", "docs")
SUFFIXES = {".asc", ".cpp", ".h"}
SKIP_PARTS = {".ipynb_checkpoints", "__pycache__", "node_modules", ".venv", ".venv-ci"}
KERNEL_MARKS = ("__global__", "__aicore__", '#include "kernel_operator.h"')
FENCE = re.compile(r"^```(cpp|c\+\+)\s*$")
GXX = find_gxx()
needs_gxx = pytest.mark.skipif(GXX is None, reason="g++ is not installed (apt-get install g++; .ci/run does)")


def _walk(suffixes: set[str]) -> list[Path]:
    out = []
    for top in SOURCE_DIRS:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in suffixes and path.is_file() and not SKIP_PARTS & set(path.parts):
                out.append(path)
    return out


def _is_solutions_file(path: Path) -> bool:
    return path.parent == ROOT / "solutions"


def cpp_files() -> list[tuple[str, str]]:
    """(label, source) of every C++ file but the solutions files (their blocks are collected one by one)."""
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in _walk(SUFFIXES)
            if not _is_solutions_file(p)]


def solution_blocks() -> list[tuple[str, str]]:
    """(label, source) of every answer, stub and wrong answer of every solutions/*.cpp (the magic line blanked)."""
    from ascend_sim.course.grading.solution_file import CPP, parse_solutions
    out = []
    for path in sorted((ROOT / "solutions").glob("*.cpp")):
        for ex, sol in parse_solutions(path).items():
            texts = [("answer", sol.code), ("stub", sol.stub)] + [(f"wrong {k}", code) for k, (_, code)
                                                                  in enumerate(sol.wrong, 1)]
            out += [(f"{path.relative_to(ROOT)} {ex} {what}", "\n" + CPP.block(text))
                    for what, text in texts if text is not None]
    return out


def notebook_cells() -> list[tuple[str, str]]:
    """(label, source) of every %%ascendc cell; the magic line is blanked so g++'s line numbers are the cell's."""
    out = []
    for nb in _walk({".ipynb"}) + sorted(ROOT.glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
        for i, cell in enumerate(cells):
            src = "".join(cell.get("source", ""))
            if cell.get("cell_type") == "code" and src.lstrip().startswith("%%ascendc"):
                first, _, rest = src.lstrip().partition("\n")
                out.append((f"{nb.relative_to(ROOT)} cell {cell.get('id', i)}", "\n" + rest))
    return out


def markdown_kernels() -> list[tuple[str, str]]:
    """(label, source) of every ```cpp fence in docs/*.md and README.md that holds a kernel; lines kept."""
    out = []
    for md in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        lines = md.read_text(encoding="utf-8").splitlines()
        start = None
        for n, line in enumerate(lines):
            if start is None and FENCE.match(line.strip()):
                start = n
            elif start is not None and line.strip() == "```":
                body = lines[start + 1:n]
                if any(mark in "\n".join(body) for mark in KERNEL_MARKS):
                    out.append((f"{md.relative_to(ROOT)}:{start + 2}", "\n" * (start + 1) + "\n".join(body)))
                start = None
    return out


SOURCES = cpp_files() + solution_blocks() + notebook_cells() + markdown_kernels()


def test_the_collection_finds_the_kernels_and_headers():
    labels = {label for label, _ in SOURCES}
    assert "solutions/lab00_warmup.cpp ex2 wrong 2" in labels
    assert "solutions/lab00_warmup.cpp" not in labels        # not a translation unit: its blocks are
    assert "tests/ascendc/kernels/matmul_leakyrelu_mix.asc" in labels
    assert "ascend_sim/ascendc/include/kernel_operator.h" in labels
    assert len([lb for lb in labels if lb.startswith("tests/ascendc/kernels/")]) >= 14


@needs_gxx
@pytest.mark.parametrize("label, source", SOURCES, ids=[label for label, _ in SOURCES])
def test_kernel_compiles_with_gxx(label, source):
    path = ROOT / label
    errors = gxx_check(source, str(path) if path.is_file() else label)
    assert not errors, f"{label} does not pass g++ -std=c++17 -fsyntax-only:\n" + "\n".join(errors[:20])


# ------------------------------------------------------------------ the check fails on wrong kernels
KERNEL = ROOT / "tests/ascendc/kernels/add_tque.cpp"
MUTANTS = {   # what a learner gets wrong -> (original text, replacement)
    "misspelt method": ("inQueueX.AllocTensor<half>()", "inQueueX.AllocTensr<half>()"),
    "misspelt API call": ("Add(zLocal, xLocal, yLocal, tileLength);", "Addd(zLocal, xLocal, yLocal, tileLength);"),
    "missing template argument": ("TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;", "TQue outQueueZ;"),
    "wrong argument count": ("Add(zLocal, xLocal, yLocal, tileLength);", "Add(zLocal, xLocal, tileLength);"),
    "tensor of another dtype": ("LocalTensor<half> zLocal = outQueueZ", "LocalTensor<float> zLocal = outQueueZ"),
    "unknown position": ("QuePosition::VECIN", "QuePosition::VECIM"),
    "missing semicolon": ("outQueueZ.FreeTensor(zLocal);", "outQueueZ.FreeTensor(zLocal)"),
}


@needs_gxx
@pytest.mark.parametrize("what", sorted(MUTANTS))
def test_a_wrong_kernel_fails_at_its_line(what):
    source = KERNEL.read_text(encoding="utf-8")
    old, new = MUTANTS[what]
    assert old in source, f"the mutant {what!r} no longer applies to {KERNEL.name}"
    line = source[:source.index(old)].count("\n") + 1
    errors = gxx_check(source.replace(old, new, 1), str(KERNEL))
    assert errors, f"g++ accepted the kernel with a {what}"
    assert any(f"{KERNEL}:{ln}:" in e for e in errors for ln in (line, line + 1)), "\n".join(errors)


@needs_gxx
def test_brace_init_too_many_fields_fails():
    """The structs are aggregates in the dataclass's order: one field too many is a compile error."""
    src = '#include "kernel_operator.h"\nvoid f() { AscendC::DataCopyParams p{1, 2, 3, 4, 5}; }\n'
    assert gxx_check(src, "too_many.cpp")


@needs_gxx
def test_launch_configuration_is_blanked_for_gxx():
    """A host `k<<<8, nullptr, stream>>>(args)` compiles as `k(args)`; a wrong argument is still caught."""
    src = ('#include "kernel_operator.h"\n#include "acl/acl.h"\n'
           '__global__ __vector__ void k(__gm__ float* x) {}\n'
           'int main() { aclrtStream s = nullptr; float* x = nullptr;\n'
           '  const char* t = "<<<not a launch>>>"; k<<<8, nullptr, s>>>(x); return 0; }\n')
    assert gxx_check(src, "host.asc") == []
    assert gxx_check(src.replace("(x); return", "(x, x); return"), "host.asc")


@needs_gxx
def test_half_bfloat16_and_int4_have_arithmetic_in_gxx():
    """g++ 12 has no 16-bit float in C++ mode: the header's half / bfloat16_t still do arithmetic and compare."""
    src = ('#include "kernel_operator.h"\n'
           'float f(half a, bfloat16_t b, AscendC::int4b_t q) {\n'
           '  half c = a * b + a; c += 1.0f; c = c / 2; bool lt = a < c; half d = 0; d = -c;\n'
           '  bfloat16_t e = static_cast<bfloat16_t>(c); int r = q + 1;\n'
           '  return lt ? float(e) + r : float(d); }\n')
    assert gxx_check(src, "scalars.cpp") == []
