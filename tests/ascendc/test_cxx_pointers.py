"""Pointer arithmetic on __gm__ pointers: a cast changes the element size, + n moves by elements."""
import numpy as np

from ascend_sim import launch
from cxx_util import load_src

SRC = """
__global__ __vector__ void copy_shifted(GM_ADDR x, GM_ADDR y, uint32_t offset)
{
    __gm__ float* src = (__gm__ float*)x + offset;       // GM_ADDR is uint8_t*: the cast sets sizeof(T) = 4
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(y);
    dst = dst + 8 * GetBlockIdx();
    src += 8 * GetBlockIdx();
    GlobalTensor<float> s, d;
    s.SetGlobalBuffer(src, 8);
    d.SetGlobalBuffer(dst, 8);
    LocalMemAllocator<Hardware::UB> ub;
    LocalTensor<float> t = ub.Alloc<float, 8>();
    DataCopy(t, s, 8);
    PipeBarrier<PIPE_ALL>();
    DataCopy(d, t, 8);
}
"""


def test_gm_pointer_arithmetic_counts_elements():
    mod = load_src(SRC, name="pointers")
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(32, np.float32)
    launch(mod.copy_shifted, 4, x, y, 16)
    np.testing.assert_array_equal(y, x[16:48])
