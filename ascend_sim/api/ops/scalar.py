"""Scalar access to local memory: GetValue/SetValue on PIPE_S.

The scalar unit reads UB directly, so a value a vector instruction or a copy
wrote must be synchronised to it first (SetFlag/WaitFlag with HardEvent.V_S or
MTE2_S, or PipeBarrier(PIPE_ALL)); the racecheck reports it otherwise.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.checks import integer, live, scalar
from ascend_sim.engine.core import S
from ascend_sim.engine.errors import OutOfBoundsError, kernel_point
from ascend_sim.engine.memory import GRANULE
from ascend_sim.hw.dtypes import ascend_name
from ascend_sim.engine.context import current_core


def _check_index(t, index: int, what: str, site) -> int:
    live(what, "the tensor", t, site)
    i = integer(what, "index", index, site)
    if not 0 <= i < t.size:
        raise OutOfBoundsError(f"{what}({i}) outside the tensor's {t.size} {ascend_name(t.dtype)} elements "
                               f"({t.tier.name}+{t.addr})", fix=f"use an index in 0..{t.size - 1}", site=site)
    return i


def local_get_value(t, index: int):
    """Read one element on the scalar pipe."""
    site = kernel_point()
    i = _check_index(t, index, "GetValue", site)
    core = current_core()
    g = (t.addr + i * t.dtype.itemsize) // GRANULE
    end = t.addr + (i + 1) * t.dtype.itemsize            # the slice's step: the byte the read ends at
    core.issue(S, "GetValue", core.chip.scalar_mem_cycles, reads=((t.tier, slice(g, g + 1, end)),),
               nbytes=t.dtype.itemsize, src=t.tier.name, dst="", klass="scalar", site=site)
    return t.view(i + 1)[i].item()


def local_set_value(t, index: int, value) -> None:
    """Write one element on the scalar pipe."""
    site = kernel_point()
    i = _check_index(t, index, "SetValue", site)
    scalar("SetValue", "value", value, t.dtype, site)
    core = current_core()
    g = (t.addr + i * t.dtype.itemsize) // GRANULE
    core.issue(S, "SetValue", core.chip.scalar_mem_cycles, writes=((t.tier, slice(g, g + 1)),),
               nbytes=t.dtype.itemsize, src="", dst=t.tier.name, klass="scalar", site=site)
    t.view(i + 1)[i] = np.asarray(value).astype(t.dtype)
