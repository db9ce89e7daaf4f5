"""TBuf.GetWithOffset<T>(size, bufOffset) in C++ lowers to the Python API's GetWithOffset and keeps its rules
(tests/sim/test_tbuf_get_with_offset.py has the rules themselves)."""
import numpy as np
import pytest

from ascend_sim import AlignmentError, launch
from cxx_util import load_src

N = 64

GET_WITH_OFFSET_CPP = """
__global__ __vector__ void copy_at(__gm__ float* x, __gm__ float* z, uint32_t offset)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> ub;
    GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer(x, 64);
    zGm.SetGlobalBuffer(z, 64);
    pipe.InitBuffer(ub, 4096);
    LocalTensor<float> t = ub.GetWithOffset<float>(64, offset);
    DataCopy(t, xGm, 64);
    SetFlag<HardEvent::MTE2_MTE3>(0);
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    DataCopy(zGm, t, 64);
}
"""


def test_the_cpp_spelling_lowers_to_the_same_rules():
    kern = load_src(GET_WITH_OFFSET_CPP, name="get_with_offset").copy_at
    x, z = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    launch(kern, 1, x, z, 0x40)
    assert np.array_equal(z, x)
    with pytest.raises(AlignmentError, match="65 % 32 = 1") as e:
        launch(kern, 1, x, np.zeros(N, np.float32), 65)
    assert "GetWithOffset<float>" in str(e.value) or "bufOffset" in str(e.value)
