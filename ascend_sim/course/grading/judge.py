"""The trusted side of a check: replay the re-run's evidence in the grader's process and decide, in bounded time.

``judge(lab, ex_id, evidence)`` runs the exercise's check function again with a ``ReplayContext``:
learner code is never called. Answers, calls and launches are taken from the transcript in the order
the check asks for them, and each is validated first:

* the call's arguments (hidden inputs, by digest) are the ones this process computed;
* a launched kernel is the learner's answer, defined in the learner's code (not ``ascend_sim.kernels``);
* the trace is self-consistent (the cycles are the last instruction's end, records exist);
* provenance: every output byte the kernel changed was last written by a DataCopy/DataCopyPad/Fixpipe
  (or atomic) instruction of that trace, issued from learner code, within its byte count; bytes that
  changed without one are rejected, and bytes no instruction wrote keep this process's own sentinel;
* a learner function that must run kernels (``ctx.call(..., kernels=, output_from=)``) launched them,
  and its result is their output.

Expected values, comparisons and cycle budgets are the check function's, computed here.
"""
from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from ascend_sim.course.grading import evidence as ev
from ascend_sim.course.grading.check import (OUTCOMES, CheckFailed, CheckResult, Context, Lab, LearnerError,
                                             NotAttempted, not_attempted)
from ascend_sim.engine.spelling import CPP

__all__ = ["judge", "load_lab", "ReplayContext", "AnswerToken", "REJECTED", "NO_EVIDENCE", "JUDGE_SECONDS",
           "MAX_RECORDS"]

REJECTED = "rejected: "
NO_EVIDENCE = ("the check result carries no evidence from the simulator: `check` was redefined or its output "
               "forged, so it cannot be graded")
_RAISE = {kind: exc for exc, kind in OUTCOMES.items()}


