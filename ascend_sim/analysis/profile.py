"""msprof op-style summary of a launch: pipe utilisation, memory traffic, the bound pipe and advice.

A client of the trace table (trace/table.py) and of the per-core busy cycles the launch keeps.
"""
from __future__ import annotations

import html
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ascend_sim.engine.instr import PIPES
from ascend_sim.trace.table import as_table

#: A pipe busy at least this share of the time is what bounds the kernel; below it, the time goes to
#: waiting between the stages (the advice below and the headline use the same line, so they never disagree).
SATURATED = 0.6

RATIO_NAMES = {"V": "vec_ratio", "S": "scalar_ratio", "MTE2": "mte2_ratio", "MTE3": "mte3_ratio",
               "MTE1": "mte1_ratio", "M": "cube_ratio", "FIX": "fixpipe_ratio"}


@dataclass
class Profile:
    """msprof op-style summary: pipe utilisation, memory traffic, the bound and advice."""

    cycles: float
    us: float
    ratios: dict[str, float]
    traffic: dict[str, dict]
    flops: int
    gm_bytes: int
    bound: str
    advice: list[str] = field(default_factory=list)
    l2: dict = field(default_factory=dict)      # L2 hit rate and bytes L2 / HBM served (engine/l2.L2Cache.stats)
    bound_ratio: float = 0.0

    @property
    def saturated(self) -> bool:
        """Whether the busiest pipe is busy enough to be what bounds the kernel (:data:`SATURATED`)."""
        return self.bound_ratio >= SATURATED

    @property
    def headline(self) -> str:
        """``bound by MTE2 (91.0% busy)`` or ``no pipe saturated; busiest MTE2 (45.0%)``."""
        if self.saturated:
            return f"bound by {self.bound} ({self.bound_ratio:.1%} busy)"
        return f"no pipe saturated; busiest {self.bound} ({self.bound_ratio:.1%})"

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.gm_bytes if self.gm_bytes else float("inf")

    def __str__(self) -> str:
        out = [f"total {self.cycles:,.0f} cycles = {self.us:,.2f} us   {self.headline}",
               "pipe utilisation (busy cycles / total, mean over cores):"]
        out += [f"  {k:<18} {v:6.1%}" for k, v in self.ratios.items()]
        out.append("memory traffic:")
        for path, t in self.traffic.items():
            out.append(f"  {path:<10} {t['bytes']:>14,} B  {t['GBps']:9.1f} GB/s")
        if self.l2:
            out.append(self.l2_line())
        out.append(f"arithmetic intensity {self.arithmetic_intensity:.3f} FLOP/byte of GM traffic")
        out += [f"advice: {a}" for a in self.advice]
        return "\n".join(out)

    def l2_line(self) -> str:
        """One line on the L2 cache: read hit rate, bytes served by L2 and by HBM, dirty write-backs."""
        c = self.l2
        return (f"L2: read hit rate {c['l2_hit_rate']:.1%}; L2 served {c['l2_bytes']:,} B, HBM read "
                f"{c['hbm_read_bytes']:,} B and wrote {c['hbm_write_bytes']:,} B "
                f"({c['writeback_bytes']:,} B of dirty write-backs)")

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v:.1%}</td></tr>" for k, v in self.ratios.items())
        traffic = "".join(f"<tr><td>{html.escape(p)}</td><td>{t['bytes']:,}</td><td>{t['GBps']:.1f}</td></tr>"
                          for p, t in self.traffic.items())
        advice = "".join(f"<li>{html.escape(a)}</li>" for a in self.advice)
        return (f"<div><b>{self.cycles:,.0f} cycles = {self.us:,.2f} us</b>, {html.escape(self.headline)}"
                f"<table><tr><th>pipe</th><th>busy</th></tr>{rows}</table>"
                f"<table><tr><th>path</th><th>bytes</th><th>GB/s</th></tr>{traffic}</table>"
                f"<p>{html.escape(self.l2_line()) if self.l2 else ''}</p>"
                f"<p>arithmetic intensity {self.arithmetic_intensity:.3f} FLOP/byte</p><ul>{advice}</ul></div>")



