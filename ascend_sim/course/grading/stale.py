"""Stale definitions: the code that failed is an earlier version than the notebook's cells.

A notebook keeps every name a cell ever defined. When a learner edits a cell and the new version does
not run to its ``def`` (a SyntaxError, an exception above it), or deletes the cell, the old function or
class stays defined and a later check fails on a line that is in no cell any more. Two signals:

* the IPython history (``In``): the failing code came from execution *k*, and a later execution
  defines the same top-level name again, so the object that ran is not the latest definition;
* the notebook as last saved (``__session__`` or ``JPY_SESSION_NAME``): no code cell defines the
  top-level name of the failing code.
"""
from __future__ import annotations

import json
import linecache
import os
import re
import sys
import time
from typing import Any, Mapping

from ascend_sim.course.grading import evidence as ev

__all__ = ["stale_note", "failing_code"]


def stale_note(exc: BaseException, namespace: Mapping[str, Any]) -> str:
    """A sentence saying the failing code is an older definition, with the fix; '' when it is current."""
    found = failing_code(exc)
    if found is None:
        return ""
    filename, lineno, name = found
    history = namespace.get("In") or namespace.get("_ih")
    if not isinstance(history, list) or not name:
        return ""
    text = "".join(linecache.getlines(filename)).rstrip()
    runs = [k for k, src in enumerate(history) if isinstance(src, str) and src.rstrip() == text]
    if not runs:
        return ""                   # not code from a notebook cell (a module, or no history)
    k = runs[-1]
    where = f"line {lineno} of `{name}` (the version run as In[{k}])"
    later = [j for j in range(k + 1, len(history)) if _defines(history[j], name)]
    if later:
        return (f"Stale code: {where} is an older definition: In[{later[-1]}] defines `{name}` again, but did not "
                f"finish (an error before the definition?), so the old `{name}` is still the one that ran.\n"
                f"Fix: fix and re-run the cell that defines `{name}` (it must run without an error), then the check.")
    cells = _saved_cells(namespace)
    if cells is not None and not any(_defines(c, name) for c in cells[1]):
        return (f"Stale code: {where} is defined by no cell of {os.path.basename(cells[0])} as last saved "
                f"({cells[2]}): the cell that defined it was deleted or changed.\n"
                f"Fix: re-run the cells that define your answer (Kernel > Restart Kernel and Run All Cells), "
                f"then the check; if you have just written `{name}`, save the notebook first.")
    return ""


def failing_code(exc: BaseException) -> tuple[str, int, str] | None:
    """(file, line, top-level name) of the innermost learner frame where ``exc`` (or its cause) was raised."""
    found = None
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in seen:
        seen.append(e)
        tb = e.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if _is_learner_file(code.co_filename):
                found = (code.co_filename, tb.tb_lineno, _top_name(code))
            tb = tb.tb_next
        if found is not None:
            return found
        e = e.__cause__ or e.__context__
    return None


def _is_learner_file(filename: str) -> bool:
    return not (ev.is_package_file(filename) or filename.startswith(_LIBS) or filename.startswith("<frozen"))


_LIBS = tuple({os.path.dirname(os.__file__) + os.sep} | {p for p in sys.path if p.endswith("site-packages")})


def _top_name(code) -> str:
    """The top-level def/class a code object belongs to: 'KernelAdd' for KernelAdd.Compute, '' for a cell."""
    qual = getattr(code, "co_qualname", code.co_name).split(".")[0]
    return "" if qual.startswith("<") else qual


def _defines(source: Any, name: str) -> bool:
    return isinstance(source, str) and re.search(rf"^\s*(async\s+def|def|class)\s+{re.escape(name)}\b", source,
                                                 re.M) is not None


def _saved_cells(namespace: Mapping[str, Any]) -> tuple[str, list[str], str] | None:
    """(path, code cell sources, saved-at time) of the notebook this kernel runs, when it can be found."""
    path = namespace.get("__session__") or os.environ.get("JPY_SESSION_NAME", "")
    if not isinstance(path, str) or not path.endswith(".ipynb"):
        return None
    if not os.path.isfile(path):            # a server path relative to its root: the kernel runs in its folder
        path = os.path.basename(path)
        if not os.path.isfile(path):
            return None
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                 for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return path, cells, time.strftime("%H:%M:%S", time.localtime(os.path.getmtime(path)))
