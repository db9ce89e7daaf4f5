"""Timing-only launches: ``launch(..., numerics=False)`` keeps the checks, the cycles and the trace and
computes nothing (issue 14, item 5).

Every launch of the kernels below is run twice through a launch hook: first timing-only on copies of its
arguments, then as usual. The two must give the same records (every field, reads and writes), cycles,
per-core times and busy cycles, buffer layout and L2 counters; the timing-only copies must keep every byte
they held, while the real launch changes an output (so the byte check would see a computing op).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (DataCopy, GlobalTensor, TBuf, TPipe, TPosition, launch, kernel)
from ascend_sim.api.launch import launch_hook
from ascend_sim.engine.errors import RaceError
from ascend_sim.hw.dtypes import float32
from ascend_sim.kernels.add_custom import run_add_custom
from ascend_sim.kernels.matmul import run_matmul
from ascend_sim.models.lenet import LeNetRuntime


def _same_run(a, b) -> None:
    ra, rb = a.trace.records, b.trace.records
    assert len(ra) == len(rb) > 0
    for x, y in zip(ra, rb):
        assert x.as_dict() == y.as_dict()
    assert (a.cycles, a.core_times, a.buffers, a.l2) == (b.cycles, b.core_times, b.buffers, b.l2)


class _Twice:
    """A launch hook: each launch timing-only on copies, then for real; checks the two agree."""

    def __init__(self):
        self.launches = 0
        self.changed = 0

    def __call__(self, run, k, block_dim, *args, **kw):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        before = [a.copy() if isinstance(a, np.ndarray) else None for a in args]
        timing_only = run(k, block_dim, *copies, numerics=False, **kw)
        real = run(k, block_dim, *args, **kw)
        _same_run(real, timing_only)
        for c, b, a in zip(copies, before, args):
            if b is not None:
                assert c.tobytes() == b.tobytes(), f"{k.__name__}: numerics=False changed an argument"
                self.changed += a.tobytes() != b.tobytes()
        self.launches += 1
        return real


@pytest.mark.parametrize("case", ["add_custom", "matmul", "lenet_fp16", "lenet_fp32"])
def test_timing_only_gives_the_same_trace_and_leaves_memory_alone(case):
    twice = _Twice()
    with launch_hook(twice):
        if case == "add_custom":
            run_add_custom()
        elif case == "matmul":
            run_matmul(128, 128, 128, 32)
        else:
            images = np.random.default_rng(1).standard_normal((2, 1, 28, 28)).astype(np.float32)
            LeNetRuntime(dtype=case.split("_")[1].replace("fp", "float")).forward(images)
    assert twice.launches >= (5 if case.startswith("lenet") else 1)
    assert twice.changed >= twice.launches       # every real launch wrote its output: the byte check can fail


def test_the_flag_is_what_skips_the_values():
    """numerics=True on the same hook path writes the output (the skip is the flag, not the hook)."""
    a, b, c, _ = run_matmul(64, 64, 64, 32)
    c2 = np.full_like(c, 7)
    from ascend_sim.kernels.matmul import MatmulTiling, matmul_custom
    t = MatmulTiling(64, 64, 64, 32, 32, 32)
    launch(matmul_custom, 4, a, b, c2, t, numerics=False)
    assert (c2 == 7).all()
    launch(matmul_custom, 4, a, b, c2, t)
    assert np.array_equal(c2, c)


@kernel
def _racy(x, y):
    g = GlobalTensor(float32)
    g.SetGlobalBuffer(x, 64)
    buf = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(buf, 256)
    t = buf.Get(float32)
    DataCopy(t, g, 64)
    o = GlobalTensor(float32)
    o.SetGlobalBuffer(y, 64)
    DataCopy(o, t, 64)          # MTE3 reads what MTE2 wrote, with no synchronisation


def test_timing_only_keeps_the_sanitizer():
    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(RaceError):
        launch(_racy, 1, x, y, numerics=False)
