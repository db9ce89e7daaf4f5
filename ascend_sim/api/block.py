"""Which block am I, and block-to-block synchronisation: GetBlockIdx, GetBlockNum, SyncAll, cross-core flags.

The waiting itself (parking a block until the others arrive) is the scheduler's
(engine/scheduler.py); these calls check their arguments and hand over.
"""
from __future__ import annotations

from ascend_sim.api.sync import pipe_index
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import caller_site


def GetBlockIdx() -> int:
    """Index of the block running this code (AIV index in MIX kernels)."""
    return current_core().block_idx


def GetBlockNum() -> int:
    """Number of blocks in the launch (``blockDim``)."""
    c = current_core()
    return c.launch.block_dim * (2 if c.core_type == "AIV" and c.launch.kernel.core == "MIX" else 1)


def GetSubBlockIdx() -> int:
    """0 or 1: which AIV of its AIC group (MIX kernels on separated chips)."""
    return current_core().sub_block_idx


def GetSubBlockNum() -> int:
    c = current_core()
    return 2 if c.launch.kernel.core == "MIX" and c.launch.chip.separated else 1


def ASCEND_IS_AIV() -> bool:
    """True on a vector core (or a coupled AI Core)."""
    return current_core().core_type in ("AIV", "CORE")


def ASCEND_IS_AIC() -> bool:
    """True on a cube core (or a coupled AI Core)."""
    return current_core().core_type in ("AIC", "CORE")


def SyncAll() -> None:
    """Barrier across every block of the launch (all pipes drain first)."""
    core = current_core()
    core.launch.sync_all(core, caller_site())


def CrossCoreSetFlag(modeId: int, pipe, flagId: int) -> None:
    """Signal the partner cores (mode 2: AIC <-> AIV of one group) after ``pipe`` finishes."""
    core = current_core()
    core.launch.cross_core_set(core, modeId, pipe_index(pipe), flagId)


def CrossCoreWaitFlag(flagId: int) -> None:
    """Wait for a CrossCoreSetFlag from a partner core with the same flag id."""
    core = current_core()
    core.launch.cross_core_wait(core, flagId, caller_site())
