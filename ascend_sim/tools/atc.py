"""ATC-style model conversion (模型转换) of the course's model graphs, with ATC's own error codes.

Real ATC turns an ONNX/TensorFlow/Caffe model into an offline model (.om) for one ``--soc_version``,
fixing the input shapes (``--input_shape``) and format (``--input_format``). Its most common failures
are reproduced here, with ATC's message texts [OFF, the GE repository https://gitcode.com/cann/ge
``base/common/error_registry/error_registry.cc``; the CANN error-code reference
https://www.hiascend.com/document/detail/zh/canncommercial/900/maintenref/troubleshooting/atlaserrorcode_15_0002.html]:

* ``E10001`` "Value %s for parameter %s is invalid. Reason: %s": an unknown soc version or input
  format, a name that is not a model input, a wrong rank, a shape that does not fit the graph;
* ``E10002``: ``--input_shape`` not formatted as ``input_name1:n1,c1,h1,w1;input_name2:...``
  (the reference elides the middle of this text; ours states the format and what broke it);
* ``E11005`` "shape is not defined by using --input_shape for input %s": a model input with a
  dynamic dimension that ``--input_shape`` leaves undefined.

The course's graphs are ONNX-style (NCHW activations), so ``--input_format`` takes NCHW, NCDHW or ND,
as ATC's documentation lists for ONNX; NHWC (the TensorFlow default) is refused before anything
runs, and so is an NCHW shape written in NHWC order. Shape inference walks every node, so a shape
that breaks the graph (wrong channels, wrong feature count) fails at conversion, naming the node.
:meth:`OfflineModel.execute` checks the data's shape against the converted input before running.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ascend_sim.engine.errors import KernelError
from ascend_sim.hw.chips import CHIPS, get_chip

__all__ = ["AtcError", "InputMismatchError", "OfflineModel", "atc", "parse_input_shape", "infer_shapes", "MODELS",
           "FORMATS", "ONNX_FORMATS", "soc_chip"]

FORMATS = ("NCHW", "NHWC", "ND", "NCDHW", "NDHWC")       # ATC --input_format values
ONNX_FORMATS = ("NCHW", "NCDHW", "ND")                    # those an ONNX model accepts
_SHAPE_FORMAT = "input_name1:n1,c1,h1,w1;input_name2:n2,c2,h2,w2"


class AtcError(KernelError, ValueError):
    """A conversion error with ATC's error code (``code``) and message text."""

    check = "atc"

    def __init__(self, code: str, message: str, fix: str):
        self.code = code
        super().__init__(f"{code}: {message}", fix=fix)


class InputMismatchError(KernelError, ValueError):
    """Data fed to a converted model whose shape or layout differs from the converted input."""

    check = "atc"


def _e10001(value: Any, param: str, reason: str, fix: str) -> AtcError:
    return AtcError("E10001", f"Value {value} for parameter {param} is invalid. Reason: {reason}", fix)


# ----------------------------------------------------------------------------- the course's models
@dataclass(frozen=True)
class ModelInput:
    """A model input: name and shape (-1 = dynamic), layout NCHW."""

    name: str
    shape: tuple[int, ...]


def _lenet():
    from ascend_sim.models.lenet import lenet_graph
    from ascend_sim.models.lenet_reference import load_lenet_weights
    return lenet_graph(load_lenet_weights()), ModelInput("input", (-1, 1, 28, 28))


#: Model name -> () -> (graph, its input as exported: dynamic batch).
MODELS: dict[str, Callable[[], tuple[Any, ModelInput]]] = {"lenet": _lenet}


# ----------------------------------------------------------------------------- parameters
def soc_chip(soc_version: str) -> str:
    """The chip profile name of an ATC ``--soc_version`` (``Ascend910B`` or a variant such as ``Ascend910B2``)."""
    for name in sorted(CHIPS, key=len, reverse=True):
        if soc_version == name or re.fullmatch(re.escape(name) + r"\d", soc_version or ""):
            return name
    raise _e10001(soc_version, "--soc_version", f"the simulator models {sorted(CHIPS)} (and variants such as "
                  "Ascend910B2); this is none of them",
                  "pass --soc_version=Ascend910B (the chip `npu-smi info` shows, here a simulated one)")


