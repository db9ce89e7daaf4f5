"""Lab notebooks: the cell conventions, the instructor template, and rebuilding a submission.

Conventions (CONTRIBUTING.md has the author's view):

* notebook metadata ``course: {lab: NAME, checks: MODULE}``;
* each code cell that the grader runs has ``metadata.course.role``:
  ``setup`` (id ``setup`` or ``setup-*``, locked), ``answer`` (id ``exN-answer``,
  tag ``exercise``) or ``check`` (id ``exN-check``, tag ``check``, locked,
  source ``check("exN")``); answer and check cells also carry ``ex`` and ``points``;
* code cells with role ``demo`` (or none) and markdown cells belong to the
  template; the grader keeps them but does not run demo cells. A markdown cell with
  role ``alt-stub`` (id ``exN-alt-stub``, before the answer cell) offers the exercise's
  stub in the other language (Python or C++); ``ascend-sim clean`` writes it (``stubs.py``).

``rebuild`` makes the notebook that is graded: the template, with only the
answer cells (and code cells the learner added right after them) taken from
the submission. Edited or deleted setup and check cells are restored from
the template and reported as tampered.
"""
from __future__ import annotations

import copy
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

__all__ = ["SETUP", "ANSWER", "CHECK", "DEMO", "ADDED", "ALT_STUB", "LabFormatError", "ExerciseSpec", "LabTemplate",
           "Tamper", "Rebuilt", "load_template", "lab_problems", "rebuild", "normalize_lab", "role",
           "read_notebook", "lab_mismatch", "student_id"]

SETUP, ANSWER, CHECK, DEMO, ADDED = "setup", "answer", "check", "demo", "added"
ALT_STUB = "alt-stub"           # markdown: the exercise's stub in the other language, written by clean
LOCKED = (SETUP, CHECK)
EX_RE = re.compile(r"^ex[0-9]+[a-z]?$")
CHECK_SOURCE = 'check("{ex}")'


class LabFormatError(ValueError):
    """A lab template breaks the cell conventions."""


def course(cell_or_nb) -> dict:
    """The ``course`` metadata dict of a cell or notebook (empty if absent)."""
    meta = cell_or_nb.get("metadata", {}).get("course", {})
    return meta if isinstance(meta, dict) else {}


def role(cell) -> str:
    """The course role of a cell ('' for markdown and plain cells)."""
    return str(course(cell).get("role", ""))


