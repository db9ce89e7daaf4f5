"""Find a lab's files from a name (``lab00``, ``lab00_warmup``) or a template path.

Layout of a course root: ``labs/<lab>.ipynb`` (the template learners get),
``solutions/<lab>.py`` (the instructor's answers) and, when the lab has C++ answers, ``solutions/<lab>.cpp``.
A template outside ``labs/`` (a test fixture) keeps its solutions in ``solutions/`` next to it.

One stem per lab: ``labs/<lab>.ipynb`` has ``course.lab == "<lab>"`` and its checks in
``ascend_sim.course.labs.<lab>`` (``naming_problems`` says where a notebook disagrees).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

__all__ = ["CHECKS_PACKAGE", "LabFiles", "find_lab", "list_labs"]

CHECKS_PACKAGE = "ascend_sim.course.labs"


@dataclass(frozen=True)
class LabFiles:
    """A lab template and its solutions file (which may not exist)."""

    name: str
    template: Path
    solutions: Path

    @property
    def cpp_solutions(self) -> Path:
        """``solutions/<lab>.cpp``: the C++ answers beside the Python ones (optional)."""
        return self.solutions.with_suffix(".cpp")

    @property
    def solution_files(self) -> list[Path]:
        """The solutions files that exist: the Python one, then the C++ one."""
        return [p for p in (self.solutions, self.cpp_solutions) if p.is_file()]

    @property
    def checks_module(self) -> str | None:
        """The checks module a course lab (one in a ``labs/`` folder) must name; None for a fixture."""
        return f"{CHECKS_PACKAGE}.{self.name}" if self.template.parent.name == "labs" else None

    def naming_problems(self, meta: Mapping) -> list[str]:
        """Where the notebook's ``course`` metadata breaks the one-stem rule."""
        problems = []
        if meta.get("lab") != self.name:
            problems.append(f"notebook metadata course.lab is {meta.get('lab')!r}; it must be the file stem "
                            f"{self.name!r}")
        if self.checks_module and meta.get("checks") != self.checks_module:
            problems.append(f"notebook metadata course.checks is {meta.get('checks')!r}; {self.template.name} "
                            f"must name its checks module {self.checks_module!r} (one stem per lab)")
        return problems


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
    numbered = [lab for lab in labs if lab.name.startswith(f"{spec}_")]      # "lab03" is lab03_..., not lab03b_...
    if len(numbered) == 1:
        return numbered[0]
    prefixed = [lab for lab in labs if lab.name.startswith(str(spec))]
    if len(prefixed) == 1:
        return prefixed[0]
    known = ", ".join(lab.name for lab in labs) or f"none in {Path(root) / 'labs'}"
    what = "is ambiguous" if prefixed else "matches no lab"
    raise FileNotFoundError(f"lab {spec!r} {what}; labs: {known}")


def _files(template: Path) -> LabFiles:
    template = template.resolve()
    base = template.parent.parent if template.parent.name == "labs" else template.parent
    return LabFiles(template.stem, template, base / "solutions" / f"{template.stem}.py")