class AnswerToken:
    """Stands for the learner's answer ``name`` in the grader's process (it cannot be called)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<answer {self.name}>"


def load_lab(module: str, folder: str | Path | None = None) -> Lab:
    """The ``Lab`` of a checks module (``ascend_sim.course.labs.lab00_warmup``, or one next to the template)."""
    if folder is not None and str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    mod = importlib.import_module(module)
    lab = getattr(mod, "LAB", None) or next((v for v in vars(mod).values() if isinstance(v, Lab)), None)
    if lab is None:
        raise ValueError(f"checks module {module} defines no Lab")
    return lab


JUDGE_SECONDS = 120.0            # one exercise's replay; beyond it the evidence is rejected, not waited for
MAX_RECORDS = 2_000_000          # GM transfer records of one launch


def judge(lab: Lab, ex_id: str, evidence: Any, seconds: float = JUDGE_SECONDS) -> tuple[CheckResult, str]:
    """The grader's verdict on one exercise from the re-run's evidence, within ``seconds``.

    Returns the result and a tamper kind: '' (none), 'forged_result' (no usable evidence) or
    'rejected_evidence' (evidence inconsistent with itself or with the check).
    """
    ex = lab.get(ex_id)
    events = evidence.get("events") if isinstance(evidence, dict) else None
    if not isinstance(events, list) or evidence.get("schema") != ev.EVIDENCE_SCHEMA:
        return CheckResult(lab.name, ex_id, "error", 0, ex.points, [NO_EVIDENCE]), "forged_result"
    ctx = ReplayContext(lab.name, ex_id, events, time.monotonic() + seconds)
    try:
        result = lab.outcome(ex, ctx, session=False)
        if result.passed and ctx.left():
            raise ev.Rejected(f"the evidence holds {ctx.left()} event(s) the check never asked for")
    except ev.Rejected as e:
        result = CheckResult(lab.name, ex_id, "fail", 0, ex.points, [REJECTED + str(e)],
                             ex.hints.first((), ctx.language))
        return result, ("rejected_evidence" if e.tamper else "")
    return result, ""


def _diagnosis(keys: Any) -> tuple[str, ...]:
    """The diagnosis keys of a replayed failure (they only choose hints): short strings, or none."""
    if not isinstance(keys, list):
        return ()
    return tuple(k for k in keys[:8] if isinstance(k, str) and len(k) <= 80)


class ReplayContext(Context):
    """A check's context in the grader: answers, calls and launches come from the evidence, validated."""

    def __init__(self, lab: str, exercise: str, events: list, deadline: float = float("inf")):
        super().__init__(lab, exercise, {})
        self._events, self._pos, self.deadline = events, 0, deadline
        self._tokens: list[AnswerToken] = []       # keeps the tokens (and so their ids) alive while the check runs

    def left(self) -> int:
        return len(self._events) - self._pos

    def _next(self, kind: str) -> dict:
        _in_time(self.deadline)
        e = self._events[self._pos] if self._pos < len(self._events) else None
        if not isinstance(e, dict) or e.get("kind") != kind:
            found = e.get("kind") if isinstance(e, dict) else "nothing"
            raise ev.Rejected(f"the evidence does not follow the check: step {self._pos + 1} should be a {kind}, "
                              f"the evidence has {found}")
        self._pos += 1
        return e

    def answer(self, name: str) -> Any:
        e = self._next("answer")
        if e.get("name") != name or e.get("state") not in ("ok", "missing", "ellipsis"):
            raise ev.Rejected(f"the evidence does not follow the check: it looked up {e.get('name')!r}, not {name!r}")
        if e["state"] != "ok":
            raise not_attempted(name, e["state"])
        if e.get("language") == CPP:        # a C++ answer: the hints are spelled in C++ (they only inform)
            self.language = CPP
        token = AnswerToken(name)
        self._answers[id(token)] = name
        self._tokens.append(token)
        return token

    def call(self, fn: Callable, *args, kernels: tuple[str, ...] = (),
             output_from: tuple[str, Callable] | None = None, output_arg: int | None = None, **kwargs) -> Any:
        e = self._next("call")
        learner = isinstance(fn, AnswerToken)
        if bool(e.get("learner")) != learner or e.get("args") != [self.describe(a) for a in args]:
            raise ev.Rejected("the evidence was produced for other inputs than the hidden cases of this check")
        raised = e.get("raised")
        if raised is not None:
            exc = _RAISE.get(raised.get("kind") if isinstance(raised, dict) else None)
            if exc is None:
                raise ev.Rejected("the evidence reports an exception of an unknown kind")
            message = str(raised.get("message", ""))[:4000]
            if exc is NotAttempted:
                raise exc(message)
            raise exc(message, _diagnosis(raised.get("diagnosis")))
        launches = e.get("launches")
        if not isinstance(launches, list):
            raise ev.Rejected("the evidence of a call has no launch list")
        if learner:
            return self._learner_result(fn, args, e, launches, kernels, output_from, output_arg)
        replay = _LaunchReplay(self, launches)
        result = ev.with_hook(replay.hook, fn, *args, **kwargs)
        if replay.launches:
            raise ev.Rejected(f"the evidence holds {len(replay.launches)} launch(es) the check never made")
        return result

    def _learner_result(self, fn: AnswerToken, args: tuple, e: dict, launches: list, kernels: tuple[str, ...],
                        output_from: tuple[str, Callable] | None, output_arg: int | None = None) -> Any:
        ran = {}
        for rec in launches:
            _check_kernel(rec, None)
            by_index = _check_trace(rec)
            for out in (rec.get("outputs") or {}).values():
                size = ev.decode_array(out["data"]).nbytes if isinstance(out, dict) and "data" in out else None
                _check_writers(_writers_of(out, size), by_index, rec["kernel"].get("name", "?"), self.deadline)
            _in_time(self.deadline)
            ran.setdefault(rec["kernel"].get("name"), []).append(rec)
        missing = [k for k in kernels if k not in ran]
        if missing:
            raise ev.Rejected(f"`{fn.name}` launched no kernel named {', '.join(missing)}: this exercise must run your "
                          f"own kernels ({', '.join(kernels)}); numpy or the library's reference code is not "
                          "accepted", tamper=False)
        for i, arr in (e.get("mutated") or {}).items():
            target = args[int(i)] if str(i).isdigit() and int(i) < len(args) else None
            new = ev.decode_array(arr)
            if not isinstance(target, np.ndarray) or target.shape != new.shape or target.dtype != new.dtype:
                raise ev.Rejected(f"the evidence changes argument {i}, which is not an array of that shape")
            target[...] = new
        result = ev.decode_value(e.get("result"))
        if output_from is not None:
            name, view = output_from
            rows = {np.asarray(r, np.float16).tobytes()
                    for rec in ran.get(name, []) for r in np.atleast_2d(view(_NestedLaunch(rec)))}
            out = result if output_arg is None else args[output_arg]     # returned, or written into an argument
            got = np.atleast_2d(np.asarray(out if isinstance(out, np.ndarray) else np.nan, np.float16))
            if not rows or any(r.tobytes() not in rows for r in got):
                raise ev.Rejected(f"the values `{fn.name}` returned are not the output of your `{name}` kernel: the "
                              "result must come from your kernels, not from numpy or the library's reference "
                              "network", tamper=False)
        return result


