"""The trace as one table: the reader every analysis and view goes through.

Every client takes "a trace" in any of these forms and calls :func:`as_table`:
a ``LaunchResult`` (has ``.trace``), a ``Trace``, a list of records (``Instr``,
or any object or dict with the record fields of docs/architecture.md), or a
:class:`TraceTable` already made. A launch's table is built once from the raw
records and kept by its ``Trace`` (``Trace.table()``), so the profile, the
Chrome export, the lab checks and the widgets share it. New analyses add a file
under ``ascend_sim/analysis/`` that reads this table; they add no field to the core.
"""
from __future__ import annotations

import linecache
import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

import numpy as np

#: Pipe rows in display order (流水线: one in-order queue per unit).
PIPE_ORDER: tuple[str, ...] = ("MTE2", "V", "M", "MTE1", "MTE3", "FIX", "S")

#: Ops that synchronise rather than compute or move data.
SYNC_OPS: frozenset[str] = frozenset({
    "SetFlag", "WaitFlag", "PipeBarrier", "SyncAll",
    "CrossCoreSetFlag", "CrossCoreWaitFlag", "EnQue", "DeQue",
})

#: Instruction kinds (指令种类) in legend order: the colour key of the views (viz/style.py colours them). A kind
#: follows from the pipe and op (``kind_of``); it is not the record's instruction class ``klass`` (its cost class).
KIND_NAMES: tuple[str, ...] = ("copy-in", "vector", "cube", "l1-to-l0", "copy-out", "fixpipe", "scalar", "sync")

_PIPE_KIND = {"MTE2": "copy-in", "V": "vector", "M": "cube", "MTE1": "l1-to-l0",
              "MTE3": "copy-out", "FIX": "fixpipe", "S": "scalar"}


def kind_of(pipe: str, op: str, klass: str = "") -> str:
    """Instruction kind of one record: ``"sync"`` for sync ops (or ``klass`` "sync"), else by pipe."""
    if op in SYNC_OPS or klass == "sync":
        return "sync"
    return _PIPE_KIND.get(pipe, "scalar")


_INT_FIELDS = ("core", "wait_on", "nbytes", "flops")
_FLOAT_FIELDS = ("ready", "start", "end")
_STR_FIELDS = ("core_type", "pipe", "op", "src", "dst", "line", "source", "klass")


@dataclass(frozen=True)
class TraceTable:
    """Trace records as numpy columns (one entry per record, in record order).

    ``index`` is the record's position in the original trace, the number that
    ``wait_on`` refers to. ``klass`` is the record's instruction class (its cost class: simple, transcendental,
    copy, sync ...); ``kind`` is the views' colour key derived from pipe and op (:data:`KIND_NAMES`).
    ``unit`` numbers the physical cores: the block index, except in MIX
    launches where AIC and AIV blocks share indices (then AIC cores come first).
    """

    index: np.ndarray
    unit: np.ndarray
    core: np.ndarray
    core_type: np.ndarray
    pipe: np.ndarray
    op: np.ndarray
    ready: np.ndarray
    start: np.ndarray
    end: np.ndarray
    wait_on: np.ndarray
    nbytes: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    flops: np.ndarray
    line: np.ndarray
    source: np.ndarray
    klass: np.ndarray
    kind: np.ndarray
    cycles: float
    label: str = ""
    clock_ghz: float | None = None
    chip: Any = None
    allocs: tuple = field(default=(), repr=False)
    weight: Any = field(default=None, repr=False, compare=False)    # records per row (viz/lod.py); None: one each
    region_source: Any = field(default=None, repr=False, compare=False)   # () -> [(reads, writes)] or None

    def regions(self) -> list[tuple[tuple, tuple]] | None:
        """Per record, the local memory it read and wrote: ``((tier, first byte, end byte), ...)`` twice.

        None when the records carry no regions (synthetic traces). Made on first use, from the trace.
        """
        return self.region_source() if self.region_source is not None else None

    def __len__(self) -> int:
        return len(self.index)

    @property
    def cores(self) -> list[int]:
        """Units (cores) present, ascending; equal to block indices unless MIX."""
        return np.unique(self.unit).tolist()

    def _first_of_units(self) -> tuple[list[int], np.ndarray]:
        """Each unit, ascending, and the position of its first record (numpy: a million records in ms)."""
        units, first = np.unique(self.unit, return_index=True)
        return units.tolist(), first

    def unit_names(self) -> dict[int, str]:
        """``{unit: "core 3"}``, or ``"AIC 0"`` / ``"AIV 1"`` when core types mix."""
        units, first = self._first_of_units()
        types, cores = self.core_type[first].tolist(), self.core[first].tolist()
        mixed = len(set(types)) > 1
        return {int(u): f"{t} {c}" if mixed else f"core {c}" for u, t, c in zip(units, types, cores)}

    def unit_blocks(self) -> dict[int, int]:
        """``{unit: block index}``: what a core filter such as ``"0-3"`` matches."""
        units, first = self._first_of_units()
        return {int(u): int(c) for u, c in zip(units, self.core[first].tolist())}

    @property
    def pipes(self) -> list[str]:
        """Pipes present, in display order (unknown pipe names last)."""
        present = set(self.pipe.tolist())
        return [p for p in PIPE_ORDER if p in present] + sorted(present - set(PIPE_ORDER))

    @property
    def us(self) -> float | None:
        """Duration in microseconds, when the clock is known."""
        return self.cycles / (self.clock_ghz * 1e3) if self.clock_ghz else None


