"""Static tensors placed over each other's data: the launch warns at the read, naming both writes and their ranges.

The official cross_core_set_wait_flag sample's scenario 2 has this mistake in L1 (tests/ascendc/
test_cxx_official_samples.py); here it is in UB, where a vector instruction reads the damaged tensor. The chip
computes the same as the simulator (B's bytes in A's tail), so it is a SanitizerWarning, and the numbers show it.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from ascend_sim import Adds, DataCopy, HardEvent, LocalTensor, TPosition, half, kernel, launch
from ascend_sim.engine.errors import ArgumentError, SanitizerWarning
from kernels_util import gm, handoff

N = 512                 # halves: 1,024 bytes per tensor


@kernel
def two_tiles(x, y, z, cfg):
    """x -> a (UB 0), y -> b (UB ``b_at``), then z = a + 1 (or, with ``slice_update``, y's first 16 halves into
    a[0:16] first: an update inside a's own range)."""
    b_at, slice_update = cfg
    a = LocalTensor[half](TPosition.VECCALC, 0, N)
    b = LocalTensor[half](TPosition.VECCALC, b_at, N)
    out = LocalTensor[half](TPosition.VECCALC, 4096, N)
    DataCopy(a, gm(x), N)  # <- copy into a
    if slice_update:
        DataCopy(a[0:16], gm(y), 16)
    else:
        DataCopy(b, gm(y), N)  # <- copy into b
    handoff(HardEvent.MTE2_V)
    Adds(out, a, 1.0, N)  # <- read a
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z), out, N)


def run(b_at: int, slice_update: bool = False):
    x = np.arange(N).astype(half)
    y = np.full(N, -7, half)
    z = np.zeros(N, half)
    launch(two_tiles, 1, x, y, z, (b_at, slice_update))
    return x, y, z


def test_b_placed_inside_a_is_named_at_the_read():
    with pytest.warns(SanitizerWarning) as caught:
        x, y, z = run(512)          # b at byte 512: its first 512 bytes are a's second half
    (w,) = [w.message for w in caught if isinstance(w.message, SanitizerWarning)]
    msg = str(w)
    assert isinstance(w.error, ArgumentError) and w.error.kind == "tensors-overlap"
    assert "test_sanitizer_static_overlap.py:" in msg and "Adds(out, a, 1.0, N)" in msg.splitlines()[0]
    assert "DataCopy(a, gm(x), N)" in msg and "DataCopy(b, gm(y), N)" in msg
    assert "(UB bytes 0..1023)" in msg and "wrote UB bytes 512..1535 over UB bytes 512..1023" in msg
    assert "address 1024 or later" in msg
    expected = (x + np.float16(1)).astype(half)
    expected[256:] = y[:256] + np.float16(1)            # what the chip computes: b's halves in a's tail
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("b_at,slice_update", [(1024, False), (2048, False), (1024, True)])
def test_apart_or_a_slice_update_runs_without_a_finding(b_at, slice_update):
    """b right after a, b further on, and y copied into a slice of a itself: no warning, exact."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, y, z = run(b_at, slice_update)
    expected = x.copy()
    if slice_update:
        expected[:16] = y[:16]
    np.testing.assert_array_equal(z, (expected + np.float16(1)).astype(half))
