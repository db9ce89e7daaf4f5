"""Host pointers keep their C++ type: a ``T*`` filled by ``aclrtMallocHost((void**)&p, ...)`` or ``aclrtMalloc``
reads and steps as T, and a host function's ``T*`` parameter given a numpy array is a pointer to its first
element (``p + n`` is a pointer, not an elementwise sum)."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import ArgumentError
from ascend_sim.ascendc.host import acl
from cxx_util import load_src

SRC = """
#include "acl/acl.h"
// out[i] = w[offset + i] * 2 for i < n, through a host buffer from aclrtMallocHost and a device round trip
void twice_from(const half* w, uint32_t offset, uint32_t n, half* out)
{
    aclrtSetDevice(0);
    const half* src = w + offset;
    half* tmp = nullptr;
    aclrtMallocHost((void**)&tmp, n * sizeof(half));
    for (uint32_t i = 0; i < n; i++) {
        tmp[i] = (half)((float)src[i] * 2.0f);
    }
    float* dev = nullptr;
    aclrtMalloc((void**)&dev, 2 * n * sizeof(half), ACL_MEM_MALLOC_HUGE_FIRST);
    float* second = dev + n / 2;                 // n / 2 floats = n halves into the allocation
    aclrtMemcpy(second, n * sizeof(half), tmp, n * sizeof(half), ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(out, n * sizeof(half), second, n * sizeof(half), ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtFree(dev);
    aclrtFreeHost(tmp);
}
"""


def test_typed_host_and_device_pointers_step_by_their_type():
    mod = load_src(SRC, name="typed_ptrs")
    w = np.arange(24, dtype=np.float16).reshape(2, 3, 4)           # a C array: any shape, read in C order
    out = np.zeros(8, np.float16)
    with acl.session():
        mod.twice_from(w, 10, 8, out)
    np.testing.assert_array_equal(out, np.arange(10, 18, dtype=np.float16) * np.float16(2))


def test_a_numpy_array_of_another_type_is_refused_with_the_parameter_name():
    mod = load_src(SRC, name="typed_ptrs")
    with acl.session(), pytest.raises(ArgumentError, match=r"pointer parameter w points to float16, but the caller "
                                                           r"passed a float32 array"):
        mod.twice_from(np.zeros(16, np.float32), 0, 8, np.zeros(8, np.float16))
