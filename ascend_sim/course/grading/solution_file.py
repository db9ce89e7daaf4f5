"""The solutions file format: one answer per exercise, its stub and its wrong answers derived from it.

``solutions/<lab>.py`` is Python in percent-cell format::

    # %% ex1
    @kernel
    def add_custom(x, y, z, tiling):
        \"\"\"z = x + y ...\"\"\"
        # --- BEGIN SOLUTION hint="write the Add kernel"
        ...the reference implementation...
        # --- END SOLUTION

    # %% ex1 wrong: every block works on block 0's range (no GetBlockIdx offset)
    # replace: offset = blockLength * GetBlockIdx() -> offset = 0

* **answer** (``# %% exN``): the text that solves the exercise, with the sentinel lines removed;
* **stub** (what the notebook's answer cell holds): the answer with each ``BEGIN``/``END SOLUTION``
  region replaced by one line ``raise NotImplementedError("exN: <hint>")`` at the indentation of its
  ``BEGIN`` line; everything outside the regions is kept verbatim. A region must sit inside a
  function, so that the untouched stub defines every name and raises only when called: the grader
  then says *not attempted*. An answer without sentinels gives its stub in a ``# %% exN stub`` block;
* **wrong answer** (``# %% exN wrong: what is wrong``): exactly one replacement of the answer, one
  mistake. One line, ``# replace: <old> -> <new>`` (``<old>`` occurs once in the answer), or several::

      # replace:
      #         SetFlag(HardEvent.MTE2_S, 0)
      #         WaitFlag(HardEvent.MTE2_S, 0)
      # with:
      #         <new lines, none to delete the old ones>

  where each line is ``# `` followed by the code verbatim and the old lines must occur once, as whole lines.

``solutions/<lab>.cpp`` holds the C++ answers in the same format with ``//`` for ``#`` (``// %% ex1``,
``// --- BEGIN SOLUTION hint="..."``, ``// replace: <old> -> <new>``, ...). Each block is a whole translation unit,
the text of a ``%%ascendc`` notebook cell after its magic line (the file as a whole does not compile); its
``Solution`` texts are the cell sources, magic line included. A C++ region becomes one line
``ASCEND_SIM_TODO("exN: <hint>");`` (a simulator-only macro of our ``kernel_operator.h`` that the front end lowers
to ``raise NotImplementedError``), which must sit inside a function body as in Python.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

__all__ = ["SolutionsFormatError", "Solution", "Syntax", "PYTHON", "CPP", "SYNTAXES", "CXX_MAGIC", "syntax_of",
           "parse_solutions", "make_stub"]

KIND = re.compile(r"^\s*(?:(?P<stub>stub)|wrong\s*(?::\s*(?P<label>.*))?)\s*$")
EX = re.compile(r"ex[0-9]+[a-z]?")
HINT = re.compile(r'^\s+hint="(?P<hint>[^"\\]+)"\s*$')
ARROW = " -> "
CXX_MAGIC = "%%ascendc"


@dataclass(frozen=True)
class Syntax:
    """How one language spells the solutions format: its comment, its placeholder, its cell."""

    language: str                    # "python" or "cpp" (the run names of ``ascend-sim solve`` use it)
    suffix: str                      # of the solutions file
    comment: str                     # "#" or "//"
    placeholder: str                 # the stub line of a region, formatted with ex and hint
    cell_head: str                   # the line before the block's text in a notebook cell ("" for none)
    in_functions: Callable[[str, list, str, int], None]     # raises when a placeholder is outside a function

    @property
    def marker(self) -> re.Pattern:
        return re.compile(rf"^{re.escape(self.comment)} %%\s*(?P<ex>\S+)?(?P<rest>.*)$")

    @property
    def begin(self) -> re.Pattern:
        return re.compile(rf"^(?P<indent>[ \t]*){re.escape(self.comment)} --- BEGIN SOLUTION\b(?P<rest>.*)$")

    @property
    def end(self) -> re.Pattern:
        return re.compile(rf"^[ \t]*{re.escape(self.comment)} --- END SOLUTION\s*$")

    @property
    def replace(self) -> str:
        return f"{self.comment} replace:"

    @property
    def with_(self) -> str:
        return f"{self.comment} with:"

    def cell(self, text: str) -> str:
        """The notebook cell source of a block's text."""
        return f"{self.cell_head}\n{text}" if self.cell_head else text

    def block(self, cell: str) -> str:
        """The block's text of a notebook cell source (the inverse of ``cell``)."""
        head, _, rest = cell.partition("\n")
        return rest if self.cell_head and head.strip() == self.cell_head else cell


