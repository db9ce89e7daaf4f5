"""Answer-cell stubs of a lab notebook, kept equal to the ones generated from its solutions files.

A lab may have two solutions files, ``solutions/<lab>.py`` and ``solutions/<lab>.cpp`` (``solution_file.py``).
An answer cell must hold one of its exercise's generated stubs, in either language: a ``%%ascendc`` cell the C++
one, any other cell the Python one. When an exercise has both, the notebook offers the other language's stub in
a markdown cell before the answer cell (role ``alt-stub``, id ``exN-alt-stub``), so the learner can switch by
pasting it. ``ascend-sim clean`` rewrites drifted cells (``write_stubs``); ``ascend-sim clean --check``,
``lint_lab`` and ``ascend-sim solve`` report them with a short diff (``stub_problems``).
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Mapping

from nbformat import NotebookNode

from ascend_sim.course.grading.notebook import ALT_STUB, ANSWER, course, role
from ascend_sim.course.grading.solution_file import CPP, PYTHON, Solution

__all__ = ["DIFF_LINES", "LabSolutions", "stub_problems", "write_stubs", "cell_language", "alt_stub_text"]

DIFF_LINES = 12          # diff lines shown per drifted cell
#: language -> exercise -> Solution, as ``solutions.load_solutions`` reads them
LabSolutions = Mapping[str, Mapping[str, Solution]]
FENCE = {"python": "python", "cpp": "cpp"}
NAMES = {"python": "Python", "cpp": "C++"}


def cell_language(source: str) -> str:
    """'cpp' for a ``%%ascendc`` cell, else 'python'."""
    return CPP.language if source.lstrip().startswith(CPP.cell_head) else PYTHON.language


def _stubs(sols: LabSolutions, ex: str) -> dict[str, str]:
    """language -> generated stub of ``ex`` (the cell source)."""
    return {lang: s[ex].stub.rstrip("\n") for lang, s in sols.items() if ex in s and s[ex].stub is not None}


def _wanted(source: str, stubs: Mapping[str, str]) -> tuple[str, str] | None:
    """(language, stub) the cell should hold: its own language's, else C++ (an empty cell too: C++ first)."""
    own = (cell_language(source),) if source.strip() else ()
    for lang in (*own, CPP.language, PYTHON.language):
        if lang in stubs:
            return lang, stubs[lang]
    return None


def alt_stub_text(answer_language: str, stubs: Mapping[str, str]) -> str | None:
    """The markdown that offers the other language's stub (None when there is no other)."""
    other = next((lang for lang in stubs if lang != answer_language), None)
    if other is None:
        return None
    return (f"*Prefer {NAMES[other]}?* Replace the whole answer cell below with this stub (the check accepts "
            f"either language):\n\n```{FENCE[other]}\n{stubs[other]}\n```")


def _answer_cells(nb: NotebookNode):
    return [(course(c).get("ex"), c) for c in nb.cells if role(c) == ANSWER]


def _alt_cells(nb: NotebookNode) -> dict[str, NotebookNode]:
    return {course(c).get("ex"): c for c in nb.cells if role(c) == ALT_STUB}


def _diff(have: str, want: str, what: str) -> str:
    diff = list(difflib.unified_diff(have.splitlines(), want.splitlines(), "notebook", what, n=1, lineterm=""))
    more = f"\n    ... ({len(diff) - DIFF_LINES} more diff lines)" if len(diff) > DIFF_LINES else ""
    return "\n    " + "\n    ".join(diff[:DIFF_LINES]) + more


def stub_problems(nb: NotebookNode, sols: LabSolutions, solutions: str | Path) -> list[str]:
    """One message (with a short diff) per answer cell that holds no generated stub, or alt-stub cell that drifted."""
    problems = []
    alts = _alt_cells(nb)
    for ex, cell in _answer_cells(nb):
        stubs = _stubs(sols, ex)
        wanted = _wanted(cell.source, stubs)
        if wanted is None:
            continue
        lang, want = wanted
        if cell.source not in stubs.values():
            problems.append(f"cell {cell.get('id', ex)}: the stub differs from the one generated from "
                            f"{Path(solutions).with_suffix(CPP.suffix if lang == CPP.language else PYTHON.suffix)} "
                            "(`ascend-sim clean` rewrites it):"
                            + _diff(cell.source, want, f"generated {NAMES[lang]} stub"))
            continue
        alt = alt_stub_text(cell_language(cell.source), stubs)
        have = alts.get(ex)
        if alt is not None and have is None:
            problems.append(f"{ex}: no markdown cell {ex}-alt-stub offering the other language's stub "
                            "(`ascend-sim clean` adds it before the answer cell)")
        elif have is not None and have.source != (alt or ""):
            problems.append(f"cell {have.get('id', ex)}: the other language's stub differs from the generated one "
                            "(`ascend-sim clean` rewrites it):" + _diff(have.source, alt or "", "generated"))
    return problems


def write_stubs(nb: NotebookNode, sols: LabSolutions) -> list[str]:
    """Set every drifted answer cell to its generated stub and every alt-stub cell to the other language's stub
    (in place; an alt-stub cell is added before its answer cell when missing); returns the ids of changed cells."""
    import nbformat
    changed = []
    alts = _alt_cells(nb)
    for ex, cell in _answer_cells(nb):
        stubs = _stubs(sols, ex)
        wanted = _wanted(cell.source, stubs)
        if wanted is None:
            continue
        if cell.source not in stubs.values():
            cell.source = wanted[1]
            changed.append(cell.get("id", ex))
        alt = alt_stub_text(cell_language(cell.source), stubs)
        have = alts.get(ex)
        if alt is None and have is not None:
            nb.cells.remove(have)
            changed.append(have.get("id", ex))
        elif alt is not None and have is None:
            new = nbformat.v4.new_markdown_cell(alt, id=f"{ex}-alt-stub")
            new.metadata["course"] = {"lab": course(cell).get("lab"), "ex": ex, "role": ALT_STUB}
            nb.cells.insert(nb.cells.index(cell), new)
            changed.append(new.id)
        elif alt is not None and have.source != alt:
            have.source = alt
            changed.append(have.get("id", ex))
    return changed