_COLUMNS = ("index", "unit", "core", "core_type", "pipe", "op", "ready", "start", "end", "wait_on",
            "nbytes", "src", "dst", "flops", "line", "source", "klass", "kind")


def _records_of(obj: Any) -> tuple[Sequence[Any], Any]:
    """(records, the object carrying launch metadata) for any accepted trace form."""
    trace = getattr(obj, "trace", None)
    if trace is not None and hasattr(trace, "records"):
        return trace.records, obj
    if hasattr(obj, "records"):
        return obj.records, obj
    if isinstance(obj, (list, tuple)):
        return obj, None
    raise TypeError(f"expected a LaunchResult, Trace or list of records, got {type(obj).__name__}")


def _meta(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj.trace.name``, whichever exists first."""
    for o in (obj, getattr(obj, "trace", None)):
        if o is not None:
            v = getattr(o, name, None)
            if v is not None and not callable(v):
                return v
    return None


def _norm_pipe(p: Any) -> str:
    s = str(getattr(p, "name", p))
    return s[5:] if s.startswith("PIPE_") else s


def as_table(obj: Any, label: str | None = None) -> TraceTable:
    """Columnar :class:`TraceTable` of a LaunchResult, Trace, record list or table."""
    if isinstance(obj, TraceTable):
        if label is None or label == obj.label:
            return obj
        return replace(obj, label=label)
    trace = getattr(obj, "trace", obj)
    if hasattr(trace, "table") and callable(trace.table):   # a launch's Trace: its table, built once
        base = trace.table()
        meta = _metadata(obj, base.cycles, label)
        return replace(base, **meta) if any(getattr(base, k) is not v for k, v in meta.items()) else base
    records, owner = _records_of(obj)
    table = table_from_columns(_record_columns(records), **_metadata(owner, None, label))
    if any(getattr(r, "writes", None) for r in records[:200]):
        table = replace(table, region_source=lambda: [(tuple(getattr(r, "reads", ()) or ()),
                                                        tuple(getattr(r, "writes", ()) or ())) for r in records])
    return table


def table_from_rows(rows: Sequence[tuple], resolve) -> TraceTable:
    """The table of a launch's raw records (tuples in ``Instr``'s field order; sites made (file, line) by ``resolve``).

    Many records share a site, so each distinct site is resolved and read once.
    """
    n = len(rows)
    if not n:
        return table_from_columns(_record_columns([]))
    cols = rows.columns() if hasattr(rows, "columns") else list(zip(*rows))    # engine/records.RecordList
    texts: dict = {}
    for site in set(cols[13]):
        fn, ln = resolve(site) or ("<unknown>", 0)
        texts[site] = (f"{os.path.basename(fn)}:{ln}", linecache.getline(fn, ln).strip())
    lines = [texts[s] for s in cols[13]]
    return table_from_columns({
        "index": cols[0], "core": cols[1], "core_type": cols[2], "pipe": cols[3], "op": cols[4],
        "ready": cols[5], "start": cols[6], "end": cols[7], "wait_on": cols[8], "nbytes": cols[9],
        "src": cols[10], "dst": cols[11], "flops": cols[12], "klass": cols[14],
        "line": [t[0] for t in lines], "source": [t[1] for t in lines]})


def table_from_columns(cols: dict[str, Sequence], *, cycles: float | None = None, label: str = "",
                       clock_ghz: float | None = None, chip: Any = None, allocs: tuple = ()) -> TraceTable:
    """A :class:`TraceTable` from one sequence per record field (the derived columns are computed here)."""
    n = len(cols["index"])
    arr: dict[str, np.ndarray] = {"index": np.asarray(cols["index"], np.int64).reshape(n)}
    for f in _INT_FIELDS:
        arr[f] = np.asarray(cols[f], np.int64).reshape(n)
    for f in _FLOAT_FIELDS:
        arr[f] = np.asarray(cols[f], np.float64).reshape(n)
    for f in _STR_FIELDS:
        a = np.empty(n, dtype=object)
        a[:] = list(cols[f])
        arr[f] = a
    arr["kind"] = np.asarray([kind_of(p, o, k) for p, o, k in
                             zip(cols["pipe"], cols["op"], cols["klass"])], dtype=object).reshape(n)
    arr["unit"] = _units(arr["core"], arr["core_type"])
    if cycles is None:
        cycles = float(arr["end"].max()) if n else 0.0
    return TraceTable(**arr, cycles=float(cycles), label=label, clock_ghz=clock_ghz, chip=chip,
                      allocs=tuple(allocs))


def _record_columns(records: Sequence[Any]) -> dict[str, list]:
    """One list per field from record objects or dicts (missing fields get their defaults)."""
    cols: dict[str, list] = {f: [] for f in _INT_FIELDS + _FLOAT_FIELDS + _STR_FIELDS + ("index",)}
    for i, r in enumerate(records):
        get = r.get if isinstance(r, dict) else (lambda k, d=None, r=r: getattr(r, k, d))
        cols["index"].append(get("index", i))
        for f in _INT_FIELDS:
            cols[f].append(int(get(f, -1 if f == "wait_on" else 0) or 0))
        for f in _FLOAT_FIELDS:
            cols[f].append(float(get(f, 0.0)))
        cols["pipe"].append(_norm_pipe(get("pipe", "S")))
        for f in ("core_type", "op", "src", "dst", "line", "source"):
            cols[f].append(str(get(f, "") or ""))
        cols["klass"].append(str(get("klass", get("class", "")) or ""))
    return cols


def _metadata(owner: Any, cycles: float | None, label: str | None) -> dict[str, Any]:
    """cycles, label, clock and chip of the object that carried the records (None: keep the defaults)."""
    if owner is None:
        return {"label": label} if label is not None else {}
    meta: dict[str, Any] = {}
    c = _meta(owner, "cycles")
    if c is not None and c != cycles:
        meta["cycles"] = float(c)
    chip = _meta(owner, "chip")
    clock = _meta(owner, "clock_ghz") or getattr(chip, "clock_ghz", None)
    if chip is not None:
        meta["chip"] = chip
    if clock:
        meta["clock_ghz"] = float(clock)
    allocs = _meta(owner, "allocs")
    if allocs:
        meta["allocs"] = tuple(allocs)
    if label is None:
        label = str(_meta(owner, "label") or _meta(owner, "kernel_name") or "")
    meta["label"] = label
    return meta


def _units(core: np.ndarray, core_type: np.ndarray) -> np.ndarray:
    """Unit number per record: the block index, or a rank when core types mix."""
    types = set(core_type.tolist())
    if len(types) <= 1:
        return core.copy()
    keys = sorted({(t != "AIC", t, int(c)) for t, c in zip(core_type.tolist(), core.tolist())})
    rank = {(t, c): i for i, (_, t, c) in enumerate(keys)}
    return np.asarray([rank[(t, int(c))] for t, c in zip(core_type.tolist(), core.tolist())], np.int64)


def parse_cores(spec: str | Iterable[int] | None, available: Sequence[int],
                blocks: dict[int, int] | None = None) -> list[int]:
    """Units chosen by ``"0-3,8"``, a list, or None (all); keeps only available ones.

    ``blocks`` maps unit to block index when they differ (MIX launches): the
    filter then matches block indices.
    """
    if spec is None or spec == "" or spec == "all":
        return list(available)
    chosen: set[int] = set()
    if isinstance(spec, str):
        for part in spec.replace(" ", "").split(","):
            if not part:
                continue
            lo, _, hi = part.partition("-")
            a = int(lo)
            b = int(hi) if hi else a
            chosen.update(range(min(a, b), max(a, b) + 1))
    else:
        chosen = {int(c) for c in spec}
    blocks = blocks or {}
    return [c for c in available if blocks.get(c, c) in chosen]


@dataclass(frozen=True)
class PipeStats:
    """Per-pipe totals over the chosen cores (msprof PipeUtilization analog)."""

    pipe: str
    count: int
    busy: float        # cycles the pipe executed instructions, summed over cores
    stall: float       # cycles instructions waited on a sync edge, summed over cores
    ratio: float       # busy / (cycles * cores): the aiv_vec_ratio-style share
    nbytes: int


def pipe_stats(table: TraceTable) -> list[PipeStats]:
    """One :class:`PipeStats` per pipe present, in display order."""
    ncores = max(len(table.cores), 1)
    denom = max(table.cycles, 1e-9) * ncores
    out = []
    for p in table.pipes:
        m = table.pipe == p
        busy = float((table.end[m] - table.start[m]).sum())
        stall = float((table.start[m] - table.ready[m]).clip(min=0).sum())
        out.append(PipeStats(p, int(m.sum()), busy, stall, busy / denom, int(table.nbytes[m].sum())))
    return out


def kind_index(names: Sequence[str]) -> np.ndarray:
    """Positions of kind names in :data:`KIND_NAMES`."""
    lut = {c: i for i, c in enumerate(KIND_NAMES)}
    return np.asarray([lut.get(n, lut["scalar"]) for n in names], np.int64)
