"""Exercise checks: a registry per lab, the outcome of one check, and its notebook output.

A lab module (``ascend_sim/course/labs/lab00_warmup.py``) makes a ``Lab`` and registers one
check function per exercise::

    LAB = Lab("lab00_warmup")
    check = LAB.check                      # what the notebook's check cells call

    @LAB.exercise("ex1", points=2, hints={"QueueError": ("nudge", "pointer", "explanation"), "*": ("...",)})
    def _ex1(ctx: Context) -> None:
        add = ctx.answer("add_custom")     # not defined / a stub -> "not attempted"
        ...
        ctx.expect_close(z, x + y, case="n=2048, 8 blocks", sentinel=np.nan)

In the notebook, ``check("ex1")`` runs the check against the learner's
namespace, prints one deterministic line and displays a bundle whose
``application/vnd.ascend-sim.check+json`` entry carries, under the grader, the
evidence the ``Context`` recorded; the grader judges that itself (``judge.py``).
Hints are chosen by the diagnosed mistake (``hints.py``); ``hint("ex1")`` asks for the next one.
"""
from __future__ import annotations

import contextlib
import dataclasses
import html
import os
import re
import signal
import sys
import threading
import time
import traceback
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Mapping, NoReturn

import numpy as np

from ascend_sim.analysis import verify
from ascend_sim.engine.errors import KernelError
from ascend_sim.engine.memory import tracking_gm_writes
from ascend_sim.engine.spelling import CPP, PYTHON, language_of
from ascend_sim.course.grading import evidence as ev
from ascend_sim.course.grading.hints import HintLog, HintTable, diagnosis_of
from ascend_sim.course.grading.stale import stale_note
from ascend_sim.course.grading.report import fmt_points

__all__ = ["MIME", "CHECK_STATUSES", "Lab", "Context", "CheckResult", "Exercise", "NotAttempted",
           "CheckFailed", "LearnerError", "Measured"]

MIME = "application/vnd.ascend-sim.check+json"
SCHEMA = 1
CHECK_STATUSES = ("pass", "fail", "error", "not_attempted")
STRICT_ENV = "ASCEND_SIM_CHECK_STRICT"      # "1": a check that does not pass raises (nbval on solved labs)
EVIDENCE_ENV = "ASCEND_SIM_EVIDENCE"        # "1" (set by the grader): results carry the evidence transcript
TIMEOUT_ENV = "ASCEND_SIM_CHECK_TIMEOUT"    # seconds a check may run in JupyterLab (0: no guard)
CHECK_TIMEOUT = 300.0
MAX_INSTRUCTIONS = 1_000_000                # API calls per core under the guard; lab01 issues at most about 15,000
GUARD_POLL = 0.5                            # seconds between the guard's looks at the running core
LINE_MAX = 200                              # characters of the printed line; the rest goes to the details

_STDLIB = os.path.dirname(os.__file__)


class NotAttempted(Exception):
    """The answer is missing or still the stub."""


class _Diagnosed(Exception):
    """A failure with the keys of its diagnosis (``hints.py``), which choose the hints shown."""

    def __init__(self, message: str = "", diagnosis: tuple[str, ...] = ()):
        super().__init__(message)
        self.diagnosis = tuple(diagnosis)


class CheckFailed(_Diagnosed):
    """The answer ran and is wrong (values, sanitizer error, cycle budget)."""


class LearnerError(_Diagnosed):
    """The learner's code raised an ordinary Python exception."""


class CheckTimeout(BaseException):
    """The check ran longer than its wall-clock guard (JupyterLab): the answer probably loops forever.

    ``where``: the learner's line that was running when the guard fired ('line 7 `while i < n:`').
    """

    def __init__(self, where: str = "", instructions: int = 0):
        super().__init__(where)
        self.where = where
        self.instructions = instructions        # > 0: stopped by the instruction limit, not the clock


OUTCOMES = {NotAttempted: "not_attempted", CheckFailed: "fail", LearnerError: "error"}


