"""``ascend-sim compare DUMP_A DUMP_B``: node-by-node precision comparison (精度比对) of two layer dumps.

DUMP_A is the side under test (the simulated fp16 run, or a new kernel version), DUMP_B the golden side
(the numpy fp32 reference, or the last good version). Nodes are matched by name; each node's outputs are
compared with :func:`ascend_sim.tools.precision.metrics` and judged by the ait and msprobe rules
documented there. With a third, benchmark dump (``--benchmark``: the ideal network in the kernel's dtype,
``ascend-sim dump --mode ref --dtype float16``) the dual-benchmark rule decides instead: it catches an
fp16 kernel that is worse than fp16 has to be (fp16 accumulation), which the ait thresholds let through.
The report flags the first failing node, as ait's analyser does, and, per ait
threshold, the first node that breaks it. ``write_csv`` writes one row per compared tensor.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ascend_sim.tools.dump import Dump, DumpError, load_dump
from ascend_sim.tools.precision import (AIT_THRESHOLDS, Metrics, ait_failures, dual_benchmark_verdict, metrics,
                                       msprobe_verdict)

__all__ = ["NodeComparison", "CompareReport", "compare_dumps", "compare_node", "isolate", "CSV_COLUMNS"]

CSV_COLUMNS = ("index", "node", "op", "tensor", "dtype_a", "dtype_b", "shape", "count", "cosine", "max_abs_err",
               "mean_abs_err", "max_rel_err", "mean_rel_err", "rmse", "red", "kld", "err_ratio_1e2",
               "err_ratio_1e3", "err_ratio_1e4", "small_err_ratio", "nonfinite_a", "nonfinite_b", "ait",
               "ait_failures", "msprobe", "msprobe_reason", "dual", "dual_reason", "rule", "passed", "first_failing")


@dataclass
class NodeComparison:
    """One node's output compared: the metrics and the two rules' verdicts."""

    index: int
    node: str
    op: str
    tensor: str
    dtype_a: str
    dtype_b: str
    shape: tuple[int, ...]
    metrics: Metrics
    ait: list[str]                   # broken ait thresholds (empty: pass)
    msprobe: str                     # pass / warning / error
    msprobe_reason: str
    rule: str = "ait"                # the deciding rule: "ait" (dumps), "dual" (with a benchmark), "msprobe" (isolate)
    dual: str = ""                   # dual-benchmark verdict, when a benchmark dump was given
    dual_reason: str = ""

    @property
    def passed(self) -> bool:
        """By ``rule``: a model-level dump carries accumulated error, which the msprobe rule (made for one
        API on identical inputs) is not meant for; there its verdict is only reported. :func:`isolate` uses it."""
        if self.rule == "ait":
            return not self.ait
        return (self.dual if self.rule == "dual" else self.msprobe) != "error"

    def summary(self) -> str:
        m = self.metrics
        why = "; ".join(self.ait + ([f"msprobe {self.msprobe}: {self.msprobe_reason}"]
                                   if self.msprobe != "pass" else [])
                        + ([f"dual benchmark {self.dual}: {self.dual_reason}"]
                           if self.dual not in ("", "pass") else []))
        return (f"{self.node:<10} {self.op:<10} cos {m.cosine:.6f}  max abs {m.max_abs_err:.3g}  rmse {m.rmse:.3g}  "
                f"kld {m.kld:.3g}  {'PASS' if self.passed else 'FAIL'}{'  (' + why + ')' if why else ''}")


@dataclass
class CompareReport:
    """All node comparisons of two dumps, in run order."""

    label_a: str
    label_b: str
    rows: list[NodeComparison]
    missing: list[str] = field(default_factory=list)      # nodes of A that B does not have

    @property
    def first_failing(self) -> NodeComparison | None:
        """The first node (in run order) that fails: where to start looking (首个问题节点)."""
        return next((r for r in self.rows if not r.passed), None)

    @property
    def passed(self) -> bool:
        return self.first_failing is None and not self.missing

    def first_over(self) -> dict[str, NodeComparison]:
        """Per ait threshold, the first node that breaks it (ait's 'Operators may lead to inaccuracy')."""
        out: dict[str, NodeComparison] = {}
        for name in AIT_THRESHOLDS:
            hit = next((r for r in self.rows if any(f.startswith(name + " ") for f in r.ait)), None)
            if hit is not None:
                out[name] = hit
        return out

    def __str__(self) -> str:
        lines = [f"compare {self.label_a} (A) against {self.label_b} (golden B): {len(self.rows)} tensors"]
        lines += ["  " + r.summary() for r in self.rows]
        if self.missing:
            lines.append(f"  nodes missing from B: {', '.join(self.missing)}")
        first = self.first_failing
        lines.append(f"first failing node: {first.node} ({first.op})" if first else "every node passes")
        over = self.first_over()
        if over:
            lines.append("first over each ait threshold: " + ", ".join(f"{k} at {r.node}" for k, r in over.items()))
        return "\n".join(lines)

    def write_csv(self, path) -> Path:
        """One row per compared tensor, columns :data:`CSV_COLUMNS`."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        first = self.first_failing
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(CSV_COLUMNS)
            for r in self.rows:
                m = r.metrics
                w.writerow([r.index, r.node, r.op, r.tensor, r.dtype_a, r.dtype_b, "x".join(map(str, r.shape)),
                            m.count, *(f"{getattr(m, k):.6g}" for k in CSV_COLUMNS[8:20]), m.nonfinite_actual,
                            m.nonfinite_golden, "pass" if not r.ait else "fail", "; ".join(r.ait), r.msprobe,
                            r.msprobe_reason, r.dual, r.dual_reason, r.rule, "yes" if r.passed else "no",
                            "yes" if r is first else ""])
        return path


def _array(dump: Dump, name: str, tensor: str, shape: tuple | None = None):
    a = dump.arrays(name)[tensor]
    if shape is not None and a.shape != shape:
        raise DumpError(f"node {name!r} {tensor}: shape {a.shape} in {dump.dir} but {shape} on the tested side",
                        fix="dump every run from the same images and the same model")
    return a


def compare_node(dump_a: Dump, dump_b: Dump, name: str, tensor: str = "output_0",
                 benchmark: Dump | None = None) -> NodeComparison:
    """Compare one tensor of node ``name`` in the two dumps (and judge it against ``benchmark``'s error)."""
    a = _array(dump_a, name, tensor)
    b = _array(dump_b, name, tensor, a.shape)
    m = metrics(a, b, a.dtype)
    verdict, reason = msprobe_verdict(m, a.dtype)
    row = NodeComparison(dump_a[name].index, name, dump_a[name].op, tensor, str(a.dtype), str(b.dtype),
                         tuple(a.shape), m, ait_failures(m), verdict, reason)
    if benchmark is not None:
        c = _array(benchmark, name, tensor, a.shape)
        row.dual, row.dual_reason = dual_benchmark_verdict(m, metrics(c, b, c.dtype))
        row.rule = "dual"
    return row


def _open(d) -> Dump:
    return d if isinstance(d, Dump) else load_dump(d)


def compare_dumps(a, b, benchmark=None) -> CompareReport:
    """Compare every node's outputs of dump ``a`` (under test) with dump ``b`` (golden); paths or Dumps.

    ``benchmark``: a third dump (the ideal network in ``a``'s dtype); then the dual-benchmark rule decides.
    """
    da, db = _open(a), _open(b)
    dc = _open(benchmark) if benchmark is not None else None
    names_b = {n.name for n in db}
    rows, missing = [], []
    for node in da:
        if node.name not in names_b:
            missing.append(node.name)
            continue
        outs = sorted(k for k in node.tensors if k.startswith("output_"))
        rows += [compare_node(da, db, node.name, t, dc) for t in outs]
    if not rows:
        raise DumpError(f"the dumps {da.dir} and {db.dir} share no node names",
                        fix="compare two dumps of the same model")
    return CompareReport(da.label, db.label, rows, missing)


def _run_node(runtime, node, x):
    """``node`` alone through ``runtime`` (its graph swapped for one node while it runs)."""
    from ascend_sim.models.lenet import Graph
    saved = runtime.graph
    runtime.graph = Graph([node], input=node.inputs[0])
    runtime.reset_stats()
    try:
        return runtime.forward(x)
    finally:
        runtime.graph = saved
        runtime.reset_stats()


def isolate(runtime, golden, name: str) -> NodeComparison:
    """Single-op error (单算子误差) of node ``name``, judged by the msprobe rule.

    The node runs alone in ``runtime`` (a graph runtime such as ``LeNetRuntime``) on the golden dump's input
    for it; the golden is the numpy reference of the same node in float32 on the same input and weights
    rounded to the runtime's dtype, as msprobe feeds the NPU and CPU sides identical tensors. This tells a
    node's own error from the error it inherits (累计误差) in a dump comparison.
    """
    from ascend_sim.models.lenet import Node
    from ascend_sim.tools.dump import reference_runtime
    db = golden if isinstance(golden, Dump) else load_dump(golden)
    node = next((n for n in runtime.graph.nodes if n.name == name), None)
    if node is None or len(node.inputs) != 1:
        raise DumpError(f"node {name!r} is not a one-input node of the runtime's graph",
                        fix=f"pick one of {[n.name for n in runtime.graph.nodes]}")
    dt = np.dtype(runtime.dtype)
    x = db.arrays(name)["input_0"].astype(dt)
    out = _run_node(runtime, node, x)
    same = {k: v.astype(dt).astype(np.float32) if isinstance(v, np.ndarray) else v for k, v in node.params.items()}
    gold = _run_node(reference_runtime(), Node(node.name, node.op, node.inputs, same), x.astype(np.float32))
    m = metrics(out, gold, dt)
    verdict, reason = msprobe_verdict(m, dt)
    return NodeComparison(db[name].index, name, node.op, "output_0", str(out.dtype), str(gold.dtype),
                          tuple(out.shape), m, ait_failures(m), verdict, reason, rule="msprobe")
