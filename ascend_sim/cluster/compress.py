"""Gradient compression hooks (梯度压缩) beyond fp16/bf16: top-k with error feedback, and PowerSGD.

Both keep an **error feedback** (误差反馈) residual per rank: what compression dropped this step is added to
next step's gradient, so nothing is lost for good (Stich et al. 2018; Vogels et al. 2019).

- ``TopKState`` + ``topk_hook``: each rank sends the k = ratio * n entries of largest magnitude, as values
  (fp32) and indices (int32). Sparse sums do not stay sparse, so the ranks AllGather both and every rank adds
  them up in rank order: 8k bytes per rank instead of 4n (ratio 4n / 8k).
- ``PowerSGDState`` + ``powersgd_hook`` (Vogels et al., NeurIPS 2019; torch's ``powerSGD_hook``): every
  gradient matrix M (n x m, conv weights flattened to (out, rest)) is approximated by P Q^T of rank r.
  P = mean(M_r Q) by AllReduce, orthogonalised (Gram-Schmidt), Q = mean(M_r^T P) by AllReduce: (n + m) r
  floats instead of n m. Rank r's error is M_r - P (M_r^T P)^T, what its own projection missed (the paper's
  local error; the mean of the local approximations is the transmitted one, the operator being linear).
  Q starts from a seeded normal draw shared by all ranks and is reused next step (warm start). Vectors
  (biases), and matrices that would not shrink, are averaged uncompressed, as torch does.
Each hook returns the same averaged gradient on every rank (bit-identical), so replicas stay identical.
``bytes_sent(comm)`` sums the bytes a communicator's timeline moved; ``compressed_bytes`` and
``compressed_time_us`` give one rank's bytes and the collectives' time for any gradient shapes, without data.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.hooks import GradBucket

F32 = np.float32


def bytes_sent(comm: HcclComm) -> int:
    """Bytes all ranks sent on this communicator's timeline so far."""
    return sum(e.nbytes for e in comm.timeline.events if e.kind == "send")


@dataclass
class TopKState:
    """Top-k compression: keep ``ratio`` of the entries; ``residuals[bucket][rank]`` is the error feedback."""

    ratio: float = 0.01
    error_feedback: bool = True
    residuals: dict = field(default_factory=dict)

    def __post_init__(self):
        if not 0 < self.ratio <= 1:
            raise DataParallelError(f"top-k ratio={self.ratio!r} must be in (0, 1]: the share of entries sent",
                                    fix="use for example ratio=0.01 (1% of the gradient entries)")


def topk_hook(state: TopKState, bucket: GradBucket) -> list[np.ndarray]:
    """Send the largest |g + residual| entries of each rank; the mean of the sparse parts on every rank."""
    w, n = len(bucket.buffers), bucket.buffers[0].size
    k = max(1, int(round(state.ratio * n)))
    res = state.residuals.setdefault(bucket.index, [np.zeros(n, F32) for _ in range(w)])
    values, indices = [], []
    for r, g in enumerate(bucket.buffers):
        acc = g + res[r] if state.error_feedback else g.copy()
        idx = np.sort(np.argsort(-np.abs(acc), kind="stable")[:k]).astype(np.int32)
        values.append(acc[idx])
        indices.append(idx)
        acc[idx] = 0
        res[r] = acc if state.error_feedback else res[r]
    all_v = bucket.comm.AllGather(values).outputs[0].reshape(w, k)
    all_i = bucket.comm.AllGather(indices).outputs[0].reshape(w, k)
    dense = np.zeros(n, F32)
    for v, i in zip(all_v, all_i):              # rank order: the same sum on every rank
        dense[i] += v
    mean = dense / F32(w)
    return [mean.copy() for _ in range(w)]


@dataclass
class PowerSGDState:
    """PowerSGD: ``rank`` r, error feedback, warm start; ``q[(bucket, tensor)]`` and ``errors[bucket]`` persist."""

    rank: int = 1
    seed: int = 0
    error_feedback: bool = True
    warm_start: bool = True
    q: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.rank, int) or self.rank < 1:
            raise DataParallelError(f"PowerSGD rank={self.rank!r} must be a positive int (columns of P and Q)",
                                    fix="use matrix_approximation_rank 1, 2 or 4")


def orthogonalize(p: np.ndarray) -> np.ndarray:
    """Gram-Schmidt on the columns of p, in fp32 (torch's ``_orthogonalize_gram_schmidt``)."""
    p = p.copy()
    for i in range(p.shape[1]):
        col = p[:, i]
        col /= np.sqrt(np.sum(col * col)) + F32(1e-8)
        if i + 1 < p.shape[1]:
            p[:, i + 1:] -= np.outer(col, col @ p[:, i + 1:])
    return p


def _mean_all_reduce(comm: HcclComm, xs: list[np.ndarray]) -> np.ndarray:
    w = F32(len(xs))
    return comm.AllReduce([np.ascontiguousarray(x, F32) / w for x in xs]).outputs[0]


def matrix_sizes(shapes: list[tuple[int, ...]], rank: int) -> list[tuple[int, int, int, bool]]:
    """(n, m, r, compressed) per tensor: a matrix n x m (conv weights as (out, rest)) is sent as rank-r P and Q
    when that is smaller ((n + m) r < n m); vectors and matrices that would not shrink go whole."""
    out = []
    for s in shapes:
        n, m = s[0], int(np.prod(s[1:])) if len(s) > 1 else 1
        r = min(rank, n, m)
        out.append((n, m, r, len(s) > 1 and n * m > (n + m) * r))
    return out


