"""2:4 structured sparsification (2:4 结构化稀疏) as a DDP gradient-compression hook, with error feedback.

In every group of 4 consecutive gradient values 2 are kept (the pattern sparse tensor cores and Ascend's sparse
matmul read): 2 values and 2 two-bit positions per group, 68 bits instead of 128 (1.88x less). If every rank kept
its own largest two, the sums would not be 2:4-sparse and the parts would have to be AllGathered, whose bytes grow
with the number of ranks (as top-k's do). So the ranks agree on one pattern: rank 0's largest |g + residual| per
group, broadcast as packed 2-bit positions (n/8 bytes), and every rank AllReduces its values at those positions
(n/2 values): half of a dense AllReduce's bytes plus the small broadcast, at any number of ranks. What a rank did
not send is its residual, added to its next step's gradient (error feedback), so a value rank 0 skipped is not lost.
A bucket whose length is not a multiple of 4 is padded with zeros for the grouping.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.cluster.hooks import GradBucket

F32 = np.float32


@dataclass
class Sparse24State:
    """``residuals[bucket][rank]``: the error feedback of each rank."""

    error_feedback: bool = True
    residuals: dict = field(default_factory=dict)


def keep_2_of_4(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2 largest-magnitude values of each group of 4 (len(g) % 4 == 0) and their positions 0..3, in order."""
    groups = g.reshape(-1, 4)
    pos = np.sort(np.argsort(-np.abs(groups), axis=1, kind="stable")[:, :2], axis=1)
    return np.take_along_axis(groups, pos, axis=1).ravel(), pos.astype(np.uint8).ravel()


def pack_positions(pos: np.ndarray) -> np.ndarray:
    """Four 2-bit positions per byte (what goes on the wire)."""
    p = np.concatenate([pos, np.zeros(-len(pos) % 4, np.uint8)]).reshape(-1, 4)
    return (p[:, 0] | p[:, 1] << 2 | p[:, 2] << 4 | p[:, 3] << 6).astype(np.uint8)


def unpack_positions(packed: np.ndarray, count: int) -> np.ndarray:
    return np.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], axis=1).ravel()[:count]


def sparse24_hook(state: Sparse24State, bucket: GradBucket) -> list[np.ndarray]:
    """Rank 0's 2:4 pattern is broadcast; every rank AllReduces its values at those positions; the mean on every rank."""
    w, n = len(bucket.buffers), bucket.buffers[0].size
    padded = n + (-n % 4)
    res = state.residuals.setdefault(bucket.index, [np.zeros(padded, F32) for _ in range(w)])
    accs = []
    for r, g in enumerate(bucket.buffers):
        acc = np.concatenate([g, np.zeros(padded - n, F32)])
        accs.append(acc + res[r] if state.error_feedback else acc)
    _, pos0 = keep_2_of_4(accs[0])
    packed = bucket.comm.Broadcast([pack_positions(pos0).view(np.int8)] * w, root=0).outputs
    pos = unpack_positions(packed[0].view(np.uint8), padded // 2).astype(np.int64).reshape(-1, 2)
    values = [np.take_along_axis(a.reshape(-1, 4), pos, axis=1).ravel() for a in accs]
    total = bucket.comm.AllReduce([v / F32(w) for v in values]).outputs[0]
    mean = np.zeros((padded // 4, 4), F32)
    np.put_along_axis(mean, pos, total.reshape(-1, 2), axis=1)
    if state.error_feedback:
        for r, (a, v) in enumerate(zip(accs, values)):
            kept = np.zeros((padded // 4, 4), F32)
            np.put_along_axis(kept, pos, v.reshape(-1, 2), axis=1)
            res[r] = a - kept.ravel()
    out = mean.ravel()[:n]
    return [out.copy() for _ in range(w)]


def sparse24_bytes(n: int) -> int:
    """The payload of n fp32 gradient values: n/2 fp32 values and n/2 two-bit positions (68 bits per 4 values)."""
    groups = -(-n // 4)
    return groups * 2 * 4 + -(-groups * 2 // 4)