# ----------------------------------------------------------------------------- result
@dataclass
class CheckResult:
    """The outcome of one check; ``payload()`` is the machine-readable form."""

    lab: str
    exercise: str
    status: str
    score: float
    max: float
    messages: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    evidence: dict | None = field(default=None, repr=False)     # the transcript the grader replays
    more_hints: bool = field(default=False, repr=False)          # hint("exN") would show another level

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def line(self) -> str:
        """The one short deterministic line printed under the check cell; a long rule is shortened, never its Fix."""
        pts = f"{fmt_points(self.score)}/{fmt_points(self.max)} points"
        head = {"pass": f"PASS {pts}", "fail": f"FAIL {pts}", "error": f"ERROR {pts}",
                "not_attempted": f"not attempted ({pts})"}[self.status]
        first, fix = self._first_line(), self._fix()
        text = f"[{self.exercise}] {head}" + (f": {first}" if first else "")
        tail = f" {fix}" if fix else ""
        if len(text) + len(tail) > LINE_MAX:        # too long: drop the quoted source first (the details have it)
            text = re.sub(r"(line \d+) `[^`]*`", r"\1", text)
        if len(text) + len(tail) > LINE_MAX:
            room = max(LINE_MAX - len(tail), 160)           # the rule keeps at least 160 characters
            text = text[:room].rsplit(" ", 1)[0] + " …"
        return text + tail

    def _first_line(self) -> str:
        return self.messages[0].splitlines()[0] if self.messages and self.messages[0] else ""

    def _fix(self) -> str:
        """The 'Fix: ...' line of the first message, or ''."""
        lines = self.messages[0].splitlines()[1:] if self.messages and self.messages[0] else []
        return next((ln.strip() for ln in lines if ln.startswith("Fix: ")), "")

    def details(self) -> list[str]:
        """Everything beyond the line: the rest of the messages, then the hints revealed so far."""
        first, *more = self.messages or [""]
        rest = [ln for ln in first.splitlines()[1:] if ln.strip() != self._fix()]
        shown = first if " … " in self.line() or self.line().endswith(" …") else "\n".join(rest)
        hints = [f"Hint {i}: {h}" for i, h in enumerate(self.hints, 1)]
        if self.more_hints:
            hints.append(f"(another run, or hint({self.exercise!r}), shows the next hint)")
        return [m for m in [shown, *more] if m] + hints

    def payload(self) -> dict[str, Any]:
        """JSON for the custom MIME type. The grader takes only ``evidence`` from it, and judges that itself."""
        data = {"schema": SCHEMA, **asdict(self)}
        del data["more_hints"]
        if data["evidence"] is None:
            del data["evidence"]
        return data

    def bundle(self) -> dict[str, Any]:
        """A display bundle: the custom MIME plus text/plain and text/html renderings of the details."""
        details = self.details()
        colour = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#cf222e"}.get(self.status, "#57606a")
        items = "".join(f"<li><pre style='margin:0;white-space:pre-wrap'>{html.escape(d)}</pre></li>"
                        for d in details)
        return {MIME: self.payload(),
                "text/plain": "\n".join(details),
                "text/html": (f"<div class='ascend-sim-check' style='border-left:3px solid {colour};"
                              f"padding-left:6px'><ul style='margin:0'>{items}</ul></div>") if details else ""}


@dataclass(frozen=True)
class Measured:
    """One figure a check held to a budget: the case it was measured in, the figure, the budget and their unit.

    The check's record of how close an answer came (``grading/margins.py`` reads it); nothing the learner sees.
    """

    case: str
    measured: float
    budget: float
    unit: str = "cycles"


