"""Operator test specs (算子测试用例定义) and case generation, in the spirit of msOpST's case JSON.

One JSON file per operator::

    {
      "op": "softmax",
      "kernel": "ascend_sim.kernels:softmax",                  # module:function, returns (out, LaunchResult)
      "reference": "ascend_sim.models.lenet_reference:softmax_ref",
      "type": ["float16", "float32"],                          # dtypes; every case runs in each
      "input_desc": [{"name": "x", "shape": ["N", "K"],         # ints or dims named in "dims"
                      "data_distribute": "uniform",            # uniform | normal | int_uniform
                      "value_range": [-4, 4]}],                # [low, high], or [mean, std] for normal
      "attr": {"pad": "P"},                                     # keyword arguments (numbers or dim names)
      "kernel_attr": {"block_dim": 1},                          # keywords for the kernel only (optional)
      "dims": {"N": 5, "K": 10},                                # the base case
      "cases": [{"case_name": "wide", "dims": {"K": 84}}],     # more cases: changed dims (optional)
      "edge": {"dim": "N", "tile": "ascend_sim.kernels.softmax:CHUNK"},
      "precision": {"float16": {"rtol": 1e-3, "atol": 1e-3, "max_mismatch_ratio": 0}},   # optional
      "seed": 0
    }

``edge`` generates the edge shapes along one dim: ``one`` (1), ``max_tile`` (exactly one tile) and
``tail`` (a tile plus one). ``tile`` is a number of elements, or ``tile_bytes`` a number of bytes
divided by the dtype's size; either may name a constant (``"module:NAME"``) so the spec follows
the kernel's tiling. Precision defaults to ``ascend_sim.analysis.verify.tolerance_for``.
"""
from __future__ import annotations

import importlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ascend_sim.engine.errors import KernelError

__all__ = ["SpecError", "OpSpec", "Case", "load_spec", "make_spec", "generate_cases", "library_specs", "resolve",
           "kernel_and_reference", "DISTRIBUTIONS", "LIBRARY_SPEC_DIR"]

LIBRARY_SPEC_DIR = Path(__file__).resolve().parent / "opspecs"
DISTRIBUTIONS = ("uniform", "normal", "int_uniform")
_FIELDS = {"op", "kernel", "reference", "type", "input_desc", "attr", "kernel_attr", "dims", "cases", "edge",
           "precision", "seed", "description"}
_REQUIRED = ("op", "kernel", "reference", "type", "input_desc", "dims")
_INPUT_FIELDS = {"name", "shape", "data_distribute", "value_range"}
_PRECISION_FIELDS = {"rtol", "atol", "max_mismatch_ratio"}


class SpecError(KernelError, ValueError):
    """An op-test spec that cannot run: a missing or unknown field, a bad value, an unknown dim."""

    check = "optest"


@dataclass(frozen=True)
class OpSpec:
    """A loaded, validated spec."""

    path: Path
    data: dict[str, Any]

    @property
    def op(self) -> str:
        return self.data["op"]

    @property
    def seed(self) -> int:
        return int(self.data.get("seed", 0))


@dataclass(frozen=True)
class Case:
    """One generated test case: a dtype and the value of every dim."""

    spec: OpSpec
    case_name: str
    dtype: str
    dims: dict[str, int] = field(hash=False)

    @property
    def name(self) -> str:
        return f"{self.spec.op}-{self.case_name}-{self.dtype}"

    def shapes(self) -> dict[str, tuple[int, ...]]:
        return {d["name"]: tuple(_value(s, self.dims) for s in d["shape"]) for d in self.spec.data["input_desc"]}

    def attrs(self, kernel: bool = False) -> dict[str, Any]:
        """Keyword arguments for the reference (and the kernel); ``kernel=True`` adds ``kernel_attr``."""
        extra = self.spec.data.get("kernel_attr", {}) if kernel else {}
        return {k: _value(v, self.dims) for k, v in {**self.spec.data.get("attr", {}), **extra}.items()}

    def inputs(self) -> list[np.ndarray]:
        """The input arrays (float64), drawn from the spec's distributions; deterministic per case."""
        rng = np.random.default_rng([self.spec.seed, zlib.crc32(self.name.encode())])
        out = []
        for d, shape in zip(self.spec.data["input_desc"], self.shapes().values()):
            lo, hi = d.get("value_range", [-1, 1])
            kind = d.get("data_distribute", "uniform")
            if kind == "uniform":
                out.append(rng.uniform(lo, hi, shape))
            elif kind == "normal":
                out.append(rng.normal(lo, hi, shape))
            else:
                out.append(rng.integers(int(lo), int(hi) + 1, shape).astype(np.float64))
        return out

    def __str__(self) -> str:
        return self.name


def _value(v: Any, dims: dict[str, int]) -> Any:
    return dims[v] if isinstance(v, str) and v in dims else v


def resolve(ref: str, what: str, path: Path) -> Any:
    """``"package.module:NAME"`` -> the object."""
    mod, _, name = str(ref).partition(":")
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError, ValueError) as e:
        raise SpecError(f"{path.name}: {what} {ref!r} does not name an object ({type(e).__name__}: {e})",
                        fix='write "package.module:name", e.g. "ascend_sim.kernels:relu"') from None


def _fail(path: Path, message: str, fix: str) -> None:
    raise SpecError(f"{path.name}: {message}", fix=fix)


