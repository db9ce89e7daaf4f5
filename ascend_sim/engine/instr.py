"""The instruction record: one per hardware instruction the kernel issued."""
from __future__ import annotations

import linecache
import os

PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}


class Instr:
    """One executed instruction: where, when, what it moved, and the kernel line."""

    __slots__ = ("index", "core", "core_type", "pipe", "op", "ready", "start", "end", "wait_on",
                 "nbytes", "src", "dst", "flops", "site", "klass", "_rd", "_wr")

    def __init__(self, index, core, core_type, pipe, op, ready, start, end, wait_on,
                 nbytes, src, dst, flops, site, klass, reads=(), writes=()):
        # one attribute per statement: twice as fast as tuple unpacking into slots (one record per instruction)
        self.index = index
        self.core = core
        self.core_type = core_type
        self.pipe = pipe
        self.op = op
        self.ready = ready
        self.start = start
        self.end = end
        self.wait_on = wait_on
        self.nbytes = nbytes
        self.src = src
        self.dst = dst
        self.flops = flops
        self.site = site
        self.klass = klass
        self._rd = reads            # [core.Region, ...]: a tier and its granule runs
        self._wr = writes

    @property
    def reads(self) -> tuple:
        """((tier name, first byte, end byte), ...) of the local memory this instruction read."""
        return tuple((r.tier.name, lo * 32, hi * 32) for r in self._rd for lo, hi in r.runs)

    @property
    def writes(self) -> tuple:
        """((tier name, first byte, end byte), ...) of the local memory this instruction wrote."""
        return tuple((r.tier.name, lo * 32, hi * 32) for r in self._wr for lo, hi in r.runs)

    @property
    def cycles(self) -> float:
        return self.end - self.start

    @property
    def stall(self) -> float:
        return self.start - self.ready

    @property
    def line(self) -> str:
        fn, ln = self.site
        return f"{os.path.basename(fn)}:{ln}"

    @property
    def source(self) -> str:
        return linecache.getline(self.site[0], self.site[1]).strip()

    def as_dict(self) -> dict:
        return {"index": self.index, "core": self.core, "core_type": self.core_type, "pipe": self.pipe,
                "op": self.op, "class": self.klass, "ready": self.ready, "start": self.start, "end": self.end,
                "wait_on": self.wait_on, "nbytes": self.nbytes, "src": self.src, "dst": self.dst,
                "flops": self.flops, "line": self.line, "source": self.source,
                "reads": list(self.reads), "writes": list(self.writes)}

    def __repr__(self) -> str:
        return (f"Instr(core={self.core}, {self.pipe}, {self.op}, {self.start:.0f}..{self.end:.0f}, "
                f"{self.nbytes}B {self.src}->{self.dst}, {self.line})")