def parse_input_shape(text: str) -> dict[str, tuple[int, ...]]:
    """``"input:1,1,28,28;mask:1,8"`` -> ``{"input": (1, 1, 28, 28), "mask": (1, 8)}``; -1 = dynamic."""
    shapes: dict[str, tuple[int, ...]] = {}
    fix = f'write --input_shape="{_SHAPE_FORMAT}", e.g. --input_shape="input:1,1,28,28"'

    def bad(why: str) -> AtcError:
        return AtcError("E10002", f"Value {text} for parameter --input_shape is invalid. Reason: {why}. "
                                  f"The value must be formatted as \"{_SHAPE_FORMAT}\".", fix)

    if not text or not text.strip():
        raise bad("it is empty")
    for part in text.split(";"):
        name, sep, dims = part.rpartition(":")
        if not sep or not name.strip():
            raise bad(f"{part!r} has no input name before a colon")
        name = name.strip()
        if name in shapes:
            raise bad(f"input {name!r} is given twice")
        items = [d.strip() for d in dims.split(",")] if dims.strip() else []
        for d in items:
            if not re.fullmatch(r"-1|\d+", d):
                raise bad(f"dimension {d!r} of input {name!r} is not a non-negative integer or -1")
        shapes[name] = tuple(int(d) for d in items)
    return shapes


