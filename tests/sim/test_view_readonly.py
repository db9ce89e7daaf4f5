"""``LocalTensor.view()`` is read-only: values in on-chip memory change only through instructions.

A writable view let a kernel compute its answer with numpy and put it into UB behind the simulator's back (the
grader scored it as the learner's kernel). Reading stays allowed (a debug aid, like ``peek``).
"""
import numpy as np
import pytest

from ascend_sim import DataCopy, GlobalTensor, TPipe, TPosition, TQue, float32, kernel, launch


def _smuggling_kernel(write_through_view: bool, seen: list | None = None):
    @kernel
    def k(x, z):
        xg, zg = GlobalTensor(float32), GlobalTensor(float32)
        xg.SetGlobalBuffer(x, 64)
        zg.SetGlobalBuffer(z, 64)
        pipe = TPipe()
        q = TQue(TPosition.VECIN, 1)
        pipe.InitBuffer(q, 1, 256)
        t = q.AllocTensor(float32)
        DataCopy(t, xg, 64)
        q.EnQue(t)
        t = q.DeQue(float32)
        if write_through_view:
            t.view()[:] = t.view() * 2          # numpy compute into UB: must be refused
            DataCopy(zg, t, 64)
        else:
            seen.append(t.view().copy())        # reading UB (a debug aid) is allowed
        q.FreeTensor(t)
    return k


def test_reading_the_view_is_allowed():
    x = np.arange(64, dtype=np.float32)
    seen: list = []
    launch(_smuggling_kernel(False, seen), 1, x, np.zeros_like(x))
    np.testing.assert_array_equal(seen[0], x)


def test_writing_through_the_view_is_refused():
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    with pytest.raises(ValueError, match="read-only"):
        launch(_smuggling_kernel(True), 1, x, z)
    assert not z.any()
