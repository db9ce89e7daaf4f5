"""A cell's host code launches a kernel an earlier cell defined: ``extern "C" __global__ __aicore__ void k(...);``
then ``k<<<blocks, nullptr, stream>>>(...)`` links to the notebook's ``k`` (module.link_externs); a kernel defined
nowhere, a name that is not a kernel or a declaration with other parameters is a file:line:col link error."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.ascendc import CompileError
from ascend_sim.ascendc.host import acl
from ascend_sim.ascendc.magic import run_cell
from ascend_sim.kernels.add_custom import add_custom
from cxx_util import HEADER

KERNEL_CELL = HEADER + """
extern "C" __global__ __aicore__ void add_one(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, n);
    yGm.SetGlobalBuffer((__gm__ half*)y, n);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(half));
    LocalTensor<half> t = buf.Get<half>();
    DataCopy(t, xGm, n);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    Adds(t, t, (half)1.0, n);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(yGm, t, n);
}
"""

DECLARATION = 'extern "C" __global__ __aicore__ void add_one(GM_ADDR x, GM_ADDR y, uint32_t n);\n'

HOST_BODY = """
// y = x + 2: two launches of add_one through device memory, as a host program does
void add_two(const half* x, uint32_t n, half* y)
{
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    size_t bytes = n * sizeof(half);
    uint8_t* xd = nullptr;
    uint8_t* yd = nullptr;
    aclrtMalloc((void**)&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(xd, bytes, x, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    add_one<<<1, nullptr, stream>>>(xd, yd, n);
    add_one<<<1, nullptr, stream>>>(yd, xd, n);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(y, bytes, xd, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtFree(xd);
    aclrtFree(yd);
    aclrtDestroyStream(stream);
}
"""

HOST_CELL = '#include "acl/acl.h"\n' + HEADER + DECLARATION + HOST_BODY
DECL_LINE = 5            # the declaration's line in the cell (the %%ascendc line is line 1)


def test_host_code_launches_the_kernel_an_earlier_cell_defined():
    ns: dict = {}
    run_cell("", KERNEL_CELL, ns, label="In[1]")
    run_cell("", HOST_CELL, ns, label="In[2]")
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    with acl.session() as rt:
        ns["add_two"](x, 64, y)
    np.testing.assert_array_equal(y, x + np.float16(2))
    assert [name for name, _, _ in rt.launches] == ["add_one", "add_one"]
    assert rt.launches[0][2].cycles > 0


def test_a_kernel_defined_later_in_the_same_source_needs_no_earlier_cell():
    ns: dict = {}
    run_cell("", '#include "acl/acl.h"\n' + HEADER + DECLARATION + HOST_BODY + KERNEL_CELL.replace(HEADER, ""),
             ns, label="In[1]")
    y = np.zeros(32, np.float16)
    with acl.session():
        ns["add_two"](np.ones(32, np.float16), 32, y)
    np.testing.assert_array_equal(y, np.full(32, 3, np.float16))


def _link_error(ns: dict) -> str:
    with pytest.raises(CompileError) as e:
        run_cell("", HOST_CELL, ns, label="In[2]")
    return str(e.value)


def test_an_undefined_kernel_is_a_link_error_at_the_declaration():
    text = _link_error({})
    col = DECLARATION.index("add_one") + 1
    assert text.startswith(f"<ascendc:In[2]>:{DECL_LINE}:{col}: error: undefined kernel 'add_one'"), text
    assert "run the cell that defines add_one first" in text and DECLARATION.strip() in text


def test_a_name_that_is_not_a_kernel_is_a_link_error():
    text = _link_error({"add_one": 3})
    assert f"<ascendc:In[2]>:{DECL_LINE}:" in text and "'add_one' is a int in the notebook, not a kernel" in text


def test_a_declaration_with_other_parameters_is_a_link_error():
    ns: dict = {}
    run_cell("", KERNEL_CELL.replace(", uint32_t n)", ", uint32_t n, uint32_t m)"), ns, label="In[1]")
    text = _link_error(ns)
    assert "declared here with 3 parameters, but the kernel add_one defined earlier takes 4" in text, text
    # a Python kernel of that name links by its signature too (add_custom takes x, y, z, tiling)
    text = _link_error({"add_one": add_custom})
    assert "declared here with 3 parameters, but the kernel add_one defined earlier takes 4" in text, text
