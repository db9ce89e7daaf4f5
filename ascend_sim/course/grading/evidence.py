"""Evidence: what a check run in the learner's kernel hands to the grader, as plain data.

A check runs twice. In the learner's kernel (JupyterLab, or the grader's sandbox) it calls the learner's
code for real, and a ``Recorder`` writes down, in order, what happened: which answers existed, what each
call to learner code returned, and per kernel launch the output bytes, which instruction last wrote each
byte (``written_by``), and the GM transfer records of the trace. In the grader's process the same check
function runs again against a ``Replay`` of that transcript: learner code is never called; each launch is
served from the transcript after it is validated (inputs, kernel origin, provenance, trace consistency);
expected values, comparisons and cycle budgets are computed there. Nothing in the transcript is trusted
except as data that passed those validations.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import inspect
import os
import zlib
from typing import Any, Callable

import numpy as np

from ascend_sim.hw.dtypes import bfloat16

__all__ = ["EVIDENCE_SCHEMA", "Rejected", "encode_array", "decode_array", "digest", "describe", "is_package_file",
           "launch_record", "rle", "unrle", "encode_value", "decode_value", "MAX_ARRAY_BYTES", "WRITER_OPS",
           "Record", "record_fields"]

EVIDENCE_SCHEMA = 1
MAX_ARRAY_BYTES = 64 * 2**20            # one decoded array; a bigger one is rejected, not allocated
WRITER_OPS = ("DataCopy", "DataCopyPad", "Fixpipe")        # "(atomic add)" variants included
_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "bool", "bfloat16"}
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # .../ascend_sim
_LIB_MARKERS = ("site-packages", "dist-packages")


class Rejected(Exception):
    """The evidence does not hold up: what was rejected and why (shown to the learner as is).

    ``tamper``: the evidence contradicts itself or the check (a forgery); False for a plain provenance
    failure (numpy-filled outputs, library kernels), which an honest but mistaken answer can cause.
    """

    def __init__(self, message: str, tamper: bool = True):
        super().__init__(message)
        self.tamper = tamper


# ----------------------------------------------------------------------------- arrays and values
def encode_array(a: np.ndarray) -> dict:
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(zlib.compress(a.tobytes(), 1)).decode("ascii")}


def decode_array(d: Any) -> np.ndarray:
    """An array from ``encode_array``'s dict; Rejected for anything else (wrong types, sizes, dtypes)."""
    try:
        dtype, shape = str(d["dtype"]), [int(s) for s in d["shape"]]
        if dtype not in _DTYPES or any(s < 0 for s in shape):
            raise ValueError(f"dtype {dtype!r}, shape {shape}")
        dt = np.dtype(bfloat16) if dtype == "bfloat16" else np.dtype(dtype)      # numpy has no bfloat16 name
        want = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if want > MAX_ARRAY_BYTES:
            raise ValueError(f"{want} bytes")
        raw = zlib.decompressobj().decompress(base64.b64decode(d["data"], validate=True), want + 1)
        if len(raw) != want:
            raise ValueError(f"{len(raw)} bytes for shape {shape} {dtype}")
        return np.frombuffer(raw, dt).reshape(shape).copy()
    except Rejected:
        raise
    except Exception as e:  # noqa: BLE001 - any malformed evidence is a rejection
        raise Rejected(f"an array in the evidence is malformed ({type(e).__name__}: {e})") from None


