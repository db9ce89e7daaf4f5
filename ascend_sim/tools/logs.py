"""Log analysis (日志分析): read plog files, find the first error, group repeated errors.

``analyse(path)`` takes a plog file or a folder of them (``$ASCEND_PROCESS_LOG_PATH/plog``); ``ascend-sim logs
PATH`` prints the summary. Lines are CANN's slog shape (engine/plog.py). An aicore-exception report (the
``EZ9999`` block of one launch) counts as one error, named by its ``[check] ErrorClass: rule`` line.
Repeated errors are grouped by their text with numbers, ids and timestamps taken out, so a fault that recurs
in a loop of launches is one group with a count, not a screen of lines.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LogLine", "ErrorGroup", "LogSummary", "parse_line", "read_logs", "analyse"]

_LINE = re.compile(r"^\[(?P<level>DEBUG|INFO|WARNING|ERROR)\] (?P<module>[A-Z_0-9]+)\((?P<pid>\d+),[^)]*\):"
                   r"(?P<ts>\S+) \[(?P<where>[^\]]*)\] (?P<msg>.*)$")
_LAUNCH = re.compile(r"^launch=(\d+) ")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")


@dataclass(frozen=True)
class LogLine:
    """One parsed plog line."""

    file: str
    lineno: int
    level: str
    module: str
    pid: int
    timestamp: str
    where: str
    message: str

    @property
    def launch(self) -> int | None:
        m = _LAUNCH.match(self.message)
        return int(m.group(1)) if m else None


@dataclass
class ErrorGroup:
    """Errors with the same text (numbers blanked): how many, and the first one."""

    key: str
    first: LogLine
    count: int = 0
    launches: list[int] = field(default_factory=list)


@dataclass
class LogSummary:
    """What ``analyse`` found: line counts per level, the first error (its whole report) and the groups."""

    files: list[str]
    lines: int
    per_level: dict[str, int]
    first_error: list[LogLine]
    groups: list[ErrorGroup]

    def render(self) -> str:
        """The text ``ascend-sim logs`` prints."""
        levels = ", ".join(f"{k} {v}" for k, v in self.per_level.items() if v)
        out = [f"{len(self.files)} log file(s), {self.lines} lines ({levels or 'empty'})"]
        if not self.first_error:
            out.append("no ERROR line")
            return "\n".join(out)
        head = self.first_error[0]
        out.append(f"first error: {Path(head.file).name}:{head.lineno} ({head.module}, pid {head.pid}, "
                   f"{head.timestamp})")
        out += [f"  {ln.message}" for ln in self.first_error]
        out.append(f"{len(self.groups)} distinct error(s), by first appearance:")
        for g in self.groups:
            where = f"launches {_ranges(g.launches)}" if g.launches else f"{Path(g.first.file).name}:{g.first.lineno}"
            out.append(f"  {g.count:>5} x  {_strip_launch(g.first.message)}   [{where}]")
        return "\n".join(out)


def parse_line(text: str, file: str = "", lineno: int = 0) -> LogLine | None:
    """A LogLine, or None for a line not in the plog shape."""
    m = _LINE.match(text.rstrip("\n"))
    if m is None:
        return None
    return LogLine(file, lineno, m["level"], m["module"], int(m["pid"]), m["ts"], m["where"], m["msg"])


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(path.rglob("*.log"))
        if not found:
            raise FileNotFoundError(f"{path} holds no .log file (plog files are <root>/plog/plog-<pid>_<time>.log)")
        return found
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist (set ASCEND_PROCESS_LOG_PATH and look in its plog/ folder)")
    return [path]


def read_logs(path: str | Path) -> tuple[list[str], list[LogLine]]:
    """(files read, parsed lines in file order) of a plog file or folder."""
    files = _files(Path(path))
    lines: list[LogLine] = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                ln = parse_line(text, str(f), i)
                if ln is not None:
                    lines.append(ln)
    return [str(f) for f in files], lines


def _strip_launch(msg: str) -> str:
    return _LAUNCH.sub("", msg)


def _key(msg: str) -> str:
    return _NUMBER.sub("N", _strip_launch(msg))


def _ranges(ids: list[int]) -> str:
    ids = sorted(set(ids))
    if len(ids) > 6:
        return f"{ids[0]}..{ids[-1]} ({len(ids)})"
    return ", ".join(map(str, ids))


def _reports(errors: list[LogLine]) -> list[list[LogLine]]:
    """ERROR lines cut into reports: consecutive lines of one pid and launch id are one report."""
    out: list[list[LogLine]] = []
    for ln in errors:
        prev = out[-1][-1] if out else None
        same = (prev is not None and prev.file == ln.file and prev.pid == ln.pid and ln.launch is not None
                and prev.launch == ln.launch and prev.lineno == ln.lineno - 1)
        if same and "EZ9999" not in ln.message:
            out[-1].append(ln)
        else:
            out.append([ln])
    return out


def _headline(report: list[LogLine]) -> LogLine:
    """The line naming the rule (``[check] ErrorClass: ...``) of an aicore report, else its first line."""
    return next((ln for ln in report if re.match(r"^\[\w+\] \w+Error: ", _strip_launch(ln.message))), report[0])


def analyse(path: str | Path) -> LogSummary:
    """Summarise the plog file or folder at ``path``."""
    files, lines = read_logs(path)
    per_level = {name: 0 for name in ("DEBUG", "INFO", "WARNING", "ERROR")}
    for ln in lines:
        per_level[ln.level] += 1
    reports = _reports([ln for ln in lines if ln.level == "ERROR"])
    groups: dict[str, ErrorGroup] = {}
    for rep in reports:
        head = _headline(rep)
        g = groups.setdefault(_key(head.message), ErrorGroup(_key(head.message), head))
        g.count += 1
        if head.launch is not None:
            g.launches.append(head.launch)
    return LogSummary(files, len(lines), per_level, reports[0] if reports else [], list(groups.values()))
