"""The troubleshooting handbook's error index, generated from the code (docs/troubleshooting.md).

``error_classes()`` imports every module of the package and lists every ``KernelError`` subclass; ``index()``
renders the table that sits between the ``BEGIN``/``END GENERATED`` markers of the handbook, so the list cannot
drift from the code (``python -m ascend_sim.tools.troubleshooting`` rewrites it; the test suite compares).
Each class also needs a hand-written ``### ClassName`` section (symptom, cause, fix), the anchor every error
message links to (``KernelError.doc``).
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
from pathlib import Path

import ascend_sim
from ascend_sim.engine.errors import HANDBOOK, KernelError

__all__ = ["error_classes", "index", "BEGIN", "END", "update", "sections"]

BEGIN = "<!-- BEGIN GENERATED: python -m ascend_sim.tools.troubleshooting -->"
END = "<!-- END GENERATED -->"
_SKIP = ("ascend_sim.__main__",)


def error_classes() -> list[type]:
    """Every KernelError subclass of the package (all modules imported), by check then name."""
    for m in pkgutil.walk_packages(ascend_sim.__path__, "ascend_sim."):
        if m.name not in _SKIP:
            importlib.import_module(m.name)
    found, todo = set(), [KernelError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("ascend_sim.") and sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted(found, key=lambda c: (c.check, c.__name__))


def _first_line(cls: type) -> str:
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0].replace("``", "`").replace("|", "/") if doc else ""


def index() -> str:
    """The markdown table of every error class: check, class (linking its section), module, what it means."""
    rows = ["| check | error class | raised by | what it means |", "|---|---|---|---|"]
    for c in error_classes():
        rows.append(f"| `{c.check}` | [{c.__name__}](#{c.__name__.lower()}) | `{c.__module__}` | {_first_line(c)} |")
    return "\n".join(rows)


def sections(text: str) -> set[str]:
    """The ``### Name`` headings of the handbook."""
    return set(re.findall(r"^### (\w+)\s*$", text, flags=re.M))


def update(path: str | Path = HANDBOOK) -> bool:
    """Rewrite the generated block of the handbook at ``path``; True when it changed."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    new = f"{head}{BEGIN}\n{index()}\n{END}{tail}"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    """``python -m ascend_sim.tools.troubleshooting [HANDBOOK]``: rewrite the handbook's generated error index."""
    ap = argparse.ArgumentParser(prog="python -m ascend_sim.tools.troubleshooting",
                                 description="Rewrite the error index of the troubleshooting handbook from the code.")
    ap.add_argument("handbook", nargs="?", default=str(HANDBOOK), help=f"the handbook (default {HANDBOOK})")
    args = ap.parse_args(argv)
    target = Path(args.handbook)
    if not target.is_file():
        ap.error(f"{target} is not a file: pass the handbook's path (default {HANDBOOK})")
    print(f"{target}: {'updated' if update(target) else 'up to date'}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
