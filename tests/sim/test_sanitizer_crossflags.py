"""Cross-core flag counters (synccheck): the counter's range and sets that nobody waits for.

The CrossCoreSetFlag(ISASI) and CrossCoreWaitFlag(ISASI) pages of the Ascend C API reference
(https://github.com/cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/同步控制/核间同步/), 约束说明, flagId相关的约束:
"每一个计数器计数范围为0-15 ... 计数器的值超出该范围，则会异常报错，中断流程" and "用户需要确保配套使用CrossCoreSetFlag
和CrossCoreWaitFlag，否则会出现未定义行为" (关键特性说明: "CrossCoreSetFlag和CrossCoreWaitFlag都必须配对使用").
Each rule has a kernel that breaks it and one just inside it that runs clean.
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (ASCEND_IS_AIV, PIPE_MTE3, PIPE_V, Adds, CrossCoreSetFlag, CrossCoreWaitFlag, Duplicate,
                        GetSubBlockIdx, SyncError, half, kernel, launch)
from kernels_util import raises_rule, scratch


def aic_sets(times: int, waits: int, ack_every: int = 0, busy: int = 0):
    """A MIX kernel: the AIC sets mode-2 flag 3 ``times``; each AIV works ``busy`` vector instructions, then waits for
    it ``waits`` times. With ``ack_every`` the AIVs answer on flag 4 after every ``ack_every`` waits and the AIC waits
    for that answer (back-pressure)."""
    @kernel(core="MIX")
    def k(x):
        if ASCEND_IS_AIV():
            if busy:
                t = scratch(512, half)
                Duplicate(t, 0.0, 256)
                for _ in range(busy):
                    Adds(t, t, 1.0, 256)
            for i in range(waits):
                CrossCoreWaitFlag(3)
                if ack_every and (i + 1) % ack_every == 0:
                    CrossCoreSetFlag(2, PIPE_V, 4)
            return
        for i in range(times):
            CrossCoreSetFlag(2, PIPE_MTE3, 3)  # <- the AIC sets flag 3
            if ack_every and (i + 1) % ack_every == 0:
                CrossCoreWaitFlag(4)
    return k


def run(k):
    return launch(k, 1, np.zeros(16, half))


def test_sixteen_rises_not_taken_overflow_the_counter():
    """The AIVs are busy with 100 vector instructions while the AIC sets flag 3 sixteen times: the 16th rise would
    take the AIVs' counter to 16 before their first wait (the waits do come, 16 of them, too late)."""
    with raises_rule(SyncError, "cross-core flag 3 of block 0 (AIV) would count 16", "counts 0..15",
                     "每一个计数器计数范围为0-15", "15 earlier rises of it were not yet taken",
                     at="<- the AIC sets flag 3"):
        run(aic_sets(16, 16, busy=100))


def test_fifteen_rises_then_fifteen_waits_run_clean():
    """The edge inside the range: 15 sets while the AIVs are busy, then 15 waits on each AIV."""
    run(aic_sets(15, 15, busy=100))


def test_sixteen_sets_to_a_waiting_core_run_clean():
    """Without the busy work each AIV is already waiting when a rise comes and takes it at once: the counters
    never pass 1, though the simulator runs the AIC's 16 sets before the AIVs' waits (time order, not run order)."""
    run(aic_sets(16, 16))


def test_many_rounds_with_back_pressure_run_clean():
    """40 sets in a ping-pong: the AIC waits for the AIVs' answer every 8 sets, so no counter passes 8."""
    run(aic_sets(40, 40, ack_every=8))


def test_a_set_never_waited_for_is_reported_at_the_kernel_end():
    with raises_rule(SyncError, "cross-core flag 3 of block 0 (AIV) is still 2 when the kernel ends",
                     "no CrossCoreWaitFlag(3)", "undefined", at="<- the AIC sets flag 3"):
        run(aic_sets(3, 1))


@kernel(core="MIX")
def one_aiv_sets_mode_1():
    if ASCEND_IS_AIV() and GetSubBlockIdx() == 0:
        CrossCoreSetFlag(1, PIPE_V, 2)  # <- only AIV 0 sets mode 1


def test_a_round_half_reported_is_reported_at_the_kernel_end():
    """Mode 1 raises both AIVs' counters only when both have set; nobody waits, so no deadlock shows it."""
    with raises_rule(SyncError, "CrossCoreSetFlag<1>(2) of block 0 (AIV)", "never completed its round",
                     "block 1 (AIV) did not", at="<- only AIV 0 sets mode 1"):
        launch(one_aiv_sets_mode_1, 1)
