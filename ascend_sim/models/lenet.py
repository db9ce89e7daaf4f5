"""LeNet-5 on the simulator: a small graph runtime over the simulated operator kernels.

The analog of running custom operators through CANN's graph engine: a
:class:`Graph` of named nodes (operator name, input names, parameters) is
executed node by node, each operator node one kernel launch, nothing fused.
Per node the runtime sums the simulated cycles and microseconds of every
launch and keeps the LaunchResults of the latest batch.

Operator implementations are looked up by name in a dict the caller may
override, e.g. with a learner's own kernel wrapper::

    rt = LeNetRuntime(ops={"conv2d": my_conv2d})      # same signature as kernels.conv2d
    report = rt.evaluate(images, labels)
    print(report.table)

An operator function takes the node's inputs positionally, its parameters
(``w``, ``b``, ``pad``, ``k``, ``s``) and ``dtype`` (and ``block_dim`` /
``chip`` when the runtime was given them) as keywords, and returns
``(output, LaunchResult)``. Returning just the output, ``(output, None)``
for host-only work, or a list of LaunchResults is accepted too, and a
function that does not take ``dtype``/``block_dim``/``chip`` is called
without them.
"""
from __future__ import annotations

import html
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ascend_sim import kernels
from ascend_sim.hw.chips import get_chip
from ascend_sim.models.lenet_reference import LENET_PARAM_SHAPES
from ascend_sim.api.launch import LaunchResult

OpFn = Callable[..., Any]


# ----------------------------------------------------------------------------- graph
@dataclass(frozen=True)
class Node:
    """One operator application: ``name = op(*inputs, **params)``."""

    name: str
    op: str
    inputs: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        ps = ", ".join(f"{k}={_brief(v)}" for k, v in self.params.items())
        return f"{self.name} = {self.op}({', '.join(self.inputs)}{', ' if ps else ''}{ps})"


@dataclass
class Graph:
    """Nodes in execution order; ``input`` names the graph input, the last node is the output."""

    nodes: list[Node]
    input: str = "input"

    def __post_init__(self) -> None:
        known = {self.input}
        for node in self.nodes:
            missing = [i for i in node.inputs if i not in known]
            if missing:
                raise ValueError(f"graph node {node.name!r} reads {missing}, which no earlier node produces")
            if node.name in known:
                raise ValueError(f"graph node name {node.name!r} is used twice")
            known.add(node.name)

    @property
    def output(self) -> str:
        return self.nodes[-1].name if self.nodes else self.input

    def __str__(self) -> str:
        return "\n".join(str(n) for n in self.nodes)


def _brief(v: Any) -> str:
    return f"<{'x'.join(map(str, v.shape))}>" if isinstance(v, np.ndarray) else repr(v)


def lenet_graph(weights: Mapping[str, np.ndarray]) -> Graph:
    """The LeNet-5 graph (conv-relu-pool x2, flatten, fc-relu x2, fc, softmax) over ``weights``."""
    for name, shape in LENET_PARAM_SHAPES.items():
        got = np.shape(weights[name]) if name in weights else None
        if got != shape:
            raise ValueError(f"LeNet weight {name!r}: expected shape {shape}, got {got or 'missing'}")
    w = {k: np.asarray(v) for k, v in weights.items()}

    def layer(name: str, op: str, src: str, **params) -> Node:
        return Node(name, op, (src,), params)

    return Graph([
        layer("conv1", "conv2d", "input", w=w["conv1.w"], b=w["conv1.b"], pad=2),
        layer("relu1", "relu", "conv1"),
        layer("pool1", "maxpool2d", "relu1", k=2, s=2),
        layer("conv2", "conv2d", "pool1", w=w["conv2.w"], b=w["conv2.b"], pad=0),
        layer("relu2", "relu", "conv2"),
        layer("pool2", "maxpool2d", "relu2", k=2, s=2),
        layer("flatten", "flatten", "pool2"),
        layer("fc1", "linear", "flatten", w=w["fc1.w"], b=w["fc1.b"]),
        layer("relu3", "relu", "fc1"),
        layer("fc2", "linear", "relu3", w=w["fc2.w"], b=w["fc2.b"]),
        layer("relu4", "relu", "fc2"),
        layer("fc3", "linear", "relu4", w=w["fc3.w"], b=w["fc3.b"]),
        layer("softmax", "softmax", "fc3"),
    ])


def flatten(x: np.ndarray, **_: Any) -> tuple[np.ndarray, None]:
    """Host-only op: ``[N, C, H, W]`` -> ``[N, C*H*W]`` (a reshape; no kernel, no simulated time)."""
    x = np.asarray(x)
    return x.reshape(len(x), -1), None


DEFAULT_OPS: dict[str, OpFn] = {
    "conv2d": kernels.conv2d, "relu": kernels.relu, "maxpool2d": kernels.maxpool2d, "flatten": flatten,
    "linear": kernels.linear, "softmax": kernels.softmax,
}


