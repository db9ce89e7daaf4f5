"""PTQ of a model graph: calibrate the activations entering every conv/linear node, quantise the weights.

The calibration forward pass is the float32 numpy reference of each operator (what AMCT's calibration
run does on the host): the inputs of every ``conv2d`` / ``linear`` node are collected over the
calibration images, then ``minmax`` or ``ifmr`` (quant.py) gives each one an asymmetric int8 grid and
``arq`` gives the weights one symmetric scale per output channel.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ascend_sim.migrate import quant
from ascend_sim.migrate.resnet import conv_ref
from ascend_sim.models import lenet_reference as ref
from ascend_sim.models.lenet import Graph, Node

QUANTISED_OPS = ("conv2d", "conv_cube", "linear")
ACT_METHODS = {"minmax": quant.minmax, "ifmr": quant.ifmr, "hfmg": quant.hfmg}

REFERENCE_OPS = {
    "conv2d": lambda x, w, b, pad=0: ref.conv2d_ref(x, w, b, pad),
    "relu": lambda x: ref.relu_ref(x),
    "maxpool2d": lambda x, k=2, s=2: ref.maxpool2d_ref(x, k, s),
    "flatten": lambda x: x.reshape(len(x), -1),
    "linear": lambda x, w, b: ref.linear_ref(x, w, b),
    "softmax": lambda x: ref.softmax_ref(x),
    "conv_cube": lambda x, w, b, stride=1: conv_ref(x, w, b, stride),
    "add_relu": lambda x, y: np.maximum(x + y, 0),
}


@dataclass(frozen=True)
class QuantLayer:
    """One quantised node: int8 weight codes ``[O, K]``, per-channel weight scales, activation grid, bias."""

    wq: np.ndarray
    w_scale: np.ndarray
    act: quant.QuantParams
    bias: np.ndarray


def reference_forward(graph: Graph, x: np.ndarray, record: Mapping[str, list] | None = None) -> np.ndarray:
    """The graph in float32 numpy; ``record[node]`` collects the input of each listed node."""
    values = {graph.input: np.asarray(x, np.float32)}
    for node in graph.nodes:
        args = [values[i] for i in node.inputs]
        if record is not None and node.name in record:
            record[node.name].append(args[0])
        values[node.name] = REFERENCE_OPS[node.op](*args, **node.params)
    return values[graph.output]


def calibrate(graph: Graph, images: np.ndarray, method: str = "ifmr", batch: int = 64) -> dict[str, QuantLayer]:
    """Int8 parameters of every conv2d/linear node from ``images`` (normalized ``[N, 1, 28, 28]``)."""
    if method not in ACT_METHODS:
        raise ValueError(f"activation calibration {method!r}: choose one of {sorted(ACT_METHODS)}")
    if len(images) == 0:
        raise ValueError("calibration needs at least one image (AMCT uses a few hundred)")
    targets = [n for n in graph.nodes if n.op in QUANTISED_OPS]
    record: dict[str, list] = {n.name: [] for n in targets}
    for i in range(0, len(images), batch):
        reference_forward(graph, images[i:i + batch], record)
    return {n.name: quantise_node(n, ACT_METHODS[method](record[n.name])) for n in targets}


def quantise_node(node: Node, act: quant.QuantParams) -> QuantLayer:
    """ARQ per-channel int8 codes of the node's weights, flattened to ``[O, K]``."""
    w = np.asarray(node.params["w"], np.float32)
    w2 = w.reshape(w.shape[0], -1)
    wp = quant.arq(w2, bits=8, channel_wise=True, axis=0)
    return QuantLayer(quant.quantize(w2, wp), np.asarray(wp.scale, np.float32), act,
                      np.asarray(node.params["b"], np.float32))


__all__ = ["QuantLayer", "QUANTISED_OPS", "ACT_METHODS", "reference_forward", "calibrate", "quantise_node"]
