"""Precision checks: the analog of Ascend's ``verify_result.py`` / op_test.

``compare(actual, golden)`` applies the verify convention of the Ascend C
samples: an element matches when ``np.isclose(actual, golden, rtol, atol)``
(computed in float64), and the output passes when the fraction of mismatching
elements is at most ``max_mismatch_ratio``. Tolerances are keyed by dtype:

| dtype            | rtol | atol | max mismatch ratio | source |
|------------------|------|------|--------------------|--------|
| float16 (half)   | 1e-3 | 1e-5 | 1e-3 | official: verify_result.py of the fp16 elementwise samples |
| float32 (float)  | 1e-4 | 1e-5 | 1e-4 | official: verify_result.py of the fp32 add sample |
| bfloat16         | 4e-3 | 1e-5 | 4e-3 | estimate: bf16 has 8 mantissa bits (eps 2**-8 = 3.9e-3); the |
|                  |      |      |      | "four-thousandths" rule of thumb, not from an Ascend sample    |
| integer, bool    | 0    | 0    | 0    | exact |

NaN in the same place in both arrays counts as a match. ``unwritten_ranges``
finds output elements still equal to a sentinel fill, the usual sign of a tail
or a block that the kernel never wrote.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Tolerance", "CompareResult", "tolerance_for", "compare", "unwritten_ranges", "format_ranges",
           "TOLERANCES"]

MAX_INDICES = 8


@dataclass(frozen=True)
class Tolerance:
    """Pass criterion for one dtype: ``isclose(rtol, atol)`` per element, mismatch ratio overall."""

    rtol: float
    atol: float
    max_mismatch_ratio: float
    source: str

    @property
    def exact(self) -> bool:
        return self.rtol == 0 and self.atol == 0


def _bf16() -> np.dtype | None:
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes is a core dependency
        return None
    return np.dtype(ml_dtypes.bfloat16)


_EXACT = Tolerance(0.0, 0.0, 0.0, "exact: integer and boolean outputs must match bit for bit")
TOLERANCES: dict[np.dtype, Tolerance] = {
    np.dtype(np.float16): Tolerance(1e-3, 1e-5, 1e-3, "official: Ascend C samples verify_result.py (fp16)"),
    np.dtype(np.float32): Tolerance(1e-4, 1e-5, 1e-4, "official: Ascend C samples verify_result.py (fp32 add)"),
    np.dtype(np.float64): Tolerance(1e-7, 1e-12, 1e-6, "estimate: host-side float64 references"),
}
if _bf16() is not None:
    TOLERANCES[_bf16()] = Tolerance(4e-3, 1e-5, 4e-3, "estimate: bf16 eps 2**-8; four-thousandths rule of thumb")


def tolerance_for(dtype) -> Tolerance:
    """The verify-convention tolerance for ``dtype`` (exact for integer and boolean types)."""
    d = _as_dtype(dtype)
    if d in TOLERANCES:
        return TOLERANCES[d]
    if d.kind in "iub":
        return _EXACT
    raise ValueError(f"no verify tolerance for dtype {d}; pass rtol/atol/max_mismatch_ratio explicitly")


def _as_dtype(dtype) -> np.dtype:
    if isinstance(dtype, str):
        aliases = {"half": np.float16, "fp16": np.float16, "float": np.float32, "fp32": np.float32,
                   "bf16": "bfloat16", "bfloat16_t": "bfloat16"}
        dtype = aliases.get(dtype, dtype)
        if dtype == "bfloat16":
            bf = _bf16()
            if bf is None:  # pragma: no cover
                raise ValueError("bfloat16 needs the ml_dtypes package")
            return bf
    return np.dtype(dtype)


@dataclass
class CompareResult:
    """Outcome of ``compare``: ``passed``, error statistics and the first mismatching indices."""

    passed: bool
    dtype: np.dtype
    tolerance: Tolerance
    count: int = 0
    mismatches: int = 0
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    first_mismatches: list[tuple[int, ...]] = field(default_factory=list)
    first_values: list[tuple[float, float]] = field(default_factory=list)   # (actual, golden)
    problem: str = ""          # a structural problem (shape, missing output) that prevents comparing

    @property
    def mismatch_ratio(self) -> float:
        return self.mismatches / self.count if self.count else 0.0

    def __bool__(self) -> bool:
        return self.passed

    def summary(self) -> str:
        """One line: verdict, mismatch count and ratio against the limit, max errors."""
        verdict = "PASS" if self.passed else "FAIL"
        if self.problem:
            return f"{verdict}: {self.problem}"
        tol = self.tolerance
        limit = "exact" if tol.exact else f"rtol {tol.rtol:g}, atol {tol.atol:g}, ratio <= {tol.max_mismatch_ratio:g}"
        return (f"{verdict} {self.dtype} x{self.count}: {self.mismatches} mismatches "
                f"(ratio {self.mismatch_ratio:.3g}; {limit}), max abs err {self.max_abs_err:.3g}, "
                f"max rel err {self.max_rel_err:.3g}")

    def first_mismatch_text(self, limit: int = 3) -> str:
        """'index 2011: got 0 expected 1.25; index 2012: ...' for the first few mismatches."""
        parts = [f"index {_idx(i)}: got {a:.6g} expected {g:.6g}"
                 for i, (a, g) in list(zip(self.first_mismatches, self.first_values))[:limit]]
        return "; ".join(parts)

    def __str__(self) -> str:
        text = self.summary()
        if self.first_mismatches:
            text += "\n  first mismatches: " + self.first_mismatch_text()
        return text

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        rows = "".join(f"<tr><td>{_idx(i)}</td><td>{a:.6g}</td><td>{g:.6g}</td></tr>"
                       for i, (a, g) in zip(self.first_mismatches, self.first_values))
        table = (f"<table><tr><th>index</th><th>actual</th><th>golden</th></tr>{rows}</table>"
                 if rows else "")
        return (f"<div><b style='color:{colour}'>{html.escape(self.summary())}</b>"
                f"<div style='font-size:smaller'>tolerance source: {html.escape(self.tolerance.source)}</div>"
                f"{table}</div>")


def _idx(i: tuple[int, ...]) -> str:
    return str(i[0]) if len(i) == 1 else str(tuple(i))


def compare(actual, golden, dtype=None, *, rtol: float | None = None, atol: float | None = None,
            max_mismatch_ratio: float | None = None) -> CompareResult:
    """Compare a kernel output with its golden reference by the verify convention.

    ``dtype`` selects the tolerance (default: the dtype of ``actual``, else of
    ``golden``); ``rtol``, ``atol`` and ``max_mismatch_ratio`` override it.
    """
    golden = np.asarray(golden)
    if actual is None:
        d = _as_dtype(dtype if dtype is not None else golden.dtype)
        return CompareResult(False, d, tolerance_for(d), problem="no output (got None)")
    actual = np.asarray(actual)
    d = _as_dtype(dtype if dtype is not None else actual.dtype)
    base = tolerance_for(d)
    tol = Tolerance(base.rtol if rtol is None else rtol, base.atol if atol is None else atol,
                    base.max_mismatch_ratio if max_mismatch_ratio is None else max_mismatch_ratio,
                    base.source if rtol is None and atol is None and max_mismatch_ratio is None
                    else "explicit arguments")
    if actual.shape != golden.shape:
        return CompareResult(False, d, tol, count=golden.size,
                             problem=f"shape {actual.shape} differs from the golden shape {golden.shape}")
    a, g = _wide(actual), _wide(golden)
    if tol.exact:
        ok = (a == g) | (np.isnan(a) & np.isnan(g)) if a.dtype.kind == "f" else a == g
    else:
        ok = np.isclose(a, g, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    bad = np.argwhere(~ok)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        err = np.abs(a.astype(np.float64) - g.astype(np.float64))
        if a.dtype.kind == "f":         # NaN against a number is an infinite error, NaN against NaN none
            err = np.where(np.isnan(a) & np.isnan(g), 0.0, np.where(np.isnan(err), np.inf, err))
        rel = np.where(err == 0, 0.0, np.where(g != 0, err / np.abs(g.astype(np.float64)), np.inf))
        rel = np.where(np.isnan(rel), np.inf, rel)
    mism = int(bad.shape[0])
    count = int(golden.size)
    first = [tuple(int(v) for v in i) for i in bad[:MAX_INDICES]]
    values = [(float(a[i]), float(g[i])) for i in first]
    passed = (mism / count if count else 0.0) <= tol.max_mismatch_ratio
    return CompareResult(passed, d, tol, count=count, mismatches=mism,
                         max_abs_err=float(err.max()) if err.size else 0.0,
                         max_rel_err=float(rel.max()) if rel.size else 0.0,
                         first_mismatches=first, first_values=values)


def _wide(x: np.ndarray) -> np.ndarray:
    """float64 for floating types (bf16 and fp16 included), int64 / bool otherwise."""
    if x.dtype.kind in "iub":
        return x.astype(np.int64) if x.dtype.kind != "b" else x
    return x.astype(np.float64)


def unwritten_ranges(actual, sentinel) -> list[tuple[int, int]]:
    """Inclusive flat index ranges where ``actual`` still holds ``sentinel`` (bitwise; NaN works)."""
    a = np.asarray(actual).reshape(-1)
    s = np.asarray(sentinel, dtype=a.dtype).reshape(1)
    if a.dtype.itemsize in (1, 2, 4, 8):           # bit pattern: a NaN sentinel matches itself
        bits = np.dtype(f"u{a.dtype.itemsize}")
        same = np.ascontiguousarray(a).view(bits) == s.view(bits)[0]
    else:  # pragma: no cover - exotic item sizes
        same = a == s[0]
    if not same.any():
        return []
    edges = np.diff(np.concatenate(([0], same.view(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1) - 1
    return [(int(s0), int(e0)) for s0, e0 in zip(starts, ends)]


def format_ranges(ranges: list[tuple[int, int]], limit: int = 3) -> str:
    """'elements 2011..2047' / 'elements 0..15, 64..79 and 2 more ranges' / 'element 7'."""
    if not ranges:
        return "no elements"
    parts = [f"{a}..{b}" if a != b else f"{a}" for a, b in ranges[:limit]]
    noun = "element" if len(ranges) == 1 and ranges[0][0] == ranges[0][1] else "elements"
    text = f"{noun} " + ", ".join(parts)
    if len(ranges) > limit:
        text += f" and {len(ranges) - limit} more ranges"
    return text
