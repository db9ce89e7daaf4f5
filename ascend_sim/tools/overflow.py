"""Overflow and NaN detection (溢出检测): the first node, and the first instruction, that made an inf or NaN.

fp16 tops out at 65504: a convolution sum, a Fixpipe F322F16 conversion or an ``Exp`` past that
becomes inf, and inf - inf or 0 * inf becomes NaN; everything downstream is then garbage. The
source document's advice [OFF, hiascend ``PT_LMTMOG_000023``]: find the first blow-up, then move the
smallest set of operators to a wider dtype. Two levels:

* :func:`first_nonfinite_node` reads a layer dump: the first node whose outputs hold inf/NaN while
  its inputs hold none (the producing node, not one that merely passes the values on).
* :class:`NonFiniteWatch` follows a run instruction by instruction: around every Ascend C call a
  kernel makes (``Add``, ``Cast``, ``Mmad``, ``Fixpipe``, ``DataCopy`` ...) it counts the inf/NaN in the
  destination tensor before and after, and records each call that added some, with its trace
  index, block and kernel line; a call whose sources already held inf/NaN only carried them (a
  source's whole tensor is scanned, so stale values past the count can make a producer look like a
  carrier). ``first`` is the first producer. It uses a profile hook, so it is slow: run it on a few images.
  :func:`find_overflow` runs a graph runtime under it and names both levels.
"""
from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

import numpy as np

from ascend_sim.api import ops as api_ops
from ascend_sim.api.tensor import GlobalTensor, LocalTensor
from ascend_sim.engine import context
from ascend_sim.engine.errors import format_site, resolve_site
from ascend_sim.engine.instr import Instr
from ascend_sim.tools.dump import Dump, load_dump, run_recorded

__all__ = ["NonFiniteEvent", "NonFiniteWatch", "NodeOverflow", "OverflowReport", "first_nonfinite_node",
           "find_overflow"]

_OPS_DIR = os.path.dirname(os.path.abspath(api_ops.__file__))


@dataclass(frozen=True)
class NodeOverflow:
    """The first node whose outputs hold inf/NaN that its inputs did not."""

    index: int
    node: str
    op: str
    tensor: str
    count: int

    def __str__(self) -> str:
        return f"node #{self.index} {self.node} ({self.op}) produced {self.count} inf/NaN in {self.tensor}"


def first_nonfinite_node(dump) -> NodeOverflow | None:
    """The producing node of the first inf/NaN in a layer dump (path or Dump), or None if all are finite."""
    d = dump if isinstance(dump, Dump) else load_dump(dump)
    for node in d:
        ins = sum(t["nonfinite"] for k, t in node.tensors.items() if k.startswith("input_"))
        outs = [(k, t["nonfinite"]) for k, t in node.tensors.items() if k.startswith("output_") and t["nonfinite"]]
        if outs and not ins:
            return NodeOverflow(node.index, node.name, node.op, outs[0][0], outs[0][1])
    return None


@dataclass(frozen=True)
class NonFiniteEvent:
    """One Ascend C call that added inf/NaN to its destination."""

    node: str
    kernel: str
    block: int
    record: int              # index of its (first) record in the launch's trace; -1 if it issued none
    op: str
    site: tuple | None       # (file, line) of the kernel code that made the call
    dtype: str
    where: str               # "UB" / "L0C" ... or "GM <buffer name>"
    added: int               # inf/NaN elements the call added
    inf: bool                # True when the new values include inf (overflow), False: NaN only
    carried: bool = False    # a source operand already held inf/NaN: the call passed them on

    def __str__(self) -> str:
        kind = "inf (overflow)" if self.inf else "NaN"
        verb = "carried by" if self.carried else "made by"
        return (f"{kind} {verb} {self.op} in {self.kernel} block {self.block} (trace record #{self.record}) "
                f"of node {self.node or '?'} at {format_site(self.site)}: {self.added} new non-finite "
                f"{self.dtype} values in {self.where}")


def _view(t) -> np.ndarray | None:
    """The floating-point values a destination tensor covers (a whole GM buffer for a GlobalTensor)."""
    if isinstance(t, LocalTensor):
        v = t.view()
    elif isinstance(t, GlobalTensor) and t.buf is not None:
        isz = t.dtype.itemsize
        raw = t.buf.raw[t.offset % isz:]
        v = raw[:len(raw) - len(raw) % isz].view(t.dtype)
    else:
        return None
    return v if v.dtype.kind == "f" else None


def _counts(v: np.ndarray) -> tuple[int, int]:
    """(non-finite count, inf count)."""
    with np.errstate(invalid="ignore"):
        return int((~np.isfinite(v)).sum()), int(np.isinf(v).sum())


