"""Explicit synchronisation: HardEvent, pipe_t, SetFlag, WaitFlag, PipeBarrier.

``SetFlag(HardEvent.MTE2_V, id)`` runs on pipe MTE2 once its earlier work is done;
``WaitFlag(HardEvent.MTE2_V, id)`` holds pipe V until then. The same edges drive
the racecheck (vector clocks in core.py) and the timing model.
"""
from __future__ import annotations

import enum

import numpy as np

from ascend_sim.engine.core import S
from ascend_sim.engine.errors import ArgumentError, SyncError, format_site, kernel_point
from ascend_sim.engine.instr import PIPE_INDEX
from ascend_sim.engine.context import current_core


class pipe_t(enum.Enum):
    """Ascend C pipe names (``PIPE_V`` ...)."""

    PIPE_S = "S"
    PIPE_V = "V"
    PIPE_M = "M"
    PIPE_MTE1 = "MTE1"
    PIPE_MTE2 = "MTE2"
    PIPE_MTE3 = "MTE3"
    PIPE_FIX = "FIX"
    PIPE_ALL = "ALL"


PIPE_S, PIPE_V, PIPE_M = pipe_t.PIPE_S, pipe_t.PIPE_V, pipe_t.PIPE_M
PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 = pipe_t.PIPE_MTE1, pipe_t.PIPE_MTE2, pipe_t.PIPE_MTE3
PIPE_FIX, PIPE_ALL = pipe_t.PIPE_FIX, pipe_t.PIPE_ALL


def pipe_index(pipe, op: str = "pipe", site=None, allow_all: bool = False) -> int:
    """Index of a pipe given as a pipe_t member (PIPE_ALL: -1 when ``allow_all``); else ArgumentError."""
    if pipe.__class__ is pipe_t and (pipe is not PIPE_ALL or allow_all):
        return -1 if pipe is PIPE_ALL else PIPE_INDEX[pipe.value]
    names = ", ".join(p.name for p in pipe_t if p is not PIPE_ALL or allow_all)
    raise ArgumentError(f"{op}: {pipe!r} is not a pipe{'' if allow_all else ' this call can name'}",
                        fix=f"pass one of {names} (imported from ascend_sim)", site=site)


class HardEvent(enum.Enum):
    """``HardEvent::SRC_DST``: a flag set by pipe SRC and waited on by pipe DST."""

    MTE2_V = ("MTE2", "V")
    V_MTE2 = ("V", "MTE2")
    V_MTE3 = ("V", "MTE3")
    MTE3_V = ("MTE3", "V")
    MTE3_MTE2 = ("MTE3", "MTE2")
    MTE2_MTE3 = ("MTE2", "MTE3")
    MTE2_MTE1 = ("MTE2", "MTE1")
    MTE1_MTE2 = ("MTE1", "MTE2")
    MTE3_MTE1 = ("MTE3", "MTE1")        # coupled chips: UB -> L1 (MTE3) before LoadData (MTE1)
    MTE1_MTE3 = ("MTE1", "MTE3")
    MTE1_M = ("MTE1", "M")
    M_MTE1 = ("M", "MTE1")
    M_FIX = ("M", "FIX")
    FIX_M = ("FIX", "M")
    M_V = ("M", "V")
    V_M = ("V", "M")
    S_V = ("S", "V")
    V_S = ("V", "S")
    S_MTE2 = ("S", "MTE2")
    MTE2_S = ("MTE2", "S")
    S_MTE3 = ("S", "MTE3")
    MTE3_S = ("MTE3", "S")
    FIX_S = ("FIX", "S")
    S_FIX = ("S", "FIX")
    FIX_MTE2 = ("FIX", "MTE2")
    MTE2_FIX = ("MTE2", "FIX")

    @property
    def src(self) -> int:
        return PIPE_INDEX[self.value[0]]

    @property
    def dst(self) -> int:
        return PIPE_INDEX[self.value[1]]


def _check_id(event: HardEvent, eid: int, what: str) -> None:
    """``eid`` is an event id of this chip: 0..7 on Atlas A2 (SetFlag-WaitFlag(ISASI).md, "数据范围为：0-7")."""
    if not isinstance(event, HardEvent):
        raise ArgumentError(f"{what} expects a HardEvent (e.g. «HardEvent.MTE2_V»), got {event!r}",
                            fix="import HardEvent from ascend_sim")
    n = current_core().chip.event_ids
    if eid.__class__ is bool or not isinstance(eid, (int, np.integer)) or not 0 <= eid < n:
        raise ArgumentError(f"«{what}({event.name}, {eid!r})»: event ids are the integers 0..{n - 1} on "
                            f"{current_core().chip.name}",
                            fix=f"use an id in 0..{min(n, 6) - 1} (the docs keep 6 and 7 for the system), or get "
                                "one from GetTPipePtr().FetchEventID(event) / AllocEventID(event)")


def SetFlag(event: HardEvent, eventID: int = 0) -> None:
    """Set flag ``eventID`` once pipe ``event.src`` has finished everything issued before."""
    _check_id(event, eventID, "SetFlag")
    core = current_core()
    site = kernel_point()
    key = (event, int(eventID))
    if key in core.flags:
        prev = core.flags[key]
        raise SyncError(f"«SetFlag({event.name}, {eventID})» set again before a WaitFlag consumed the one set at "
                        f"{format_site(prev.site)}: the same id must not be set twice in a row",
                        fix=f"put «WaitFlag({event.name}, {eventID})» between them, or use another event id",
                        site=site)
    core.issue(event.src, "SetFlag", core.chip.flag_cycles, klass="sync", site=site)
    core.flags[key] = core.snapshot(event.src, site)


def WaitFlag(event: HardEvent, eventID: int = 0) -> None:
    """Hold pipe ``event.dst`` until the matching SetFlag has fired, then clear the flag."""
    _check_id(event, eventID, "WaitFlag")
    core = current_core()
    site = kernel_point()
    ev = core.flags.pop((event, int(eventID)), None)
    if ev is None:
        raise SyncError(f"«WaitFlag({event.name}, {eventID})» has no «SetFlag({event.name}, {eventID})» before it: "
                        f"pipe {event.value[1]} would wait forever",
                        fix=f"issue «SetFlag({event.name}, {eventID})» after the {event.value[0]} instruction that "
                            "produces the data, before this WaitFlag", site=site)
    core.wait(event.dst, ev)
    core.issue(event.dst, "WaitFlag", core.chip.flag_cycles, klass="sync", site=site)


def PipeBarrier(pipe=PIPE_ALL) -> None:
    """``PipeBarrier<pipe>()``: later instructions of ``pipe`` (all pipes for PIPE_ALL) wait for earlier ones."""
    core = current_core()
    site = kernel_point()
    p = pipe_index(pipe, "PipeBarrier", site, allow_all=True)
    if p < 0:
        core.barrier_all()
        core.issue(S, "PipeBarrier", core.chip.flag_cycles, klass="sync", site=site)
        return
    core.done[p] = core.vc[p][p]        # later instructions of p start after the earlier ones finished
    core.issue(p, "PipeBarrier", core.chip.flag_cycles, klass="sync", site=site)
