"""Find a lab's files from a name (``lab00``, ``lab00_warmup``) or a template path.

Layout of a course root: ``labs/<lab>.ipynb`` (the template learners get) and
``solutions/<lab>.py`` (the instructor's answers). A template outside ``labs/``
(a test fixture) keeps its solutions in ``solutions/`` next to it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["LabFiles", "find_lab", "list_labs"]


@dataclass(frozen=True)
class LabFiles:
    """A lab template and its solutions file (which may not exist)."""

    name: str
    template: Path
    solutions: Path


def list_labs(root: str | Path = ".") -> list[LabFiles]:
    """Every ``labs/*.ipynb`` under ``root``, in name order."""
    return [_files(p) for p in sorted((Path(root) / "labs").glob("*.ipynb"))]


def find_lab(spec: str | Path, root: str | Path = ".") -> LabFiles:
    """Resolve ``spec``: a path to a .ipynb, a lab name, or a unique prefix of one under ``root/labs``."""
    path = Path(spec)
    if path.suffix == ".ipynb":
        if not path.is_file():
            raise FileNotFoundError(f"lab template {path} does not exist")
        return _files(path)
    labs = list_labs(root)
    exact = [lab for lab in labs if lab.name == str(spec)]
    if exact:
        return exact[0]
    prefixed = [lab for lab in labs if lab.name.startswith(f"{spec}_") or lab.name.startswith(str(spec))]
    if len(prefixed) == 1:
        return prefixed[0]
    known = ", ".join(lab.name for lab in labs) or f"none in {Path(root) / 'labs'}"
    what = "is ambiguous" if prefixed else "matches no lab"
    raise FileNotFoundError(f"lab {spec!r} {what}; labs: {known}")


def _files(template: Path) -> LabFiles:
    template = template.resolve()
    base = template.parent.parent if template.parent.name == "labs" else template.parent
    return LabFiles(template.stem, template, base / "solutions" / f"{template.stem}.py")
