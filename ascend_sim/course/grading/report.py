"""Grading reports: report.json and report.csv per submission, one gradebook CSV for many."""
from __future__ import annotations

import csv
import io
import json
import os
import platform
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["STATUSES", "ExerciseResult", "Report", "write_report", "write_gradebook", "read_report",
           "REPORT_SCHEMA", "fmt_points", "atomic_write", "GradebookOptions", "safe_cell", "printable", "id_problems",
           "GRADEBOOK", "RESERVED_NAMES"]

GRADEBOOK = "gradebook.csv"
RESERVED_NAMES = frozenset({GRADEBOOK, "shard.json"})   # the grader's own files in --out (shards.py's manifest
#                                                        too): no submission folder takes them

REPORT_SCHEMA = 1
STATUSES = ("pass", "fail", "error", "timeout", "not_attempted", "not_run")


@dataclass
class ExerciseResult:
    """One exercise of one submission."""

    exercise: str
    status: str
    score: float
    max: float
    messages: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown exercise status {self.status!r} (one of {', '.join(STATUSES)})")


@dataclass
class Report:
    """The grade of one submission against one lab."""

    lab: str
    submission: str
    sha256: str
    exercises: list[ExerciseResult] = field(default_factory=list)
    tampered: list[dict] = field(default_factory=list)      # {cell_id, role, kind}
    warnings: list[str] = field(default_factory=list)
    grader_error: str = ""
    graded_at: str = ""
    seconds: float = 0.0
    versions: dict = field(default_factory=dict)
    student_id: str = ""            # from the notebook's metadata (see GradebookOptions for the file-name pattern)
    lab_version: str = ""           # the lab release the submission was graded against (releases.py)

    @property
    def score(self) -> float:
        return sum(e.score for e in self.exercises)

    @property
    def max_score(self) -> float:
        return sum(e.max for e in self.exercises)

    def status_of(self, ex_id: str) -> str:
        return next(e.status for e in self.exercises if e.exercise == ex_id)

    def to_json(self) -> dict:
        return {"schema_version": REPORT_SCHEMA, **asdict(self), "score": self.score, "max_score": self.max_score}

    def summary(self) -> str:
        """'alice.ipynb: 5/7 (ex1 pass, ex2 fail, ex3 timeout); tampered: ex2-check edited'."""
        parts = ", ".join(f"{e.exercise} {e.status}" for e in self.exercises)
        text = f"{printable(Path(self.submission).name)}: {fmt_points(self.score)}/{fmt_points(self.max_score)} ({parts})"
        if self.tampered:
            text += "; tampered: " + ", ".join(f"{t['cell_id']} {t['kind']}" for t in self.tampered)
        if self.grader_error:
            text += f"; grader error: {printable(self.grader_error)}"
        return text


def printable(text: str) -> str:
    """``text`` with every control or format character escaped (``\\n``, ``\\x1b``, ``\\u202e``): a file name
    cannot start a new line of the summary, move the cursor or reverse the text. Other Unicode is kept."""
    import unicodedata
    out = []
    for ch in str(text):
        if ch == "\\" or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            out.append("\\\\" if ch == "\\" else ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


def fmt_points(x: float) -> str:
    """2.0 -> '2', 1.5 -> '1.5'."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def versions() -> dict[str, str]:
    """Versions that can change a grade: Python, numpy, nbformat (the re-run is plain Python)."""
    out = {"python": platform.python_version()}
    for mod in ("numpy", "nbformat"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - a missing version is not worth failing a report
            out[mod] = "?"
    return out


def atomic_write(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file next to ``path`` and rename it over ``path`` (readers never see half)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def safe_cell(v: object) -> object:
    """A CSV cell a spreadsheet shows as text: text starting with = + - @ or a control character gets a ``'``."""
    if isinstance(v, str) and v and (v[0] in "=+-@\t\r\n" or v[0] < " "):
        return "'" + v
    return v


def _csv(rows: list[list], bom: bool = False) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf)
    for row in rows:
        w.writerow([safe_cell(v) for v in row])
    return buf.getvalue().encode("utf-8-sig" if bom else "utf-8")