def powersgd_hook(state: PowerSGDState, bucket: GradBucket) -> list[np.ndarray]:
    """Rank-r approximation of every gradient matrix of the bucket; vectors averaged uncompressed.

    As torch packs them: one AllReduce for the uncompressed tensors, one for all P's, one for all Q's.
    """
    w = len(bucket.buffers)
    err = state.errors.setdefault(bucket.index, [np.zeros_like(b) for b in bucket.buffers])
    m_in = [b + err[r] if state.error_feedback else b.copy() for r, b in enumerate(bucket.buffers)]
    view = GradBucket(bucket.index, m_in, bucket.parameters, bucket.comm, bucket.last, bucket.shapes)
    grads = [view.gradients(r) for r in range(w)]
    sizes = matrix_sizes(bucket.shapes or [bucket.buffers[0].shape], state.rank)
    comp = [t for t, s in enumerate(sizes) if s[3]]
    plain = [t for t, s in enumerate(sizes) if not s[3]]
    mats = {t: [g[t].reshape(sizes[t][0], -1) for g in grads] for t in comp}
    ranks = {t: sizes[t][2] for t in comp}
    for t in comp:
        key = (bucket.index, t)
        if key not in state.q or not state.warm_start:
            state.q[key] = np.random.default_rng([state.seed, *key]).standard_normal((sizes[t][1], ranks[t])) \
                .astype(F32)
    result: dict[int, np.ndarray] = {}
    if plain:
        flat = _mean_all_reduce(bucket.comm, [np.concatenate([g[t].ravel() for t in plain]) for g in grads])
        at = 0
        for t in plain:
            n = sizes[t][0] * sizes[t][1]
            result[t], at = flat[at:at + n], at + n
    if comp:
        ps = _mean_all_reduce(bucket.comm, [np.concatenate([(mats[t][r] @ state.q[bucket.index, t]).ravel()
                                                            for t in comp]) for r in range(w)])
        p, at = {}, 0
        for t in comp:
            n = sizes[t][0] * ranks[t]
            p[t], at = orthogonalize(ps[at:at + n].reshape(sizes[t][0], ranks[t])), at + n
        local_q = [{t: mats[t][r].T @ p[t] for t in comp} for r in range(w)]
        qs = _mean_all_reduce(bucket.comm, [np.concatenate([lq[t].ravel() for t in comp]) for lq in local_q])
        at = 0
        for t in comp:
            n = sizes[t][1] * ranks[t]
            q, at = qs[at:at + n].reshape(sizes[t][1], ranks[t]), at + n
            state.q[bucket.index, t] = q
            result[t] = (p[t] @ q.T).ravel()
    mean = np.concatenate([result[t] for t in range(len(sizes))]).astype(F32)
    if state.error_feedback:                 # what each rank's own approximation P q_r^T missed; 0 where sent whole
        errs = []
        for r in range(w):
            parts = [(mats[t][r] - p[t] @ local_q[r][t].T).ravel() if t in mats else np.zeros(sizes[t][0] *
                     sizes[t][1], F32) for t in range(len(sizes))]
            errs.append(np.concatenate(parts).astype(F32))
        state.errors[bucket.index] = errs
    return [mean.copy() for _ in range(w)]


def compressed_bytes(shapes: list[tuple[int, ...]], method: str, ratio: float = 0.01, rank: int = 1) -> int:
    """Bytes one rank contributes per step: 'fp32', 'fp16', 'topk' (values + int32 indices), 'powersgd' (P, Q)."""
    n_all = sum(int(np.prod(s)) for s in shapes)
    if method in ("fp32", "fp16"):
        return n_all * (4 if method == "fp32" else 2)
    if method == "topk":
        return 8 * max(1, int(round(ratio * n_all)))
    if method == "powersgd":
        return 4 * sum((n + m) * r if c else n * m for n, m, r, c in matrix_sizes(shapes, rank))
    raise DataParallelError(f"no compression method {method!r}", fix="use 'fp32', 'fp16', 'topk' or 'powersgd'")


def compressed_time_us(comm: HcclComm, shapes: list[tuple[int, ...]], method: str, ratio: float = 0.01,
                       rank: int = 1) -> float:
    """Communication time of one bucket of these gradients on ``comm``'s links (its collectives, no data)."""
    n_all = sum(int(np.prod(s)) for s in shapes)
    if method in ("fp32", "fp16"):
        return comm.estimate("AllReduce", n_all, method).time_us
    if method == "topk":
        k = max(1, int(round(ratio * n_all)))
        return comm.estimate("AllGather", k, "fp32").time_us + comm.estimate("AllGather", k, "int32").time_us
    if method != "powersgd":
        compressed_bytes(shapes, method)                 # raises the error
    plain = p_len = q_len = 0
    for n, m, r, c in matrix_sizes(shapes, rank):
        if c:
            p_len, q_len = p_len + n * r, q_len + m * r
        else:
            plain += n * m
    return sum(comm.estimate("AllReduce", c).time_us for c in (plain, p_len, q_len) if c)
