"""TBuf.GetWithOffset<T>(size, bufOffset): a tensor bufOffset bytes into the buffer, under the API page's two rules
(asc-devkit docs, TBuf/GetWithOffset, 约束说明): bufOffset 32-byte aligned; size * sizeof(T) + bufOffset within the
TBuf. An unaligned offset is refused where it is taken, with the aligned neighbours as the fix."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (AlignmentError, DataCopy, GlobalTensor, HardEvent, OutOfBoundsError, SetFlag, TBuf, TPipe,
                        TPosition, WaitFlag, float32, kernel, launch)
from kernels_util import raises_rule

N = 64


@kernel
def copy_at(x, z, offset, init_bytes):
    """z = x, staged in UB through a tensor taken at byte ``offset`` of a TBuf."""
    xg, zg = GlobalTensor(float32), GlobalTensor(float32)
    xg.SetGlobalBuffer(x, N)
    zg.SetGlobalBuffer(z, N)
    ub = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(ub, init_bytes)
    t = ub.GetWithOffset(float32, N, offset)
    DataCopy(t, xg, N)
    SetFlag(HardEvent.MTE2_MTE3, 0)
    WaitFlag(HardEvent.MTE2_MTE3, 0)
    DataCopy(zg, t, N)


def run(offset: int, init_bytes: int = 4096) -> np.ndarray:
    x, z = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    launch(copy_at, 1, x, z, offset, init_bytes, gm_names=["x", "z"])
    return z


def test_an_aligned_offset_gives_the_tensor_at_that_byte():
    assert np.array_equal(run(0x120), np.arange(N, dtype=np.float32))


@pytest.mark.parametrize("offset", [0x11F, 0x104, 1])
def test_an_unaligned_offset_is_refused_with_the_aligned_neighbours(offset):
    down = offset // 32 * 32
    with raises_rule(AlignmentError, "GetWithOffset", "bufOffset", "32-byte aligned", f"{offset} % 32 = {offset % 32}",
                     f"{down} or {down + 32}", at="ub.GetWithOffset(float32, N, offset)"):
        run(offset)


def test_a_tensor_past_the_buffer_is_refused():
    with raises_rule(OutOfBoundsError, "GetWithOffset", "end at byte 4352", "holds 4096 bytes",
                     at="ub.GetWithOffset(float32, N, offset)"):
        run(4096, 4096)
