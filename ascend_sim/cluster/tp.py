"""Tensor parallelism (张量并行, parameter split) for linear layers, as Megatron-LM splits them.

A torch ``Linear`` weight is (out, in). On a tensor-parallel group of t ranks:
- **column parallel** (列并行): rank r keeps rows r*out/t.. of W and b, so it computes its own slice of the
  output columns. Forward needs the whole input (identity); backward sums the input gradient: AllReduce.
  ``gather_output`` AllGathers the output slices into the full output (its backward just slices dY).
- **row parallel** (行并行): rank r keeps columns r*in/t.. of W and takes its slice of the input
  features, so its product is a partial sum: forward AllReduce, then the (replicated) bias.
  Backward needs no collective.
- **sequence parallel** (序列并行, Megatron-LM 2022): the activations outside the pair are split by rows
  (batch or sequence). Column parallel AllGathers its input (backward: ReduceScatter of dX);
  row parallel ReduceScatters its partial sums (backward: AllGather of dY). Same bytes as one AllReduce,
  activations t times smaller.
Every layer plays all ranks at once: lists hold rank r's array at index r. The collectives run on the
group's ``HcclComm``, so their numerics follow the algorithm's reduction order and their time lands on its
timeline; each matmul also puts ``flops_us`` (at ``efficiency``) of compute on that timeline.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ascend_sim.cluster.cost import flops_us
from ascend_sim.cluster.errors import ShardError
from ascend_sim.cluster.hccl import HcclComm

Arrays = list[np.ndarray]


def split_even(size: int, t: int, what: str) -> int:
    """size / t, or a ShardError naming the dimension that does not divide."""
    if size % t:
        raise ShardError(f"{what} has {size} elements, which do not split into {t} equal parts "
                         f"({size} % {t} = {size % t})",
                         fix=f"use a tensor-parallel size that divides {size}, or pad {what} to a multiple of {t}")
    return size // t


class _Layer:
    """What column and row parallel layers share: the group, the shards, the compute clock."""

    def __init__(self, comm: HcclComm, efficiency: float):
        self.comm, self.t, self.efficiency = comm, comm.rank_size, efficiency

    def _check_inputs(self, xs: Arrays, width: int, what: str) -> None:
        """One 2-D array per rank, each ``width`` features wide."""
        if isinstance(xs, np.ndarray) or len(xs) != self.t:
            n = "one array" if isinstance(xs, np.ndarray) else f"{len(xs)} arrays"
            raise ShardError(f"a layer split over {self.t} ranks needs one input per rank, got {n}",
                             fix=f"pass [x_rank0, ..., x_rank{self.t - 1}]")
        bad = [(r, x.shape) for r, x in enumerate(xs) if np.ndim(x) != 2 or x.shape[1] != width]
        if bad:
            raise ShardError(f"rank {bad[0][0]}'s input has shape {bad[0][1]}, but {what} takes (rows, {width})",
                             fix=f"give every rank a (rows, {width}) array")

    def _compute(self, flops: float, label: str) -> None:
        us = flops_us(self.comm.cluster.chip, flops, self.efficiency)
        for r in range(self.t):
            self.comm.timeline.compute(r, us, label)

    def _matmuls(self, a: Arrays, b: Arrays, label: str) -> Arrays:
        out = [x @ y for x, y in zip(a, b)]
        self._compute(2.0 * a[0].shape[0] * a[0].shape[1] * b[0].shape[1], label)
        return out

    def all_gather_rows(self, xs: Arrays) -> Arrays:
        """(rows/t, k) per rank -> (rows, k) on every rank, rank order."""
        out = self.comm.AllGather([np.ascontiguousarray(x) for x in xs]).outputs
        return [o.reshape(-1, xs[0].shape[1]) for o in out]

    def reduce_scatter_rows(self, xs: Arrays) -> Arrays:
        """Sum of (rows, k) partials; rank r keeps rows r*rows/t.."""
        split_even(xs[0].shape[0], self.t, "the rows (batch) of a ReduceScatter")
        out = self.comm.ReduceScatter([np.ascontiguousarray(x) for x in xs]).outputs
        return [o.reshape(-1, xs[0].shape[1]) for o in out]

    def all_reduce(self, xs: Arrays) -> Arrays:
        return [o.reshape(xs[0].shape) for o in self.comm.AllReduce([np.ascontiguousarray(x) for x in xs]).outputs]


class ColumnParallelLinear(_Layer):
    """y = x W^T + b with W's output rows split over the group (see the module docstring)."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray, comm: HcclComm, gather_output: bool = False,
                 sequence_parallel: bool = False, efficiency: float = 1.0):
        super().__init__(comm, efficiency)
        o = split_even(weight.shape[0], self.t, f"the output features of a {list(weight.shape)} weight")
        self.w = [weight[r * o:(r + 1) * o].copy() for r in range(self.t)]
        self.b = [bias[r * o:(r + 1) * o].copy() for r in range(self.t)]
        self.gather_output, self.sequence_parallel = gather_output, sequence_parallel

    def forward(self, xs: Arrays) -> Arrays:
        """Input replicated (or split by rows with sequence parallelism); output split by columns (or gathered)."""
        self._check_inputs(xs, self.w[0].shape[1], "this column-parallel layer")
        self.x = self.all_gather_rows(xs) if self.sequence_parallel else list(xs)
        ys = [y + b for y, b in zip(self._matmuls(self.x, [w.T for w in self.w], "column fwd"), self.b)]
        if not self.gather_output:
            return ys
        cols = self.comm.AllGather([np.ascontiguousarray(y.T) for y in ys]).outputs
        return [c.reshape(-1, ys[0].shape[0]).T.copy() for c in cols]

    def backward(self, dys: Arrays) -> Arrays:
        """Weight and bias gradients of the shards (``dw``, ``db``); returns the input gradient per rank."""
        if self.gather_output:
            o = self.w[0].shape[0]
            dys = [dy[:, r * o:(r + 1) * o] for r, dy in enumerate(dys)]
        self.dw = self._matmuls([dy.T for dy in dys], self.x, "column dW")
        self.db = [dy.sum(axis=0) for dy in dys]
        partial = self._matmuls(dys, self.w, "column dX")
        return self.reduce_scatter_rows(partial) if self.sequence_parallel else self.all_reduce(partial)


