"""Layer dumps (数据 dump): every node's inputs and outputs of one model run, on disk.

The format, meant for any graph model (LeNet today, later models tomorrow)::

    DIR/index.json          {"format": "ascend-sim-dump", "version": 1, "model": ..., "source": ...,
                             "dtype": ..., "nodes": [{"index", "name", "op", "inputs", "file",
                             "tensors": {"input_0": {"shape", "dtype", "nonfinite"}, "output_0": ...},
                             "kernel", "launches", "cycles", "us", "instructions"}, ...]}
    DIR/000_conv1.npz       the arrays input_0, input_1 ..., output_0 of node 0

A model that is not a graph runtime dumps with :class:`DumpWriter` directly
(``add`` once per node, ``close`` at the end). A runtime with a ``graph`` of
nodes, an ``ops`` dict and ``forward(x, on_node=...)`` (``LeNetRuntime``) is
dumped by :func:`dump_runtime`, which wraps its operators for one run.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ascend_sim.engine.errors import KernelError
from ascend_sim.models import lenet_reference as ref
from ascend_sim.models.datasets import normalize, write_npz
from ascend_sim.models.lenet import LeNetRuntime, flatten

__all__ = ["DumpError", "DumpWriter", "Dump", "DumpNode", "load_dump", "dump_runtime", "reference_runtime",
           "dump_lenet", "run_recorded", "FORMAT", "VERSION"]

FORMAT, VERSION = "ascend-sim-dump", 1


class DumpError(KernelError, ValueError):
    """A dump folder that is missing, malformed or of another format."""

    check = "dump"


@dataclass(frozen=True)
class DumpNode:
    """One node's entry in a dump's index."""

    index: int
    name: str
    op: str
    inputs: tuple[str, ...]
    file: str
    tensors: Mapping[str, Mapping[str, Any]]
    meta: Mapping[str, Any]


class DumpWriter:
    """Writes ``index.json`` and one ``.npz`` per node into ``directory`` (created; old dump files removed)."""

    def __init__(self, directory, *, model: str, source: str, dtype: str, **meta: Any):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        for old in list(self.dir.glob("[0-9][0-9][0-9]_*.npz")) + [self.dir / "index.json"]:
            old.unlink(missing_ok=True)
        self.index = {"format": FORMAT, "version": VERSION, "model": model, "source": source, "dtype": dtype,
                      **meta, "nodes": []}

    def add(self, name: str, op: str, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], *,
            input_names: Sequence[str] = (), **meta: Any) -> None:
        """Dump one node: its input and output arrays and any JSON-able ``meta`` (kernel, cycles ...)."""
        i = len(self.index["nodes"])
        arrays = {f"input_{k}": np.asarray(a) for k, a in enumerate(inputs)}
        arrays.update({f"output_{k}": np.asarray(a) for k, a in enumerate(outputs)})
        file = f"{i:03d}_{name}.npz"
        write_npz(self.dir / file, arrays)
        tensors = {k: {"shape": list(a.shape), "dtype": str(a.dtype),
                       "nonfinite": int((~np.isfinite(a)).sum()) if a.dtype.kind == "f" else 0}
                   for k, a in arrays.items()}
        self.index["nodes"].append({"index": i, "name": name, "op": op, "inputs": list(input_names), "file": file,
                                    "tensors": tensors, **meta})

    def close(self) -> Path:
        """Write the index; returns the dump folder."""
        (self.dir / "index.json").write_text(json.dumps(self.index, indent=1), encoding="utf-8")
        return self.dir


class Dump:
    """A dump folder opened for reading: ``nodes`` in run order, ``arrays(node)`` loads one node's tensors."""

    def __init__(self, directory):
        self.dir = Path(directory)
        path = self.dir / "index.json"
        if not path.is_file():
            raise DumpError(f"{self.dir} is not a layer dump: it has no index.json",
                            fix="make one with `ascend-sim dump` or tools.dump.dump_lenet(...)")
        try:
            self.index = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise DumpError(f"{path}: not valid JSON ({e})", fix="re-create the dump") from None
        if self.index.get("format") != FORMAT or self.index.get("version") != VERSION:
            raise DumpError(f"{path}: format {self.index.get('format')!r} version {self.index.get('version')!r}, "
                            f"expected {FORMAT!r} version {VERSION}", fix="re-create the dump with this version")
        meta_keys = {"index", "name", "op", "inputs", "file", "tensors"}
        self.nodes = [DumpNode(n["index"], n["name"], n["op"], tuple(n["inputs"]), n["file"], n["tensors"],
                               {k: v for k, v in n.items() if k not in meta_keys}) for n in self.index["nodes"]]

    def __getitem__(self, name: str) -> DumpNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise DumpError(f"node {name!r} is not in the dump {self.dir}",
                        fix=f"use one of its nodes: {[n.name for n in self.nodes]}")

    def __iter__(self) -> Iterator[DumpNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def arrays(self, node: DumpNode | str) -> dict[str, np.ndarray]:
        """The node's arrays: ``{"input_0": ..., "output_0": ...}``."""
        node = self[node] if isinstance(node, str) else node
        with np.load(self.dir / node.file) as z:
            return {k: z[k] for k in z.files}

    @property
    def label(self) -> str:
        return f"{self.index.get('model')} {self.index.get('source')} {self.index.get('dtype')}"


def load_dump(directory) -> Dump:
    """Open the dump in ``directory``."""
    return Dump(directory)


def _launch_meta(results: Any) -> dict[str, Any]:
    """Kernel name, launches, cycles, microseconds and instructions of an op's LaunchResult(s), if any."""
    rs = [] if results is None else list(results) if isinstance(results, (list, tuple)) else [results]
    rs = [r for r in rs if hasattr(r, "cycles")]
    if not rs:
        return {"launches": 0}
    return {"kernel": rs[-1].kernel_name, "launches": len(rs), "cycles": float(sum(r.cycles for r in rs)),
            "us": float(sum(r.us for r in rs)), "instructions": int(sum(len(r.trace) for r in rs))}


def run_recorded(runtime, x: np.ndarray, on_op: Callable[[Any, tuple, np.ndarray, Any], None],
                 on_node: Callable[[Any], None] | None = None) -> np.ndarray:
    """``runtime.forward(x)`` with ``on_op(node, inputs, output, launch_results)`` called after every node
    (and ``on_node(node)`` before it).

    The runtime's operators are wrapped for this one run (``functools.wraps`` keeps each signature, so the
    runtime passes the same keywords as usual).
    """
    current: dict[str, Any] = {}

    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            ret = fn(*args, **kwargs)
            out, res = (ret[0], ret[1]) if isinstance(ret, tuple) else (ret, None)
            on_op(current["node"], args, out, res)
            return ret
        return op

    saved = runtime.ops
    runtime.ops = {name: wrap(fn) for name, fn in saved.items()}
    try:
        return runtime.forward(x, on_node=lambda node: (current.__setitem__("node", node),
                                                        on_node(node) if on_node else None))
    finally:
        runtime.ops = saved


def dump_runtime(runtime, x: np.ndarray, directory, *, model: str, source: str) -> Path:
    """Run ``runtime.forward(x)`` once and dump every node's inputs and outputs into ``directory``."""
    writer = DumpWriter(directory, model=model, source=source, dtype=np.dtype(runtime.dtype).name, batch=len(x))
    run_recorded(runtime, x, lambda node, args, out, res: writer.add(
        node.name, node.op, args, [out], input_names=node.inputs, **_launch_meta(res)))
    return writer.close()


def reference_runtime(weights: Mapping[str, np.ndarray] | None = None, dtype: str = "float32") -> LeNetRuntime:
    """A LeNetRuntime whose operators are the numpy references (lenet_reference): the golden side.

    The weights are rounded to ``dtype`` as ``lenet_forward_ref`` does, so ``dtype="float16"`` is the ideal
    fp16 network (fp16 tensors, one rounding per op): the benchmark an fp16 kernel is measured against.
    """
    ops = {"conv2d": ref.conv2d_ref, "relu": ref.relu_ref, "maxpool2d": ref.maxpool2d_ref, "flatten": flatten,
           "linear": ref.linear_ref, "softmax": ref.softmax_ref}
    w = ref.load_lenet_weights() if weights is None else weights
    return LeNetRuntime({k: np.asarray(v).astype(dtype) for k, v in w.items()}, dtype=dtype, ops=ops,
                        keep_results=False)


def dump_lenet(images: np.ndarray, directory, *, mode: str = "sim", dtype: str | None = None,
               weights: Mapping[str, np.ndarray] | None = None, ops: Mapping[str, Any] | None = None) -> Path:
    """Dump LeNet-5 on ``images`` (uint8 ``[N, 28, 28]`` or normalized ``[N, 1, 28, 28]``).

    ``mode="sim"``: the simulated kernels (``ops`` overrides some, e.g. a kernel version under test);
    ``mode="ref"``: the numpy reference in ``dtype`` (float32, the default, for the golden dump; float16 for
    the ideal fp16 network, the dual-benchmark side). ``dtype`` defaults to float16 for ``sim``.
    """
    x = normalize(images) if np.asarray(images).dtype == np.uint8 else np.asarray(images)
    if dtype is None:
        dtype = "float16" if mode == "sim" else "float32"
    if mode == "sim":
        rt = LeNetRuntime(weights, dtype=dtype, ops=ops, keep_results=False)
        source = "simulator"
    elif mode == "ref":
        rt, source = reference_runtime(weights, dtype), "reference"
    else:
        raise DumpError(f"dump mode {mode!r} is not one of 'sim', 'ref'",
                        fix="mode='sim' (simulated kernels) or mode='ref' (numpy reference)")
    return dump_runtime(rt, x, directory, model="lenet", source=source)
