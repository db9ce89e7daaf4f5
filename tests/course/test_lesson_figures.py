"""Lesson prose tells the truth: a figure the course computes is printed by the run, never typed.

Every figure of a computed kind in a lesson's markdown (a ratio `6.7x`, a percentage, cycles, us/ms) must be
one of:

* a figure the lesson's own run prints: the notebook is executed and its outputs must contain the number (rounded
  to the digits the prose gives);
* a figure of `benchmarks/RESULTS.md`, in a cell that cites it, and present there;
* a figure from a named source, a target or rule the course sets, or arithmetic shown in the text: listed in
  SOURCED below with its reason.

Lessons whose figures are all of the last two kinds are not executed here (nbval runs every lesson anyway).
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "course").glob("*.ipynb"))
FIGURE = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(k?)(x(?!\w)|\s?%|\s?cycles\b|\s?(?:us|µs|ms)\b)")
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")

#: lesson -> figure as written -> why it may be typed.
SOURCED: dict[str, dict[str, str]] = {
    "01_basics": {"0.1 %": "the Ascend precision rule (verify_result.py of the samples), a rule not a result",
                  "90 %": "the module's accuracy target"},
    "02_optimization": {"5 ms": "an often-quoted claim, named as unverifiable", "1 ms": "the same claim",
                        "5x": "the same claim", "3 ms": "the same claim", "0.8 ms": "the same claim",
                        "3.75x": "the same claim", "30 %": "the lab's target",
                        "200 cycles": "the model's Nd2Nz start cost (210, CANN's cycle model; chips.py [OFF])",
                        "25x": "arithmetic in the text: a 5x5 filter repeats each input 25 times"},
    "04_migration": {"0.7x": "IFMR's search range (AMCT documentation)", "1.3x": "IFMR's search range (AMCT "
                     "documentation)", "100x": "the input the cell below builds (channel scales 100 apart)"},
    "04b_llm": {"500 ms": "the source documents' claim for a 1.5B model on a 310B board, the claim the lesson tests",
                "70 %": "RazorAttention's reported cache reduction (arXiv 2407.15891, abstract)"},
    "05_engineering": {"17 ms": "an often-quoted claim, named as unverifiable", "9 ms": "the same claim"},
}


def figures(text: str) -> list[tuple[str, float, int]]:
    """(figure as written, value, decimals) of every computed-kind figure in ``text``."""
    out = []
    for m in FIGURE.finditer(text):
        digits = m.group(1).replace(",", "")
        value = float(digits) * (1000 if m.group(2) else 1)
        decimals = len(digits.split(".")[1]) if "." in digits else (-3 if m.group(2) else 0)
        out.append((m.group(0).strip(), value, decimals))
    return out


def appears(value: float, decimals: int, text: str) -> bool:
    """Does a number of ``text`` round to ``value`` at the prose's precision?"""
    for m in NUMBER.finditer(text):
        try:
            x = float(m.group(0).replace(",", ""))
        except ValueError:
            continue
        if round(x, decimals) == round(value, decimals):
            return True
    return False


def unexplained(nb: nbformat.NotebookNode, name: str, results: str) -> list[tuple[str, float, int, str]]:
    """The figures of ``nb``'s markdown that only the run can vouch for (cell id attached)."""
    todo = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        cites = "RESULTS.md" in cell.source
        for fig, value, dec in figures(cell.source):
            if fig in SOURCED.get(name, {}):
                continue
            if cites and appears(value, dec, results):
                continue
            todo.append((fig, value, dec, cell.get("id", "?")))
    return todo


def run_outputs(nb: nbformat.NotebookNode, cwd: Path) -> str:
    """Execute ``nb`` and return the text of all its outputs."""
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def check_lesson(path: Path, results: str) -> list[str]:
    """Problems of one lesson: figures typed in its prose that neither its run nor a cited source gives."""
    nb = nbformat.read(path, as_version=4)
    todo = unexplained(nb, path.stem, results)
    if not todo:
        return []
    outputs = run_outputs(nb, path.parent)
    return [f"{path.name} cell {cid}: {fig!r} is typed in the prose but no output prints it (print it from the "
            f"run, or cite its source)" for fig, value, dec, cid in todo if not appears(value, dec, outputs)]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_figure_in_a_lesson_is_printed_or_sourced(path):
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    assert check_lesson(path, results) == []


def _lesson(tmp_path: Path, prose: str, code: str) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(prose), nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "99_probe.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_typed_figure_the_run_does_not_print_fails(tmp_path):
    wrong = _lesson(tmp_path, "The fused version is 6.7x faster and saves 33k cycles.", "print('5.23x, 74,000 cycles')")
    assert [p.split(": ")[1].split(" is")[0] for p in check_lesson(wrong, "")] == ["'6.7x'", "'33k cycles'"]
    right = _lesson(tmp_path, "The fused version is 5.2x faster and saves 74k cycles.", "print('5.23x, 74,000 cycles')")
    assert check_lesson(right, "") == []


def test_a_figure_of_results_md_counts_only_in_a_cell_that_cites_it():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("+3.3 % (`benchmarks/RESULTS.md`)"),
                                         nbformat.v4.new_markdown_cell("+3.3 % faster")])
    todo = unexplained(nb, "probe", "| Add case 1 | 7,138.3 us | +3.3 % |")
    assert [t[3] for t in todo] == [nb.cells[1].get("id", "?")]
    assert unexplained(nb, "probe", "| Add case 1 | +1.0 % |")[0][0] == "3.3 %"
