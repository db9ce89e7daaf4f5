"""HcclComm: HCCL's collectives on a simulated cluster, with exact numerics and per-device timing.

One Python call plays every rank at once: ``comm.AllReduce([x0, x1, ...])`` takes rank r's send
buffer at index r and returns each rank's receive buffer, computed by running the chosen
algorithm's schedule on real numpy buffers in the buffers' dtype (fp16 rounds after every add, in
that algorithm's order), while the same schedule advances each device's clock on ``comm.timeline``.

| HCCL (C API)                     | here                                        |
|----------------------------------|---------------------------------------------|
| HcclAllReduce(send, recv, count, dtype, op, comm, stream) | comm.AllReduce(sends, op="sum") |
| HcclReduceScatter / HcclAllGather | comm.ReduceScatter(sends, op) / comm.AllGather(sends) |
| HcclBroadcast(buf, count, dtype, root, ...) | comm.Broadcast(bufs, root)   |
| HcclReduce(..., op, root, ...)   | comm.Reduce(sends, op, root)                |
| HcclAlltoAll(send, sendCount, ...) | comm.AlltoAll(sends)                      |
| HcclSend + HcclRecv              | comm.Send(data, src, dst) (both ends in one call), comm.SendRecv |
| HcclBarrier                      | comm.Barrier()                              |
| HCCL_REDUCE_SUM/PROD/MAX/MIN     | op="sum" / "prod" / "max" / "min" (or the HCCL names) |
| HCCL_DATA_TYPE_FP32/FP16/BFP16/INT8/INT32 | float32 / float16 / bfloat16 / int8 / int32 arrays |

Integer sums wrap around on overflow, as the hardware's int8/int32 adds do.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ascend_sim.cluster import plans
from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.plans import Plan
from ascend_sim.cluster.select import FLAT, HCCL_OP_NAMES, check_flat, inter_rule, parse_hccl_algo
from ascend_sim.cluster.timeline import Timeline
from ascend_sim.cluster.topology import Cluster
from ascend_sim.hw.dtypes import bfloat16

DTYPES = {"fp32": np.dtype(np.float32), "fp16": np.dtype(np.float16), "bf16": bfloat16,
          "int8": np.dtype(np.int8), "int32": np.dtype(np.int32)}
_HCCL_DTYPES = {"HCCL_DATA_TYPE_FP32": "fp32", "HCCL_DATA_TYPE_FP16": "fp16", "HCCL_DATA_TYPE_BFP16": "bf16",
                "HCCL_DATA_TYPE_INT8": "int8", "HCCL_DATA_TYPE_INT32": "int32"}
REDUCE_OPS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}

# nccl-tests doc/PERFORMANCE.md: busbw = algbw * factor(p)
BUS_FACTOR = {"AllReduce": lambda p: 2 * (p - 1) / p, "ReduceScatter": lambda p: (p - 1) / p,
              "AllGather": lambda p: (p - 1) / p, "AlltoAll": lambda p: (p - 1) / p,
              "Broadcast": lambda p: 1.0, "Reduce": lambda p: 1.0}


@dataclass
class CollectiveResult:
    """What one collective did: the outputs per rank, the algorithm, its time and bandwidths.

    ``time_us`` runs from the last rank's start to the last rank's end (on idle devices: the whole collective).
    """

    op: str
    algo: str
    ranks: int
    count: int
    dtype: np.dtype
    time_us: float
    steps: int
    outputs: list | None = field(default=None, repr=False)

    @property
    def size_bytes(self) -> int:
        """nccl-tests' S: count x itemsize, times the rank count for ReduceScatter, AllGather, AlltoAll."""
        per = self.count * self.dtype.itemsize
        return per * self.ranks if self.op in ("ReduceScatter", "AllGather", "AlltoAll") else per

    @property
    def algbw_GBps(self) -> float:
        return self.size_bytes / (self.time_us * 1e-6) / 1e9 if self.time_us > 0 else float("inf")

    @property
    def busbw_GBps(self) -> float:
        return self.algbw_GBps * BUS_FACTOR[self.op](self.ranks)


def dtype_of(dtype) -> np.dtype:
    """fp32/fp16/bf16/int8/int32 (or HCCL_DATA_TYPE_*, or a numpy dtype) to a numpy dtype."""
    key = _HCCL_DTYPES.get(dtype, dtype) if isinstance(dtype, str) else None
    d = DTYPES.get(key) if key is not None else None
    if d is None and not isinstance(dtype, str):
        try:
            d = np.dtype(dtype)
        except TypeError:
            d = None
    if d is None or d not in DTYPES.values():
        raise HcclError(f"dtype {dtype!r} is not one of the HCCL data types this model runs",
                        fix=f"use one of {sorted(DTYPES)} (numpy float32, float16, ml_dtypes.bfloat16, int8, int32)")
    return d


