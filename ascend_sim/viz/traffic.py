"""Memory-tier traffic (存储层级流量): bytes moved between tiers and achieved bandwidth.

GM traffic passes through L2 on its way to HBM. The trace does not say which
GM accesses hit in L2, so every GM byte is counted on the HBM <-> L2 link too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ascend_sim.trace.table import TraceTable

#: (src, dst) -> (pipe that moves it, ChipProfile field of the per-core rate in bytes/cycle).
PATH_RATE_FIELD: dict[tuple[str, str], str] = {
    ("GM", "UB"): "gm_read_bytes_per_cycle",
    ("GM", "L1"): "aic_gm_read_bytes_per_cycle",
    ("GM", "L0A"): "gm_read_bytes_per_cycle",
    ("GM", "L0B"): "gm_read_bytes_per_cycle",
    ("UB", "GM"): "gm_write_bytes_per_cycle",
    ("L0C", "GM"): "fix_gm_bytes_per_cycle",
    ("L1", "L0A"): "l1_to_l0a_bytes_per_cycle",
    ("L1", "L0B"): "l1_to_l0b_bytes_per_cycle",
    ("UB", "L1"): "ub_to_l1_bytes_per_cycle",
    ("UB", "UB"): "ub_to_ub_bytes_per_cycle",
}

#: The cube's operand reads (Mmad: L0A and L0B into L0C) are compute, priced in FLOP/s.
CUBE_EDGE = ("L0A", "L0C")
_FLOPS_PER_FRACTAL = 2 * 16 * 16 * 16


@dataclass(frozen=True)
class Edge:
    """Traffic on one link between two tiers (summed over cores)."""

    src: str
    dst: str
    nbytes: int
    count: int
    cores: int
    gbps: float | None          # achieved, averaged over the launch (None: clock unknown)
    peak_gbps: float | None     # what the chip could move on this link with these cores
    flops: int = 0
    tflops: float | None = None
    peak_tflops: float | None = None

    @property
    def key(self) -> str:
        return f"{self.src}->{self.dst}"

    @property
    def utilisation(self) -> float | None:
        """Achieved over peak: bandwidth, or FLOP/s for the cube link."""
        if self.peak_tflops and self.tflops is not None:
            return self.tflops / self.peak_tflops
        if self.peak_gbps and self.gbps is not None:
            return self.gbps / self.peak_gbps
        return None


def _is_move(src: str, dst: str, op: str) -> bool:
    return bool(src and dst) and (src != dst or op.startswith("DataCopy"))


def _peak(chip: Any, key: tuple[str, str], cores: int, clock: float | None) -> float | None:
    field = PATH_RATE_FIELD.get(key)
    rate = getattr(chip, field, None) if (chip is not None and field) else None
    if rate is None or not clock:
        return None
    per_chip = rate * cores
    hbm = getattr(chip, "hbm_bytes_per_cycle", None)
    if "GM" in key and hbm:
        per_chip = min(per_chip, hbm)
    return per_chip * clock


def traffic_edges(table: TraceTable, peaks: Mapping[str, float] | None = None) -> list[Edge]:
    """Links with traffic, heaviest first; the HBM <-> L2 links come first.

    ``peaks`` overrides peak bandwidths in GB/s by key, e.g. ``{"GM->UB": 1600}``
    (``"HBM->L2"``/``"L2->HBM"`` for the HBM links, ``"L0A->L0C"`` in TFLOPS).
    """
    peaks = dict(peaks or {})
    clock = table.clock_ghz
    seconds = table.cycles / (clock * 1e9) if clock else None
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (s, d, o) in enumerate(zip(table.src.tolist(), table.dst.tolist(), table.op.tolist())):
        if _is_move(s, d, o):
            groups.setdefault((s, d), []).append(i)

    def count(ix: np.ndarray) -> int:       # instructions: a level-of-detail row stands for several (viz/lod.py)
        return len(ix) if table.weight is None else int(table.weight[ix].sum())

    def bw(n: float) -> float | None:
        return n / seconds / 1e9 if seconds else None

    edges: list[Edge] = []
    gm_in = sum(int(table.nbytes[ix].sum()) for (s, _), ix in groups.items() if s == "GM")
    gm_out = sum(int(table.nbytes[ix].sum()) for (_, d), ix in groups.items() if d == "GM")
    hbm = getattr(table.chip, "hbm_bytes_per_cycle", None)
    hbm_peak = hbm * clock if hbm and clock else None
    for key, n in ((("HBM", "L2"), gm_in), (("L2", "HBM"), gm_out)):
        if n:
            k = f"{key[0]}->{key[1]}"
            edges.append(Edge(key[0], key[1], n, 0, len(table.cores), bw(n), peaks.get(k, hbm_peak)))
    rest = []
    for (s, d), rows in sorted(groups.items()):
        ix = np.asarray(rows)
        n = int(table.nbytes[ix].sum())
        ncores = len(set(table.unit[ix].tolist()))
        k = f"{s}->{d}"
        if (s, d) == CUBE_EDGE:
            flops = int(table.flops[ix].sum())
            rate = getattr(table.chip, "cube_fractals_per_cycle", None)
            peak_tf = peaks.get(k, rate * _FLOPS_PER_FRACTAL * ncores * clock / 1e3
                                if rate and clock else None)
            tf = flops / seconds / 1e12 if seconds else None
            rest.append(Edge(s, d, n, count(ix), ncores, bw(n), None, flops, tf, peak_tf))
        else:
            rest.append(Edge(s, d, n, count(ix), ncores, bw(n),
                             peaks.get(k, _peak(table.chip, (s, d), ncores, clock))))
    rest.sort(key=lambda e: (-e.nbytes, e.key))
    return edges + rest
