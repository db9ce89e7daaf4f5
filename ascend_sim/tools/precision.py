"""Precision metrics of one tensor against its golden (标杆) tensor, and the documented pass rules.

The metrics are the columns of ``ait debug compare``'s ``result_{ts}.csv`` (精度比对):

==========================  =====================================================================
cosine                      ``a.g / (|a| |g|)`` (1.0 when both are all zeros)
max_abs_err, mean_abs_err   of ``|a - g|``
max_rel_err, mean_rel_err   of ``|a - g| / |g|`` over the elements with ``|g|`` above the small-value bound
rmse                        ``sqrt(mean((a - g)^2))``
red                         relative Euclidean distance ``|a - g| / |g|`` (vector norms)
kld                         Kullback-Leibler divergence ``sum p log(p / q)`` of the golden and actual
                            magnitudes, each normalised to sum 1 (1e-12 smoothing). Our definition:
                            ait names the metric but the reference gives no formula [EST].
err_ratio_1e-2, _1e-3, _1e-4  fraction of elements whose error exceeds the bound: relative error for
                            normal values, absolute error against the small-value limit for tiny ones
==========================  =====================================================================

Pass rules, from the public tool documentation named in each:

* **ait rule** [OFF, Ascend/ait ``ait/examples/cli/debug/compare/01_basic_usage/README.md``]: the
  analyser flags an operator when CosineSimilarity < 0.99, RelativeEuclideanDistance > 0.05,
  KullbackLeiblerDivergence > 0.005, RootMeanSquareError > 1.0 or MeanRelativeError > 1.0.
* **msprobe rule** [OFF, mindstudio-probe 1.0.3 ``msprobe/pytorch/doc/api_accuracy_checker.md``]:
  cosine > 0.99 else error; max absolute error < 0.001 passes; otherwise float16/bfloat16 need
  双百 (at most 1 % of elements with relative error above 1 %) else error, and 双千 (0.1 % / 0.1 %)
  else warning; float32 needs 双千 else error and 双万 (0.01 % / 0.01 %) else warning. Small values
  (``|g|`` < 1e-3 for float16/bfloat16, < 1e-6 for float32) are judged by absolute error against
  1e-5 / 1e-9 instead.

* **dual benchmark** (双标杆) [OFF, MP]: the error of the tested side against the golden, divided by the
  error of a benchmark implementation against the same golden, for the small-value error rate, RMSE
  and mean relative error: <= 1 pass, 1-2 warning, > 2 error; for the max relative error <= 1, 1-10,
  > 10. Here the benchmark is the ideal network in the kernel's dtype (numpy, one rounding per op), so
  the rule asks "is this kernel worse than a correct fp16 implementation?".

The ait rule judges model dumps, whose nodes carry the error accumulated upstream (累计误差); the
msprobe rule judges one operator run on identical inputs (单算子误差), as ``compare.isolate`` and the
op-test harness do. (LeNet fp16 against the fp32 reference passes ait at every node but breaks 双百 from
conv2 on: accumulated fp16 rounding, not a bug.)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ascend_sim.engine.errors import KernelError

__all__ = ["PrecisionInputError", "Metrics", "metrics", "ait_failures", "msprobe_verdict", "dual_benchmark_verdict",
           "AIT_THRESHOLDS", "SMALL_VALUE", "DUAL_LIMITS"]

#: ait analyser thresholds: metric -> (comparison, limit); a value on the wrong side fails.
AIT_THRESHOLDS: dict[str, tuple[str, float]] = {
    "cosine": ("<", 0.99), "red": (">", 0.05), "kld": (">", 0.005), "rmse": (">", 1.0), "mean_rel_err": (">", 1.0),
}

#: dual-benchmark ratio limits: metric -> (warning above, error above).
DUAL_LIMITS: dict[str, tuple[float, float]] = {
    "small_err_ratio": (1.0, 2.0), "rmse": (1.0, 2.0), "mean_rel_err": (1.0, 2.0), "max_rel_err": (1.0, 10.0),
}

#: msprobe small-value handling: dtype kind -> (|golden| below this is "small", absolute-error limit there).
SMALL_VALUE = {"half": (1e-3, 1e-5), "float": (1e-6, 1e-9)}


class PrecisionInputError(KernelError, ValueError):
    """Two tensors that cannot be compared element by element."""

    check = "compare"


@dataclass(frozen=True)
class Metrics:
    """The comparison of one actual tensor with its golden tensor (all errors in float64)."""

    count: int
    cosine: float
    max_abs_err: float
    mean_abs_err: float
    max_rel_err: float
    mean_rel_err: float
    rmse: float
    red: float
    kld: float
    err_ratio_1e2: float      # fraction of elements with error > 1 % (双百)
    err_ratio_1e3: float      # > 0.1 % (双千)
    err_ratio_1e4: float      # > 0.01 % (双万)
    small_err_ratio: float    # of the small-valued golden elements, the fraction off by more than the small limit
    nonfinite_actual: int
    nonfinite_golden: int

    def as_dict(self) -> dict:
        return asdict(self)


def _family(dtype) -> str:
    """'half' for 16-bit floats (float16, bfloat16), 'float' otherwise."""
    return "half" if np.dtype(dtype).itemsize <= 2 else "float"


def metrics(actual, golden, dtype=None) -> Metrics:
    """All metrics of ``actual`` against ``golden`` (same shape); ``dtype`` (default ``actual``'s) picks the
    small-value bounds."""
    a = np.asarray(actual, dtype=np.float64).reshape(-1)
    g = np.asarray(golden, dtype=np.float64).reshape(-1)
    if a.shape != g.shape:
        raise PrecisionInputError(f"cannot compare shape {np.shape(actual)} with the golden shape {np.shape(golden)}: "
                                  f"{a.size} against {g.size} elements", fix="compare the same tensor of the same "
                                  "run on both sides (same images, same batch, same node)")
    small, small_limit = SMALL_VALUE[_family(dtype if dtype is not None else np.asarray(actual).dtype)]
    bad_a, bad_g = int((~np.isfinite(a)).sum()), int((~np.isfinite(g)).sum())
    n = a.size
    if n == 0:
        return Metrics(0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)
    if bad_a or bad_g:
        nan = float("nan")
        return Metrics(n, nan, nan, nan, nan, nan, nan, nan, nan, 1.0, 1.0, 1.0, 1.0, bad_a, bad_g)
    diff = np.abs(a - g)
    na, ng = float(np.linalg.norm(a)), float(np.linalg.norm(g))
    cosine = 1.0 if na == 0 and ng == 0 else (0.0 if na == 0 or ng == 0 else float(a @ g / (na * ng)))
    big = np.abs(g) >= small
    rel = diff[big] / np.abs(g[big])
    ratios = []
    for bound in (1e-2, 1e-3, 1e-4):
        bad = int((rel > bound).sum()) + int((diff[~big] > small_limit).sum())
        ratios.append(bad / n)
    p, q = np.abs(g) + 1e-12, np.abs(a) + 1e-12
    p, q = p / p.sum(), q / q.sum()
    return Metrics(
        count=n, cosine=cosine, max_abs_err=float(diff.max()), mean_abs_err=float(diff.mean()),
        max_rel_err=float(rel.max()) if rel.size else 0.0, mean_rel_err=float(rel.mean()) if rel.size else 0.0,
        rmse=float(np.sqrt(np.mean(diff ** 2))), red=float(np.linalg.norm(a - g) / ng) if ng else float(na > 0),
        kld=float(np.sum(p * np.log(p / q))), err_ratio_1e2=ratios[0], err_ratio_1e3=ratios[1],
        err_ratio_1e4=ratios[2], small_err_ratio=float((diff[~big] > small_limit).mean()) if (~big).any() else 0.0,
        nonfinite_actual=bad_a, nonfinite_golden=bad_g)


def ait_failures(m: Metrics) -> list[str]:
    """The ait analyser thresholds ``m`` breaks, e.g. ``["cosine 0.93 < 0.99"]`` (NaN metrics break all)."""
    out = []
    for name, (cmp, limit) in AIT_THRESHOLDS.items():
        v = getattr(m, name)
        if np.isnan(v) or (v < limit if cmp == "<" else v > limit):
            out.append(f"{name} {v:.4g} {cmp} {limit:g}")
    return out


def msprobe_verdict(m: Metrics, dtype) -> tuple[str, str]:
    """``("pass" | "warning" | "error", reason)`` by the msprobe pre-check rule for ``dtype``."""
    if m.nonfinite_actual or m.nonfinite_golden:
        return "error", f"{m.nonfinite_actual} inf/NaN in the actual tensor, {m.nonfinite_golden} in the golden"
    if m.cosine <= 0.99:
        return "error", f"cosine {m.cosine:.4f} <= 0.99"
    if m.max_abs_err < 1e-3:
        return "pass", f"max abs err {m.max_abs_err:.3g} < 0.001"
    if _family(dtype) == "half":
        must, should = ("双百", m.err_ratio_1e2, 1e-2), ("双千", m.err_ratio_1e3, 1e-3)
    else:
        must, should = ("双千", m.err_ratio_1e3, 1e-3), ("双万", m.err_ratio_1e4, 1e-4)
    for verdict, (name, ratio, bound) in (("error", must), ("warning", should)):
        if ratio > bound:
            return verdict, f"{name}: {ratio:.3%} of elements off by more than {bound:.2%} (limit {bound:.2%})"
    return "pass", f"{should[0]} met"


def dual_benchmark_verdict(tested: Metrics, benchmark: Metrics) -> tuple[str, str]:
    """``("pass" | "warning" | "error", reason)``: ``tested``'s errors over ``benchmark``'s (both against the
    same golden), by :data:`DUAL_LIMITS`. A zero benchmark error allows only a zero tested error."""
    if tested.nonfinite_actual:
        return "error", f"{tested.nonfinite_actual} inf/NaN in the tested tensor"
    verdict, worst = "pass", []
    for name, (warn, err) in DUAL_LIMITS.items():
        t, b = getattr(tested, name), getattr(benchmark, name)
        ratio = t / b if b else (1.0 if t == 0 else float("inf"))
        level = "error" if ratio > err else "warning" if ratio > warn else "pass"
        if level != "pass":
            worst.append(f"{name} {ratio:.3g}x the benchmark's (limit {warn:g}/{err:g})")
        if level == "error" or (level == "warning" and verdict == "pass"):
            verdict = level
    return verdict, "; ".join(worst) or "no worse than the benchmark"
