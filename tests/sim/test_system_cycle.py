"""GetSystemCycle: the 50 MHz system counter of Atlas A2 (GetSystemCycle(ISASI).md), read by the scalar unit."""
import numpy as np
import pytest

from ascend_sim import (ArgumentError, DataCopy, GetSystemCycle, GlobalTensor, PIPE_ALL, PipeBarrier, TBuf, TPipe,
                        TPosition, Exp, float32, kernel, launch)
from ascend_sim.hw.chips import get_chip


def _timed(reads: list, barrier: bool):
    @kernel
    def k(x):
        xg = GlobalTensor(float32)
        xg.SetGlobalBuffer(x, 4096)
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 4096 * 4)
        t = buf.Get(float32)
        DataCopy(t, xg, 4096)
        PipeBarrier(PIPE_ALL)
        reads.append(GetSystemCycle())
        for _ in range(8):
            Exp(t, t, 4096)
        if barrier:
            PipeBarrier(PIPE_ALL)
        reads.append(GetSystemCycle())
    return k


def test_the_counter_runs_at_50_mhz_of_the_core_clock_and_sees_the_work_a_barrier_waits_for():
    chip = get_chip("Ascend910B")
    issued, waited = [], []
    launch(_timed(issued, barrier=False), 1, np.zeros(4096, np.float32))
    res = launch(_timed(waited, barrier=True), 1, np.zeros(4096, np.float32))
    ratio = chip.system_counter_hz / chip.clock_hz                   # 50 MHz / 1.85 GHz: one tick per 37 cycles
    assert 0 <= issued[1] - issued[0] < waited[1] - waited[0]        # issuing is fast; the barrier waits for Exp
    assert waited[1] - waited[0] <= res.cycles * ratio + 1
    again: list = []
    launch(_timed(again, barrier=True), 1, np.zeros(4096, np.float32))
    assert again == waited                                           # deterministic


def test_chips_without_the_counter_refuse_it_with_the_fix():
    with pytest.raises(ArgumentError, match="(?s)not supported on Ascend310B.*result.cycles"):
        launch(_timed([], barrier=False), 1, np.zeros(4096, np.float32), chip="Ascend310B")