# ----------------------------------------------------------------------------- timing table
@dataclass
class OpTime:
    """Simulated time of one graph node, summed over its launches."""

    name: str
    op: str
    launches: int = 0
    cycles: float = 0.0
    us: float = 0.0
    instructions: int = 0

    def add(self, results: Sequence[LaunchResult]) -> None:
        """Count these launches into the row."""
        for r in results:
            self.launches += 1
            self.cycles += r.cycles
            self.us += r.us
            self.instructions += len(r.trace)


@dataclass
class TimeTable:
    """Per-operator simulated time (cycles, microseconds, share of the total) for ``images`` images."""

    rows: list[OpTime]
    images: int
    chip: str

    @property
    def total_cycles(self) -> float:
        return sum(r.cycles for r in self.rows)

    @property
    def total_us(self) -> float:
        return sum(r.us for r in self.rows)

    def share(self, row: OpTime) -> float:
        return row.cycles / self.total_cycles if self.total_cycles else 0.0

    def _lines(self) -> list[tuple[str, ...]]:
        per = max(self.images, 1)
        out = [(r.name, r.op, f"{r.launches}", f"{r.cycles:,.0f}", f"{r.us:,.1f}", f"{r.us / per:,.3f}",
                f"{self.share(r):.1%}") for r in self.rows]
        out.append(("total", "", f"{sum(r.launches for r in self.rows)}", f"{self.total_cycles:,.0f}",
                    f"{self.total_us:,.1f}", f"{self.total_us / per:,.3f}", "100.0%" if self.total_cycles else "-"))
        return out

    HEADER = ("node", "op", "launches", "cycles", "us", "us/image", "share")

    def __str__(self) -> str:
        lines = [self.HEADER] + self._lines()
        widths = [max(len(line[i]) for line in lines) for i in range(len(self.HEADER))]
        fmt = lambda line: "  ".join(c.ljust(w) if i < 2 else c.rjust(w)  # noqa: E731
                                     for i, (c, w) in enumerate(zip(line, widths)))
        title = f"simulated time on {self.chip}, {self.images} images"
        return "\n".join([title, fmt(lines[0]), fmt(tuple("-" * w for w in widths))] +
                         [fmt(line) for line in lines[1:]])

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in self.HEADER)
        body = ""
        for line in self._lines():
            cells = "".join(f"<td style='text-align:{'left' if i < 2 else 'right'}'>{html.escape(c)}</td>"
                            for i, c in enumerate(line))
            body += f"<tr>{cells}</tr>"
        return (f"<div><b>simulated time on {html.escape(self.chip)}, {self.images} images</b>"
                f"<table><tr>{head}</tr>{body}</table></div>")


@dataclass
class EvalReport:
    """Accuracy of a run over labelled images, with its per-operator time table."""

    accuracy: float
    correct: int
    total: int
    dtype: str
    table: TimeTable
    wall_seconds: float
    predictions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)

    def __str__(self) -> str:
        return (f"accuracy {self.accuracy:.2%} ({self.correct}/{self.total}) in {self.dtype}, "
                f"{self.wall_seconds:.1f} s of host time\n{self.table}")

    def _repr_html_(self) -> str:
        return (f"<div><p><b>accuracy {self.accuracy:.2%}</b> ({self.correct}/{self.total}) in {self.dtype}, "
                f"{self.wall_seconds:.1f} s of host time</p>{self.table._repr_html_()}</div>")


