"""Lessons and labs speak only of what the learner has: no outside documents, no modules that do not exist yet."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted([*(ROOT / "course").glob("*.ipynb"), *(ROOT / "labs").glob("*.ipynb")])
UNAVAILABLE = re.compile(r"\b(course outline|the outline|seed document|outline's)\b", re.I)


def _text(path: Path) -> str:
    return "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_reference_to_documents_learners_do_not_have(path):
    found = UNAVAILABLE.findall(_text(path))
    assert not found, f"{path.name} refers to {sorted(set(found))}, which learners do not have"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_module_named_exists(path):
    missing = {int(n) for n in re.findall(r"\bModule (\d+)\b", _text(path))
               if not list((ROOT / "course").glob(f"{int(n):02d}_*.ipynb"))}
    assert not missing, f"{path.name} promises Module(s) {sorted(missing)}, which have no lesson in course/"


def test_module_0_exists_and_comes_first():
    assert sorted(p.name for p in (ROOT / "course").glob("*.ipynb"))[0] == "00_architecture.ipynb"