def write_report(report: Report, directory: str | Path) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.csv`` (one row per exercise) into ``directory``, atomically."""
    d = Path(directory)
    jpath, cpath = d / "report.json", d / "report.csv"
    atomic_write(jpath, (json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    tampered_cells = {t["cell_id"] for t in report.tampered}
    rows = [["lab", "submission", "sha256", "exercise", "status", "score", "max", "check_tampered", "message"]]
    for e in report.exercises:
        rows.append([report.lab, printable(report.submission), report.sha256, e.exercise, e.status, fmt_points(e.score),
                     fmt_points(e.max), "yes" if f"{e.exercise}-check" in tampered_cells else "no",
                     e.messages[0].splitlines()[0] if e.messages else ""])
    atomic_write(cpath, _csv(rows))
    return jpath, cpath


def read_report(path: str | Path) -> Report:
    """Load a report.json written by ``write_report``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    data.pop("schema_version", None)
    data.pop("score", None)
    data.pop("max_score", None)
    data["exercises"] = [ExerciseResult(**e) for e in data["exercises"]]
    return Report(**data)


@dataclass(frozen=True)
class GradebookOptions:
    """How gradebook.csv identifies learners and is encoded.

    ``id_pattern``: a regular expression searched in the submission's file name; its group ``id`` (or group 1,
    or the whole match) is the student id. A file it does not match keeps its file name's stem as the id, and
    ``id_problems`` lists it. ``metadata_id``: the instructor opts in to the notebook's
    ``metadata.course.student_id`` (learner-editable) for files the pattern does not match. ``bom``: UTF-8 with
    a byte-order mark, so spreadsheet programs read Chinese (any non-ASCII) names correctly.
    """

    id_pattern: str = ""
    bom: bool = False
    metadata_id: bool = False

    def matched_id(self, report: Report) -> str:
        """The id the pattern gives, or '' (no pattern, or no match)."""
        if not self.id_pattern:
            return ""
        m = re.search(self.id_pattern, Path(report.submission).name)
        if not m:
            return ""
        return m.groupdict().get("id") or (m.group(1) if m.groups() else m.group(0))

    def student_id(self, report: Report) -> str:
        return (self.matched_id(report) or (report.student_id if self.metadata_id else "")
                or Path(report.submission).stem)


def id_problems(reports: list[Report], options: GradebookOptions) -> list[str]:
    """Every file the id pattern did not match and every id given to two submissions (for a loud warning)."""
    out = []
    if options.id_pattern:
        for r in reports:
            if not options.matched_id(r):
                source = "its notebook metadata" if options.metadata_id and r.student_id else "its file name"
                out.append(f"--id-pattern does not match {printable(Path(r.submission).name)}: its student id "
                           f"{printable(options.student_id(r))!r} comes from {source}")
    seen: dict[str, list[str]] = {}
    for r in reports:
        seen.setdefault(options.student_id(r), []).append(printable(Path(r.submission).name))
    for sid, files in seen.items():
        if len(files) > 1:
            out.append(f"student id {printable(sid)!r} is given to {len(files)} submissions: {', '.join(files)}")
    return out


def write_gradebook(reports: list[Report], path: str | Path, options: GradebookOptions = GradebookOptions()) -> Path:
    """One row per submission: student id, total, then score and status per exercise, tampering and errors."""
    ex_ids: list[str] = []
    for r in reports:
        ex_ids += [e.exercise for e in r.exercises if e.exercise not in ex_ids]
    rows = [["student_id", "submission", "lab", "sha256", "score", "max_score",
             *[c for ex in ex_ids for c in (ex, f"{ex}_status")], "tampered", "grader_error"]]
    for r in reports:
        by = {e.exercise: e for e in r.exercises}
        cells = []
        for ex in ex_ids:
            e = by.get(ex)
            cells += [fmt_points(e.score), e.status] if e else ["", ""]
        rows.append([printable(options.student_id(r)), printable(r.submission), r.lab, r.sha256, fmt_points(r.score),
                     fmt_points(r.max_score), *cells, ";".join(f"{t['cell_id']}:{t['kind']}" for t in r.tampered),
                     printable(r.grader_error)])
    return atomic_write(path, _csv(rows, options.bom))