# ----------------------------------------------------------------------------- context
class Context:
    """What a check function gets: the learner's names, a seeded RNG, and failure helpers.

    Every answer looked up and every call to learner code is written down in ``events`` (the evidence
    the grader replays, see ``evidence.py``); the replaying side is ``judge.ReplayContext``.
    """

    def __init__(self, lab: str, exercise: str, namespace: Mapping[str, Any]):
        self.lab, self.exercise, self.namespace = lab, exercise, namespace
        self.rng = np.random.default_rng(zlib.crc32(f"{lab}/{exercise}".encode()))
        self.notes: list[str] = []
        self.events: list[dict] = []
        self.measured: list[Measured] = []      # every figure held to a budget, in order (expect_cycles, measure)
        self._cases: list[str] = []             # the labels of the open ``case`` blocks
        self._answers: dict[int, str] = {}      # id of an answer object -> its name
        self.language = PYTHON                  # the last answer's language: hints are spelled in it (C++: "cpp")

    def answer(self, name: str) -> Any:
        """The learner's object ``name``; raises NotAttempted when it is missing or ``...``."""
        obj = self.namespace.get(name, _MISSING)
        state = "missing" if obj is _MISSING else "ellipsis" if obj is Ellipsis else "ok"
        event = {"kind": "answer", "name": name, "state": state}
        self.events.append(event)
        if state != "ok":
            raise not_attempted(name, state)
        if language_of(obj) == CPP:             # the replay spells the grader's hints in it too
            self.language = event["language"] = CPP
        self._answers[id(obj)] = name
        return obj

    def describe(self, v: Any) -> Any:
        """A call argument as data: answers by name, arrays by digest (what both sides compare)."""
        name = self._answers.get(id(v))
        return {"answer": name} if name is not None else ev.describe(v)

    def call(self, fn: Callable, *args, kernels: tuple[str, ...] = (),
             output_from: tuple[str, Callable] | None = None, output_arg: int | None = None, **kwargs) -> Any:
        """Run learner code, turning its exceptions into check outcomes.

        NotImplementedError -> not attempted; a ``KernelError`` (the sanitizer)
        -> fail with its rule and line; any other exception -> error.
        For a learner function that must run kernels (the grader checks it): ``kernels`` names the kernels
        it must launch, ``output_from = (kernel name, view)`` says its result is ``view(launch)`` of those launches;
        ``output_arg = i``: the result is written into argument ``i`` (a C++ host function's output buffer), not
        returned.
        """
        learner = id(fn) in self._answers
        event = {"kind": "call", "learner": learner, "args": [self.describe(a) for a in args], "launches": []}
        keep = output_from[0] if output_from else None

        def record(run, k, block_dim, *a, **kw):
            before = [ev.digest(x) for x in a if isinstance(x, np.ndarray)]
            with tracking_gm_writes():
                res = run(k, block_dim, *a, **kw)
            event["launches"].append(ev.launch_record(
                k, block_dim, a, before, res, token=self._answers.get(id(k)),
                with_data=not learner or getattr(k, "__name__", None) == keep))
            return res

        self.events.append(event)
        try:
            result = ev.with_hook(record, fn, *args, **kwargs)
        except (CheckFailed, NotAttempted, LearnerError) as e:
            event["raised"] = _raised(e)
            raise
        except Exception as e:  # noqa: BLE001 - every learner exception becomes feedback
            t = _translate(e)
            note = stale_note(e, self.namespace)
            if note and isinstance(t, _Diagnosed):   # the failing code is an older version than the notebook's cells
                t = type(t)(f"{note}\n{t}", ("stale", *t.diagnosis))       # first: it explains the rest
            event["raised"] = _raised(t)
            raise t from e
        if learner:
            event["result"] = ev.encode_value(result)
            event["mutated"] = {str(i): ev.encode_array(a) for i, a in enumerate(args)
                                if isinstance(a, np.ndarray) and ev.describe(a) != event["args"][i]}
        return result

    def fail(self, message: str, diagnosis: tuple[str, ...] = ()) -> NoReturn:
        """Fail the check with ``message`` (``case`` blocks prefix it with the case).

        ``diagnosis``: the keys of the mistake, which choose the exercise's hints (``hints.py``).
        """
        raise CheckFailed(message, diagnosis)

    def note(self, message: str) -> None:
        """A message shown when the check passes (e.g. the cycles used)."""
        self.notes.append(message)

    @contextlib.contextmanager
    def case(self, label: str) -> Iterator[None]:
        """Prefix failures raised inside the block with ``case <label>: ``."""
        self._cases.append(label)
        try:
            yield
        except CheckFailed as e:
            raise CheckFailed(f"case {label}: {e}", e.diagnosis) from e.__cause__
        finally:
            self._cases.pop()

    def measure(self, measured: float, budget: float, unit: str = "cycles") -> bool:
        """Write down a figure held to ``budget`` (lower is better) in the open case; True when it is within it.

        For a check that words its own failure (a diagnosis from the trace); ``expect_cycles`` calls it too.
        """
        self.measured.append(Measured(" / ".join(self._cases), float(measured), float(budget), unit))
        return measured <= budget

    def expect_close(self, actual: Any, golden: np.ndarray, *, dtype=None, sentinel=None,
                     segment: int | None = None, tile: int | None = None,
                     what: str = "output") -> verify.CompareResult:
        """Compare by the verify convention; on failure diagnose unwritten tails and misplaced blocks.

        ``sentinel``: the output's fill before the launch; ``segment``/``tile``: elements per block/tile.
        """
        from ascend_sim.analysis.diagnose import explain
        result = verify.compare(actual, golden, dtype)
        if not result.passed:
            key, text = explain(actual, golden, result, sentinel=sentinel, segment=segment, tile=tile, what=what)
            self.fail(text, (key,))
        return result

    def expect_cycles(self, cycles: float, budget: float, advice: str = "",
                      diagnosis: tuple[str, ...] = ("budget",)) -> None:
        """Hold the kernel to a budget in simulated cycles; ``advice`` and ``diagnosis`` word a failure."""
        if not self.measure(cycles, budget):
            self.fail(f"took {cycles:,.0f} simulated cycles; the budget is {budget:,.0f}"
                      + (f": {advice}" if advice else ""), diagnosis)
        self.note(f"{cycles:,.0f} simulated cycles (budget {budget:,.0f})")