def _norm(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def read_notebook(data: bytes | str) -> tuple[NotebookNode, list[str]]:
    """Parse notebook JSON (bytes or text) as nbformat v4 without touching any file.

    Returns the notebook and nbformat's warnings (e.g. duplicate cell ids it renamed).
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nb = nbformat.reads(text, as_version=4)
    return nb, [f"nbformat: {w.message}" for w in caught]


# ----------------------------------------------------------------------------- template
@dataclass(frozen=True)
class ExerciseSpec:
    """One exercise of a template: its id, points and cell ids."""

    id: str
    points: float

    @property
    def answer_id(self) -> str:
        return f"{self.id}-answer"

    @property
    def check_id(self) -> str:
        return f"{self.id}-check"


@dataclass
class LabTemplate:
    """An instructor's lab notebook, validated."""

    path: Path
    nb: NotebookNode
    name: str
    checks: str
    exercises: list[ExerciseSpec]

    @property
    def max_score(self) -> float:
        return sum(e.points for e in self.exercises)

    def exercise(self, ex_id: str) -> ExerciseSpec:
        return next(e for e in self.exercises if e.id == ex_id)


def load_template(path: str | Path) -> LabTemplate:
    """Read and validate a lab template; raises LabFormatError listing every problem."""
    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as e:  # noqa: BLE001
        raise LabFormatError(f"{path}: not a readable notebook: {e}") from e
    problems = lab_problems(nb)
    if problems:
        raise LabFormatError(f"{path} breaks the lab conventions (see CONTRIBUTING.md):\n  - "
                             + "\n  - ".join(problems))
    meta = course(nb)
    exercises = [ExerciseSpec(course(c)["ex"], float(course(c)["points"]))
                 for c in nb.cells if role(c) == ANSWER]
    return LabTemplate(path, nb, meta["lab"], meta["checks"], exercises)


def lab_problems(nb: NotebookNode) -> list[str]:
    """Every way ``nb`` breaks the lab conventions (empty when it is a valid template)."""
    problems: list[str] = []
    meta = course(nb)
    for key in ("lab", "checks"):
        if not meta.get(key):
            problems.append(f"notebook metadata course.{key} is missing")
    ids = [c.get("id") for c in nb.cells]
    if None in ids:
        problems.append("some cells have no id: save with nbformat >= 4.5 (JupyterLab 3+)")
    dupes = sorted({i for i in ids if i is not None and ids.count(i) > 1})
    if dupes:
        problems.append(f"duplicate cell ids: {', '.join(dupes)}")
    answers, checks = {}, {}
    for c in nb.cells:
        r, cid, cm = role(c), c.get("id"), course(c)
        if r not in ("", SETUP, ANSWER, CHECK, DEMO, ALT_STUB):
            problems.append(f"cell {cid}: unknown role {r!r}")
        if r == ALT_STUB and (c.cell_type != "markdown" or cid != f"{cm.get('ex')}-alt-stub"):
            problems.append(f"cell {cid}: an alt-stub cell is markdown with id exN-alt-stub")
        if r in (SETUP, ANSWER, CHECK) and c.cell_type != "code":
            problems.append(f"cell {cid}: role {r} must be a code cell")
        if r == SETUP and not (cid == "setup" or str(cid).startswith("setup-")):
            problems.append(f"setup cell {cid}: id must be 'setup' or start with 'setup-'")
        if r in (ANSWER, CHECK):
            ex = str(cm.get("ex", ""))
            if not EX_RE.match(ex):
                problems.append(f"cell {cid}: course.ex {ex!r} must look like 'ex1'")
                continue
            if cid != f"{ex}-{r}":
                problems.append(f"cell {cid}: the {r} cell of {ex} must have id {ex}-{r}")
            if not isinstance(cm.get("points"), (int, float)) or cm["points"] <= 0:
                problems.append(f"cell {cid}: course.points must be a positive number")
            (answers if r == ANSWER else checks)[ex] = c
    for ex in answers.keys() - checks.keys():
        problems.append(f"{ex} has an answer cell but no check cell")
    for ex in checks.keys() - answers.keys():
        problems.append(f"{ex} has a check cell but no answer cell")
    position = {id(c): i for i, c in enumerate(nb.cells)}
    for ex, c in checks.items():
        if ex in answers:
            if position[id(answers[ex])] > position[id(c)]:
                problems.append(f"{ex}: the answer cell must come before its check cell")
            if course(answers[ex]).get("points") != course(c).get("points"):
                problems.append(f"{ex}: answer and check cells disagree on points")
        if _norm(c.source) != CHECK_SOURCE.format(ex=ex):
            problems.append(f"{ex}-check: source must be exactly {CHECK_SOURCE.format(ex=ex)}")
    if answers and not any(role(c) == SETUP for c in nb.cells):
        problems.append("no setup cell (it imports the checks: `from MODULE import check`)")
    return problems


def normalize_lab(nb: NotebookNode) -> NotebookNode:
    """Author helper: set ids, tags and locks of lab cells from their ``course`` metadata (in place)."""
    setups = 0
    for c in nb.cells:
        r, cm = role(c), course(c)
        if r == SETUP:
            c["id"] = "setup" if setups == 0 else f"setup-{setups}"
            setups += 1
        elif r in (ANSWER, CHECK) and cm.get("ex"):
            c["id"] = f"{cm['ex']}-{r}"
            tag = "exercise" if r == ANSWER else "check"
            c.metadata["tags"] = sorted(set(c.metadata.get("tags", [])) | {tag})
            if r == CHECK and not c.source.strip():
                c.source = CHECK_SOURCE.format(ex=cm["ex"])
        elif r == ALT_STUB and cm.get("ex"):
            c["id"] = f"{cm['ex']}-alt-stub"
        if r in LOCKED:
            c.metadata["editable"] = False
            c.metadata["deletable"] = False
    return nb


def lab_mismatch(template: LabTemplate, learner: NotebookNode) -> str:
    """Why ``learner`` is not a submission of ``template`` ('' when it is, or cannot be told)."""
    lab = course(learner).get("lab")
    if lab and lab != template.name:
        return (f"this notebook is {lab}, not {template.name}: it was submitted to the wrong lab "
                f"(grade it with `ascend-sim grade {lab} ...`)")
    ours = {e.answer_id for e in template.exercises} | {e.check_id for e in template.exercises}
    theirs = {c.get("id") for c in learner.cells} | {f"{course(c).get('ex')}-{role(c)}" for c in learner.cells}
    if not lab and template.exercises and not ours & theirs:
        return (f"this notebook has none of {template.name}'s exercise cells ({', '.join(sorted(ours)[:4])} ...): "
                "it is not a copy of this lab")
    return ""


def student_id(learner: NotebookNode) -> str:
    """The notebook's ``metadata.course.student_id`` (learner-editable; a file-name pattern takes precedence)."""
    sid = course(learner).get("student_id", "")
    return str(sid).strip()[:200] if isinstance(sid, (str, int)) else ""


# ----------------------------------------------------------------------------- rebuild
@dataclass(frozen=True)
class Tamper:
    """A locked template cell that the submission changed: ``edited``, ``deleted`` or ``type_changed``."""

    cell_id: str
    role: str
    kind: str

    def __str__(self) -> str:
        return f"{self.cell_id} ({self.role}) {self.kind.replace('_', ' ')}: restored from the template"


@dataclass
class Rebuilt:
    """The notebook to grade and what rebuilding it found."""

    nb: NotebookNode
    tampered: list[Tamper] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exercise_cells: dict[str, list[str]] = field(default_factory=dict)   # ex -> answer + added cell ids
    run_ids: list[str] = field(default_factory=list)                      # cells the grader executes


def rebuild(template: LabTemplate, learner: NotebookNode) -> Rebuilt:
    """Template cells, with answer cells (and code cells added after them) from ``learner``."""
    out = Rebuilt(nbformat.v4.new_notebook(metadata=copy.deepcopy(template.nb.metadata)))
    matched, added, ignored = _match(template, learner, out.warnings)
    used_ids = {c.id for c in template.nb.cells}
    for tc in template.nb.cells:
        r = role(tc)
        lc = matched.get(tc.id)
        if r == ANSWER:
            ex = course(tc)["ex"]
            out.nb.cells.append(_answer_cell(tc, lc, out.warnings))
            out.exercise_cells[ex] = [tc.id]
            for extra in added.get(tc.id, []):
                cell = _added_cell(extra, ex, used_ids)
                out.nb.cells.append(cell)
                out.exercise_cells[ex].append(cell.id)
            out.run_ids.extend(out.exercise_cells[ex])
            continue
        if r in LOCKED:
            kind = ("deleted" if lc is None else "type_changed" if lc.cell_type != tc.cell_type
                    else "edited" if _norm(lc.source) != _norm(tc.source) else "")
            if kind:
                out.tampered.append(Tamper(tc.id, r, kind))
            out.run_ids.append(tc.id)
        out.nb.cells.append(_fresh(tc))
    if ignored:
        out.warnings.append(f"ignored {ignored} code cell(s) added outside an exercise "
                            "(only cells right after an answer cell are graded)")
    return out


def _match(template: LabTemplate, learner: NotebookNode, warnings: list[str]):
    """Map template cell id -> learner cell; learner code cells added after each answer cell."""
    tids = {c.id for c in template.nb.cells}
    by_id: dict[str, NotebookNode] = {}
    for c in learner.cells:
        cid = c.get("id")
        if cid in by_id and cid in tids:
            warnings.append(f"duplicate cell id {cid}: the first one is used")
        elif cid is not None:
            by_id.setdefault(cid, c)
    matched: dict[str, NotebookNode] = {}
    used: set[int] = set()
    for tc in template.nb.cells:
        lc = by_id.get(tc.id)
        if lc is None and role(tc) in (ANSWER, CHECK):   # no ids (old clients): match by metadata
            lc = next((c for c in learner.cells if role(c) == role(tc)
                       and course(c).get("ex") == course(tc).get("ex") and id(c) not in used), None)
        if lc is None and role(tc) == SETUP:
            lc = next((c for c in learner.cells if _norm(c.source) == _norm(tc.source) and id(c) not in used), None)
        if lc is not None:
            matched[tc.id] = lc
            used.add(id(lc))
    owner = {id(lc): tid for tid, lc in matched.items()}
    added: dict[str, list[NotebookNode]] = {}
    anchor, ignored = None, 0
    for c in learner.cells:
        if id(c) in owner:
            anchor = owner[id(c)]
            continue
        if c.cell_type != "code" or not c.source.strip():
            continue
        if anchor is not None and anchor.endswith("-answer"):
            added.setdefault(anchor, []).append(c)
        else:
            ignored += 1
    return matched, added, ignored


def _fresh(cell: NotebookNode) -> NotebookNode:
    c = copy.deepcopy(cell)
    if c.cell_type == "code":
        c.outputs, c.execution_count = [], None
    return c


def _answer_cell(tc: NotebookNode, lc: NotebookNode | None, warnings: list[str]) -> NotebookNode:
    cell = _fresh(tc)
    if lc is None:
        warnings.append(f"{tc.id} is missing from the submission: graded as the blank stub")
    elif lc.cell_type != "code":
        warnings.append(f"{tc.id} was turned into a {lc.cell_type} cell: graded as the blank stub")
    else:
        cell.source = lc.source
    return cell


def _added_cell(lc: NotebookNode, ex: str, used_ids: set[str]) -> NotebookNode:
    base = re.sub(r"[^A-Za-z0-9_-]", "", str(lc.get("id") or "")) or "cell"
    cid, n = f"{ex}-added-{base}"[:64], 1
    while cid in used_ids:
        cid, n = f"{ex}-added-{base}-{n}"[:64], n + 1
    used_ids.add(cid)
    cell = nbformat.v4.new_code_cell(lc.source, id=cid, metadata={"course": {"role": ADDED, "ex": ex}})
    return cell