class SolutionsFormatError(ValueError):
    """A solutions file breaks the format (the message names the file and line)."""


@dataclass
class Solution:
    """One exercise: its answer, the stub the notebook shows, and its wrong answers (label, code)."""

    ex: str
    code: str = ""
    stub: str | None = None
    wrong: list[tuple[str, str]] = field(default_factory=list)
    language: str = "python"         # "python" or "cpp": the texts are then %%ascendc cells


@dataclass
class _Block:
    ex: str
    kind: str            # "answer", "stub" or "wrong"
    label: str
    line: int            # of the marker
    lines: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.lines).strip("\n") + "\n"


def syntax_of(path: str | Path) -> Syntax:
    """The syntax of a solutions file, by its suffix (.py or .cpp)."""
    for syn in SYNTAXES:
        if Path(path).suffix == syn.suffix:
            return syn
    raise SolutionsFormatError(f"{path}: a solutions file is .py or .cpp")


def parse_solutions(path: str | Path) -> dict[str, Solution]:
    """Read a solutions file into {exercise: Solution}; raises SolutionsFormatError on anything malformed.

    The texts are notebook cell sources: for a .cpp file each starts with the ``%%ascendc`` line.
    """
    path = Path(path)
    syn = syntax_of(path)
    blocks = _blocks(path, syn)
    sols: dict[str, Solution] = {}
    for b in (b for b in blocks if b.kind == "answer"):
        if b.ex in sols:
            raise SolutionsFormatError(f"{path}:{b.line}: a second answer block for {b.ex}")
        code, stub = _answer_and_stub(path, b, syn)
        sols[b.ex] = Solution(b.ex, syn.cell(code), stub and syn.cell(stub), language=syn.language)
    for b in (b for b in blocks if b.kind != "answer"):
        sol = sols.get(b.ex)
        if sol is None:
            raise SolutionsFormatError(f"{path}:{b.line}: a {b.kind} block for {b.ex} without its answer block "
                                       f"'{syn.comment} %% {b.ex}' before it")
        if b.kind == "stub":
            if sol.stub is not None:
                raise SolutionsFormatError(f"{path}:{b.line}: {b.ex} has a stub already (from its BEGIN/END "
                                           "SOLUTION sentinels or an earlier stub block): keep one")
            sol.stub = syn.cell(b.text())
        else:
            sol.wrong.append((b.label, syn.cell(_apply(path, b, syn.block(sol.code), syn))))
    return sols


