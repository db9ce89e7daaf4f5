"""docs/glossary.md, the rules a machine can check, over the layers it has been applied to.

kernels/, models/, viz/ and course/ (engine/, api/, trace/ and analysis/ still use other names; the glossary
lists them). Each rule reads the source with ``ast``, so comments and docstrings do not count.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ascend_sim
from ascend_sim.hw import chips

PACKAGE = Path(ascend_sim.__file__).resolve().parent
APPLIED = ("kernels", "models", "viz", "course")
FILES = sorted(p for d in APPLIED for p in (PACKAGE / d).rglob("*.py"))
OLD_DATA_BLOCK_NAMES = {"BLOCK", "GRANULE", "lane_granule"}


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def data_block_literals(tree: ast.AST) -> list[int]:
    """Lines where a bare 32 is used as the DataBlock: ``x // 32``, ``x % 32`` or ``round_up(x, 32)``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            if isinstance(node.right, ast.Constant) and node.right.value == 32:
                out.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")).endswith(
                "round_up"):
            if any(isinstance(a, ast.Constant) and a.value == 32 for a in node.args[1:]):
                out.append(node.lineno)
    return out


def old_names(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every use of a retired name: a DataBlock alias, or ``cls`` for a class that is data."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in OLD_DATA_BLOCK_NAMES:
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in OLD_DATA_BLOCK_NAMES | {"cls"}:
            out.append((node.lineno, node.attr))
        elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "cls":
            out.append((node.lineno, "cls"))                          # a dataclass field named cls
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "cls":
            out.append((node.lineno, '"cls"'))
    return out


def test_data_block_bytes_is_defined_once_in_chips():
    assert chips.DATA_BLOCK_BYTES == 32
    defined = [(p.relative_to(PACKAGE), n.lineno) for p in PACKAGE.rglob("*.py") for n in ast.walk(_tree(p))
               if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "DATA_BLOCK_BYTES" for t in n.targets)]
    assert [str(p) for p, _ in defined] == ["hw/chips.py"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_bare_32_for_the_data_block(path):
    lines = data_block_literals(_tree(path))
    assert not lines, f"{path.name}: lines {lines} use a bare 32 for the DataBlock; import DATA_BLOCK_BYTES"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_retired_names(path):
    found = old_names(_tree(path))
    assert not found, f"{path.name}: {found}; see docs/glossary.md (DataBlock, instruction class / kind)"


def test_the_rules_catch_what_they_forbid():
    bad = ast.parse("BLOCK = 32\nn = x // 32\nm = y % 32\nr = round_up(z, 32)\nt.cls\nd['cls']\n"
                    "class T:\n    cls: int\n")
    assert data_block_literals(bad) == [2, 3, 4]
    assert sorted(old_names(bad)) == [(1, "BLOCK"), (5, "cls"), (6, '"cls"'), (8, "cls")]
    fine = ast.parse("KB = 32 * 1024\nrate = n / 32\n@classmethod\ndef f(cls):\n    return cls()\n")
    assert data_block_literals(fine) == [] and old_names(fine) == []


def test_the_grader_process_is_the_sandbox():
    grading = PACKAGE / "course" / "grading"
    assert (grading / "sandbox.py").exists() and not (grading / "kernel.py").exists()
