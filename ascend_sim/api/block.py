"""Which block am I, and block-to-block synchronisation: GetBlockIdx, GetBlockNum, SyncAll, cross-core flags.

The waiting itself (parking a block until the others arrive) is the scheduler's
(engine/scheduler.py); these calls check their arguments and hand over.
"""
from __future__ import annotations

from ascend_sim.api.checks import integer
from ascend_sim.api.sync import PIPE_ALL, PIPE_S, pipe_index
from ascend_sim.engine.context import current_core
from ascend_sim.engine.core import S
from ascend_sim.engine.errors import ArgumentError, caller_site, kernel_point, resolve_site


def GetBlockIdx() -> int:
    """Index of the block running this code (AIV index in MIX kernels)."""
    return current_core().block_idx


def GetBlockNum() -> int:
    """Number of blocks in the launch (``numBlocks``), on every core type.

    GetBlockNum.md: "返回值与<<<>>>调用时配置的numBlocks一致" (equal to the launch's numBlocks); in a MIX 1:2 kernel
    the AIV cores that run are ``GetTaskRatio() * numBlocks``.
    """
    return current_core().launch.block_dim


def GetTaskRatio() -> int:
    """AIV cores per AIC of the launch as this core sees it: 2 on the AIV of a MIX 1:2 kernel, else 1.

    GetBlockNum.md: "实际启动的AIC或AIV的数量可以通过GetTaskRatio() * numBlocks计算得到".
    """
    c = current_core()
    return GetSubBlockNum() if c.core_type == "AIV" else 1


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


def SyncAll(isAIVOnly: bool = True) -> None:
    """Barrier across the blocks of the launch (all pipes drain first).

    ``isAIVOnly=True`` (the C++ default ``SyncAll()``) joins the cores of the caller's type: every AIV (on an AIC
    of a MIX kernel, every AIC). ``SyncAll(isAIVOnly=False)`` (``SyncAll<false>()``) joins every AIC and AIV of a
    MIX kernel. A coupled AI Core has one kind of core: both join every block.
    """
    core = current_core()
    if not isinstance(isAIVOnly, bool):
        raise ArgumentError(f"SyncAll: isAIVOnly is {isAIVOnly!r}, not a bool",
                            fix="«SyncAll()» (isAIVOnly = true) or «SyncAll(isAIVOnly=False)|SyncAll<false>()»", site=kernel_point())
    core.launch.sync_all(core, caller_site(), bool(isAIVOnly))


MAX_CROSS_FLAG = 15     # flagId 0..15 for modes 0, 1, 2 (CrossCoreSetFlag API page, flagId取值范围说明)


def CrossCoreSetFlag(modeId: int, pipe, flagId: int) -> None:
    """Report flag ``flagId`` once ``pipe`` finishes: mode 0 joins every core of the caller's type, mode 1 the AIVs
    of one AI Core, mode 2 an AIC and its AIVs (the AIC's counter rises when all its AIVs have reported)."""
    core = current_core()
    site = kernel_point()
    if integer("CrossCoreSetFlag", "modeId", modeId, site) not in (0, 1, 2):
        raise ArgumentError(f"CrossCoreSetFlag mode {modeId} is not 0, 1 or 2",
                            fix="mode 0: all cores, 1: AIV cores of a group, 2: AIC <-> AIV of a group", site=site)
    if pipe is PIPE_S or pipe is PIPE_ALL:
        raise ArgumentError(f"CrossCoreSetFlag: pipe {pipe.name} is not allowed (the flag is set by the pipe "
                            "that produced the data)", fix="pass the producing pipe: PIPE_MTE3 after a copy "
                            "to GM, PIPE_FIX after Fixpipe, PIPE_V after vector work", site=site)
    p = pipe_index(pipe, "CrossCoreSetFlag", site)
    flag = _flag_id("CrossCoreSetFlag", flagId, site)
    _separated("CrossCoreSetFlag", core, site)
    core.launch.cross_core_set(core, modeId, p, flag, resolve_site(site))


def CrossCoreWaitFlag(flagId: int) -> None:
    """Block until this core's counter ``flagId`` has risen (CrossCoreSetFlag's round complete), then take 1."""
    core = current_core()
    site = kernel_point()
    flag = _flag_id("CrossCoreWaitFlag", flagId, site)
    _separated("CrossCoreWaitFlag", core, site)
    core.launch.cross_core_wait(core, flag, resolve_site(site))


def _separated(op: str, core, site) -> None:
    """Cross-core flags join an AIC and its AIVs: a coupled chip's one AI Core has no partner core to signal."""
    chip = core.launch.chip
    if not chip.separated:
        raise ArgumentError(f"{op}: {chip.name} is a coupled chip (each AI Core holds its cube and vector units "
                            "together), so there is no AIC/AIV partner core to signal; cross-core flags belong to "
                            "separated chips (Atlas A2/A3)",
                            fix="on a coupled core hand data from cube to vector with SetFlag/WaitFlag between the "
                                "pipes, or launch this MIX kernel on a separated chip (Ascend910B)", site=site)


def _flag_id(op: str, flag, site) -> int:
    return integer(op, "flagId", flag, site, 0, MAX_CROSS_FLAG,
                   fix=f"cross-core flag ids are 0..{MAX_CROSS_FLAG} on Atlas A2 (11..14 are SyncAll's); keep one id "
                       "per hand-off")


def GetSystemCycle() -> int:
    """The system counter's current value, read by the scalar unit (GetSystemCycle(ISASI).md).

    The counter runs at ``chip.system_counter_hz`` (50 MHz on Atlas A2: time in us = cycles / 50), so the difference
    of two reads around a piece of code is its time at the scalar unit: the instructions it issued may still be
    running on their pipes unless a barrier or flag waited for them, as on the device.
    """
    site = kernel_point()
    core = current_core()
    hz = core.chip.system_counter_hz
    if hz is None:
        raise ArgumentError(f"GetSystemCycle is not supported on {core.chip.name}: the API page lists Atlas A2/A3 "
                            "training and inference products only", site=site,
                            fix="time the kernel with the launch's result (result.cycles, result.profile()) instead")
    core.issue(S, "GetSystemCycle", core.chip.scalar_issue_cycles, klass="scalar", site=site)
    return int(core.scalar_time * hz / core.chip.clock_hz)