def digest(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    return hashlib.sha256(f"{a.dtype.str}{a.shape}".encode() + a.tobytes()).hexdigest()[:32]


def record_fields(v: Any) -> list[str] | None:
    """The field names of a tiling record: a dataclass instance, or a C++ struct of the front end (the class of
    ``ascend_sim.ascendc.cxx.Struct``: ``_fields`` of (name, default) pairs and a C ``_layout``); None otherwise."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return [f.name for f in dataclasses.fields(v)]
    fields, layout = getattr(type(v), "_fields", None), getattr(type(v), "_layout", None)
    if isinstance(fields, tuple) and isinstance(layout, tuple) and all(
            isinstance(f, tuple) and f and isinstance(f[0], str) for f in fields):
        return [f[0] for f in fields]
    return None


class Record:
    """A tiling a learner function returned (a host tiling function), as the evidence holds it: its described
    fields. The check only passes it on to a launch, whose record must describe its tiling the same way."""

    def __init__(self, fields: dict):
        self.fields = fields

    def __repr__(self) -> str:
        return f"<{self.fields.get('type', 'record')}>"


def describe(v: Any) -> Any:
    """A JSON form of a non-array launch or call argument (ints, floats, tiling dataclasses and C++ structs)."""
    if isinstance(v, Record):
        return v.fields
    names = record_fields(v)
    if names is not None:
        return {"type": type(v).__name__, **{n: describe(getattr(v, n)) for n in names}}
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, np.ndarray):
        return {"array": digest(v)}
    if isinstance(v, (list, tuple)):
        return [describe(x) for x in v]
    if v is None or isinstance(v, str):
        return v
    return {"object": type(v).__name__}


def encode_value(v: Any) -> dict:
    """What a learner function returned: arrays, numbers, None, short strings, and tuples/lists of them."""
    if isinstance(v, np.ndarray):
        return {"array": encode_array(v)}
    if v is None:
        return {"none": True}
    if isinstance(v, (bool, np.bool_, int, np.integer, float, np.floating)):
        return {"scalar": describe(v)}
    if isinstance(v, tuple):
        return {"tuple": [encode_value(x) for x in v]}
    if record_fields(v) is not None:                    # a tiling struct or dataclass (lab02 ex7's conv_tiling)
        return {"record": describe(v)}
    if isinstance(v, str) and len(v) <= MAX_STR:       # a diagnosis: an error class, a layer name (lab05)
        return {"str": v}
    try:
        arr = np.asarray(v)
        if arr.dtype.name in _DTYPES:
            return {"array": encode_array(arr)}
    except Exception:  # noqa: BLE001 - anything else is shown by type only
        pass
    return {"object": type(v).__name__}


MAX_STR = 200      # longest returned string kept as a value (longer ones are only named, like a dict)


class Opaque:
    """A returned value the evidence only names (a dict, a long string ...): it never equals an expected value."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}>"


def decode_value(d: Any) -> Any:
    if not isinstance(d, dict) or len(d) != 1:
        raise Rejected("a returned value in the evidence is malformed")
    (kind, v), = d.items()
    if kind == "array":
        return decode_array(v)
    if kind == "none":
        return None
    if kind == "scalar" and isinstance(v, (bool, int, float)):
        return v
    if kind == "tuple" and isinstance(v, list):
        return tuple(decode_value(x) for x in v)
    if kind == "str" and isinstance(v, str) and len(v) <= MAX_STR:
        return v
    if kind == "record" and isinstance(v, dict) and isinstance(v.get("type"), str):
        return Record(v)
    if kind == "object":
        return Opaque(str(v))
    raise Rejected("a returned value in the evidence is malformed")


# ----------------------------------------------------------------------------- provenance
def is_package_file(filename: str) -> bool:
    """True for files of the ascend_sim package or an installed library (not the learner's code)."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return path.startswith(_PKG_DIR + os.sep) or any(m in path.split(os.sep) for m in _LIB_MARKERS)


def rle(w: np.ndarray) -> list[list[int]]:
    """Run-length form of a per-byte writer array: [[first byte, record], ...]."""
    if w.size == 0:
        return []
    starts = np.concatenate(([0], np.flatnonzero(np.diff(w)) + 1))
    return [[int(s), int(w[s])] for s in starts]


def unrle(runs: Any, nbytes: int) -> np.ndarray:
    try:
        out = np.full(nbytes, -1, np.int64)
        if not runs:
            return out
        bounds = [int(s) for s, _ in runs] + [nbytes]
        if bounds[0] != 0 or any(b >= c for b, c in zip(bounds, bounds[1:])):
            raise ValueError("runs out of order")
        for (s, rec), e in zip(runs, bounds[1:]):
            out[int(s):e] = int(rec)
        return out
    except Exception as e:  # noqa: BLE001
        raise Rejected(f"the written-by record of an output is malformed ({e})") from None


def launch_record(k: Any, block_dim: int, args: tuple, before: list[str | None], result: Any, *,
                  token: str | None, with_data: bool) -> dict:
    """The learner side's account of one finished launch (``before``: digests of the arrays before it)."""
    fn = inspect.unwrap(getattr(k, "fn", k))          # a template instance (api/template.py) unwraps to its body
    code = getattr(fn, "__code__", None)
    records = result.trace.records
    gm = [r for r in records if "GM" in (r.src, r.dst)]
    pipes: dict[str, int] = {}
    for r in records:
        pipes[r.pipe] = pipes.get(r.pipe, 0) + 1
    outputs = {}
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    for i, (a, wb) in enumerate(zip(arrays, result.gm_written_by)):
        changed = digest(a) != before[i]
        if wb is None or not (changed or (wb >= 0).any()):
            continue
        out = {"writers": rle(wb), "digest": digest(a), "nbytes": int(a.nbytes)}
        if with_data:
            out["data"] = encode_array(a)
        outputs[str(i)] = out
    return {"kernel": {"name": getattr(k, "__name__", type(k).__name__),
                       "file": code.co_filename if code else "", "token": token},
            "block_dim": int(block_dim), "others": [describe(a) for a in args if not isinstance(a, np.ndarray)],
            "inputs": before, "outputs": outputs, "cycles": float(result.cycles),
            "max_end": max((r.end for r in records), default=0.0), "pipes": pipes,
            "records": [{"index": r.index, "op": r.op, "pipe": r.pipe, "src": r.src, "dst": r.dst,
                         "nbytes": int(r.nbytes), "start": float(r.start), "end": float(r.end),
                         "site": [str(r.site[0]), int(r.site[1])], "source": r.source} for r in gm]}


def with_hook(hook: Callable, fn: Callable, *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` with ``hook`` on every launch (see ``ascend_sim.api.launch.launch_hook``)."""
    from ascend_sim.api.launch import launch_hook
    with launch_hook(hook):
        return fn(*args, **kwargs)