class RowParallelLinear(_Layer):
    """y = x W^T + b with W's input columns split over the group; the input arrives split by features."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray, comm: HcclComm, sequence_parallel: bool = False,
                 efficiency: float = 1.0):
        super().__init__(comm, efficiency)
        k = split_even(weight.shape[1], self.t, f"the input features of a {list(weight.shape)} weight")
        self.w = [weight[:, r * k:(r + 1) * k].copy() for r in range(self.t)]
        self.b = [bias.copy() for _ in range(self.t)]
        self.sequence_parallel = sequence_parallel

    def forward(self, xs: Arrays) -> Arrays:
        """Partial products, summed by AllReduce (or ReduceScatter by rows), plus the bias."""
        self._check_inputs(xs, self.w[0].shape[1], "rank's slice of this row-parallel layer")
        self.x = list(xs)
        partial = self._matmuls(self.x, [w.T for w in self.w], "row fwd")
        ys = self.reduce_scatter_rows(partial) if self.sequence_parallel else self.all_reduce(partial)
        return [y + b for y, b in zip(ys, self.b)]

    def backward(self, dys: Arrays) -> Arrays:
        """Sets ``dw`` and ``db``; returns each rank's slice of the input gradient (no collective)."""
        db = [dy.sum(axis=0) for dy in dys]
        if self.sequence_parallel:          # each rank saw its rows only: the bias gradient is summed
            dys = self.all_gather_rows(dys)
            db = self.all_reduce(db)
        self.db = db
        self.dw = self._matmuls([dy.T for dy in dys], self.x, "row dW")
        return self._matmuls(dys, self.w, "row dX")