_MISSING = object()


def not_attempted(name: str, state: str) -> NotAttempted:
    """The NotAttempted of an answer that is ``missing`` or still ``ellipsis``."""
    if state == "missing":
        return NotAttempted(f"`{name}` is not defined: write it in the answer cell and run that cell")
    return NotAttempted(f"`{name}` is still `...`")


def _raised(e: Exception) -> dict:
    """The evidence record of an exception a call ended with."""
    return {"kind": OUTCOMES[type(e)], "message": str(e), "diagnosis": list(getattr(e, "diagnosis", ()))}


def _translate(e: BaseException) -> Exception:
    chain = _chain(e)
    if any(isinstance(x, NotImplementedError) for x in chain):
        return NotAttempted("the answer still raises NotImplementedError: replace the stub with your code")
    kernel_err = next((x for x in chain if isinstance(x, KernelError)), None)
    if kernel_err is not None:
        return CheckFailed(kernel_error_text(kernel_err), diagnosis_of(kernel_err))
    if isinstance(e, MemoryError):
        return LearnerError("MemoryError: the answer ran out of memory", diagnosis_of(e))
    where = learner_line(e.__traceback__)
    return LearnerError(f"{type(e).__name__}: {e}" + (f" ({where})" if where else ""), diagnosis_of(e))