def reduce_op(op: str):
    name = op.removeprefix("HCCL_REDUCE_").lower() if isinstance(op, str) else op
    if name not in REDUCE_OPS:
        raise HcclError(f"reduction op {op!r} is not an HCCL reduction",
                        fix="use 'sum', 'prod', 'max' or 'min' (HCCL_REDUCE_SUM/PROD/MAX/MIN)")
    return REDUCE_OPS[name]


def execute(plan: Plan, work: list[np.ndarray], ufunc) -> None:
    """Apply a plan's steps to the ranks' work buffers in place; a step reads before it writes."""
    for step in plan.steps:
        data = [[work[t.src][lo:hi].copy() for lo, hi, _ in t.segs] for t in step]
        for t, parts in zip(step, data):
            dst = work[t.dst]
            for (lo, hi, at), x in zip(t.segs, parts):
                if t.reduce:
                    dst[at:at + hi - lo] = ufunc(dst[at:at + hi - lo], x)
                else:
                    dst[at:at + hi - lo] = x


def replay(plan: Plan, itemsize: int, timeline: Timeline) -> None:
    """Advance a timeline through a plan's steps."""
    for i, step in enumerate(plan.steps):
        timeline.step([(t.src, t.dst, t.elements * itemsize, t.reduce) for t in step], f"{plan.op} step {i}")


