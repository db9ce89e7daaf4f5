"""MindSpore ``shard`` strategies (切分策略) mapped onto data and tensor parallel layouts, with their checks.

A strategy is one tuple per operator input, one number per dimension: how many parts that dimension is cut
into. As in MindSpore's operator-level parallelism (``ops.MatMul(transpose_b=True).shard(((dp, 1), (mp, 1)))``):
- Dense / MatMul(transpose_b=True): x (batch, k), weight (n, k), as torch and ``nn.Dense`` store it;
- Conv2D: x (batch, cin, h, w), weight (cout, cin, kh, kw); the source's 2-D shorthand
  ``conv.shard(((1, 1), (4, 1)))`` means ((batch, cin), (cout, cin)).
What a cut means: batch -> data parallel (gradients AllReduced); n / cout -> column (output-channel) parallel
(output split; dX AllReduced; AllGather where the next operator needs the whole output); k / cin -> row
parallel (partial sums: forward AllReduce). The strategy's product must divide the device count; the other
devices repeat the calculation (MindSpore's "repeated calculation").

The source's example 2 comments ``fc.shard(((4, 1), (1, 1)))`` as "weight split along the output dimension";
that strategy cuts the *input batch* and keeps the weight whole: it is data parallelism. The output-dimension
split would be ``((1, 1), (4, 1))``. ``describe`` says which.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.cluster.errors import ShardError
from ascend_sim.cluster.groups import DeviceMesh, sub_cluster
from ascend_sim.cluster.tp import ColumnParallelLinear, RowParallelLinear
from ascend_sim.cluster.tp_conv import im2col, out_size
from ascend_sim.cluster.topology import Cluster

DIMS = {"MatMul": (("batch", "k"), ("n", "k")),
        "Conv2D": (("batch", "cin", "h", "w"), ("cout", "cin", "kh", "kw"))}
SHORTHAND = {"Conv2D": (("batch", "cin"), ("cout", "cin"))}     # the source's 2-D form for a conv
ROLE = {"batch": "data", "n": "column", "cout": "column", "k": "row", "cin": "row"}
NOT_CUT = {"h": "image height", "w": "image width", "kh": "kernel height", "kw": "kernel width"}


@dataclass(frozen=True)
class Layout:
    """What a strategy does on ``devices`` devices: the cut of each role and the collectives it needs."""

    op: str
    strategy: tuple
    devices: int
    data: int          # batch cut (data parallel)
    column: int        # output features / channels cut
    row: int           # contracted features / input channels cut
    repeat: int        # devices computing the same slice

    @property
    def kind(self) -> str:
        parts = [f"{name} parallel x{n}" for name, n in (("data", self.data), ("column", self.column),
                                                          ("row", self.row)) if n > 1]
        return " + ".join(parts) or "no split (every device computes everything)"

    @property
    def weight_fraction(self) -> float:
        """The part of the weight one device holds."""
        return 1.0 / (self.column * self.row)

    def collectives(self) -> list[str]:
        out = []
        if self.row > 1:
            out.append(f"forward: AllReduce of the partial sums over {self.row} devices (row parallel)")
        if self.column > 1:
            out.append(f"forward: output split {self.column} ways, AllGather where the next operator needs it "
                       f"whole; backward: AllReduce of dX over {self.column} devices")
        if self.data > 1:
            out.append(f"backward: AllReduce of the weight gradients over the {self.data} data-parallel groups")
        return out

    def describe(self) -> str:
        w = "the weight is not split" if self.weight_fraction == 1 else \
            f"each device holds 1/{round(1 / self.weight_fraction)} of the weight"
        rep = f"; {self.repeat} devices repeat each slice" if self.repeat > 1 else ""
        return f"{self.op}{self.strategy} on {self.devices} devices: {self.kind}; {w}{rep}. " + \
            "; ".join(self.collectives())


def _bad(msg: str, fix: str) -> ShardError:
    return ShardError(msg, fix=fix)


def layout(op: str, strategy: tuple, devices: int, x_shape: tuple | None = None, w_shape: tuple | None = None) -> Layout:
    """Check ``strategy`` for ``op`` (MatMul or Conv2D) on ``devices`` devices and return its layout."""
    if op not in DIMS:
        raise _bad(f"no shard rules for {op!r} here", fix=f"use one of {sorted(DIMS)}")
    if not isinstance(strategy, tuple) or len(strategy) != 2 or not all(isinstance(s, tuple) for s in strategy):
        raise _bad(f"{op}.shard needs one tuple per input (x, weight), got {strategy!r}",
                   fix="write it like ((dp, 1), (mp, 1)): the first tuple cuts x, the second the weight")
    names = DIMS[op]
    if op in SHORTHAND and [len(s) for s in strategy] == [2, 2]:
        names = SHORTHAND[op]
    for s, dims, what in zip(strategy, names, ("x", "weight")):
        if len(s) != len(dims):
            raise _bad(f"{op}: the {what} strategy {s} has {len(s)} numbers, but {what} has {len(dims)} "
                       f"dimensions {dims}", fix=f"give one number per dimension of {what}: {dims}")
        if not all(isinstance(v, (int, np.integer)) and v >= 1 for v in s):
            raise _bad(f"{op}: strategy {s} for {what} must hold positive ints (the number of cuts)",
                       fix="use 1 for a dimension that is not cut")
    cut: dict[str, int] = {}
    for s, dims, what in zip(strategy, names, ("x", "weight")):
        for d, v in zip(dims, s):
            if d in NOT_CUT and v != 1:
                raise _bad(f"{op}: cutting the {NOT_CUT[d]} ({d}) {v} ways needs halo exchange, which this "
                           "simulator does not model", fix=f"leave {d} at 1")
            if d in cut and cut[d] != v:
                raise _bad(f"{op}: the shared dimension {d} is cut {cut[d]} ways in x but {v} ways in the "
                           f"weight; both inputs must cut it the same way", fix=f"use the same number for {d} "
                           f"in both tuples, e.g. (({cut[d]}, ...), (..., {cut[d]}))")
            cut[d] = v
    product = int(np.prod([v for d, v in cut.items() if d not in NOT_CUT]))
    if product > devices or devices % product:
        raise _bad(f"{op}: strategy {strategy} cuts into {product} parts, which does not divide the "
                   f"{devices} devices", fix=f"make the product of the cuts divide {devices}")
    for shape, dims, what in ((x_shape, names[0], "x"), (w_shape, names[1], "weight")):
        for size, d in zip(shape or (), dims):
            if size % cut[d]:
                raise _bad(f"{op}: {what} dimension {d} has {size} elements, which do not split into {cut[d]} "
                           f"equal parts", fix=f"make {d} a multiple of {cut[d]}, or cut it differently")
    role = {r: int(np.prod([v for d, v in cut.items() if ROLE.get(d) == r])) for r in ("data", "column", "row")}
    return Layout(op, strategy, devices, role["data"], role["column"], role["row"], devices // product)


def run_dense(strategy: tuple, x: np.ndarray, w: np.ndarray, b: np.ndarray, dy: np.ndarray,
              cluster: Cluster) -> tuple[np.ndarray, np.ndarray]:
    """Run Dense (y = x w^T + b) with ``strategy`` on ``cluster``: the output and the summed weight gradient.

    The data groups form the rows of a DeviceMesh and the model cut its columns; a strategy that cuts both
    n and k (2-D model parallelism) is legal in MindSpore but not executed here.
    """
    lay = layout("MatMul", strategy, cluster.world_size, x.shape, w.shape)
    if lay.row > 1 and lay.column > 1:
        raise _bad(f"{strategy} cuts both n and k (2-D model parallelism); this simulator runs one of them",
                   fix="cut n (column parallel) or k (row parallel), not both")
    tp = max(lay.row, lay.column)
    mesh = DeviceMesh(sub_cluster(cluster, list(range(lay.data * tp))), lay.data, tp)
    rows = len(x) // lay.data
    ys, dws = [], []
    for d, comm in enumerate(mesh.tp_comms):
        xd, dyd = x[d * rows:(d + 1) * rows], dy[d * rows:(d + 1) * rows]
        if lay.row > 1:
            k = w.shape[1] // tp
            layer = RowParallelLinear(w, b, comm)
            ys.append(layer.forward([xd[:, r * k:(r + 1) * k] for r in range(tp)])[0])
            layer.backward([dyd] * tp)
            dws.append(layer.dw)
        else:
            layer = ColumnParallelLinear(w, b, comm, gather_output=True)
            ys.append(layer.forward([xd] * tp)[0])
            layer.backward([dyd] * tp)
            dws.append(layer.dw)
    summed = [mesh.dp_comms[t].AllReduce([dws[d][t] for d in range(lay.data)]).outputs[0] for t in range(tp)]
    dw = np.concatenate(summed, axis=1 if lay.row > 1 else 0)
    return np.concatenate(ys), dw


def run_conv2d(strategy: tuple, x: np.ndarray, w: np.ndarray, b: np.ndarray, dy: np.ndarray, cluster: Cluster,
               stride: int = 1, pad: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Run Conv2D with ``strategy`` on ``cluster``: the (N, Cout, OH, OW) output and the summed weight gradient.

    A convolution is Dense on im2col patches (rows sample-major, columns channel-major), so its cuts are
    Dense cuts: batch -> patch rows, cout -> output features, cin -> contiguous patch columns.
    """
    lay = layout("Conv2D", strategy, cluster.world_size, x.shape, w.shape)
    cout, _, kh, kw = w.shape
    cols = im2col(x, kh, kw, stride, pad)
    n, oh, ow = x.shape[0], out_size(x.shape[2], kh, stride, pad), out_size(x.shape[3], kw, stride, pad)
    y, dw = run_dense(((lay.data, lay.row), (lay.column, lay.row)), cols, w.reshape(cout, -1), b,
                      dy.transpose(0, 2, 3, 1).reshape(-1, cout), cluster)
    return y.reshape(n, oh, ow, cout).transpose(0, 3, 1, 2), dw.reshape(w.shape)
