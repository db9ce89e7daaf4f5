"""The current core: which simulated core runs the calling kernel code.

The leaf of the engine. The scheduler sets ``current`` when it hands the baton to a
block; every Ascend C call reads it (``current_core()``, or ``context.current`` on
the hot path, where a missing core is checked by the caller).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ascend_sim.engine.errors import LaunchError

if TYPE_CHECKING:
    from ascend_sim.engine.core import Core

current: "Core | None" = None        # the core whose block holds the baton


def current_core() -> "Core":
    """The core running the calling kernel code."""
    c = current
    if c is None:
        raise LaunchError("this Ascend C API can only be called inside a kernel that is running",
                          fix="call it from a function marked «@kernel» and started with launch(...)")
    return c


def computing() -> bool:
    """Whether the running launch computes values: False under ``launch(..., numerics=False)``.

    The one switch of the timing-only mode. Every op checks, places and records its instruction as
    usual (sanitizer, cycle model, trace), then returns before touching data when this is False, so
    local memory and GM keep what they held. Ops that move or compute values call it after ``issue``.
    """
    return current.numerics