class _NestedLaunch:
    """A launch made inside a learner function, as the check's ``output_from`` view sees it."""

    def __init__(self, rec: dict):
        self.rec = rec
        tilings = [o for o in rec.get("others", []) if isinstance(o, dict) and "type" in o]
        self.tiling = tilings[0] if tilings else {}

    def output(self, i: int) -> np.ndarray:
        """Argument ``i``'s bytes after the launch, with every byte no instruction wrote set to 0xFF (NaN)."""
        out = (self.rec.get("outputs") or {}).get(str(i))
        if not isinstance(out, dict) or "data" not in out:
            raise ev.Rejected(f"the evidence has no output data for argument {i} of `{self.rec['kernel'].get('name')}`",
                          tamper=False)
        data = ev.decode_array(out["data"])
        if ev.digest(data) != out.get("digest"):
            raise ev.Rejected("an output's bytes do not match its own digest")
        raw = data.reshape(-1).view(np.uint8)
        raw[_writers_of(out, data.nbytes) < 0] = 0xFF
        return data


class _LaunchReplay:
    """Serves the check's launches from the evidence, one by one, after validating each."""

    def __init__(self, ctx: ReplayContext, launches: list):
        self.ctx, self.launches = ctx, list(launches)

    def hook(self, run, k, block_dim, *args, chip=None, gm_names=None, auto_sync=True):  # noqa: ANN001 - launch's
        if not isinstance(k, AnswerToken):
            raise ev.Rejected(f"the check launched {getattr(k, '__name__', k)!r}, which is not an answer")
        if not self.launches:
            raise ev.Rejected(f"the check launches `{k.name}` but the evidence has no record of that launch")
        rec = self.launches.pop(0)
        if not isinstance(rec, dict) or "raised" in rec:
            raise ev.Rejected("a launch record in the evidence is malformed")
        _check_kernel(rec, k.name)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        others = [ev.describe(a) for a in args if not isinstance(a, np.ndarray)]
        if (rec.get("block_dim") != int(block_dim) or rec.get("others") != others
                or rec.get("inputs") != [ev.digest(a) for a in arrays]):
            raise ev.Rejected(f"the launch of `{k.name}` in the evidence had other inputs than the hidden case")
        by_index = _check_trace(rec)
        _in_time(self.ctx.deadline)
        names = list(gm_names or [])
        outputs = rec.get("outputs") or {}
        if not isinstance(outputs, dict) or any(not str(i).isdigit() or int(i) >= len(arrays) for i in outputs):
            raise ev.Rejected("the evidence names outputs the launch does not have")
        for i, a in enumerate(arrays):
            out = outputs.get(str(i))
            if out is not None:
                _apply_output(a, out, by_index, names[i] if i < len(names) else f"arg{i}", k.name,
                              computed=_computes(rec), deadline=self.ctx.deadline)
        return _replayed(k.name, int(block_dim), rec)


def _check_kernel(rec: dict, token: str | None) -> None:
    kern = rec.get("kernel") if isinstance(rec, dict) else None
    if not isinstance(kern, dict):
        raise ev.Rejected("a launch record in the evidence is malformed")
    name, file = str(kern.get("name", "?")), str(kern.get("file", ""))
    if token is not None and kern.get("token") != token:
        raise ev.Rejected(f"the launch ran `{name}`, which is not your answer `{token}`", tamper=False)
    if ev.is_package_file(file):
        raise ev.Rejected(f"the kernel `{name}` is library code ({_short(file)}), not a kernel you wrote: this exercise "
                      "must be answered with your own @kernel", tamper=False)


