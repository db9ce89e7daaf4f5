"""ddp_debug: gradient-consistency checks (梯度一致性检查) and the two classic DDP hangs, as clear messages.

- ``first_divergence``: the first parameter (in ``parameters()`` order) whose values differ across ranks,
  with the ranks, the largest difference and its first index. After a correct DDP step the averaged gradients
  and the replicas are bit-identical, so any difference is a bug (a rank skipped the AllReduce, a hook
  returned rank-dependent values, a rank loaded another checkpoint).
- ``check_bucket_order``: HCCL (like NCCL) matches collectives by their order, not by name. If ranks build
  different buckets (a different ``bucket_cap_mb``, parameters registered in another order), their k-th
  AllReduces differ: different counts hang; equal counts silently add unrelated gradients.
- ``ddp_debug``: both, plus the unused-parameter hang (DDP's own check), for one step of a set of replicas.
torch would hang (or, with TORCH_DISTRIBUTED_DEBUG=DETAIL, report a collective mismatch); this tool names the
rank, the bucket and the fix.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ascend_sim.cluster.ddp import BUCKET_CAP_MB, FIRST_BUCKET_BYTES, DistributedDataParallel, bucket_assignment
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.hccl import HcclComm


@dataclass(frozen=True)
class Divergence:
    """Where per-rank copies of the same tensors first differ."""

    parameter: str
    ranks: list[int]          # the ranks that differ from rank 0
    max_abs_diff: float
    first_index: tuple

    def __str__(self) -> str:
        return (f"first divergent parameter: {self.parameter}: ranks {self.ranks} differ from rank 0 "
                f"(max |diff| {self.max_abs_diff:.3g}, first at index {self.first_index})")


def first_divergence(per_rank: Sequence[Mapping[str, np.ndarray]], names: Sequence[str]) -> Divergence | None:
    """The first of ``names`` whose arrays are not bit-identical on every rank; None if all agree."""
    for name in names:
        ref = per_rank[0][name]
        bad = [r for r, d in enumerate(per_rank) if not np.array_equal(d[name], ref, equal_nan=True)]
        if bad:
            diff = max(float(np.max(np.abs(per_rank[r][name].astype(np.float64) - ref))) for r in bad)
            other = per_rank[bad[0]][name]
            where = np.argwhere((other != ref) & ~(np.isnan(other) & np.isnan(ref)))
            return Divergence(name, bad, diff, tuple(int(i) for i in where[0]) if len(where) else ())
    return None


def check_bucket_order(per_rank_buckets: Sequence[Sequence[Sequence[str]]],
                       sizes: Mapping[str, int]) -> DataParallelError | None:
    """The error for the first AllReduce whose bucket differs between ranks (``sizes``: elements per name)."""
    for k in range(max(len(b) for b in per_rank_buckets)):
        seq = [list(b[k]) if k < len(b) else None for b in per_rank_buckets]
        if all(s == seq[0] for s in seq):
            continue
        r = next(r for r, s in enumerate(seq) if s != seq[0])
        count = [sum(sizes[n] for n in s) if s is not None else None for s in seq]
        what = (f"AllReduce #{k}: rank 0 reduces bucket {seq[0]} ({count[0]} elements), rank {r} reduces "
                f"{seq[r]} ({count[r]} elements). HCCL matches collectives by order, not by name")
        fix = ("build the model the same way on every rank (same parameter order) and pass the same "
               "bucket_cap_mb everywhere")
        if count[r] != count[0]:
            return DataParallelError(f"{what}; the counts differ, so the ranks wait on each other forever: torch "
                                     "hangs until the collective timeout (HCCL_EXEC_TIMEOUT)", fix=fix)
        return DataParallelError(f"{what}; the counts are equal, so nothing hangs but gradients of different "
                                 "parameters are averaged together (silently wrong training)", fix=fix)
    return None


def ddp_debug(replicas: Sequence, comm: HcclComm, batches: Sequence,
              bucket_cap_mb: float | Sequence[float] = BUCKET_CAP_MB, find_unused_parameters: bool = False,
              hook: Callable | None = None, state: object = None) -> list[str]:
    """Run one checked DDP step; returns what is fine, raises a DataParallelError for the first problem.

    ``bucket_cap_mb`` may differ per rank (a list), to reproduce a mismatched configuration; ``hook`` and
    ``state`` are registered with ``register_comm_hook`` when given.
    """
    caps = list(bucket_cap_mb) if isinstance(bucket_cap_mb, (list, tuple)) else [bucket_cap_mb] * len(replicas)
    plans = []
    for rep, cap in zip(replicas, caps):
        params = rep.parameters()
        idx = bucket_assignment([p.nbytes for _, p in params], cap, FIRST_BUCKET_BYTES)
        plans.append([[params[i][0] for i in b] for b in idx])
    sizes = {n: p.size for n, p in replicas[0].parameters()}
    err = check_bucket_order(plans, sizes)
    if err is not None:
        raise err
    ddp = DistributedDataParallel(replicas, comm, caps[0], find_unused_parameters=find_unused_parameters)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    ddp.backward(batches)                                   # raises the unused-parameter diagnosis
    names = [n for n, _ in replicas[0].parameters()]
    for what, per_rank in (("gradients", ddp.grads), ("parameters", [dict(r.parameters()) for r in replicas])):
        div = first_divergence(per_rank, names)
        if div is not None:
            raise DataParallelError(f"{what} diverge across ranks: {div}",
                                    fix="every rank must run the same AllReduces on the same buckets; look for a "
                                        "hook or a rank-specific branch that skips or changes them")
    return [f"{len(plans[0])} bucket(s) in the same order on {len(replicas)} ranks",
            "every parameter has a gradient on every rank", "averaged gradients and replicas are bit-identical"]
