"""A finished launch leaves no reference cycles through its cores, queues and tensors (engine/scheduler.py,
``Launch.release``): reference counting frees it at once, so the cyclic collector neither walks nor collects
it (its passes over a launch's leftovers cost 10 to 15 % of the 256^3 matmul and the add benchmark).
"""
from __future__ import annotations

import gc

import pytest

from ascend_sim.kernels.add_custom import run_add_custom
from ascend_sim.kernels.matmul import run_matmul

_KINDS = {"Core", "LocalTensor", "_Slot", "TQue", "TPipe", "Launch", "Tier", "FreedTier", "Shadow"}


@pytest.mark.parametrize("run", [lambda: run_add_custom(),
                                 lambda: run_matmul(128, 128, 128, 64)], ids=["add", "matmul"])
def test_launch_objects_need_no_cyclic_collection(run) -> None:
    run()                                   # warm: module-level caches
    gc.collect()
    gc.disable()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)          # unreachable objects go to gc.garbage instead of being freed
    try:
        del gc.garbage[:]
        result = run()
        assert result is not None
        del result
        gc.collect()
        left = sorted({type(o).__name__ for o in gc.garbage} & _KINDS)
    finally:
        del gc.garbage[:]
        gc.set_debug(flags)
        gc.enable()
    assert left == [], f"only the cyclic collector frees these launch objects: {left}"