class HcclComm:
    """A communicator over every device of a cluster (HCCL's HcclComm; rank r = device r)."""

    def __init__(self, cluster: Cluster, hccl_algo: str | None = None):
        self.cluster = cluster
        self.hccl_algo = os.environ.get("HCCL_ALGO") if hccl_algo is None else hccl_algo
        self._override = parse_hccl_algo(self.hccl_algo)
        self.timeline = Timeline(cluster)

    @property
    def rank_size(self) -> int:
        return self.cluster.world_size

    def reset(self) -> None:
        """Clear the timeline (every clock back to zero)."""
        self.timeline = Timeline(self.cluster)

    # --- choosing and costing -----------------------------------------------------------------
    def plan(self, op: str, count: int, dtype="fp32", algo: str | None = None, root: int = 0) -> Plan:
        """The plan HCCL would run: ``algo`` None (HCCL's choice), 'ring', 'rhd', 'mesh' or 'hierarchical'."""
        p, doms = self.rank_size, self.cluster.domains
        if not isinstance(root, (int, np.integer)) or not 0 <= root < p:
            raise HcclError(f"root={root!r} is not a rank of this communicator (ranks 0..{p - 1})",
                            fix=f"pass a root in range({p})")
        if algo is not None:
            check_flat(algo, op, p)
        if p == 1:
            return Plan(op, "none", plans.work_len(op, count, 1), [])
        if algo in FLAT:
            return plans.flat(op, algo, p, count, root)
        if op == "AlltoAll" or len(doms) == 1:
            return plans.flat(op, "mesh" if len(doms) == 1 else "ring", p, count, root)
        inter = self._override.get(HCCL_OP_NAMES[op], self._override.get("*"))
        if inter == "rhd" and op in ("ReduceScatter", "AllGather") and len(doms) & (len(doms) - 1):
            raise HcclError(f"HCCL_ALGO level1:H-D_R cannot run {op} across {len(doms)} domains (not a power of 2)",
                            fix="use level1:ring for this operator, or a power-of-two number of servers")
        if inter is None:
            itemsize = dtype_of(dtype).itemsize

            def estimate(choice: str) -> float:
                t = Timeline(self.cluster)
                replay(plans.hierarchical(op, choice, doms, count, root), itemsize, t)
                return max(t.clock_us)
            inter = inter_rule(self.cluster.chip.name, op, len(doms), estimate)
        return plans.hierarchical(op, inter, doms, count, root)

    def estimate(self, op: str, count: int, dtype="fp32", algo: str | None = None,
                 root: int = 0) -> CollectiveResult:
        """Time one collective of ``count`` elements per rank on idle devices, without data."""
        self._check_op(op)
        if not isinstance(count, (int, np.integer)) or count < 1:
            raise HcclError(f"count={count!r}: a collective moves at least one element per rank",
                            fix="pass HCCL's count (elements per rank, per peer for AlltoAll) as a positive int")
        d = dtype_of(dtype)
        plan = self.plan(op, count, d, algo, root)
        t = Timeline(self.cluster)
        replay(plan, d.itemsize, t)
        return CollectiveResult(op, plan.algo, self.rank_size, count, d, max(t.clock_us), len(plan.steps))

    # --- the collectives ----------------------------------------------------------------------
    def AllReduce(self, sends: Sequence[np.ndarray], op: str = "sum", algo: str | None = None) -> CollectiveResult:
        """Every rank receives the reduction of all ranks' buffers."""
        return self._run("AllReduce", sends, op, algo)

    def ReduceScatter(self, sends: Sequence[np.ndarray], op: str = "sum",
                      algo: str | None = None) -> CollectiveResult:
        """Rank r receives slice r (of p equal slices) of the reduction."""
        return self._run("ReduceScatter", sends, op, algo)

    def AllGather(self, sends: Sequence[np.ndarray], algo: str | None = None) -> CollectiveResult:
        """Every rank receives all ranks' buffers, concatenated in rank order."""
        return self._run("AllGather", sends, None, algo)

    def Broadcast(self, bufs: Sequence[np.ndarray], root: int = 0, algo: str | None = None) -> CollectiveResult:
        """Every rank receives the root's buffer."""
        return self._run("Broadcast", bufs, None, algo, root)

    def Reduce(self, sends: Sequence[np.ndarray], op: str = "sum", root: int = 0,
               algo: str | None = None) -> CollectiveResult:
        """The root receives the reduction; the other ranks' outputs are None."""
        return self._run("Reduce", sends, op, algo, root)

    def AlltoAll(self, sends: Sequence[np.ndarray], algo: str | None = None) -> CollectiveResult:
        """Slice j of rank i's buffer goes to rank j, which stores it as its slice i."""
        return self._run("AlltoAll", sends, None, algo)

    def SendRecv(self, moves: Sequence[tuple[int, int, np.ndarray]]) -> list[np.ndarray]:
        """One step of concurrent point-to-point messages (src, dst, data); returns what each dst received."""
        for src, dst, _ in moves:
            self.cluster.link(src, dst)         # checks both ranks
        self.timeline.step([(s, d, np.asarray(x).nbytes, False) for s, d, x in moves], "SendRecv")
        return [np.array(x, copy=True) for _, _, x in moves]

    def Send(self, data: np.ndarray, src: int, dst: int) -> np.ndarray:
        """HcclSend on ``src`` matched by HcclRecv on ``dst``: returns what ``dst`` receives."""
        return self.SendRecv([(src, dst, data)])[0]

    def Barrier(self) -> float:
        """Every rank waits for all (HCCL runs a tiny AllReduce); returns the time all leave, in us."""
        if self.rank_size > 1:
            replay(self.plan("AllReduce", 1), 4, self.timeline)
        return self.timeline.sync()

    # --- internals ----------------------------------------------------------------------------
    def _check_op(self, op: str) -> None:
        if op not in plans.OPS:
            raise HcclError(f"{op!r} is not a collective of this model", fix=f"use one of {plans.OPS}")

    def _run(self, op: str, sends, rop, algo, root: int = 0) -> CollectiveResult:
        p = self.rank_size
        arrays, d = self._check_buffers(op, sends)
        ufunc = reduce_op(rop) if rop is not None else None
        count = arrays[0].size // p if op in ("ReduceScatter", "AlltoAll") else arrays[0].size
        plan = self.plan(op, count, d, algo, root)
        work = [plans.load(plan, x, r, root, count, p) for r, x in enumerate(arrays)]
        execute(plan, work, ufunc)
        before = max(self.timeline.clock_us)
        replay(plan, d.itemsize, self.timeline)
        outputs = [plans.unload(plan, w, r, root, count, p, arrays[0].shape) for r, w in enumerate(work)]
        return CollectiveResult(op, plan.algo, p, count, d, max(self.timeline.clock_us) - before, len(plan.steps),
                                outputs)

    def _check_buffers(self, op: str, sends) -> tuple[list[np.ndarray], np.dtype]:
        p = self.rank_size
        if isinstance(sends, np.ndarray) or not hasattr(sends, "__len__") or len(sends) != p:
            n = len(sends) if hasattr(sends, "__len__") else 0
            got = "one array" if isinstance(sends, np.ndarray) else f"{n} items"
            raise HcclError(f"{op} on {p} ranks needs a list of {p} buffers, one per rank; got {got}",
                            fix=f"pass [buf_rank0, ..., buf_rank{p - 1}]")
        arrays = [x if isinstance(x, np.ndarray) else np.asarray(x) for x in sends]
        d = dtype_of(arrays[0].dtype)
        for r, x in enumerate(arrays):
            if x.dtype != d or x.shape != arrays[0].shape:
                raise HcclError(f"{op}: rank {r}'s buffer is {x.dtype}{list(x.shape)} but rank 0's is "
                                f"{d}{list(arrays[0].shape)}; HCCL gives every rank the same count and data type",
                                fix="make every rank's buffer the same shape and dtype")
        if op in ("ReduceScatter", "AlltoAll") and arrays[0].size % p:
            raise HcclError(f"{op} splits each buffer into {p} equal slices, but it has {arrays[0].size} elements "
                            f"({arrays[0].size} % {p} = {arrays[0].size % p})",
                            fix=f"pad each buffer to a multiple of {p} elements")
        return arrays, d
