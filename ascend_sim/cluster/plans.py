"""Plans: one collective on one cluster, as a work-buffer layout plus a schedule.

Every rank holds one work buffer of ``work_len(op)`` elements. The layouts (count = HCCL's count):
AllReduce, Broadcast, Reduce: count; ReduceScatter, AllGather: p*count, slice r (切片) at r*count;
AlltoAll: 2*p*count, the input slices then the output slices.

A flat plan runs one algorithm over all ranks. A hierarchical plan (several HCCS domains) runs
mesh inside each domain (level0) and ``inter`` between the devices of equal local index (level1),
reducing inside a domain before anything crosses the slower links:
AllReduce = intra ReduceScatter, inter AllReduce of 1/L of the data, intra AllGather;
ReduceScatter = intra RS by column, inter RS; AllGather = inter AG, intra AG by column;
Broadcast = intra scatter, inter broadcast, intra AllGather; Reduce = intra RS, inter reduce, gather.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.cluster import algorithms as A
from ascend_sim.cluster.algorithms import Chunk, Step

OPS = ("AllReduce", "ReduceScatter", "AllGather", "Broadcast", "Reduce", "AlltoAll")


@dataclass(frozen=True)
class Plan:
    """A collective ready to run: its name, algorithm label, buffer length and steps."""

    op: str
    algo: str
    work_len: int
    steps: list[Step]


def work_len(op: str, count: int, p: int) -> int:
    return {"AllReduce": count, "Broadcast": count, "Reduce": count,
            "ReduceScatter": p * count, "AllGather": p * count, "AlltoAll": 2 * p * count}[op]


def load(plan: Plan, x: np.ndarray, rank: int, root: int, count: int, p: int) -> np.ndarray:
    """Rank ``rank``'s work buffer before the schedule runs, from its send buffer ``x``."""
    w, flat = np.zeros(plan.work_len, x.dtype), x.ravel()
    if plan.op == "AllGather":
        w[rank * count:(rank + 1) * count] = flat
    elif plan.op == "AlltoAll":                  # its own slice needs no message
        w[:flat.size] = flat
        w[(p + rank) * count:(p + rank + 1) * count] = flat[rank * count:(rank + 1) * count]
    elif plan.op != "Broadcast" or rank == root:
        w[:] = flat
    return w


def unload(plan: Plan, w: np.ndarray, rank: int, root: int, count: int, p: int, shape: tuple) -> np.ndarray | None:
    """Rank ``rank``'s receive buffer after the schedule ran (None where HCCL leaves it undefined)."""
    if plan.op in ("AllReduce", "Broadcast"):
        return w.reshape(shape)
    if plan.op == "Reduce":
        return w.reshape(shape) if rank == root else None
    if plan.op == "ReduceScatter":
        return w[rank * count:(rank + 1) * count].copy()
    return w if plan.op == "AllGather" else w[p * count:].copy()


def _slices(count: int, idx: list[int]) -> list[Chunk]:
    return [((b * count, (b + 1) * count),) for b in idx]


def flat(op: str, algo: str, p: int, count: int, root: int = 0) -> Plan:
    """``algo`` (ring, rhd or mesh) over all ranks 0..p-1."""
    g, region = list(range(p)), ((0, count),)
    if op == "AllReduce":
        steps = A.allreduce(algo, g, region)
    elif op == "ReduceScatter":
        steps = A.reduce_scatter(algo, g, _slices(count, g))
    elif op == "AllGather":
        steps = A.allgather(algo, g, _slices(count, g))
    elif op == "Broadcast":
        steps = A.broadcast(algo, g, root, region)
    elif op == "Reduce":
        steps = A.reduce(algo, g, root, region)
    else:
        steps = A.alltoall(algo, g, count)
        algo = "mesh" if algo == "mesh" else "pairwise"
    return Plan(op, algo, work_len(op, count, p), steps)


def hierarchical(op: str, inter: str, domains: list[list[int]], count: int, root: int = 0) -> Plan:
    """Mesh inside each domain, ``inter`` (ring or rhd) across domains; see the module docstring."""
    D, L = len(domains), len(domains[0])
    p = D * L
    cols = [[domains[d][l] for d in range(D)] for l in range(L)]
    region = ((0, count),)
    parts = A.split(region, L)

    def intra(fn, *args) -> list[Step]:
        return A.parallel([fn(dom, *args) for dom in domains])

    if op == "AllReduce":
        steps = (intra(A.mesh_reduce_scatter, parts)
                 + A.parallel([A.allreduce(inter, cols[l], parts[l]) for l in range(L)])
                 + intra(A.mesh_allgather, parts))
    elif op in ("ReduceScatter", "AllGather"):
        # rank domains[d][l] owns its own slice; column l holds the slices of its members
        col_slices = [_slices(count, cols[l]) for l in range(L)]
        col_chunks = [A.merge(*col_slices[l]) for l in range(L)]
        if op == "ReduceScatter":
            steps = (intra(A.mesh_reduce_scatter, col_chunks)
                     + A.parallel([A.reduce_scatter(inter, cols[l], col_slices[l]) for l in range(L)]))
        else:
            steps = (A.parallel([A.allgather(inter, cols[l], col_slices[l]) for l in range(L)])
                     + intra(A.mesh_allgather, col_chunks))
    elif op in ("Broadcast", "Reduce"):
        d0 = next(d for d, dom in enumerate(domains) if root in dom)
        l0 = domains[d0].index(root)
        if op == "Broadcast":
            steps = (A.mesh_scatter(domains[d0], l0, parts)
                     + A.parallel([A.broadcast(inter, cols[l], d0, parts[l]) for l in range(L)])
                     + intra(A.mesh_allgather, parts))
        else:
            steps = (intra(A.mesh_reduce_scatter, parts)
                     + A.parallel([A.reduce(inter, cols[l], d0, parts[l]) for l in range(L)])
                     + A.mesh_gather(domains[d0], l0, parts))
    else:
        raise ValueError(f"no hierarchical {op}")
    return Plan(op, f"hierarchical(level0=mesh, level1={inter})", work_len(op, count, p), steps)