def _chain(e: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def kernel_error_text(e: KernelError) -> str:
    """'[memcheck] OutOfBoundsError at line 12 `DataCopy(...)`: <rule>\\nFix: <fix>' (no temp file names)."""
    site = getattr(e, "site", None)
    where = _site_text(site) if site else ""
    rule = getattr(e, "rule_message", None) or str(e)
    text = f"[{getattr(e, 'check', 'memcheck')}] {type(e).__name__}" + (f" at {where}" if where else "")
    text += f": {rule}"
    if getattr(e, "fix", ""):
        text += f"\nFix: {e.fix}"
    return text


def _site_text(site: tuple[str, int]) -> str:
    import linecache
    fn, ln = site
    if not ln:
        return ""
    src = linecache.getline(fn, ln).strip()
    return f"line {ln}" + (f" `{src}`" if src else "")


def _is_learner_file(filename: str) -> bool:
    return not ev.is_package_file(filename) and not os.path.abspath(filename).startswith(_STDLIB + os.sep)


def frame_line(frame, with_file: bool = False) -> str:
    """'line 7 `while i < n:`' for the innermost frame from ``frame`` outwards that is learner code, else ''.

    ``with_file``: name the grader's cell too ('line 7 of cell ex2-answer `while i < n:`').
    """
    import linecache
    while frame is not None and not _is_learner_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return ""
    name = frame.f_code.co_filename
    src = linecache.getline(name, frame.f_lineno).strip()
    cell = f" of cell {name[1:-1]}" if with_file and name.startswith("<") and name.endswith(">") else ""
    return f"line {frame.f_lineno}{cell}" + (f" `{src}`" if src else "")


def learner_line(tb) -> str:
    """'line 7 `return x + y`' for the innermost traceback frame in learner code, else ''."""
    frames = [f for f in traceback.extract_tb(tb) if _is_learner_file(f.filename)]
    if not frames:
        return ""
    f = frames[-1]
    return f"line {f.lineno}" + (f" `{f.line.strip()}`" if f.line else "")


# ----------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class Exercise:
    """One registered check."""

    id: str
    points: float
    fn: Callable[[Context], None]
    hints: HintTable = HintTable({})
    title: str = ""
    allow: tuple[str, ...] = ()         # keys of the static screen this exercise's answers may use (screen.py)


class Lab:
    """The checks of one lab, keyed by exercise id (``ex1`` ...)."""

    def __init__(self, name: str):
        self.name = name
        self.exercises: dict[str, Exercise] = {}
        self.hint_log = HintLog()

    def exercise(self, ex_id: str, *, points: float,
                 hints: Mapping[str, tuple[str, ...]] | tuple[str, ...] | list[str] = (),
                 title: str = "", allow: tuple[str, ...] = ()) -> Callable[[Callable[[Context], None]],
                                                                          Callable[[Context], None]]:
        """Register the decorated function as the check of ``ex_id``.

        ``hints``: diagnosis key -> up to three levels (nudge, pointer, explanation), ``"*"`` the fallback
        (``hints.py``); a plain sequence is the ``"*"`` entry.
        ``allow``: what the grader's static screen lets this exercise's answer cells use (e.g. ``("os",)``).
        """
        if ex_id in self.exercises:
            raise ValueError(f"{self.name}: exercise {ex_id!r} is registered twice")
        table = HintTable.of(hints, f"{self.name}/{ex_id}")

        def register(fn: Callable[[Context], None]) -> Callable[[Context], None]:
            self.exercises[ex_id] = Exercise(ex_id, points, fn, table, title, tuple(allow))
            return fn
        return register

    def add_hints(self, ex_id: str, hints: Mapping[str, tuple[str, ...]]) -> None:
        """Add diagnosis entries to ``ex_id``'s hint table (after its decorator, whose hints stay the rest)."""
        ex = self.get(ex_id)
        table = HintTable.of({**ex.hints.table, **hints}, f"{self.name}/{ex_id}")
        self.exercises[ex_id] = dataclasses.replace(ex, hints=table)

    def run(self, ex_id: str, namespace: Mapping[str, Any]) -> CheckResult:
        """Run the check of ``ex_id`` against ``namespace``; no output. Repeated failures reveal hints.

        The result carries the evidence transcript when ``ASCEND_SIM_EVIDENCE=1`` (the grader sets it).
        """
        ex = self.get(ex_id)
        ctx = Context(self.name, ex_id, namespace)
        result = self.outcome(ex, ctx)
        if os.environ.get(EVIDENCE_ENV) == "1":
            result.evidence = {"schema": ev.EVIDENCE_SCHEMA, "events": ctx.events}
        return result

    def get(self, ex_id: str) -> Exercise:
        """The registered exercise ``ex_id``; KeyError naming the known ones."""
        if ex_id not in self.exercises:
            known = ", ".join(self.exercises) or "none"
            raise KeyError(f"{self.name} has no exercise {ex_id!r} (known: {known})")
        return self.exercises[ex_id]

    def outcome(self, ex: Exercise, ctx: Context, *, session: bool = True) -> CheckResult:
        """Run ``ex``'s check function with ``ctx`` (learner side or replay) and turn how it ended into a result.

        ``session``: count the failure towards this session's hints (the grader, which runs each check
        once, passes False and shows the first hint).
        """
        try:
            ex.fn(ctx)
        except NotAttempted as e:
            return CheckResult(self.name, ex.id, "not_attempted", 0, ex.points, [str(e)])
        except CheckFailed as e:
            return self._failed(ex, "fail", str(e), session, e.diagnosis, ctx.language)
        except LearnerError as e:
            return self._failed(ex, "error", str(e), session, e.diagnosis, ctx.language)
        except ev.Rejected:
            raise
        except Exception as e:  # noqa: BLE001 - a bug in the check itself, or learner data it choked on
            where = learner_line(e.__traceback__)
            return self._failed(ex, "error", f"the check could not run your answer: {type(e).__name__}: {e}"
                                + (f" ({where})" if where else ""), session, language=ctx.language)
        return CheckResult(self.name, ex.id, "pass", ex.points, ex.points, list(ctx.notes))

    def _failed(self, ex: Exercise, status: str, message: str, session: bool = True,
                diagnosis: tuple[str, ...] = (), language: str = PYTHON) -> CheckResult:
        """A failed result with the hints of its diagnosis, spelled in the answer's ``language``: one more level
        per failure (``hints.py``)."""
        key, levels = ex.hints.pick(diagnosis)
        shown = self.hint_log.failed(ex.id, key, levels, language) if session else ex.hints.first(diagnosis, language)
        result = CheckResult(self.name, ex.id, status, 0, ex.points, [message], shown)
        result.more_hints = len(levels) > len(shown)
        return result

    def hint(self, ex_id: str, namespace: Mapping[str, Any] | None = None) -> None:
        """The learner asks for the next hint of ``ex_id`` (chosen by the last failure's diagnosis).

        Before any failure the starting hint is spelled in C++ when ``namespace`` (default: the caller's
        globals, the notebook's) holds a C++ kernel.
        """
        ex = self.get(ex_id)
        shown = self.hint_log.ask(ex_id)
        if not shown:
            if namespace is None:
                namespace = sys._getframe(1).f_globals
            language = CPP if any(language_of(v) == CPP for v in list(namespace.values())) else PYTHON
            text = (f"[{ex_id}] run check({ex_id!r}) first: hints are chosen by what goes wrong. To start: "
                    + ex.hints.first((), language)[0])
        else:
            total = len(self.hint_log.last[ex_id][1])
            text = "\n".join(f"[{ex_id}] hint {i} of {total}: {h}" for i, h in enumerate(shown, 1))
            if len(shown) == total:
                text += "\n(that is every hint for this mistake)"
        print(text, flush=True)

    def check(self, ex_id: str, namespace: Mapping[str, Any] | None = None) -> None:
        """The check cell's call: run, print one line, display the result bundle.

        ``namespace`` defaults to the caller's globals (the notebook's user namespace). In the main thread
        a wall-clock guard (``ASCEND_SIM_CHECK_TIMEOUT`` seconds, default 300) turns a hang into an error.
        """
        if namespace is None:
            namespace = sys._getframe(1).f_globals
        limit = float(os.environ.get(TIMEOUT_ENV, CHECK_TIMEOUT) or 0)
        try:
            with _wall_clock_guard(limit):
                result = self.run(ex_id, namespace)
        except CheckTimeout as e:
            ex = self.get(ex_id)
            stuck = f"your kernel seems stuck in {e.where}: " if e.where else "your answer probably loops forever: "
            if e.instructions:
                after = f"one block issued {e.instructions:,} simulated instructions (limit {MAX_INSTRUCTIONS:,})"
                longer = ""
            else:
                after, longer = f"{limit:g} s of wall-clock time", f"; set {TIMEOUT_ENV} to allow longer"
            result = self._failed(ex, "error", f"the check was stopped after {after}: {stuck}"
                                  "a loop whose condition never changes, or a wait nobody ends"
                                  f"\nFix: make the loop's condition change (or its bound finite) and re-run the "
                                  f"cell{longer}", diagnosis=("stuck",))
        print(result.line(), flush=True)
        _display(result)
        if os.environ.get(STRICT_ENV) == "1" and not result.passed:
            raise AssertionError(f"{STRICT_ENV}=1 and the check did not pass: {result.line()}")


@contextlib.contextmanager
def _wall_clock_guard(seconds: float) -> Iterator[None]:
    """Raise CheckTimeout in this (main) thread after ``seconds``, or once the running core has issued
    ``MAX_INSTRUCTIONS`` (an endless loop of instructions fills memory long before the clock runs out);
    a no-op elsewhere or with 0. The hot path pays nothing: a timer looks every ``GUARD_POLL`` seconds.
    """
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return
    from ascend_sim.engine import context
    deadline = time.monotonic() + seconds

    def expire(signum, frame):  # noqa: ANN001 - signal handler signature
        core = context.current
        issued = core.calls if core is not None else 0     # API calls the scalar unit issued
        if issued > MAX_INSTRUCTIONS:
            raise CheckTimeout(frame_line(frame), issued)
        if time.monotonic() >= deadline:
            raise CheckTimeout(frame_line(frame))
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, min(GUARD_POLL, seconds), min(GUARD_POLL, seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _display(result: CheckResult) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the course extra
        return
    if get_ipython() is None:
        return
    display(result.bundle(), raw=True)