# ----------------------------------------------------------------------------- runtime
class LeNetRuntime:
    """Runs the LeNet-5 graph through simulated kernels, batch by batch, timing every operator."""

    def __init__(self, weights: Mapping[str, np.ndarray] | None = None, dtype: str = "float16",
                 ops: Mapping[str, OpFn] | None = None, block_dim: int | None = None, chip=None,
                 keep_results: bool = True):
        """``weights``: the LeNet dict (default: the bundled trained weights); ``ops``: overrides of
        ``DEFAULT_OPS``; ``block_dim``/``chip``: passed to every op; ``keep_results``: keep the
        LaunchResults of the latest batch in ``last_results`` (their traces can be large)."""
        if weights is None:
            from ascend_sim.models.lenet_reference import load_lenet_weights
            weights = load_lenet_weights()
        self.dtype = kernels.resolve_dtype(dtype)
        self.graph = lenet_graph(weights)
        self.ops: dict[str, OpFn] = {**DEFAULT_OPS, **dict(ops or {})}
        unknown = sorted({n.op for n in self.graph.nodes} - set(self.ops))
        if unknown:
            raise ValueError(f"no implementation for operator(s) {unknown}; pass ops={{name: function}}")
        self.block_dim, self.chip, self.keep_results = block_dim, chip, keep_results
        self.last_results: dict[str, LaunchResult] = {}
        self.reset_stats()

    def reset_stats(self) -> None:
        """Forget the accumulated per-operator times."""
        self.stats = {n.name: OpTime(n.name, n.op) for n in self.graph.nodes}
        self.images = 0

    # --- execution -------------------------------------------------------------
    # --- SHOW lenet-forward: course/01_basics.ipynb cell basics-33
    def forward(self, x: np.ndarray, on_node: Callable[[Node], None] | None = None) -> np.ndarray:
        """Class probabilities ``[N, 10]`` for normalized input ``x [N, 1, 28, 28]``, one launch per node."""
        values: dict[str, np.ndarray] = {self.graph.input: np.asarray(x, self.dtype)}
        n = len(x)
        for node in self.graph.nodes:
            if on_node is not None:
                on_node(node)
            out, results = self._call(node, [values[i] for i in node.inputs])
            if not isinstance(out, np.ndarray) or out.ndim < 1 or out.shape[0] != n:
                raise ValueError(f"operator {node.op!r} of node {node.name!r} returned "
                                 f"{type(out).__name__} {getattr(out, 'shape', '')}; expected an array of {n} rows")
            values[node.name] = out
            self._record(node, results)
        self.images += n
        return values[self.graph.output]
    # --- END SHOW

    def _call(self, node: Node, args: list[np.ndarray]) -> tuple[Any, list[LaunchResult]]:
        kw: dict[str, Any] = dict(node.params, dtype=self.dtype.name)
        if self.block_dim is not None:
            kw["block_dim"] = self.block_dim
        if self.chip is not None:
            kw["chip"] = self.chip
        fn = self.ops[node.op]
        ret = fn(*args, **_accepted(fn, kw, ("dtype", "block_dim", "chip")))
        out, res = (ret[0], ret[1]) if isinstance(ret, tuple) else (ret, None)
        if res is None:
            return out, []
        return out, list(res) if isinstance(res, (list, tuple)) else [res]

    def _record(self, node: Node, results: Sequence[LaunchResult]) -> None:
        self.stats[node.name].add(results)
        if results and self.keep_results:
            self.last_results[node.name] = results[-1]

    def predict_proba(self, images: np.ndarray, batch: int = 2048, progress: bool = True) -> np.ndarray:
        """Probabilities ``[N, 10]`` for uint8 images ``[N, 28, 28]`` (or normalized ``[N, 1, 28, 28]``)."""
        if int(batch) < 1:
            raise ValueError(f"batch must be at least 1 image, got {batch}")
        x = _as_input(images)
        outs = []
        bar = _progress(len(x), progress, f"LeNet-5 {self.dtype.name}")
        try:
            for i in range(0, len(x), batch):
                xb = x[i:i + batch]
                outs.append(self.forward(xb, on_node=(lambda nd: bar.set_postfix_str(nd.name, refresh=False))
                                         if bar else None))
                if bar:
                    bar.update(len(xb))
        finally:
            if bar:
                bar.close()
        return np.concatenate(outs) if outs else np.zeros((0, 10), self.dtype)

    def predict(self, images: np.ndarray, batch: int = 2048, progress: bool = True) -> np.ndarray:
        """Predicted digits ``[N]`` (int64)."""
        return self.predict_proba(images, batch, progress).argmax(axis=1)

    def evaluate(self, images: np.ndarray, labels: np.ndarray, batch: int = 2048,
                 progress: bool = True) -> EvalReport:
        """Accuracy on ``images``/``labels`` and the per-operator time table of this evaluation."""
        labels = np.asarray(labels)
        if len(labels) != len(images):
            raise ValueError(f"{len(images)} images but {len(labels)} labels")
        self.reset_stats()
        t0 = time.perf_counter()
        pred = self.predict(images, batch, progress)
        correct = int((pred == labels).sum())
        return EvalReport(correct / max(len(labels), 1), correct, len(labels), self.dtype.name, self.time_table(),
                          time.perf_counter() - t0, pred)

    def time_table(self) -> TimeTable:
        """The per-operator simulated time accumulated since the last reset."""
        return TimeTable([self.stats[n.name] for n in self.graph.nodes if self.stats[n.name].launches],
                         self.images, get_chip(self.chip).name)


def _accepted(fn: OpFn, kw: dict[str, Any], optional: Iterable[str]) -> dict[str, Any]:
    """``kw`` without the ``optional`` keywords that ``fn`` does not take (a learner's ``def relu(x)`` works)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):         # builtins, some callables: pass everything
        return kw
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kw
    return {k: v for k, v in kw.items() if k in params or k not in optional}


def _as_input(images: np.ndarray) -> np.ndarray:
    images = np.asarray(images)
    if images.dtype == np.uint8:
        from ascend_sim.models.datasets import normalize
        return normalize(images)
    if images.ndim != 4 or images.shape[1:] != (1, 28, 28):
        raise ValueError(f"expected uint8 images [N, 28, 28] or normalized [N, 1, 28, 28], got {images.dtype} "
                         f"{images.shape}")
    return images


def _progress(total: int, enabled: bool, desc: str):
    if not enabled or not total:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit="img")


__all__ = ["Node", "Graph", "lenet_graph", "flatten", "DEFAULT_OPS", "OpTime", "TimeTable", "EvalReport",
           "LeNetRuntime", "LENET_PARAM_SHAPES"]
