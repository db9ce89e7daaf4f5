"""The simulated ACL runtime (ascend_sim/ascendc/host/acl.py), driven from Python as lowered host code calls it.

Each learner mistake raises AclError at the calling line with the rule, the numbers and the fix; the happy
path of an example's main() moves the data exactly and records the launch.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import Add, DataCopy, GetBlockIdx, GlobalTensor, TPipe, TPosition, TQue, kernel
from ascend_sim.ascendc.cxx import Ref
from ascend_sim.ascendc.host.pointers import HostPtr
from ascend_sim.ascendc.host import acl
from ascend_sim.ascendc.host.acl import AclError

N, BLOCKS = 1024, 4


@kernel
def add_f32(x, y, z, n):
    """z = x + y on float32, n elements per block; x, y, z arrive as byte pointers (GM_ADDR)."""
    x, y, z = x.cast(np.float32), y.cast(np.float32), z.cast(np.float32)
    off = GetBlockIdx() * n
    gx, gy, gz = GlobalTensor(np.float32), GlobalTensor(np.float32), GlobalTensor(np.float32)
    gx.SetGlobalBuffer(x + off, n)
    gy.SetGlobalBuffer(y + off, n)
    gz.SetGlobalBuffer(z + off, n)
    pipe, qx, qy, qz = TPipe(), TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 1, n * 4)
    a, b = qx.AllocTensor(np.float32), qy.AllocTensor(np.float32)
    DataCopy(a, gx, n)
    DataCopy(b, gy, n)
    qx.EnQue(a)
    qy.EnQue(b)
    a, b = qx.DeQue(np.float32), qy.DeQue(np.float32)
    c = qz.AllocTensor(np.float32)
    Add(c, a, b, n)
    qz.EnQue(c)
    qx.FreeTensor(a)
    qy.FreeTensor(b)
    c = qz.DeQue(np.float32)
    DataCopy(gz, c, n)
    qz.FreeTensor(c)


class Var:
    """A C local variable; ``ref()`` is ``&var`` as the front end lowers it."""

    def __init__(self, value=None):
        self.value = value

    def ref(self) -> Ref:
        return Ref(lambda: self.value, lambda v: setattr(self, "value", v))


@pytest.fixture
def rt():
    with acl.session() as state:
        assert acl.aclInit(None) == acl.ACL_SUCCESS
        assert acl.aclrtSetDevice(0) == acl.ACL_SUCCESS
        yield state


def _device(nbytes: int):
    p = Var()
    assert acl.aclrtMalloc(p.ref(), nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST) == acl.ACL_SUCCESS
    return p.value


def _upload(host: np.ndarray):
    d = _device(host.nbytes)
    acl.aclrtMemcpy(d, host.nbytes, host, host.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return d


def _inputs():
    rng = np.random.default_rng(0)
    return rng.uniform(-1, 1, (2, N * BLOCKS)).astype(np.float32)


def test_an_example_main_runs_exactly_and_records_the_launch(rt):
    x, y = _inputs()
    stream, zhost = Var(), Var()
    assert acl.aclrtCreateStream(stream.ref()) == acl.ACL_SUCCESS
    xd, yd, zd = _upload(x), _upload(y), _device(x.nbytes)
    assert acl.aclrtMallocHost(zhost.ref(), x.nbytes) == acl.ACL_SUCCESS
    acl.launch_kernel(add_f32, BLOCKS, stream.value, xd, yd, zd, N)
    assert acl.aclrtSynchronizeStream(stream.value) == acl.ACL_SUCCESS
    assert acl.aclrtMemcpy(zhost.value, x.nbytes, zd, x.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    z = zhost.value.buf.view(np.float32)
    np.testing.assert_array_equal(z, x + y)
    (name, blocks, result), = rt.launches
    assert (name, blocks) == ("add_f32", BLOCKS) and result.cycles > 0
    for p in (xd, yd, zd):
        assert acl.aclrtFree(p) == 0
    assert acl.aclrtFreeHost(zhost.value) == 0
    assert rt.leaks() == []
    assert acl.aclrtDestroyStream(stream.value) == 0
    assert acl.aclrtResetDevice(0) == 0 and acl.aclFinalize() == 0


def test_memcpy_kinds_and_memset(rt):
    src = np.arange(64, dtype=np.uint8)
    a, b = _device(64), _device(64)
    host = Var()
    acl.aclrtMallocHost(host.ref(), 64)
    acl.aclrtMemcpy(a, 64, src, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    acl.aclrtMemcpy(b + 16, 48, a, 32, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
    acl.aclrtMemset(b, 64, 0x1FF, 16)                        # the low byte of the value, as memset
    acl.aclrtMemcpy(host.value, 64, b, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    dst = np.zeros(64, np.uint8)
    acl.aclrtMemcpy(dst, 64, host.value, 64, acl.ACL_MEMCPY_HOST_TO_HOST)
    want = np.concatenate([np.full(16, 0xFF, np.uint8), src[:32], np.zeros(16, np.uint8)])
    np.testing.assert_array_equal(dst, want)
    acl.aclrtMemcpy(dst, 64, a, 64, acl.ACL_MEMCPY_DEFAULT)  # DEFAULT reads the direction from the pointers
    np.testing.assert_array_equal(dst, src)


def test_return_codes_of_calls_that_do_not_fail_loudly():
    with acl.session():
        assert acl.aclFinalize() == acl.ACL_ERROR_UNINITIALIZE == 100001
        assert acl.aclInit(None) == 0 and acl.aclInit(None) == acl.ACL_ERROR_REPEAT_INITIALIZE == 100002
        assert acl.aclrtSetDevice(3) == acl.ACL_ERROR_RT_INVALID_DEVICEID == 107001
        assert acl.aclrtFree(None) == acl.ACL_ERROR_INVALID_PARAM == 100000


def _raises(kind: str, *words: str):
    """pytest.raises(AclError) whose kind is ``kind`` and whose text has ``words`` and a fix."""
    class Check:
        def __enter__(self):
            self.ctx = pytest.raises(AclError)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            self.ctx.__exit__(*exc)
            err = self.info.value
            assert err.kind == kind, (err.kind, str(err))
            for w in words:
                assert w in str(err), (w, str(err))
            assert err.fix and "Fix:" in str(err)
            assert err.site[0] == __file__, err.site          # the caller's line, not the runtime's
            return True
    return Check()


def test_memcpy_past_an_allocation_names_the_numbers(rt):
    d = _device(100)
    with _raises("out-of-bounds", "128 bytes at byte 0", "100 bytes", "28 bytes past its end"):
        acl.aclrtMemcpy(d, 128, np.zeros(128, np.uint8), 128, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    with _raises("out-of-bounds", "at byte 96"):
        acl.aclrtMemcpy(np.zeros(8, np.uint8), 8, d + 96, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST)


def test_dest_max_smaller_than_count(rt):
    d = _device(256)
    with _raises("dest-max", "count = 256", "destMax = 128", "ACL_ERROR_INVALID_PARAM = 100000"):
        acl.aclrtMemcpy(d, 128, np.zeros(256, np.uint8), 256, acl.ACL_MEMCPY_HOST_TO_DEVICE)


def test_wrong_direction_names_the_right_kind(rt):
    d = _device(64)
    with _raises("memcpy-direction", "ACL_MEMCPY_DEVICE_TO_HOST", "use ACL_MEMCPY_HOST_TO_DEVICE"):
        acl.aclrtMemcpy(d, 64, np.zeros(64, np.uint8), 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)


def test_use_after_free_and_double_free(rt):
    d = _device(64)
    acl.aclrtFree(d)
    with _raises("use-after-free", "already freed"):
        acl.aclrtMemcpy(np.zeros(64, np.uint8), 64, d, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    with _raises("double-free", "second time", "ACL_ERROR_RT_MEMORY_FREE"):
        acl.aclrtFree(d)
    with _raises("use-after-free", "argument 0"):
        acl.launch_kernel(add_f32, 1, None, d, d, d, 16)
    h = Var()
    acl.aclrtMallocHost(h.ref(), 64)
    acl.aclrtFreeHost(h.value)
    with _raises("double-free"):
        acl.aclrtFreeHost(h.value)
    with _raises("free-kind", "aclrtFreeHost"):
        acl.aclrtFree(HostPtr(np.zeros(8, np.uint8)))


def test_launching_with_a_host_pointer(rt):
    x, y = _inputs()
    with _raises("host-pointer-launch", "argument 1 of add_f32", "aclrtMemcpy"):
        acl.launch_kernel(add_f32, BLOCKS, None, _upload(x), y, _device(x.nbytes), N)


def test_reading_results_before_synchronising_the_stream(rt):
    x, y = _inputs()
    stream = Var()
    acl.aclrtCreateStream(stream.ref())
    zd = _device(x.nbytes)
    acl.launch_kernel(add_f32, BLOCKS, stream.value, _upload(x), _upload(y), zd, N)
    out = np.zeros_like(x)
    with _raises("unsynchronized", "stream #1", "aclrtSynchronizeStream"):
        acl.aclrtMemcpy(out, out.nbytes, zd, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    with _raises("destroy-unsynchronized", "3 device allocation(s)"):
        acl.aclrtDestroyStream(stream.value)
    acl.aclrtSynchronizeStream(stream.value)
    acl.aclrtMemcpy(out, out.nbytes, zd, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    np.testing.assert_array_equal(out, x + y)


def test_host_code_cannot_dereference_device_memory_and_needs_a_device(rt):
    d = _device(64)
    with _raises("host-deref", "aclrtMemcpy"):
        d.cast(np.float32)[3]
    with _raises("host-deref", "writes device memory"):
        d[0] = 1
    with acl.session():
        with _raises("no-device", "aclrtSetDevice", "ACL_ERROR_RT_CONTEXT_NULL"):
            _device(64)


def test_a_kernel_error_inside_a_launch_passes_through(rt):
    from ascend_sim import OutOfBoundsError
    x, y = _inputs()
    small = _device(x.nbytes // 2)              # z holds half the output: the kernel's DataCopy writes past it
    with pytest.raises(OutOfBoundsError):
        acl.launch_kernel(add_f32, BLOCKS, None, _upload(x), _upload(y), small, N)


def test_context_and_fp16_helpers():
    with acl.session():
        ctx = Var()
        assert acl.aclrtCreateContext(ctx.ref(), 0) == 0 and acl.current().device == 0
        assert acl.aclrtDestroyContext(ctx.value) == 0 and acl.aclrtDestroyContext(7) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.aclFloatToFloat16(1.0) == 0x3C00 and acl.aclFloat16ToFloat(0xC000) == -2.0
    assert acl.aclFloatToFloat16(1 + 2 ** -11) == 0x3C00         # a tie rounds to even


def test_every_function_acl_h_declares_is_simulated():
    """The front end lowers each call declared in include/acl/acl.h to the function of that name here."""
    import clang.cindex as ci
    from ascend_sim.ascendc.syntax import INCLUDE_DIR
    header = INCLUDE_DIR / "acl" / "acl.h"
    tu = ci.Index.create().parse(str(header), args=["-x", "c++", "-std=c++17"])
    declared = {c.spelling for c in tu.cursor.walk_preorder()
                if c.kind == ci.CursorKind.FUNCTION_DECL and c.location.file and c.location.file.name == str(header)}
    assert len(declared) >= 14
    assert sorted(n for n in declared if not callable(getattr(acl, n, None))) == []
    enums = {c.spelling: c.enum_value for c in tu.cursor.walk_preorder() if c.kind == ci.CursorKind.ENUM_CONSTANT_DECL
             and c.location.file and c.location.file.name == str(header)}
    assert enums and all(int(getattr(acl, n)) == v for n, v in enums.items())


def test_a_struct_copies_its_c_layout_both_ways(rt):
    from ascend_sim.ascendc.cxx import Struct

    class Tiling(Struct):             # a lowered C struct: uint32_t totalLength; float scale;
        __slots__ = ("totalLength", "scale")
        _fields = (("totalLength", 0), ("scale", 0.0))
        _layout = (("totalLength", 0, np.uint32, 1), ("scale", 4, np.float32, 1))
        _size = 8
    d = _device(8)
    acl.aclrtMemcpy(d, 8, Tiling(16384, 0.5), 8, acl.ACL_MEMCPY_HOST_TO_DEVICE)      # `&tiling` as lowered
    out = np.zeros(2, np.uint32)
    acl.aclrtMemcpy(out, 8, d, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert out[0] == 16384 and out[1:].view(np.float32)[0] == 0.5
    back = Var(Tiling())                                                              # `&back` of a boxed local
    acl.aclrtMemcpy(back.ref(), 8, d, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert (back.value.totalLength, back.value.scale) == (16384, 0.5)
    with _raises("out-of-bounds", "16 bytes at byte 0 of a 8-byte Tiling"):
        acl.aclrtMemcpy(_device(16), 16, Tiling(), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