def profile(result) -> Profile:
    """The :class:`Profile` of a ``LaunchResult``."""
    total = result.cycles or 1.0
    busy_sum = defaultdict(float)
    has_pipe = defaultdict(int)
    for _, ctype, _, _, busy in result.core_times:
        for p, b in zip(PIPES, busy):
            busy_sum[p] += b
            if b > 0 or p in _pipes_of(ctype):
                has_pipe[p] += 1
    types = {ct for _, ct, _, _, _ in result.core_times}
    prefix = {frozenset({"AIV"}): "aiv_", frozenset({"AIC"}): "aic_"}.get(frozenset(types), "")
    ratios = {prefix + RATIO_NAMES[p]: busy_sum[p] / (total * has_pipe[p]) for p in PIPES if has_pipe[p]}
    table = as_table(result)
    flops = int(table.flops.sum())
    traffic: dict[str, dict] = {}
    gm_bytes = 0
    copies = np.flatnonzero(table.klass == "copy")
    if copies.size:
        paths = np.char.add(np.char.add(table.src[copies].astype(str), "->"), table.dst[copies].astype(str))
        names, first, inverse = np.unique(paths, return_index=True, return_inverse=True)
        nbytes = np.bincount(inverse.reshape(-1), weights=table.nbytes[copies], minlength=len(names))
        for k in np.argsort(first):         # paths in the order they first occur
            traffic[str(names[k])] = {"bytes": int(nbytes[k]), "GBps": 0.0}
            if "GM" in str(names[k]).split("->"):
                gm_bytes += int(nbytes[k])
    seconds = total / result.chip.clock_hz
    for t in traffic.values():
        t["GBps"] = t["bytes"] / seconds / 1e9
    bound_ratio, bound = max(((v, k) for k, v in ratios.items()), default=(0.0, "nothing"))
    pipe_of = {prefix + v: k for k, v in RATIO_NAMES.items()}
    prof = Profile(result.cycles, result.us, ratios, traffic, flops, gm_bytes, pipe_of.get(bound, bound),
                   bound_ratio=bound_ratio, l2=dict(getattr(result, "l2", None) or {}))
    prof.advice = _advice({k.removeprefix(prefix): v for k, v in ratios.items()}, prof)
    return prof


def _pipes_of(core_type: str) -> tuple[str, ...]:
    if core_type == "AIV":
        return ("S", "V", "MTE2", "MTE3")
    if core_type == "AIC":
        return ("S", "M", "MTE1", "MTE2", "FIX")
    return PIPES


def _advice(r: dict[str, float], prof: Profile) -> list[str]:
    out = []
    mte2, vec, cube = r.get("mte2_ratio", 0), r.get("vec_ratio", 0), r.get("cube_ratio", 0)
    if mte2 > SATURATED and vec < 0.5 and cube < 0.5:
        out.append(_memory_bound(has_vector="vec_ratio" in r, has_cube="cube_ratio" in r))
    if r.get("scalar_ratio", 0) > 0.5:
        out.append("The scalar pipe dominates: replace GetValue/SetValue loops with vector instructions.")
    if vec > 0.7:
        out.append("The vector pipe is the bottleneck: fuse operators or move matrix work to the cube unit.")
    mte1 = r.get("mte1_ratio", 0)
    if 0 < cube < 0.5 and mte1 > cube:
        out.append("The cube waits on MTE1 (L1 -> L0): double-buffer L0A/L0B and load larger base blocks.")
    if not out and prof.saturated:
        out.append(f"{prof.bound} is the busiest pipe ({prof.bound_ratio:.0%}): give it less or cheaper work "
                   "(fewer, larger instructions), or more cores.")
    elif not out:
        out.append("No single pipe saturates: look at the timeline for sync stalls between the stages.")
    return out


def _memory_bound(has_vector: bool, has_cube: bool) -> str:
    """The memory-bound advice in the launch's own terms: where MTE2 copies to, which unit idles, what helps."""
    if has_cube and not has_vector:
        return ("MTE2 (GM -> L1) is busy while the cube idles: the kernel is memory-bound. Use base blocks that reuse "
                "each byte more (e.g. baseM x baseN = 128 x 256: fewer GM reads per MAC), move several base blocks "
                "per copy, double-buffer L1, or use more cores.")
    if has_cube:
        return ("MTE2 (GM -> UB / L1) is busy while the vector and cube pipes idle: the kernel is memory-bound. "
                "Use larger copies (at least 16 KB), double buffering, or more cores.")
    return ("MTE2 (GM -> UB) is busy while the vector pipe idles: the kernel is memory-bound. Use larger "
            "copies (at least 16 KB), double buffering (BUFFER_NUM = 2) if it is not on yet, or more cores.")
