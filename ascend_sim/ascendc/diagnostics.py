"""One diagnostic type for the C++ front end: ``file:line:col: error|unsupported: message``, the line and a caret.

Every problem the front end finds in a learner's C++ (a clang error, a construct it does not translate) becomes a
:class:`Diagnostic`; :class:`CompileError` carries them. A Python traceback of the translator must never reach the
learner: the lowering turns its own failures into diagnostics at the cursor it was translating.
"""
from __future__ import annotations

import linecache
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    """A compiler-style message at a place in a C++ file."""

    file: str
    line: int
    col: int
    severity: str           # "error" (clang), "unsupported" (the front end), "warning"
    message: str

    @property
    def source_line(self) -> str:
        return linecache.getline(self.file, self.line).rstrip("\n") if self.line > 0 else ""

    def __str__(self) -> str:
        head = f"{display_name(self.file)}:{self.line}:{self.col}: {self.severity}: {self.message}"
        text = self.source_line
        if not text:
            return head
        caret = "".join(c if c == "\t" else " " for c in text[:max(self.col - 1, 0)]) + "^"
        return f"{head}\n{text}\n{caret}"


def display_name(path: str) -> str:
    """A file as diagnostics name it: pseudo names (<ascendc:x>) as they are, real files by base name."""
    return path if path.startswith("<") else os.path.basename(path)


class CompileError(Exception):
    """The C++ source could not be translated: clang errors or constructs the front end does not support."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    def _render_traceback_(self) -> list[str]:
        """What IPython shows for it: the compiler's lines, not a Python traceback."""
        return ["CompileError:"] + str(self).splitlines()


class Unsupported(Exception):
    """Raised inside the lowering at the cursor it cannot translate; collected into a CompileError."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(str(diagnostic))


def at_cursor(cursor, message: str, severity: str = "unsupported") -> Diagnostic:
    """A diagnostic at ``cursor``'s start (its expansion location: the learner's line even inside a macro)."""
    loc = cursor.location
    return Diagnostic(loc.file.name if loc.file else "<unknown>", loc.line, loc.column, severity, message)


def unsupported(cursor, message: str) -> Unsupported:
    """``raise unsupported(cursor, "goto")``: the exception the lowering raises for a construct it rejects."""
    return Unsupported(at_cursor(cursor, message))
