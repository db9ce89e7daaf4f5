"""One runtime interface for cloud and edge (端云协同): load a model graph, choose a device profile, run.

In the spirit of CANN's ACL flow (load model -> choose device -> execute), the same graph runs as

==============  ===========  =========================================================================
profile         chip         what runs
==============  ===========  =========================================================================
910B-fp32       Ascend910B   float32 kernels (vector unit)
910B-fp16       Ascend910B   float16 kernels (cube for conv/linear where the kernels use it)
910B-w4a16      Ascend910B   INT4 weight-only: packed int4 + fp16 group scales stored; the fp16 kernels
                             run on the dequantised weights (the AntiQuant step is done on the host;
                             kernels/m4/antiquant.py is the same step on the vector unit, bit-equal)
310B-fp16       Ascend310B   float16 kernels on the edge chip (the baseline for int8)
310B-int8       Ascend310B   PTQ int8: conv/linear as int8 cube matmuls (int32 accumulation) with a
                             vector dequantisation (ReLU fused), the other operators in float16
==============  ===========  =========================================================================

Models: ``lenet5``, ``resnet`` and ``vit`` (the tiny MNIST vision transformer, migrate/vit.py: 910B-fp16
only, since its cube matmuls and flash attention take half and the flash attention is a MIX kernel).

Example::

    rt = Runtime(load_model("lenet5"), "310B-int8", calibration=train_images[:300])
    report = rt.evaluate(images, labels)     # accuracy, simulated latency, weight memory
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.m4.residual import add_relu
from ascend_sim.kernels.opt.conv_cube import conv_cube
from ascend_sim.migrate.int8_ops import int8_conv2d, int8_linear
from ascend_sim.migrate.ptq import QuantLayer, calibrate
from ascend_sim.migrate.vit import VIT_OPS, load_vit_weights, vit_graph
from ascend_sim.migrate.w4a16 import Int4Weight, int4_graph
from ascend_sim.models.datasets import normalize
from ascend_sim.models.lenet import DEFAULT_OPS, Graph, Node, OpTime, TimeTable, lenet_graph


@dataclass(frozen=True)
class DeviceProfile:
    """A chip and the precision the model runs in on it."""

    name: str
    chip: str
    precision: str          # "float32", "float16", "int8" or "w4a16"


PROFILES: dict[str, DeviceProfile] = {p.name: p for p in (
    DeviceProfile("910B-fp32", "Ascend910B", "float32"),
    DeviceProfile("910B-fp16", "Ascend910B", "float16"),
    DeviceProfile("910B-w4a16", "Ascend910B", "w4a16"),
    DeviceProfile("310B-fp16", "Ascend310B", "float16"),
    DeviceProfile("310B-int8", "Ascend310B", "int8"),
)}


@dataclass
class Model:
    """A loaded model: its graph (weights inside the nodes)."""

    name: str
    graph: Graph
    profiles: tuple[str, ...] | None = None         # the device profiles it runs on (None: every one)
    why: str = ""                                   # the reason for that restriction, for the error


MODELS = ("lenet5", "resnet", "vit")
OPS = {**DEFAULT_OPS, "conv_cube": conv_cube, "add_relu": add_relu, **VIT_OPS}


def load_model(name: str = "lenet5", weights: Mapping[str, np.ndarray] | None = None) -> Model:
    """The named model graph with ``weights`` (default: the bundled trained weights)."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; available: {list(MODELS)}")
    if name == "resnet":
        from ascend_sim.migrate.resnet import load_resnet_weights, resnet_graph
        return Model(name, resnet_graph(load_resnet_weights() if weights is None else weights))
    if name == "vit":
        return Model(name, vit_graph(load_vit_weights() if weights is None else weights), ("910B-fp16",),
                     "its cube matmuls and flash attention take half, and the flash attention is a MIX kernel (one "
                     "AIC and two AIVs per group) that needs a chip with separate cube and vector cores")
    if weights is None:
        from ascend_sim.models.lenet_reference import load_lenet_weights
        weights = load_lenet_weights()
    return Model(name, lenet_graph(weights))


def get_profile(profile: DeviceProfile | str) -> DeviceProfile:
    if isinstance(profile, DeviceProfile):
        return profile
    if profile not in PROFILES:
        raise ValueError(f"unknown device profile {profile!r}; choose one of {sorted(PROFILES)}")
    return PROFILES[profile]


@dataclass
class RunReport:
    """Accuracy, simulated time per operator and per image, and the weight memory of one evaluation."""

    profile: str
    accuracy: float
    correct: int
    total: int
    table: TimeTable
    weight_bytes: int
    wall_seconds: float
    predictions: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, np.int64))

    @property
    def us_per_image(self) -> float:
        return self.table.total_us / max(self.total, 1)

    def __str__(self) -> str:
        return (f"{self.profile}: accuracy {self.accuracy:.2%} ({self.correct}/{self.total}), "
                f"{self.us_per_image:.3f} us/image simulated, weights {self.weight_bytes:,} bytes\n{self.table}")