def _check(path: Path, data: Any) -> None:
    """Every rule a spec must follow, each with the field, the value and the fix."""
    if not isinstance(data, dict):
        _fail(path, f"a spec is one JSON object, got {type(data).__name__}", "wrap the fields in { ... }")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        _fail(path, f"unknown field(s) {unknown}", f"use only {sorted(_FIELDS)} (a typo?)")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        _fail(path, f"missing field(s) {missing}", f"add them; required: {list(_REQUIRED)}")
    for key in ("attr", "kernel_attr"):
        if not isinstance(data.get(key, {}), dict):
            _fail(path, f'"{key}" must be an object of keyword arguments, got {data[key]!r}',
                  f'e.g. "{key}": {{"block_dim": 1}}')
    dims = data["dims"]
    if not isinstance(dims, dict) or not all(isinstance(v, int) and v >= 1 for v in dims.values()):
        _fail(path, f'"dims" must map names to integers >= 1, got {dims!r}', 'e.g. "dims": {"N": 4, "K": 10}')
    for t in data["type"]:
        if t not in ("float16", "float32"):
            _fail(path, f'"type" {t!r} is not a dtype the library kernels run', 'use "float16" and/or "float32"')
    for d in data["input_desc"]:
        bad = sorted(set(d) - _INPUT_FIELDS)
        if bad or "name" not in d or "shape" not in d:
            _fail(path, f"input_desc entry {d!r}: needs name and shape, unknown {bad}",
                  f"fields: {sorted(_INPUT_FIELDS)}")
        for s in d["shape"]:
            if not (isinstance(s, int) and s >= 1) and s not in dims:
                _fail(path, f"input {d['name']!r}: shape entry {s!r} is neither an integer >= 1 nor a dim in "
                            f"{sorted(dims)}", f'add "{s}" to "dims" or write a number')
        kind = d.get("data_distribute", "uniform")
        if kind not in DISTRIBUTIONS:
            _fail(path, f"input {d['name']!r}: data_distribute {kind!r} is unknown", f"use one of {DISTRIBUTIONS}")
        vr = d.get("value_range", [-1, 1])
        if not (isinstance(vr, list) and len(vr) == 2 and all(isinstance(v, (int, float)) for v in vr)) or \
                (kind != "normal" and vr[0] > vr[1]):
            _fail(path, f"input {d['name']!r}: value_range {vr!r} is not [low, high] with low <= high",
                  'e.g. "value_range": [-2, 2] ([mean, std] for normal)')
    for case in data.get("cases", []):
        unknown_dims = sorted(set(case.get("dims", {})) - set(dims))
        if "case_name" not in case or unknown_dims:
            _fail(path, f"case {case!r}: needs a case_name and only known dims (unknown {unknown_dims})",
                  f'e.g. {{"case_name": "wide", "dims": {{"{next(iter(dims))}": 8}}}}')
    edge = data.get("edge")
    if edge is not None:
        if edge.get("dim") not in dims or ("tile" in edge) == ("tile_bytes" in edge):
            _fail(path, f'"edge" {edge!r} needs a "dim" from {sorted(dims)} and one of "tile", "tile_bytes"',
                  'e.g. "edge": {"dim": "N", "tile": 16}')
    for t, p in data.get("precision", {}).items():
        if t not in data["type"] or not isinstance(p, dict) or set(p) - _PRECISION_FIELDS:
            _fail(path, f'"precision" for {t!r}: {p!r}', f"keys: the spec's types; values: {sorted(_PRECISION_FIELDS)}")


def load_spec(path) -> OpSpec:
    """Read and validate one spec file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(f"spec file {path} does not exist", fix="pass the path of a .json op-test spec") from None
    except json.JSONDecodeError as e:
        raise SpecError(f"{path.name}: not valid JSON: {e}", fix="check the commas and quotes at that line") from None
    return make_spec(data, str(path))


def make_spec(data: dict, name: str = "spec.json") -> OpSpec:
    """A spec from a dict (a notebook cell), validated like a file; ``"kernel": "__main__:my_relu"`` names
    a function defined in the notebook."""
    path = Path(name)
    _check(path, data)
    for key in ("kernel", "reference"):
        if not callable(resolve(data[key], key, path)):
            _fail(path, f"{key} {data[key]!r} is not callable", "point it at a function")
    return OpSpec(path, data)


def _tile(spec: OpSpec, dtype: str) -> int:
    edge = spec.data["edge"]
    key = "tile" if "tile" in edge else "tile_bytes"
    v = edge[key]
    if isinstance(v, dict):                  # per dtype, e.g. the cube's and the vector unit's chunk
        if dtype not in v:
            _fail(spec.path, f'"edge" {key} gives no value for {dtype}', f"add \"{dtype}\": ... to it")
        v = v[dtype]
    v = resolve(v, f"edge {key}", spec.path) if isinstance(v, str) else v
    return int(v) if key == "tile" else int(v) // np.dtype(dtype).itemsize


def generate_cases(spec: OpSpec) -> list[Case]:
    """The base case, the spec's extra cases and the edge shapes, each in every dtype of the spec."""
    base = dict(spec.data["dims"])
    out: list[Case] = []
    for dtype in spec.data["type"]:
        out.append(Case(spec, "base", dtype, base))
        out += [Case(spec, c["case_name"], dtype, {**base, **c.get("dims", {})}) for c in spec.data.get("cases", [])]
        if "edge" in spec.data:
            dim, tile = spec.data["edge"]["dim"], _tile(spec, dtype)
            for name, n in (("one", 1), ("max_tile", tile), ("tail", tile + 1)):
                out.append(Case(spec, f"{name}_{dim}{n}", dtype, {**base, dim: n}))
    return out


def library_specs() -> list[Path]:
    """The specs of the library's own operators (``ascend_sim/tools/opspecs``)."""
    return sorted(LIBRARY_SPEC_DIR.glob("*.json"))


def kernel_and_reference(spec: OpSpec) -> tuple[Callable, Callable]:
    """The spec's kernel wrapper and reference function."""
    return resolve(spec.data["kernel"], "kernel", spec.path), resolve(spec.data["reference"], "reference", spec.path)