def softmax_xent_grad(z: np.ndarray, y: np.ndarray, batch: int) -> tuple[float, np.ndarray]:
    """Summed cross-entropy of these rows and d(mean loss over ``batch`` rows)/dz, in fp32 (as TinyMLP)."""
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    prob = e / e.sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = float(-np.log(prob[rows, y]).sum())
    prob[rows, y] -= np.float32(1)
    return loss, prob / np.float32(batch)


class TensorParallelMLP:
    """TinyMLP's fc1 -> ReLU -> fc2 with fc1 column-parallel and fc2 row-parallel (Megatron's MLP).

    Between them the hidden activations stay split: the pair needs one AllReduce forward (fc2) and one
    backward (fc1's input gradient), or with ``sequence_parallel`` one AllGather and one ReduceScatter each way.
    """

    def __init__(self, params: dict[str, np.ndarray], comm: HcclComm, sequence_parallel: bool = False,
                 efficiency: float = 1.0):
        self.comm, self.sp = comm, sequence_parallel
        self.fc1 = ColumnParallelLinear(params["fc1.weight"], params["fc1.bias"], comm,
                                        sequence_parallel=sequence_parallel, efficiency=efficiency)
        self.fc2 = RowParallelLinear(params["fc2.weight"], params["fc2.bias"], comm,
                                     sequence_parallel=sequence_parallel, efficiency=efficiency)

    def rows(self, x: np.ndarray) -> Arrays:
        """The input as the MLP expects it: every rank the whole batch, or rank r its rows."""
        t = self.comm.rank_size
        if not self.sp:
            return [x] * t
        n = split_even(len(x), t, "the batch")
        return [x[r * n:(r + 1) * n] for r in range(t)]

    def forward(self, x: np.ndarray) -> Arrays:
        h = self.fc1.forward(self.rows(x))
        self.h = h
        return self.fc2.forward([np.maximum(v, np.float32(0)) for v in h])

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, list[dict[str, np.ndarray]]]:
        """Mean cross-entropy and every rank's gradients of its shards (names as TinyMLP's)."""
        z = self.forward(x)
        labels = self.rows(y)
        parts = [softmax_xent_grad(zr, yr, len(x)) for zr, yr in zip(z, labels)]
        loss = sum(p[0] for p in parts) / len(x) if self.sp else parts[0][0] / len(x)
        da = self.fc2.backward([p[1] for p in parts])
        self.dx = self.fc1.backward([d * (h > 0) for d, h in zip(da, self.h)])
        return loss, [{"fc1.weight": self.fc1.dw[r], "fc1.bias": self.fc1.db[r], "fc2.weight": self.fc2.dw[r],
                       "fc2.bias": self.fc2.db[r]} for r in range(self.comm.rank_size)]

    def shards(self) -> list[dict[str, np.ndarray]]:
        """Every rank's parameters, by TinyMLP's names (the live arrays: an optimizer updates them in place)."""
        return [{"fc1.weight": self.fc1.w[r], "fc1.bias": self.fc1.b[r], "fc2.weight": self.fc2.w[r],
                 "fc2.bias": self.fc2.b[r]} for r in range(self.comm.rank_size)]


def unshard(per_rank: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Reassemble full tensors from MLP shards: fc1 by rows, fc2.weight by columns, fc2.bias is replicated."""
    return {"fc1.weight": np.concatenate([g["fc1.weight"] for g in per_rank], axis=0),
            "fc1.bias": np.concatenate([g["fc1.bias"] for g in per_rank]),
            "fc2.weight": np.concatenate([g["fc2.weight"] for g in per_rank], axis=1),
            "fc2.bias": per_rank[0]["fc2.bias"]}
