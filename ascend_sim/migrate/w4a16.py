"""INT4 weight-only (W4A16) storage of a graph's conv/linear weights: packed codes, fp16 group scales.

Each weight is viewed as a ``[K, O]`` matrix (K = inputs, the reduction axis), K zero-padded to a
multiple of the group size (a multiple of 32: "group size multiple of 32", aclnnWeightQuantBatchMatmulV2),
quantised symmetric int4 per (group, column) and packed two codes per byte (int4b_t order). The bytes
counted are the ones a device would hold: packed codes + fp16 scales + fp16 bias.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.migrate import quant
from ascend_sim.models.lenet import Graph, Node

WEIGHT_OPS = ("conv2d", "conv_cube", "linear")


@dataclass(frozen=True)
class Int4Weight:
    """One weight in W4A16 form; ``shape`` is the original weight's shape."""

    packed: np.ndarray
    scales: np.ndarray
    shape: tuple[int, ...]
    group_size: int

    @property
    def nbytes(self) -> int:
        return int(self.packed.nbytes + self.scales.nbytes)

    def dequantize(self) -> np.ndarray:
        """The fp16 weight the matmul sees (AntiQuant: code * scale), in the original shape."""
        k = int(np.prod(self.shape[1:]))
        w = quant.dequantize_int4_groups(quant.unpack_int4(self.packed), self.scales)
        return np.ascontiguousarray(w[:k].T).reshape(self.shape)


def to_int4(w: np.ndarray, group_size: int = 32, clip: str = "minmax") -> Int4Weight:
    """W4A16 form of a weight ``[O, ...]`` (groups along the flattened inputs K); ``clip``: "minmax" or the
    searched "mse" clip of each group (quant.quantize_int4_groups)."""
    w = np.asarray(w, np.float32)
    o, k = w.shape[0], int(np.prod(w.shape[1:]))
    if group_size <= 0 or group_size % 32:
        raise ValueError(f"W4A16 group size {group_size}: must be a positive multiple of 32; use 32, 64 or 128")
    kp = -(-k // group_size) * group_size
    if o % 2:
        raise ValueError(f"W4A16 packs output channels in pairs (two int4 codes per byte); {o} outputs is odd: "
                         f"pad the layer to {o + 1} outputs")
    m = np.zeros((kp, o), np.float32)
    m[:k] = w.reshape(o, k).T
    codes, scales = quant.quantize_int4_groups(m, group_size, clip)
    return Int4Weight(quant.pack_int4(codes), scales, tuple(w.shape), group_size)


def edge_layers(graph: Graph) -> tuple[str, ...]:
    """The first and the last weight layer (the stem and the head), which W4A16 deployments usually keep
    in fp16: the stem has few inputs per output (K = 9 for a 3x3 on one channel) and the head decides."""
    names = [n.name for n in graph.nodes if n.op in WEIGHT_OPS]
    return tuple(dict.fromkeys(names[:1] + names[-1:]))


def int4_graph(graph: Graph, group_size: int = 32, *, keep: tuple[str, ...] = (),
               clip: str = "minmax") -> tuple[Graph, dict[str, Int4Weight]]:
    """The graph with every conv/linear weight not in ``keep`` replaced by its W4A16 round trip, and the
    int4 weights (``keep``: layers left in fp16, e.g. ``edge_layers(graph)``)."""
    unknown = set(keep) - {n.name for n in graph.nodes if n.op in WEIGHT_OPS}
    if unknown:
        raise ValueError(f"W4A16 keep={sorted(unknown)}: not weight layers of this graph; "
                         f"choose among {[n.name for n in graph.nodes if n.op in WEIGHT_OPS]}")
    packed: dict[str, Int4Weight] = {}
    nodes = []
    for node in graph.nodes:
        if node.op in WEIGHT_OPS and node.name not in keep:
            packed[node.name] = to_int4(node.params["w"], group_size, clip)
            params = dict(node.params, w=packed[node.name].dequantize())
            node = Node(node.name, node.op, node.inputs, params)
        nodes.append(node)
    return Graph(nodes, graph.input), packed


__all__ = ["Int4Weight", "to_int4", "int4_graph", "edge_layers", "WEIGHT_OPS"]