def _in_time(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise ev.Rejected(f"the evidence took longer than the judge's {JUDGE_SECONDS:g} s: too many records",
                          tamper=False)


def _check_trace(rec: dict) -> dict[int, dict]:
    """The trace's GM records by index, after checking the trace holds together."""
    if not isinstance(rec.get("records"), list) or len(rec["records"]) > MAX_RECORDS:
        raise ev.Rejected(f"the trace in the evidence is malformed or holds more than {MAX_RECORDS:,} records")
    try:
        records = {int(r["index"]): r for r in rec["records"]}
        total = sum(int(v) for v in rec["pipes"].values())
        cycles, end = float(rec["cycles"]), float(rec["max_end"])
        ok = (all(0 <= i < total and 0 <= float(r["start"]) <= float(r["end"]) <= end + 1e-6
                  and isinstance(r["nbytes"], int) and len(r["site"]) == 2 for i, r in records.items())
              and abs(cycles - end) <= 1e-6 * max(1.0, cycles))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ev.Rejected("the trace in the evidence is malformed") from None
    if not ok:
        raise ev.Rejected("the trace in the evidence is inconsistent (instruction indices, times or the cycle count "
                          "do not agree)")
    return records


def _computes(rec: dict) -> bool:
    pipes = rec.get("pipes") or {}
    return any(int(pipes.get(p, 0)) > 0 for p in ("V", "M"))


def _writers_of(out: Any, nbytes: int | None) -> np.ndarray:
    """The per-byte writer array of an output record (``nbytes``: the grader's own size, else the record's)."""
    if not isinstance(out, dict):
        raise ev.Rejected("an output record in the evidence is malformed")
    size = out.get("nbytes") if nbytes is None else nbytes
    if not isinstance(size, int) or not 0 <= size <= ev.MAX_ARRAY_BYTES:
        raise ev.Rejected("an output record in the evidence is malformed")
    return ev.unrle(out.get("writers"), size)


def _check_writers(writers: np.ndarray, by_index: dict[int, dict], kernel: str,
                   deadline: float = float("inf")) -> None:
    """Every written byte points at a GM write of the trace, from learner code, within its byte count."""
    ids, counts = np.unique(writers[writers >= 0], return_counts=True)
    for k, (rid, n) in enumerate(zip(ids.tolist(), counts.tolist())):
        if k % 4096 == 0:
            _in_time(deadline)
        r = by_index.get(rid)
        if r is None or r.get("dst") != "GM" or str(r.get("op", "")).split("(")[0] not in ev.WRITER_OPS:
            raise ev.Rejected(f"the trace is inconsistent with the output of `{kernel}`: bytes are attributed to "
                              f"instruction #{rid}, which is not a DataCopy/DataCopyPad/Fixpipe to GM in the trace")
        if n > r["nbytes"]:
            raise ev.Rejected(f"the trace is inconsistent with the output of `{kernel}`: {n} bytes are attributed to "
                              f"instruction #{rid}, which moved {r['nbytes']}")
        if ev.is_package_file(str(r["site"][0])):
            raise ev.Rejected(f"the output of `{kernel}` was written by library code ({_short(str(r['site'][0]))}), "
                          "not by your kernel", tamper=False)


def _apply_output(a: np.ndarray, out: Any, by_index: dict[int, dict], name: str, kernel: str, computed: bool,
                  deadline: float = float("inf")) -> None:
    """Validate one output's evidence and write the bytes the kernel wrote into the grader's own array."""
    if not isinstance(out, dict) or "data" not in out:
        raise ev.Rejected(f"the evidence has no data for output `{name}`")
    data = ev.decode_array(out["data"])
    if data.dtype != a.dtype or data.size != a.size:
        raise ev.Rejected(f"the evidence's output `{name}` is {data.dtype}[{data.size}], the launch passed "
                          f"{a.dtype}[{a.size}]")
    writers = ev.unrle(out.get("writers"), a.nbytes)
    _check_writers(writers, by_index, kernel, deadline)
    cur, new = a.reshape(-1).view(np.uint8), data.reshape(-1).view(np.uint8)
    written = writers >= 0
    stray = int(((~written) & (cur != new)).sum())
    if stray:
        raise ev.Rejected(f"{stray} bytes of output `{name}` changed without any simulated instruction writing them "
                      "(numpy on the host or inside the kernel): a kernel's results must reach GM through "
                      "DataCopy, DataCopyPad or Fixpipe", tamper=False)
    if written.any() and not computed:
        raise ev.Rejected(f"`{kernel}` wrote output `{name}` but issued no vector or cube instruction: a kernel must "
                      "compute its result, not copy prepared values", tamper=False)
    cur[written] = new[written]


def _replayed(name: str, block_dim: int, rec: dict) -> SimpleNamespace:
    """What the check sees as the LaunchResult: cycles and the GM transfer records of the trace."""
    records = [SimpleNamespace(**{**r, "site": (str(r["site"][0]), int(r["site"][1]))}) for r in rec["records"]]
    return SimpleNamespace(kernel_name=name, block_dim=block_dim, cycles=float(rec["cycles"]),
                           trace=SimpleNamespace(records=records))


def _short(path: str) -> str:
    i = path.find("ascend_sim")
    return path[i:] if i >= 0 else path
