"""Committed notebooks carry no bulky outputs (nbstripout-style, enforced by a test).

A cell keeps its outputs and execution count only when tagged ``keep_output``
(or with ``"keep_output": true`` in its metadata, as nbstripout understands it)
(e.g. a small expected output that nbval compares, tagged
``nbval-check-output`` too). Everything else is stripped: outputs, execution
counts, the notebook's widget state and per-cell execution timings.
"""
from __future__ import annotations

from nbformat import NotebookNode

__all__ = ["KEEP_TAG", "strip_problems", "strip"]

KEEP_TAG = "keep_output"
VOLATILE_CELL_KEYS = ("execution", "collapsed", "scrolled", "ExecuteTime")


def _kept(cell: NotebookNode) -> bool:
    """Tagged ``keep_output`` or with ``keep_output: true`` in its metadata (nbstripout's convention)."""
    meta = cell.get("metadata", {})
    return KEEP_TAG in meta.get("tags", []) or meta.get(KEEP_TAG) is True


def strip_problems(nb: NotebookNode) -> list[str]:
    """What ``strip`` would remove, one line per problem (empty when the notebook is clean)."""
    problems = []
    if "widgets" in nb.metadata:
        problems.append("notebook metadata holds widget state ('widgets')")
    for i, c in enumerate(nb.cells):
        where = f"cell {c.get('id', i)}"
        if c.cell_type == "code" and not _kept(c):
            if c.get("outputs"):
                problems.append(f"{where} has outputs (tag it '{KEEP_TAG}' to keep them)")
            if c.get("execution_count") is not None:
                problems.append(f"{where} has an execution count")
        stale = [k for k in VOLATILE_CELL_KEYS if k in c.get("metadata", {})]
        if stale:
            problems.append(f"{where} has volatile metadata: {', '.join(stale)}")
    return problems


def strip(nb: NotebookNode) -> NotebookNode:
    """Remove outputs, execution counts, widget state and volatile metadata in place; returns ``nb``."""
    nb.metadata.pop("widgets", None)
    for c in nb.cells:
        for k in VOLATILE_CELL_KEYS:
            c.metadata.pop(k, None)
        if c.cell_type == "code" and not _kept(c):
            c.outputs, c.execution_count = [], None
    return nb
