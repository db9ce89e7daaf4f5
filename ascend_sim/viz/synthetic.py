"""Synthetic traces in the documented record format, for tests and offline docs.

They are not the simulator: a tiny list scheduler (in-order pipes, explicit
dependencies) that yields records with the same fields as ``Instr``, so every
view can be exercised without running a kernel.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Sequence


@dataclass
class FakeInstr:
    """A record with the fields of the trace record format."""

    index: int
    core: int
    core_type: str
    pipe: str
    op: str
    ready: float
    start: float
    end: float
    wait_on: int
    nbytes: int
    src: str
    dst: str
    flops: int
    line: str
    source: str
    klass: str = ""


@dataclass
class FakeTraceBuilder:
    """Place instructions on in-order pipes after their dependencies.

    ``issue`` returns the record index, to be used in later ``deps``.
    """

    issue_cycles: float = 2.0
    records: list[FakeInstr] = field(default_factory=list)
    _tail: dict = field(default_factory=dict)
    _scalar: dict = field(default_factory=dict)

    def issue(self, core: int, pipe: str, op: str, cost: float, deps: Sequence[int] = (), *,
              nbytes: int = 0, src: str = "", dst: str = "", flops: int = 0,
              core_type: str = "AIV", line: int = 1, source: str = "") -> int:
        t_issue = self._scalar.get(core, 0.0) + self.issue_cycles
        self._scalar[core] = t_issue
        ready = max(self._tail.get((core, pipe), 0.0), t_issue)
        start, wait_on = ready, -1
        for d in deps:
            if self.records[d].end > start:
                start, wait_on = self.records[d].end, d
        idx = len(self.records)
        self.records.append(FakeInstr(idx, core, core_type, pipe, op, ready, start, start + cost,
                                      wait_on, nbytes, src, dst, flops, f"kernel.py:{line}", source))
        self._tail[(core, pipe)] = start + cost
        return idx

    def result(self, chip=None, label: str = "") -> SimpleNamespace:
        """A LaunchResult-like object: ``trace.records``, ``cycles``, ``chip``."""
        cycles = max((r.end for r in self.records), default=0.0)
        clock = getattr(chip, "clock_ghz", 1.85)
        trace = SimpleNamespace(records=list(self.records))
        return SimpleNamespace(trace=trace, cycles=cycles, us=cycles / (clock * 1e3),
                               chip=chip, clock_ghz=clock, label=label)


def add_trace(cores: int = 2, tiles: int = 8, buffer_num: int = 2, tile_bytes: int = 256,
              chip=None, label: str = "") -> SimpleNamespace:
    """The add_custom pattern: CopyIn x, y (MTE2) -> Add (V) -> CopyOut z (MTE3) per tile."""
    b = FakeTraceBuilder()
    copy = 80 + tile_bytes / 32
    for c in range(cores):
        last_v: list[int] = []
        last_out: list[int] = []
        for i in range(tiles):
            free_in = [last_v[i - buffer_num]] if i >= buffer_num else []
            x = b.issue(c, "MTE2", "DataCopy", copy, free_in, nbytes=tile_bytes, src="GM", dst="UB",
                        line=30, source="DataCopy(xLocal, self.xGm[i * self.tileLength], self.tileLength)")
            y = b.issue(c, "MTE2", "DataCopy", copy, free_in, nbytes=tile_bytes, src="GM", dst="UB",
                        line=31, source="DataCopy(yLocal, self.yGm[i * self.tileLength], self.tileLength)")
            free_out = [last_out[i - buffer_num]] if i >= buffer_num else []
            v = b.issue(c, "V", "Add", 20 + tile_bytes / 256, [x, y, *free_out],
                        nbytes=3 * tile_bytes, src="UB", dst="UB", flops=tile_bytes // 2,
                        line=40, source="Add(zLocal, xLocal, yLocal, self.tileLength)")
            o = b.issue(c, "MTE3", "DataCopy", copy, [v], nbytes=tile_bytes, src="UB", dst="GM",
                        line=47, source="DataCopy(self.zGm[i * self.tileLength], zLocal, self.tileLength)")
            last_v.append(v)
            last_out.append(o)
    return b.result(chip, label or f"add BUFFER_NUM={buffer_num}")


def matmul_trace(cores: int = 1, k_steps: int = 4, chip=None, label: str = "matmul") -> SimpleNamespace:
    """A cube matmul: GM->L1 (MTE2), L1->L0A/L0B (MTE1), Mmad (M), Fixpipe (FIX) per core."""
    b = FakeTraceBuilder()
    for c in range(cores):
        mm = -1
        for k in range(k_steps):
            a1 = b.issue(c, "MTE2", "DataCopy", 150, nbytes=8192, src="GM", dst="L1", core_type="AIC",
                         line=20, source="DataCopy(a1Local, aGm[k], nd2nzA)")
            b1 = b.issue(c, "MTE2", "DataCopy", 150, nbytes=8192, src="GM", dst="L1", core_type="AIC",
                         line=21, source="DataCopy(b1Local, bGm[k], nd2nzB)")
            f1 = b.issue(c, "S", "SetFlag", 1, [a1, b1], core_type="AIC", line=22,
                         source="SetFlag<HardEvent::MTE2_MTE1>(0)")
            a2 = b.issue(c, "MTE1", "LoadData", 36, [f1] + ([mm] if mm >= 0 else []), nbytes=8192,
                         src="L1", dst="L0A", core_type="AIC", line=24, source="LoadData(a2Local, a1Local, p)")
            b2 = b.issue(c, "MTE1", "LoadData", 52, [f1], nbytes=8192, src="L1", dst="L0B",
                         core_type="AIC", line=25, source="LoadData(b2Local, b1Local, p)")
            mm = b.issue(c, "M", "Mmad", 64 + 30, [a2, b2], nbytes=16384, src="L0A", dst="L0C",
                         flops=2 * 64 * 64 * 64, core_type="AIC", line=27,
                         source="Mmad(c1Local, a2Local, b2Local, {m, n, k})")
        b.issue(c, "FIX", "Fixpipe", 40 + 16384 / 32, [mm], nbytes=8192, src="L0C", dst="GM",
                core_type="AIC", line=30, source="Fixpipe(cGm, c1Local, fixParams)")
    return b.result(chip, label)


#: One matmul step of a cube core, as (pipe, op, src, dst, cycles, bytes): the rows ``large_matmul_table`` repeats.
_STEP = (("MTE2", "DataCopy", "GM", "L1", 150, 8192), ("MTE1", "LoadData", "L1", "L0A", 36, 8192),
         ("MTE1", "LoadData", "L1", "L0B", 52, 8192), ("M", "Mmad", "L0A", "L0C", 94, 16384),
         ("S", "SetFlag", "", "", 1, 0))


def large_matmul_table(records: int, cores: int = 24, chip=None):
    """A trace table of about ``records`` cube records over ``cores`` cores, built with numpy (a million in a
    few seconds): each core repeats ``_STEP`` back to back. For the level-of-detail views (viz/lod.py)."""
    import numpy as np

    from ascend_sim.trace.table import table_from_columns
    per = max(1, records // (cores * len(_STEP))) * len(_STEP)
    n = per * cores
    pick = np.tile(np.arange(per) % len(_STEP), cores)
    col = [np.array([s[f] for s in _STEP], object)[pick] for f in range(4)]
    cost = np.array([s[4] for s in _STEP], float)[pick]
    nbytes = np.array([s[5] for s in _STEP], np.int64)[pick]
    step = np.tile(np.arange(per) // len(_STEP), cores) * 200.0
    start = step + np.array([0, 150, 186, 238, 332], float)[pick]
    return table_from_columns({
        "index": np.arange(n), "core": np.repeat(np.arange(cores), per), "core_type": np.full(n, "AIC", object),
        "pipe": col[0], "op": col[1], "src": col[2], "dst": col[3], "ready": start, "start": start,
        "end": start + cost, "wait_on": np.full(n, -1), "nbytes": nbytes,
        "flops": np.where(col[1] == "Mmad", 2 * 64 * 64 * 64, 0), "line": np.full(n, "matmul.py:27", object),
        "source": np.full(n, "Mmad(c1Local, a2Local, b2Local, p)", object), "klass": np.full(n, "copy", object)},
        chip=chip, clock_ghz=getattr(chip, "clock_ghz", None), label="large matmul (synthetic)")