def make_stub(ex: str, source: str, *, where: str = "<answer>", first_line: int = 1,
              syntax: Syntax | None = None) -> tuple[str, str] | None:
    """(answer, stub) of an answer text with sentinel regions; None when it has no sentinels (Python by default)."""
    syn = syntax or PYTHON
    begin_re, end_re = syn.begin, syn.end
    answer: list[str] = []
    stub: list[str] = []
    placeholders: list[int] = []               # stub line numbers (1-based) of the inserted raises
    begin: int | None = None
    body = 0
    for n, line in enumerate(source.splitlines(), first_line):
        m = begin_re.match(line)
        if m:
            hint = HINT.match(m.group("rest"))
            if begin is not None:
                raise SolutionsFormatError(f"{where}:{n}: BEGIN SOLUTION inside the region opened at line {begin}")
            if hint is None:
                raise SolutionsFormatError(f'{where}:{n}: write the sentinel as {syn.comment} --- BEGIN SOLUTION '
                                           f'hint="what to do, in one line" (no double quote or backslash in the '
                                           f'hint), got {line.strip()!r}')
            begin, body = n, 0
            stub.append(m.group("indent") + syn.placeholder.format(ex=ex, hint=hint.group("hint")))
            placeholders.append(len(stub))
        elif end_re.match(line):
            if begin is None:
                raise SolutionsFormatError(f"{where}:{n}: END SOLUTION without a BEGIN SOLUTION before it")
            if not body:
                raise SolutionsFormatError(f"{where}:{n}: the region opened at line {begin} holds no code")
            begin = None
        else:
            answer.append(line)
            if begin is None:
                stub.append(line)
            else:
                body += bool(line.strip())
    if begin is not None:
        raise SolutionsFormatError(f"{where}:{begin}: BEGIN SOLUTION without its END SOLUTION")
    if not placeholders:
        return None
    text = "\n".join(stub) + "\n"
    syn.in_functions(text, placeholders, where, first_line)
    return "\n".join(answer) + "\n", text


# ----------------------------------------------------------------------------- internals
def _blocks(path: Path, syn: Syntax) -> list[_Block]:
    blocks: list[_Block] = []
    marker = syn.marker
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = marker.match(line)
        if not m:
            if blocks:
                blocks[-1].lines.append(line)
            continue
        ex, rest = m.group("ex") or "", m.group("rest")
        k = KIND.match(rest)
        if not EX.fullmatch(ex) or (rest.strip() and not k):
            c = syn.comment
            raise SolutionsFormatError(f"{path}:{n}: a block marker is '{c} %% exN', '{c} %% exN stub' or "
                                       f"'{c} %% exN wrong: what is wrong', got {line!r}")
        if not rest.strip():
            blocks.append(_Block(ex, "answer", "", n))
        elif k.group("stub"):
            blocks.append(_Block(ex, "stub", "", n))
        else:
            blocks.append(_Block(ex, "wrong", (k.group("label") or "wrong answer").strip(), n))
    return blocks


def _answer_and_stub(path: Path, b: _Block, syn: Syntax) -> tuple[str, str | None]:
    lead = next((i for i, ln in enumerate(b.lines) if ln), 0)      # text() strips the leading empty lines
    made = make_stub(b.ex, b.text(), where=str(path), first_line=b.line + 1 + lead, syntax=syn)
    return (b.text(), None) if made is None else made


def _python_placeholders_in_functions(stub: str, lines: list[int], where: str, first_line: int) -> None:
    """Every placeholder must be inside a def: a raise at module or class level fails the cell, not the call."""
    try:
        tree = ast.parse(stub)
    except SyntaxError as e:
        raise SolutionsFormatError(f"{where}: the stub made from the sentinels is not Python: {e}") from e
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(range(node.body[0].lineno, (node.end_lineno or node.lineno) + 1))
    for ln in lines:
        if ln not in inside:
            raise SolutionsFormatError(
                f"{where}:{first_line + ln - 1}: a BEGIN SOLUTION region outside a function: its placeholder "
                "raise would fail the cell itself (graded 'error', not 'not attempted'); move the region into a "
                "function body or give the whole stub in a '# %% exN stub' block")


def _apply(path: Path, b: _Block, code: str, syn: Syntax) -> str:
    """The answer with the wrong block's one replacement applied."""
    old, new, n = _replacement(path, b, syn)
    if old == new:
        raise SolutionsFormatError(f"{path}:{n}: the replacement of {b.ex} wrong '{b.label}' changes nothing")
    if "\n" in old:
        starts = [m.start() for m in re.finditer("(?m)^" + re.escape(old), code)]
    else:
        starts = [m.start() for m in re.finditer(re.escape(old), code)]
    if len(starts) != 1:
        raise SolutionsFormatError(
            f"{path}:{n}: the replacement of {b.ex} wrong '{b.label}' must match the answer exactly once; "
            f"{old.strip()!r} matches {len(starts)} times" + ("" if starts else
                                                              " (copy the text from the answer, indentation too)"))
    return code[:starts[0]] + new + code[starts[0] + len(old):]


