"""The op-test harness (算子测试, after msOpST / op_test): run spec cases on the simulator against the reference.

Each case's inputs are rounded to its dtype, fed to the kernel wrapper (``fn(*inputs, **attr,
dtype=...)``) and to the numpy reference (same rounded inputs), and the outputs compared with
``ascend_sim.analysis.verify.compare`` (the verify_result.py convention; the spec's ``precision``
overrides it). The precision metrics of ``tools.precision`` (cosine, errors, msprobe verdict) are
reported beside. From the command line: ``ascend-sim optest SPEC...``; from pytest::

    from ascend_sim.tools.optest import pytest_cases, check_case

    @pytest.mark.parametrize("case", pytest_cases("specs/my_op.json"))
    def test_my_op(case):
        check_case(case)
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from ascend_sim.analysis.verify import CompareResult, compare
from ascend_sim.tools.optest_spec import Case, OpSpec, generate_cases, kernel_and_reference, load_spec
from ascend_sim.tools.precision import Metrics, metrics, msprobe_verdict

__all__ = ["CaseResult", "OpTestReport", "run_case", "run_specs", "pytest_cases", "check_case"]


@dataclass
class CaseResult:
    """One case's outcome."""

    case: Case
    verify: CompareResult
    metrics: Metrics | None
    msprobe: str
    cycles: float
    us: float
    error: str = ""             # an exception the kernel raised (the case fails)

    @property
    def passed(self) -> bool:
        return not self.error and self.verify.passed

    def summary(self) -> str:
        shapes = " ".join(f"{k}{list(v)}" for k, v in self.case.shapes().items())
        head = f"{'PASS' if self.passed else 'FAIL'} {self.case.name:<32} {shapes}"
        if self.error:
            return f"{head}  {self.error}"
        if self.metrics is None:                # a structural problem: shape, missing output
            return f"{head}  {self.verify.summary()}"
        m = self.metrics
        return (f"{head}  {self.verify.mismatches}/{self.verify.count} mismatches, cos {m.cosine:.6f}, "
                f"max abs {m.max_abs_err:.3g}, msprobe {self.msprobe}, {self.us:.2f} us")

    def as_dict(self) -> dict:
        return {"case": self.case.name, "op": self.case.spec.op, "dtype": self.case.dtype,
                "shapes": {k: list(v) for k, v in self.case.shapes().items()}, "attr": self.case.attrs(),
                "passed": self.passed, "error": self.error, "verify": self.verify.summary(),
                "mismatches": self.verify.mismatches, "count": self.verify.count,
                "first_mismatches": self.verify.first_mismatch_text(), "msprobe": self.msprobe,
                "metrics": self.metrics.as_dict() if self.metrics else None, "cycles": self.cycles, "us": self.us}


def run_case(case: Case) -> CaseResult:
    """Run one case through the simulator and the reference and compare."""
    fn, ref = kernel_and_reference(case.spec)
    dt = np.dtype(case.dtype)
    xs = [a.astype(dt) for a in case.inputs()]
    attrs = case.attrs()
    tol = case.spec.data.get("precision", {}).get(case.dtype, {})
    golden = np.asarray(ref(*xs, **attrs)).astype(dt)
    try:
        ret = fn(*xs, **case.attrs(kernel=True), dtype=case.dtype)
    except Exception as e:                      # a KernelError or a host-side check: the case fails, with why
        first = str(e).splitlines()
        return CaseResult(case, compare(None, golden, dt), None, "error", 0.0, 0.0,
                          error=f"{type(e).__name__}: {' '.join(s.strip() for s in first[:3])}")
    out, res = (ret[0], ret[1]) if isinstance(ret, tuple) else (ret, None)
    results = [] if res is None else list(res) if isinstance(res, (list, tuple)) else [res]
    v = compare(out, golden, dt, **tol)
    m = metrics(out, golden, dt) if v.problem == "" else None
    return CaseResult(case, v, m, msprobe_verdict(m, dt)[0] if m else "error",
                      float(sum(r.cycles for r in results)), float(sum(r.us for r in results)))


@dataclass
class OpTestReport:
    """Results of every case of some specs."""

    results: list[CaseResult]
    seconds: float

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    def __str__(self) -> str:
        lines = [r.summary() for r in self.results]
        lines.append(f"{len(self.results) - len(self.failed)}/{len(self.results)} cases passed "
                     f"in {self.seconds:.1f} s")
        return "\n".join(lines)

    def write_json(self, path) -> Path:
        """The report as JSON (one entry per case), like msOpST's st_report.json."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {"passed": self.passed, "cases": len(self.results), "failed": [r.case.name for r in self.failed],
                "results": [r.as_dict() for r in self.results]}
        path.write_text(json.dumps(body, indent=1, default=float), encoding="utf-8")
        return path


def _specs(specs: Iterable) -> list[OpSpec]:
    return [s if isinstance(s, OpSpec) else load_spec(s) for s in specs]


def run_specs(specs: Iterable, progress=None) -> OpTestReport:
    """Every generated case of every spec (paths or OpSpecs); ``progress(result)`` after each."""
    t0 = time.perf_counter()
    results = []
    for spec in _specs(specs):
        for case in generate_cases(spec):
            results.append(run_case(case))
            if progress:
                progress(results[-1])
    return OpTestReport(results, time.perf_counter() - t0)


def pytest_cases(*specs) -> list:
    """``pytest.param(case, id=case.name)`` for every case of the specs: ``@pytest.mark.parametrize("case", ...)``."""
    import pytest
    return [pytest.param(c, id=c.name) for spec in _specs(specs) for c in generate_cases(spec)]


def check_case(case: Case) -> CaseResult:
    """Run ``case``; raise AssertionError with the case's summary and first mismatches when it fails."""
    r = run_case(case)
    if not r.passed:
        raise AssertionError(f"{r.summary()}\n  {r.verify.first_mismatch_text()}")
    return r
