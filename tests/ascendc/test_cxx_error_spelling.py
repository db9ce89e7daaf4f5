"""A KernelError raised at a C++ kernel's line spells the code of its rule and its Fix in C++; the same mistake in a
Python kernel keeps the Python spelling, byte for byte (ascend_sim/engine/spelling.py)."""
import numpy as np
import pytest

from ascend_sim import (DataCopy, Add, GlobalTensor, QueueError, RaceError, SyncError, TBuf, TPipe, TPosition,
                        TQue, WaitFlag, HardEvent, float32, kernel, launch)
from cxx_util import load_src

RACE_CPP = """
__global__ __vector__ void race(__gm__ float* x, __gm__ float* z, uint32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(x, n);
    pipe.InitBuffer(buf, n * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    DataCopy(a, xGm, n);
    Add(a, a, a, n);
}
"""


@kernel
def race(x, z, n):
    pipe, buf, xGm = TPipe(), TBuf(TPosition.VECCALC), GlobalTensor()
    xGm.SetGlobalBuffer(x, n)
    pipe.InitBuffer(buf, n * 4)
    a = buf.Get(float32)
    DataCopy(a, xGm, n)
    Add(a, a, a, n)


def _error(kern, exc, *args):
    with pytest.raises(exc) as e:
        launch(kern, 1, *args)
    return e.value


def test_a_race_in_cpp_names_the_flag_pair_in_cpp_and_in_python_in_python():
    x = np.ones(64, np.float32)
    cpp = _error(load_src(RACE_CPP, name="race_spelling").race, RaceError, x, x.copy(), 64)
    assert cpp.language == "cpp"
    assert ("put SetFlag<HardEvent::MTE2_V>(id) after it and WaitFlag<HardEvent::MTE2_V>(id) before the reader"
            in cpp.fix), cpp.fix
    assert "HardEvent." not in str(cpp)
    py = _error(race, RaceError, x, x.copy(), 64)
    assert py.language == "python"
    assert "put SetFlag(HardEvent.MTE2_V, id) after it and WaitFlag(HardEvent.MTE2_V, id) before the reader" in py.fix
    assert "«" not in str(py) and "::" not in str(py)


QUEUE_CPP = """
__global__ __vector__ void noenque(__gm__ float* x, uint32_t n)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQueueX;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(x, n);
    pipe.InitBuffer(inQueueX, 1, n * sizeof(float));
    LocalTensor<float> t = inQueueX.AllocTensor<float>();
    DataCopy(t, xGm, n);
    t = inQueueX.DeQue<float>();
    inQueueX.FreeTensor(t);
}
"""


@kernel
def noenque(x, n):
    pipe, inQueueX, xGm = TPipe(), TQue(TPosition.VECIN, 1), GlobalTensor()
    xGm.SetGlobalBuffer(x, n)
    pipe.InitBuffer(inQueueX, 1, n * 4)
    t = inQueueX.AllocTensor(float32)
    DataCopy(t, xGm, n)
    t = inQueueX.DeQue(float32)
    inQueueX.FreeTensor(t)


def test_an_empty_deque_in_cpp_shows_the_cpp_deque():
    x = np.ones(64, np.float32)
    cpp = _error(load_src(QUEUE_CPP, name="queue_spelling").noenque, QueueError, x, 64)
    assert cpp.kind == "deque-empty"
    assert "inQueueX.EnQue(tensor) before inQueueX.DeQue<T>() in Compute" in cpp.fix, cpp.fix
    py = _error(noenque, QueueError, x, 64)
    assert "inQueueX.EnQue(tensor) before inQueueX.DeQue() in Compute" in py.fix, py.fix


SYNC_CPP = """
__global__ __vector__ void nowait(__gm__ float* x, uint32_t n)
{
    WaitFlag<HardEvent::MTE2_V>(0);
}
"""


@kernel
def nowait(x, n):
    WaitFlag(HardEvent.MTE2_V, 0)


def test_a_wait_without_set_in_cpp_speaks_cpp_in_the_rule_and_the_fix():
    x = np.ones(64, np.float32)
    cpp = _error(load_src(SYNC_CPP, name="sync_spelling").nowait, SyncError, x, 64)
    assert cpp.rule_message.startswith("WaitFlag<HardEvent::MTE2_V>(0) has no SetFlag<HardEvent::MTE2_V>(0) before it")
    assert cpp.fix.startswith("issue SetFlag<HardEvent::MTE2_V>(0) after the MTE2 instruction"), cpp.fix
    py = _error(nowait, SyncError, x, 64)
    assert py.rule_message.startswith("WaitFlag(MTE2_V, 0) has no SetFlag(MTE2_V, 0) before it")
    assert py.fix.startswith("issue SetFlag(MTE2_V, 0) after the MTE2 instruction"), py.fix