def _replacement(path: Path, b: _Block, syn: Syntax) -> tuple[str, str, int]:
    """(old, new, line) of the single ``# replace:`` of a wrong block."""
    REPLACE, WITH, c = syn.replace, syn.with_, syn.comment  # noqa: N806 - the format's constants
    body = [(b.line + 1 + i, ln) for i, ln in enumerate(b.lines) if ln.strip()]
    starts = [(n, ln) for n, ln in body if ln.startswith(REPLACE)]
    if len(starts) != 1 or body[0][1] != starts[0][1]:
        n = body[0][0] if body else b.line
        raise SolutionsFormatError(
            f"{path}:{n}: a wrong answer is one replacement of the answer (one mistake): '{REPLACE} <old> -> "
            f"<new>' or the multi-line '{REPLACE}' ... '{WITH}' form, got {len(starts)} replace lines and "
            f"{sum(not ln.startswith(c) for _, ln in body)} code lines (no full copies)")
    n, first = starts[0]
    inline = first[len(REPLACE):].strip()
    if inline:
        if len(body) > 1 or inline.count(ARROW) != 1:
            raise SolutionsFormatError(f"{path}:{n}: '{REPLACE} <old> -> <new>' takes one line with ' -> ' "
                                       f"once; use the multi-line form ('{REPLACE}' ... '{WITH}') otherwise")
        old, new = (s.strip() for s in inline.split(ARROW))
        if not old:
            raise SolutionsFormatError(f"{path}:{n}: the text to replace is empty")
        return old, new, n
    old: list[str] = []
    new: list[str] | None = None
    for m, ln in body[1:]:
        if ln.rstrip() == WITH:
            if new is not None:
                raise SolutionsFormatError(f"{path}:{m}: a second '{WITH}' in one replacement")
            new = []
            continue
        if not (ln == c or ln.startswith(c + " ")):
            raise SolutionsFormatError(f"{path}:{m}: each line of a multi-line replacement is '{c} ' and the "
                                       f"code, got {ln!r}")
        (old if new is None else new).append(ln[len(c) + 1:])
    if new is None or not old:
        raise SolutionsFormatError(f"{path}:{n}: a multi-line replacement is '{REPLACE}', the old lines, "
                                   f"'{WITH}', the new lines (none to delete)")
    return "\n".join(old) + "\n", "".join(f"{ln}\n" for ln in new), n


def _cpp_placeholders_in_functions(stub: str, lines: list[int], where: str, first_line: int) -> None:
    """The C++ stub must compile (libclang, our kernel_operator.h) and every placeholder sit in a function body."""
    from ascend_sim.ascendc.diagnostics import CompileError
    from ascend_sim.ascendc.parse import function_body_lines
    try:
        inside = function_body_lines(stub)
    except CompileError as e:
        raise SolutionsFormatError(f"{where}: the stub made from the sentinels is not valid C++:\n{e}") from e
    for ln in lines:
        if ln not in inside:
            raise SolutionsFormatError(
                f"{where}:{first_line + ln - 1}: a BEGIN SOLUTION region outside a function body: its "
                "ASCEND_SIM_TODO placeholder is a statement and must be inside one (a kernel, a method, a "
                "function); move the region or give the whole stub in a '// %% exN stub' block")


PYTHON = Syntax("python", ".py", "#", 'raise NotImplementedError("{ex}: {hint}")', "",
                _python_placeholders_in_functions)
CPP = Syntax("cpp", ".cpp", "//", 'ASCEND_SIM_TODO("{ex}: {hint}");', CXX_MAGIC, _cpp_placeholders_in_functions)
SYNTAXES = (PYTHON, CPP)