# ----------------------------------------------------------------------------- shape inference
def _infer_node(node, s: tuple[int, ...]) -> tuple[int, ...]:
    """Output shape of one node for input shape ``s``; raises ValueError(reason) when they do not fit."""
    p = node.params
    if node.op == "conv2d":
        o, c, kh, kw = np.shape(p["w"])
        pad = int(p.get("pad", 0))
        if len(s) != 4 or s[1] != c:
            raise ValueError(f"node {node.name} (conv2d) takes NCHW input with C={c}; it gets {list(s)}")
        oh, ow = s[2] + 2 * pad - kh + 1, s[3] + 2 * pad - kw + 1
        if oh < 1 or ow < 1:
            raise ValueError(f"node {node.name} (conv2d): a {kh}x{kw} kernel does not fit {s[2]}x{s[3]} with pad {pad}")
        return (s[0], o, oh, ow)
    if node.op == "maxpool2d":
        k, st = int(p.get("k", 2)), int(p.get("s", 2))
        if len(s) != 4 or s[2] < k or s[3] < k:
            raise ValueError(f"node {node.name} (maxpool2d {k}x{k}) needs NCHW input of at least {k}x{k}; "
                             f"it gets {list(s)}")
        return (s[0], s[1], (s[2] - k) // st + 1, (s[3] - k) // st + 1)
    if node.op == "flatten":
        return (s[0], int(np.prod(s[1:])))
    if node.op == "linear":
        o, k = np.shape(p["w"])
        if len(s) != 2 or s[1] != k:
            raise ValueError(f"node {node.name} (linear) takes {k} input features; it gets {list(s)}")
        return (s[0], o)
    if node.op in ("relu", "softmax"):
        return s
    raise ValueError(f"node {node.name}: no shape rule for operator {node.op!r}")


def infer_shapes(graph, input_shape: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """Every node's output shape for the graph input's ``input_shape`` (ValueError names the first misfit)."""
    shapes = {graph.input: tuple(input_shape)}
    for node in graph.nodes:
        shapes[node.name] = _infer_node(node, shapes[node.inputs[0]])
    return shapes


# ----------------------------------------------------------------------------- conversion
@dataclass
class OfflineModel:
    """The result of a conversion: the graph fixed to one input shape, format and soc version."""

    model: str
    graph: Any
    soc_version: str
    chip: str
    input_name: str
    input_format: str
    input_shape: tuple[int, ...]
    shapes: dict[str, tuple[int, ...]] = field(repr=False)

    def summary(self) -> dict:
        return {"model": self.model, "soc_version": self.soc_version, "chip": self.chip,
                "input": {"name": self.input_name, "format": self.input_format, "shape": list(self.input_shape)},
                "nodes": [{"name": n.name, "op": n.op, "output_shape": list(self.shapes[n.name])}
                          for n in self.graph.nodes]}

    def save(self, path) -> Path:
        """Write the model's description (``<output>.om.json``: input, soc, every node's shape)."""
        path = Path(path)
        path.write_text(json.dumps(self.summary(), indent=1), encoding="utf-8")
        return path

    def check_input(self, x: np.ndarray) -> None:
        """Raise InputMismatchError when ``x`` does not match the converted input (an NHWC array named as such)."""
        want, got = self.input_shape, tuple(np.shape(x))
        if len(got) == len(want) and all(w in (-1, g) for w, g in zip(want, got)):
            return
        nhwc = len(got) == 4 and len(want) == 4 and all(w in (-1, g) for w, g in zip(
            (want[0], want[2], want[3], want[1]), got))
        hint = (f"it is the NHWC layout of the NCHW input the model was converted for"
                if nhwc else "it differs from the converted shape")
        raise InputMismatchError(
            f"input {self.input_name!r} of the {self.model} model converted with --input_format={self.input_format} "
            f"--input_shape={self.input_name}:{','.join(map(str, want))} got data of shape {list(got)}: {hint}",
            fix="transpose the data to NCHW before running: x = x.transpose(0, 3, 1, 2)" if nhwc else
                "feed data of the converted shape, or convert again with the data's shape")

    def execute(self, x: np.ndarray, dtype: str = "float16") -> np.ndarray:
        """Check ``x`` against the converted input, then run the graph on the simulated chip."""
        self.check_input(x)
        from ascend_sim.models.lenet import LeNetRuntime
        rt = LeNetRuntime(dtype=dtype, chip=self.chip, keep_results=False)
        rt.graph = self.graph
        rt.reset_stats()
        return rt.forward(np.asarray(x))


def atc(model: str = "lenet", *, input_format: str = "NCHW", input_shape: str | None = None,
        soc_version: str) -> OfflineModel:
    """Convert a course model like ``atc --model=... --input_format=... --input_shape=... --soc_version=...``."""
    if model not in MODELS:
        raise _e10001(model, "--model", f"the course's model graphs are {sorted(MODELS)}",
                      f"pass --model={next(iter(MODELS))}")
    chip = soc_chip(soc_version)
    if input_format not in FORMATS:
        raise _e10001(input_format, "--input_format", f"the formats are {list(FORMATS)}",
                      "pass --input_format=NCHW")
    graph, inp = MODELS[model]()
    if input_format not in ONNX_FORMATS:
        raise _e10001(input_format, "--input_format",
                      f"the {model} graph is an ONNX-style model with NCHW input; ONNX models take "
                      f"{list(ONNX_FORMATS)}, while {input_format} is for TensorFlow models",
                      f"convert with --input_format=NCHW "
                      f"--input_shape={inp.name}:1,{','.join(map(str, inp.shape[1:]))} "
                      "and transpose NHWC data before running: x.transpose(0, 3, 1, 2)")
    given = parse_input_shape(input_shape) if input_shape is not None else {}
    for name in given:
        if name != inp.name:
            raise _e10001(input_shape, "--input_shape", f"the model has no input named {name!r}; its inputs "
                          f"are [{inp.name!r}]", f"write --input_shape={inp.name}:...")
    if inp.name not in given:
        if -1 in inp.shape:
            raise AtcError("E11005", f"shape is not defined by using --input_shape for input {inp.name}",
                           f"the input is {list(inp.shape)} with a dynamic batch: add --input_shape="
                           f"{inp.name}:1,{','.join(map(str, inp.shape[1:]))} (your batch size first)")
        given[inp.name] = inp.shape
    shape = given[inp.name]
    nchw = "1," + ",".join(map(str, inp.shape[1:]))
    if len(shape) != len(inp.shape):
        raise _e10001(input_shape, "--input_shape", f"input {inp.name} is {len(inp.shape)}-D ({input_format}), "
                      f"the value gives {len(shape)} dimensions", f"write --input_shape={inp.name}:{nchw}")
    if -1 in shape[1:]:
        raise _e10001(input_shape, "--input_shape", "only the batch (first) dimension may be -1 (dynamic) here",
                      f"write --input_shape={inp.name}:{nchw}")
    if len(shape) == 4 and shape[1:] != inp.shape[1:] and (shape[3], shape[1], shape[2]) == inp.shape[1:]:
        raise _e10001(input_shape, "--input_shape", f"the dims {list(shape)} are in NHWC order (C={shape[3]} last) "
                      f"but --input_format={input_format} reads them as N,C,H,W: C={shape[1]}, H={shape[2]}, "
                      f"W={shape[3]}; the model wants C={inp.shape[1]}", f"write them in NCHW order: "
                      f"--input_shape={inp.name}:{shape[0]},{shape[3]},{shape[1]},{shape[2]}")
    try:
        shapes = infer_shapes(graph, shape)
    except ValueError as e:
        raise _e10001(input_shape, "--input_shape", f"shape inference failed: {e}",
                      f"the {model} model takes {inp.name}:{nchw} (NCHW)") from None
    return OfflineModel(model, graph, soc_version, chip, inp.name, input_format, shape, shapes)