class Runtime:
    """Runs a :class:`Model` on a device profile through the simulated kernels."""

    def __init__(self, model: Model, profile: DeviceProfile | str, *, calibration: np.ndarray | None = None,
                 act_method: str = "ifmr", group_size: int = 32, quant: Mapping[str, QuantLayer] | None = None,
                 int4_keep: tuple[str, ...] = (), int4_clip: str = "minmax"):
        """``calibration``: images (uint8 ``[N, 28, 28]`` or normalized) for the int8 profile's PTQ;
        ``act_method``: ``"minmax"`` or ``"ifmr"``; ``group_size``: the W4A16 group (a multiple of 32);
        ``quant``: int8 parameters made elsewhere (a learner's calibration, lab 04) instead of ``calibrate``;
        ``int4_keep``: layers W4A16 leaves in fp16; ``int4_clip``: ``"minmax"`` or ``"mse"`` group scales."""
        self.model, self.profile = model, get_profile(profile)
        if model.profiles is not None and self.profile.name not in model.profiles:
            raise ValueError(f"model {model.name!r} runs on {list(model.profiles)}, not on profile "
                             f"{self.profile.name!r}: {model.why}")
        self.graph = model.graph
        self.int8: dict[str, QuantLayer] = {}
        self.int4: dict[str, Int4Weight] = {}
        if self.profile.precision == "int8" and quant is not None:
            self.int8 = dict(quant)
        elif self.profile.precision == "int8":
            if calibration is None:
                raise ValueError("the int8 profile needs calibration images (a few hundred training images): "
                                 "Runtime(model, '310B-int8', calibration=images)")
            self.int8 = calibrate(self.graph, _as_input(calibration), act_method)
        elif self.profile.precision == "w4a16":
            self.graph, self.int4 = int4_graph(model.graph, group_size, keep=int4_keep, clip=int4_clip)
        self.kernel_dtype = "float32" if self.profile.precision == "float32" else "float16"
        self.reset_stats()

    def reset_stats(self) -> None:
        self.stats = {n.name: OpTime(n.name, n.op) for n in self.graph.nodes}
        self.images = 0

    def time_rows(self) -> list[OpTime]:
        """The per-node simulated times accumulated since the last reset (nodes that launched something)."""
        return [self.stats[n.name] for n in self.graph.nodes if self.stats[n.name].launches]

    # --- memory ----------------------------------------------------------------
    def weight_bytes(self) -> int:
        """Bytes of parameters the device holds in this profile (codes, scales and biases)."""
        total = 0
        for node in self.graph.nodes:
            if "w" not in node.params:
                continue
            w, b = node.params["w"], node.params["b"]
            if node.name in self.int8:
                q = self.int8[node.name]
                total += q.wq.nbytes + q.w_scale.nbytes + 4 * b.size      # int8 codes, fp32 scales, fp32 bias
            elif node.name in self.int4:
                total += self.int4[node.name].nbytes + 2 * b.size         # packed int4 + fp16 scales, fp16 bias
            else:
                total += (w.size + b.size) * np.dtype(self.kernel_dtype).itemsize
        return total

    # --- execution -------------------------------------------------------------
    def forward(self, x: np.ndarray) -> np.ndarray:
        """Class probabilities for normalized input ``x [N, 1, 28, 28]``."""
        values: dict[str, np.ndarray] = {self.graph.input: np.asarray(x, self.kernel_dtype)}
        fused: set[str] = set()
        nodes = self.graph.nodes
        for i, node in enumerate(nodes):
            args = [values[n] for n in node.inputs]
            if node.name in fused:
                values[node.name] = args[0]
                continue
            nxt = nodes[i + 1] if i + 1 < len(nodes) else None
            relu = nxt is not None and nxt.op == "relu" and nxt.inputs == (node.name,)
            out, results = self._call(node, args, relu and node.name in self.int8)
            if relu and node.name in self.int8:
                fused.add(nxt.name)
            values[node.name] = out
            self.stats[node.name].add(results)
        self.images += len(x)
        return values[self.graph.output]

    def _call(self, node: Node, args: list[np.ndarray], relu: bool) -> tuple[np.ndarray, list[Any]]:
        chip = self.profile.chip
        if node.name in self.int8:
            q = self.int8[node.name]
            if node.op in ("conv2d", "conv_cube"):
                kh, kw = node.params["w"].shape[2:]
                pad = node.params.get("pad", kh // 2 if node.op == "conv_cube" else 0)
                return int8_conv2d(args[0], q, kh, kw, pad, stride=node.params.get("stride", 1), relu=relu,
                                   chip=chip)
            return int8_linear(args[0], q, relu=relu, chip=chip)
        out = OPS[node.op](*args, **node.params, dtype=self.kernel_dtype, chip=chip) \
            if node.op != "flatten" else OPS[node.op](*args)
        y, res = out                     # res: None, one LaunchResult or a list of them (a multi-launch op)
        return np.asarray(y, self.kernel_dtype), ([] if res is None else list(res) if isinstance(res, list) else [res])

    def run(self, images: np.ndarray, batch: int = 1000) -> np.ndarray:
        """Probabilities ``[N, classes]`` for images (uint8 ``[N, 28, 28]`` or normalized)."""
        x = _as_input(images)
        return np.concatenate([self.forward(x[i:i + batch]) for i in range(0, len(x), batch)])

    def evaluate(self, images: np.ndarray, labels: np.ndarray, batch: int = 1000) -> RunReport:
        """Accuracy, per-operator simulated time and weight memory over labelled images."""
        labels = np.asarray(labels)
        if len(labels) != len(images):
            raise ValueError(f"{len(images)} images but {len(labels)} labels")
        self.reset_stats()
        t0 = time.perf_counter()
        pred = self.run(images, batch).argmax(axis=1)
        correct = int((pred == labels).sum())
        table = TimeTable(self.time_rows(), self.images, get_chip(self.profile.chip).name)
        return RunReport(self.profile.name, correct / max(len(labels), 1), correct, len(labels), table,
                         self.weight_bytes(), time.perf_counter() - t0, pred)


def _as_input(images: np.ndarray) -> np.ndarray:
    images = np.asarray(images)
    return normalize(images) if images.dtype == np.uint8 else images.astype(np.float32)


__all__ = ["DeviceProfile", "PROFILES", "Model", "load_model", "get_profile", "RunReport", "Runtime"]
