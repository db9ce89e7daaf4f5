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
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SolutionsFormatError", "Solution", "parse_solutions", "make_stub"]

MARKER = re.compile(r"^# %%\s*(?P<ex>\S+)?(?P<rest>.*)$")
KIND = re.compile(r"^\s*(?:(?P<stub>stub)|wrong\s*(?::\s*(?P<label>.*))?)\s*$")
EX = re.compile(r"ex[0-9]+[a-z]?")
BEGIN = re.compile(r"^(?P<indent>[ \t]*)# --- BEGIN SOLUTION\b(?P<rest>.*)$")
HINT = re.compile(r'^\s+hint="(?P<hint>[^"]+)"\s*$')
END = re.compile(r"^[ \t]*# --- END SOLUTION\s*$")
REPLACE = "# replace:"
WITH = "# with:"
ARROW = " -> "
PLACEHOLDER = 'raise NotImplementedError("{ex}: {hint}")'


class SolutionsFormatError(ValueError):
    """A solutions file breaks the format (the message names the file and line)."""


@dataclass
class Solution:
    """One exercise: its answer, the stub the notebook shows, and its wrong answers (label, code)."""

    ex: str
    code: str = ""
    stub: str | None = None
    wrong: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Block:
    ex: str
    kind: str            # "answer", "stub" or "wrong"
    label: str
    line: int            # of the marker
    lines: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.lines).strip("\n") + "\n"


def parse_solutions(path: str | Path) -> dict[str, Solution]:
    """Read a solutions file into {exercise: Solution}; raises SolutionsFormatError on anything malformed."""
    path = Path(path)
    blocks = _blocks(path)
    sols: dict[str, Solution] = {}
    for b in (b for b in blocks if b.kind == "answer"):
        if b.ex in sols:
            raise SolutionsFormatError(f"{path}:{b.line}: a second answer block for {b.ex}")
        code, stub = _answer_and_stub(path, b)
        sols[b.ex] = Solution(b.ex, code, stub)
    for b in (b for b in blocks if b.kind != "answer"):
        sol = sols.get(b.ex)
        if sol is None:
            raise SolutionsFormatError(f"{path}:{b.line}: a {b.kind} block for {b.ex} without its answer block "
                                       f"'# %% {b.ex}' before it")
        if b.kind == "stub":
            if sol.stub is not None:
                raise SolutionsFormatError(f"{path}:{b.line}: {b.ex} has a stub already (from its BEGIN/END "
                                           "SOLUTION sentinels or an earlier stub block): keep one")
            sol.stub = b.text()
        else:
            sol.wrong.append((b.label, _apply(path, b, sol.code)))
    return sols


def make_stub(ex: str, source: str, *, where: str = "<answer>", first_line: int = 1) -> tuple[str, str] | None:
    """(answer, stub) of an answer text with sentinel regions; None when it has no sentinels."""
    answer: list[str] = []
    stub: list[str] = []
    placeholders: list[int] = []               # stub line numbers (1-based) of the inserted raises
    begin: int | None = None
    body = 0
    for n, line in enumerate(source.splitlines(), first_line):
        m = BEGIN.match(line)
        if m:
            hint = HINT.match(m.group("rest"))
            if begin is not None:
                raise SolutionsFormatError(f"{where}:{n}: BEGIN SOLUTION inside the region opened at line {begin}")
            if hint is None:
                raise SolutionsFormatError(f'{where}:{n}: write the sentinel as # --- BEGIN SOLUTION hint="what '
                                           f'to do, in one line" (no double quote in the hint), got {line.strip()!r}')
            begin, body = n, 0
            stub.append(m.group("indent") + PLACEHOLDER.format(ex=ex, hint=hint.group("hint")))
            placeholders.append(len(stub))
        elif END.match(line):
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
    _placeholders_in_functions(text, placeholders, where, first_line)
    return "\n".join(answer) + "\n", text


# ----------------------------------------------------------------------------- internals
def _blocks(path: Path) -> list[_Block]:
    blocks: list[_Block] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = MARKER.match(line)
        if not m:
            if blocks:
                blocks[-1].lines.append(line)
            continue
        ex, rest = m.group("ex") or "", m.group("rest")
        k = KIND.match(rest)
        if not EX.fullmatch(ex) or (rest.strip() and not k):
            raise SolutionsFormatError(f"{path}:{n}: a block marker is '# %% exN', '# %% exN stub' or "
                                       f"'# %% exN wrong: what is wrong', got {line!r}")
        if not rest.strip():
            blocks.append(_Block(ex, "answer", "", n))
        elif k.group("stub"):
            blocks.append(_Block(ex, "stub", "", n))
        else:
            blocks.append(_Block(ex, "wrong", (k.group("label") or "wrong answer").strip(), n))
    return blocks


def _answer_and_stub(path: Path, b: _Block) -> tuple[str, str | None]:
    lead = next((i for i, ln in enumerate(b.lines) if ln), 0)      # text() strips the leading empty lines
    made = make_stub(b.ex, b.text(), where=str(path), first_line=b.line + 1 + lead)
    return (b.text(), None) if made is None else made


def _placeholders_in_functions(stub: str, lines: list[int], where: str, first_line: int) -> None:
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


def _apply(path: Path, b: _Block, code: str) -> str:
    """The answer with the wrong block's one replacement applied."""
    old, new, n = _replacement(path, b)
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


def _replacement(path: Path, b: _Block) -> tuple[str, str, int]:
    """(old, new, line) of the single ``# replace:`` of a wrong block."""
    body = [(b.line + 1 + i, ln) for i, ln in enumerate(b.lines) if ln.strip()]
    starts = [(n, ln) for n, ln in body if ln.startswith(REPLACE)]
    if len(starts) != 1 or body[0][1] != starts[0][1]:
        n = body[0][0] if body else b.line
        raise SolutionsFormatError(
            f"{path}:{n}: a wrong answer is one replacement of the answer (one mistake): '# replace: <old> -> "
            f"<new>' or the multi-line '# replace:' ... '# with:' form, got {len(starts)} replace lines and "
            f"{sum(not ln.startswith('#') for _, ln in body)} code lines (no full copies)")
    n, first = starts[0]
    inline = first[len(REPLACE):].strip()
    if inline:
        if len(body) > 1 or inline.count(ARROW) != 1:
            raise SolutionsFormatError(f"{path}:{n}: '# replace: <old> -> <new>' takes one line with ' -> ' "
                                       f"once; use the multi-line form ('# replace:' ... '# with:') otherwise")
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
        if not (ln == "#" or ln.startswith("# ")):
            raise SolutionsFormatError(f"{path}:{m}: each line of a multi-line replacement is '# ' and the code, "
                                       f"got {ln!r}")
        (old if new is None else new).append(ln[2:])
    if new is None or not old:
        raise SolutionsFormatError(f"{path}:{n}: a multi-line replacement is '# replace:', the old lines, "
                                   f"'{WITH}', the new lines (none to delete)")
    return "\n".join(old) + "\n", "".join(f"{ln}\n" for ln in new), n