class NonFiniteWatch:
    """Context manager: record every Ascend C call that adds inf/NaN to its destination (``events``).

    Set ``node`` to label the events of the graph node running. Only Python-level hooks are used
    (``sys.setprofile`` / ``threading.setprofile``); nothing in the simulator changes.
    """

    def __init__(self, limit: int = 20):
        self.node = ""
        self.limit = limit
        self.events: list[NonFiniteEvent] = []
        self._stacks: dict = {}     # the open calls of each core (its block may wait mid-call for another's)

    @property
    def first(self) -> NonFiniteEvent | None:
        """The first call that made inf/NaN from finite sources (None: they all came in with the input)."""
        return next((e for e in self.events if not e.carried), None)

    def __enter__(self) -> "NonFiniteWatch":
        self._saved = (sys.getprofile(), getattr(threading, "getprofile", lambda: None)())
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(self._saved[0])
        threading.setprofile(self._saved[1])

    def _hook(self, frame, event, arg) -> None:
        if event == "call":
            code = frame.f_code
            if not code.co_filename.startswith(_OPS_DIR) or code.co_name.startswith("_"):
                return
            back = frame.f_back
            if back is not None and back.f_code.co_filename.startswith(_OPS_DIR):
                return                          # an inner call of an Ascend C call: the outer one counts
            tensors = _tensor_args(frame.f_locals)
            dst = frame.f_locals.get("dst", tensors[0] if tensors else None)
            v = _view(dst) if dst is not None else None
            core = context.current
            if v is None or core is None:
                return
            srcs = [_view(t) for t in tensors if t is not dst]
            carried = any(_counts(s)[0] for s in srcs if s is not None)
            stack = self._stacks.setdefault(core, [])
            stack.append((frame, dst, _counts(v), len(core.records), core, carried))
        elif event == "return":
            stack = self._stacks.get(context.current)
            if stack and stack[-1][0] is frame:
                self._check(*stack.pop())

    def _check(self, frame, dst, before: tuple[int, int], rec: int, core, carried: bool) -> None:
        if len(self.events) >= self.limit:
            return
        v = _view(dst)
        after = _counts(v)
        if after[0] <= before[0]:
            return
        instr = Instr(*core.records[rec]) if rec < len(core.records) else None
        site = resolve_site(instr.site) if instr else (frame.f_back.f_code.co_filename, frame.f_back.f_lineno)
        op = instr.op if instr else frame.f_code.co_name
        where = f"GM {dst.buf.name}" if isinstance(dst, GlobalTensor) else dst.tier.name
        self.events.append(NonFiniteEvent(self.node, core.launch.kernel.__name__, core.block_idx,
                                          rec if instr else -1, op, site, str(v.dtype), where,
                                          after[0] - before[0], after[1] > before[1], carried))


def _tensor_args(f_locals: dict) -> list:
    """The tensors an Ascend C call received, in order: named parameters, or the items of ``*args``
    (``Fixpipe(*args)`` takes an optional leading FixpipeConfig, so its dst is the first tensor)."""
    items = list(f_locals.values())
    if isinstance(f_locals.get("args"), tuple):
        items += list(f_locals["args"])
    return [t for t in items if isinstance(t, (LocalTensor, GlobalTensor))]


@dataclass
class OverflowReport:
    """Where a run's first inf/NaN came from: the node and, inside its kernel, the instruction."""

    node: NodeOverflow | None
    instruction: NonFiniteEvent | None

    @property
    def clean(self) -> bool:
        return self.node is None and self.instruction is None

    def __str__(self) -> str:
        if self.clean:
            return "no inf or NaN anywhere in the run"
        lines = [str(self.node)] if self.node else []
        if self.instruction:
            lines.append("first " + str(self.instruction))
        lines.append("Fix: keep that operator's intermediate values in range: accumulate and convert in float32 "
                     "(or bfloat16), scale the input, or subtract the row max before Exp")
        return "\n".join(lines)


def find_overflow(runtime, x: np.ndarray) -> OverflowReport:
    """Run ``runtime.forward(x)`` (a graph runtime) under a :class:`NonFiniteWatch`: the first producing
    node and instruction. Use a few images: every Ascend C call is checked."""
    first: list[NodeOverflow] = []

    def on_op(node, args, out, res) -> None:
        a = np.asarray(out)
        bad = int((~np.isfinite(a)).sum()) if a.dtype.kind == "f" else 0
        clean_in = all(np.isfinite(np.asarray(i)).all() for i in args if np.asarray(i).dtype.kind == "f")
        if bad and clean_in and not first:
            idx = [n.name for n in runtime.graph.nodes].index(node.name)
            first.append(NodeOverflow(idx, node.name, node.op, "output_0", bad))

    watch = NonFiniteWatch()
    with watch:
        run_recorded(runtime, x, on_op, on_node=lambda node: setattr(watch, "node", node.name))
    return OverflowReport(first[0] if first else None, watch.first)
