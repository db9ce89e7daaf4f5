"""The simulated subset of the ACL runtime (AscendCL) that the host ``main()`` of an Ascend C example calls.

The failure this exists to prevent: a learner's host code that copies past an allocation, reads results
before the stream finished, or hands a host pointer to a kernel "works" in a simulator and crashes or
returns garbage on the NPU. Here each such mistake raises :class:`AclError` at the learner's C++ line with
the rule, the numbers and the fix.

The functions have the C names and return ACL's codes (``ACL_SUCCESS`` = 0); output parameters
(``aclrtMalloc((void**)&p, ...)``, ``aclrtCreateStream(&s)``) are the front end's ``cxx.Box`` / ``cxx.Ref``
(anything with ``set``). Device memory is a
numpy uint8 array per ``aclrtMalloc``; a ``<<<blocks, 0, stream>>>`` launch is :func:`launch_kernel`, which
gives each :class:`DevicePtr` argument to ``ascend_sim.launch`` as a byte view of its allocation (the
kernel writes outputs in place) and records the ``LaunchResult`` for ``ascend-sim run``'s summary.
Streams are modelled as asynchronous: device memory a launch was given is "in flight" until
``aclrtSynchronizeStream`` (or ``aclrtSynchronizeDevice``), and touching it before is an error.

Codes and enum values: CANN AscendCL API reference (``acl_base.h`` / ``acl_rt.h``: aclError return codes,
``aclrtMemcpyKind``, ``aclrtMemMallocPolicy``), https://www.hiascend.com/document (AscendCL API reference,
"aclError" and "Memory management").
"""
from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Iterator

import numpy as np

from ascend_sim import KernelError, launch
from ascend_sim.ascendc.cxx import Struct
from ascend_sim.ascendc.host.pointers import HostPtr

__all__ = [
    "AclError", "DevicePtr", "Stream", "Runtime", "session", "current", "launch_kernel",
    "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice", "aclrtCreateStream", "aclrtDestroyStream",
    "aclrtSynchronizeStream", "aclrtSynchronizeDevice", "aclrtMalloc", "aclrtMallocHost", "aclrtFree",
    "aclrtFreeHost", "aclrtMemcpy", "aclrtMemset", "aclrtMemcpyKind", "aclrtMemMallocPolicy",
    "aclrtCreateContext", "aclrtDestroyContext", "aclFloat16ToFloat", "aclFloatToFloat16",
]

# ----------------------------------------------------------------------------- return codes (acl_base.h, acl_rt.h)
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_MEMORY_FREE = 207002

CODE_NAMES = {v: k for k, v in dict(globals()).items() if k.startswith("ACL_") and isinstance(v, int)}


class aclrtMemcpyKind(IntEnum):
    """Direction of an ``aclrtMemcpy``."""

    ACL_MEMCPY_HOST_TO_HOST = 0
    ACL_MEMCPY_HOST_TO_DEVICE = 1
    ACL_MEMCPY_DEVICE_TO_HOST = 2
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
    ACL_MEMCPY_DEFAULT = 4          # the runtime reads the direction from the two addresses


class aclrtMemMallocPolicy(IntEnum):
    """Page policy of an ``aclrtMalloc`` (the simulator ignores it once it is a valid value)."""

    ACL_MEM_MALLOC_HUGE_FIRST = 0
    ACL_MEM_MALLOC_HUGE_ONLY = 1
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5


globals().update(aclrtMemcpyKind.__members__)          # ACL_MEMCPY_HOST_TO_DEVICE ... as module names, like C
globals().update(aclrtMemMallocPolicy.__members__)     # ACL_MEM_MALLOC_HUGE_FIRST ...
__all__ += list(aclrtMemcpyKind.__members__) + list(aclrtMemMallocPolicy.__members__) + list(CODE_NAMES.values())


class AclError(KernelError):
    """Host code misused the ACL runtime: a copy past an allocation, use after free, a read before the stream synchronised."""

    check = "acl"

    def __init__(self, message: str, fix: str, kind: str, code: int | None = None):
        self.code = code
        if code is not None:
            message += f" (on the NPU the call returns {CODE_NAMES.get(code, code)} = {code})"
        super().__init__(message, fix=fix, kind=kind)


# ----------------------------------------------------------------------------- memory and streams
@dataclass(eq=False)
class DeviceAllocation:
    """One ``aclrtMalloc``: its bytes, the size asked for, and what happened to it."""

    number: int
    data: np.ndarray                    # np.uint8, exactly the requested size
    freed: bool = False
    in_flight: "Stream | None" = None   # the stream of a launch that was given it and is not synchronised yet

    @property
    def name(self) -> str:
        return f"device allocation #{self.number} ({self.data.size:,} bytes)"


class DevicePtr:
    """A device pointer (``aclrtMalloc``'s result): an allocation, a byte offset and the pointee dtype."""

    __slots__ = ("alloc", "offset", "dtype")

    def __init__(self, alloc: DeviceAllocation, offset: int = 0, dtype: Any = np.uint8):
        self.alloc, self.offset, self.dtype = alloc, int(offset), np.dtype(dtype)

    def __add__(self, n: int) -> "DevicePtr":
        return DevicePtr(self.alloc, self.offset + int(n) * self.dtype.itemsize, self.dtype)

    __radd__ = __add__

    def __sub__(self, n: int) -> "DevicePtr":
        return self + (-int(n))

    def cast(self, dtype: Any) -> "DevicePtr":
        """``(T*)p``: the same address with another pointee type."""
        return DevicePtr(self.alloc, self.offset, dtype)

    def __getitem__(self, i):
        raise AclError(f"host code reads device memory through a device pointer ({self.alloc.name})",
                       fix="copy the data to host memory first: aclrtMemcpy(hostPtr, size, devPtr, size, "
                           "ACL_MEMCPY_DEVICE_TO_HOST), then read hostPtr", kind="host-deref")

    def __setitem__(self, i, value):
        raise AclError(f"host code writes device memory through a device pointer ({self.alloc.name})",
                       fix="fill host memory, then aclrtMemcpy(devPtr, size, hostPtr, size, "
                           "ACL_MEMCPY_HOST_TO_DEVICE)", kind="host-deref")

    def __repr__(self) -> str:
        return f"DevicePtr(#{self.alloc.number}+{self.offset}B, {self.dtype})"


@dataclass(eq=False)
class Stream:
    """An ``aclrtStream``: the launches issued on it and not yet synchronised."""

    number: int
    destroyed: bool = False
    pending: list = field(default_factory=list)     # DeviceAllocations in flight on this stream

    def __repr__(self) -> str:
        return f"Stream(#{self.number})"


DEFAULT_STREAM = None   # ``<<<n, 0, nullptr>>>`` / ``aclrtSynchronizeStream(nullptr)``: the default stream


@dataclass(eq=False)
class Runtime:
    """The ACL state of one simulated process: init, device, streams, allocations and the launches run."""

    chip: Any = None
    auto_sync: bool = True                                  # False: as built with --cce-auto-sync=off
    initialized: bool = False
    device: int | None = None
    streams: list = field(default_factory=list)
    allocations: list = field(default_factory=list)
    host_allocations: dict = field(default_factory=dict)    # id(buffer) -> [buffer, freed]
    launches: list = field(default_factory=list)            # (kernel name, blocks, LaunchResult)
    default_stream: Stream = field(default_factory=lambda: Stream(0))
    _numbers: Any = field(default_factory=lambda: itertools.count(1))

    def leaks(self) -> list[str]:
        """What ``main`` allocated and never freed (a note for ``ascend-sim run``)."""
        out = [a.name for a in self.allocations if not a.freed]
        out += [f"host allocation ({b.size:,} bytes)" for b, freed in self.host_allocations.values() if not freed]
        return out


_state = Runtime()


def current() -> Runtime:
    """The runtime the ACL functions act on."""
    return _state


@contextlib.contextmanager
def session(chip: Any = None, auto_sync: bool = True) -> Iterator[Runtime]:
    """A fresh simulated process for the block (``ascend-sim run`` runs each ``main`` in one); ``auto_sync=False``:
    its kernels as built with ``--cce-auto-sync=off``."""
    global _state
    saved, _state = _state, Runtime(chip=chip, auto_sync=auto_sync)
    try:
        yield _state
    finally:
        _state = saved


# ----------------------------------------------------------------------------- init, device, streams
def aclInit(configPath: Any = None) -> int:
    """Initialise ACL (once per process; a second call returns ACL_ERROR_REPEAT_INITIALIZE)."""
    if _state.initialized:
        return ACL_ERROR_REPEAT_INITIALIZE
    _state.initialized = True
    return ACL_SUCCESS


def aclFinalize() -> int:
    """End ACL (returns ACL_ERROR_UNINITIALIZE without an aclInit)."""
    if not _state.initialized:
        return ACL_ERROR_UNINITIALIZE
    _state.initialized = False
    return ACL_SUCCESS


def aclrtSetDevice(deviceId: int) -> int:
    """Bind the process to device ``deviceId`` (the simulator has device 0 only)."""
    if int(deviceId) != 0:
        return ACL_ERROR_RT_INVALID_DEVICEID
    _state.device = 0
    return ACL_SUCCESS


def aclrtResetDevice(deviceId: int) -> int:
    """Release the device (waits for its streams, as the runtime does)."""
    if _state.device is None or int(deviceId) != _state.device:
        return ACL_ERROR_RT_INVALID_DEVICEID
    _synchronize_all()
    _state.device = None
    return ACL_SUCCESS


def _need_device(call: str) -> None:
    if _state.device is None:
        raise AclError(f"{call} before aclrtSetDevice: no device context is bound to the process",
                       fix="call aclInit(nullptr) and aclrtSetDevice(0) first, as the examples' main() does",
                       kind="no-device", code=ACL_ERROR_RT_CONTEXT_NULL)


def aclrtCreateStream(stream: Any) -> int:
    """``aclrtCreateStream(&stream)``: a new stream into ``*stream``."""
    _need_device("aclrtCreateStream")
    s = Stream(next(_state._numbers))
    _state.streams.append(s)
    _out(stream, "aclrtCreateStream", "&stream").set(s)
    return ACL_SUCCESS


def _stream(stream: Any, call: str) -> Stream:
    if stream is DEFAULT_STREAM or isinstance(stream, int) and stream == 0:
        return _state.default_stream
    if not isinstance(stream, Stream):
        raise AclError(f"{call} got {type(stream).__name__} {stream!r} where an aclrtStream belongs",
                       fix="pass the stream aclrtCreateStream(&stream) made (or nullptr for the default stream)",
                       kind="bad-stream", code=ACL_ERROR_INVALID_PARAM)
    if stream.destroyed:
        raise AclError(f"{call} uses stream #{stream.number} after aclrtDestroyStream",
                       fix="destroy a stream only after its last launch and aclrtSynchronizeStream",
                       kind="stream-destroyed", code=ACL_ERROR_INVALID_PARAM)
    return stream


def aclrtSynchronizeStream(stream: Any) -> int:
    """Wait for the stream's launches: their device memory may be read and written again."""
    s = _stream(stream, "aclrtSynchronizeStream")
    for alloc in s.pending:
        if alloc.in_flight is s:
            alloc.in_flight = None
    s.pending.clear()
    return ACL_SUCCESS


def aclrtSynchronizeDevice() -> int:
    """Wait for every stream of the device."""
    _synchronize_all()
    return ACL_SUCCESS


def _synchronize_all() -> None:
    for s in [_state.default_stream, *_state.streams]:
        if not s.destroyed:
            aclrtSynchronizeStream(s if s is not _state.default_stream else DEFAULT_STREAM)


def aclrtDestroyStream(stream: Any) -> int:
    """Destroy a stream; its launches must have been synchronised first."""
    s = _stream(stream, "aclrtDestroyStream")
    if s.pending:
        raise AclError(f"aclrtDestroyStream(stream #{s.number}) while {len(s.pending)} device allocation(s) "
                       "given to its launches are still in flight",
                       fix="call aclrtSynchronizeStream(stream) after the launches and before aclrtDestroyStream",
                       kind="destroy-unsynchronized")
    s.destroyed = True
    return ACL_SUCCESS


def aclrtCreateContext(context: Any, deviceId: int) -> int:
    """``aclrtCreateContext(&ctx, 0)``: binds the device as aclrtSetDevice does (one context per process here)."""
    code = aclrtSetDevice(deviceId)
    if code == ACL_SUCCESS:
        _out(context, "aclrtCreateContext", "&context").set(("context", int(deviceId)))
    return code


def aclrtDestroyContext(context: Any) -> int:
    """Destroy a context from aclrtCreateContext."""
    return ACL_SUCCESS if isinstance(context, tuple) and context[:1] == ("context",) else ACL_ERROR_INVALID_PARAM


def aclFloat16ToFloat(value: int) -> float:
    """The float value of fp16 bits (``aclFloat16`` is a uint16)."""
    return float(np.array([int(value) & 0xFFFF], np.uint16).view(np.float16)[0])


def aclFloatToFloat16(value: float) -> int:
    """The fp16 bits of a float, rounded to nearest even."""
    return int(np.array([value], np.float16).view(np.uint16)[0])


# ----------------------------------------------------------------------------- allocation
def _out(ref: Any, call: str, spelling: str):
    if not hasattr(ref, "set"):
        raise AclError(f"{call} needs the address of a pointer variable, got {type(ref).__name__}",
                       fix=f"pass {spelling}, e.g. {call}({spelling}, ...)", kind="not-an-address",
                       code=ACL_ERROR_INVALID_PARAM)
    return ref


def aclrtMalloc(devPtr: Any, size: int, policy: int = 0) -> int:
    """``aclrtMalloc((void**)&p, size, ACL_MEM_MALLOC_HUGE_FIRST)``: ``size`` bytes of device memory into ``p``."""
    _need_device("aclrtMalloc")
    out = _out(devPtr, "aclrtMalloc", "(void**)&devPtr")
    size = int(size)
    if size <= 0:
        raise AclError(f"aclrtMalloc of {size} bytes", fix="allocate the buffer's byte size (elements * sizeof(T)), "
                       "which must be at least 1", kind="malloc-size", code=ACL_ERROR_INVALID_PARAM)
    if int(policy) not in aclrtMemMallocPolicy._value2member_map_:
        raise AclError(f"aclrtMalloc policy {policy} is not an aclrtMemMallocPolicy value",
                       fix="pass ACL_MEM_MALLOC_HUGE_FIRST (what the examples use)", kind="malloc-policy",
                       code=ACL_ERROR_INVALID_PARAM)
    try:
        data = np.zeros(size, np.uint8)
    except MemoryError:
        raise AclError(f"aclrtMalloc of {size:,} bytes: the simulator's host has not that much memory",
                       fix="allocate less", kind="malloc-oom", code=ACL_ERROR_RT_MEMORY_ALLOCATION) from None
    alloc = DeviceAllocation(len(_state.allocations) + 1, data)
    _state.allocations.append(alloc)
    out.set(DevicePtr(alloc))
    return ACL_SUCCESS


def aclrtMallocHost(hostPtr: Any, size: int) -> int:
    """``aclrtMallocHost((void**)&p, size)``: ``size`` bytes of host memory into ``p``."""
    out = _out(hostPtr, "aclrtMallocHost", "(void**)&hostPtr")
    size = int(size)
    if size <= 0:
        raise AclError(f"aclrtMallocHost of {size} bytes", fix="allocate the buffer's byte size, at least 1",
                       kind="malloc-size", code=ACL_ERROR_INVALID_PARAM)
    buf = np.zeros(size, np.uint8)
    _state.host_allocations[id(buf)] = [buf, False]
    out.set(HostPtr(buf, 0, np.uint8))
    return ACL_SUCCESS


def aclrtFree(devPtr: Any) -> int:
    """Free device memory from ``aclrtMalloc`` (nullptr returns ACL_ERROR_INVALID_PARAM, as on the NPU)."""
    if devPtr is None:
        return ACL_ERROR_INVALID_PARAM
    if not isinstance(devPtr, DevicePtr):
        raise AclError(f"aclrtFree of {_describe(devPtr)}: aclrtFree frees device memory from aclrtMalloc only",
                       fix="free host memory from aclrtMallocHost with aclrtFreeHost", kind="free-kind",
                       code=ACL_ERROR_INVALID_PARAM)
    alloc = devPtr.alloc
    if alloc.freed:
        raise AclError(f"aclrtFree of {alloc.name} a second time (double free)",
                       fix="free each aclrtMalloc exactly once; set the pointer to nullptr after freeing it",
                       kind="double-free", code=ACL_ERROR_RT_MEMORY_FREE)
    if devPtr.offset:
        raise AclError(f"aclrtFree of a pointer {devPtr.offset} bytes inside {alloc.name}",
                       fix="free the pointer aclrtMalloc returned, not one moved by pointer arithmetic",
                       kind="free-offset", code=ACL_ERROR_INVALID_PARAM)
    alloc.freed = True
    return ACL_SUCCESS


def aclrtFreeHost(hostPtr: Any) -> int:
    """Free host memory from ``aclrtMallocHost``."""
    if hostPtr is None:
        return ACL_ERROR_INVALID_PARAM
    entry = _state.host_allocations.get(id(getattr(hostPtr, "buf", None)))
    if entry is None:
        raise AclError(f"aclrtFreeHost of {_describe(hostPtr)}, which aclrtMallocHost did not allocate",
                       fix="free device memory with aclrtFree; free only what aclrtMallocHost returned",
                       kind="free-kind", code=ACL_ERROR_INVALID_PARAM)
    if entry[1]:
        raise AclError(f"aclrtFreeHost of host allocation ({entry[0].size:,} bytes) a second time (double free)",
                       fix="free each aclrtMallocHost exactly once", kind="double-free",
                       code=ACL_ERROR_RT_MEMORY_FREE)
    entry[1] = True
    return ACL_SUCCESS


# ----------------------------------------------------------------------------- copies
def _describe(p: Any) -> str:
    if isinstance(p, DevicePtr):
        return f"device pointer into {p.alloc.name}"
    if isinstance(p, HostPtr):
        return f"host pointer ({p.buf.size:,}-byte buffer)"
    if isinstance(p, np.ndarray):
        return f"host array ({p.nbytes:,} bytes)"
    return f"{type(p).__name__} {p!r}"


def _struct_of(p: Any) -> Any:
    """``&s`` of a struct variable the front end keeps in a Box: the struct itself (its own address)."""
    if hasattr(p, "get") and hasattr(p, "set") and isinstance(p.get(), Struct):
        return p.get()
    return p


def _is_device(p: Any) -> bool:
    return isinstance(p, DevicePtr)


def _bytes(p: Any, call: str, role: str, count: int) -> np.ndarray:
    """The ``count`` bytes at ``p`` as a writable np.uint8 view, after the bounds, free and stream checks."""
    if isinstance(p, DevicePtr):
        alloc = p.alloc
        if alloc.freed:
            raise AclError(f"{call}: the {role} is {alloc.name}, already freed by aclrtFree (use after free)",
                           fix="free device memory only after its last copy and launch", kind="use-after-free",
                           code=ACL_ERROR_INVALID_PARAM)
        if alloc.in_flight is not None:
            s = alloc.in_flight
            raise AclError(f"{call}: the {role} is {alloc.name}, which a kernel launched on stream #{s.number} "
                           "may still be using (launches are asynchronous); on the NPU this copies stale or "
                           "half-written data", fix="call aclrtSynchronizeStream(stream) after the <<<...>>> "
                           "launch and before copying its results", kind="unsynchronized")
        data, off, what = alloc.data, p.offset, alloc.name
    elif isinstance(p, HostPtr):
        entry = _state.host_allocations.get(id(p.buf))
        if entry is not None and entry[1]:
            raise AclError(f"{call}: the {role} is host memory already freed by aclrtFreeHost (use after free)",
                           fix="free host memory only after its last use", kind="use-after-free",
                           code=ACL_ERROR_INVALID_PARAM)
        data, off, what = p.buf, p.offset, f"a {p.buf.size:,}-byte host buffer"
    elif isinstance(p, np.ndarray):
        data, off, what = p.reshape(-1).view(np.uint8), 0, f"a {p.nbytes:,}-byte host array"
    elif isinstance(p, Struct):         # &structVar: the front end passes the struct (its own address)
        data, off, what = p.to_bytes(), 0, f"a {p._size:,}-byte {type(p).__name__}"
    elif p is None:
        raise AclError(f"{call}: the {role} is nullptr", fix="allocate it first (aclrtMalloc / aclrtMallocHost)",
                       kind="null", code=ACL_ERROR_INVALID_PARAM)
    else:
        raise AclError(f"{call}: the {role} is {_describe(p)}, not a pointer", fix="pass a pointer to the buffer",
                       kind="not-a-pointer", code=ACL_ERROR_INVALID_PARAM)
    if off < 0 or off + count > data.size:
        raise AclError(f"{call}: {count:,} bytes at byte {off:,} of {what} run {off + count - data.size:,} bytes "
                       f"past its end (the {role} holds {max(data.size - off, 0):,} bytes from there)",
                       fix="copy at most the allocation's size: count = elements * sizeof(T) of the buffer you "
                           "allocated", kind="out-of-bounds", code=ACL_ERROR_INVALID_PARAM)
    return data[off:off + count]


_KIND_SIDES = {aclrtMemcpyKind.ACL_MEMCPY_HOST_TO_HOST: (False, False),
               aclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE: (True, False),
               aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST: (False, True),
               aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_DEVICE: (True, True)}


def aclrtMemcpy(dst: Any, destMax: int, src: Any, count: int, kind: int) -> int:
    """Copy ``count`` bytes from ``src`` to ``dst`` (``destMax``: the bytes ``dst`` can take) in direction ``kind``."""
    destMax, count = int(destMax), int(count)
    if int(kind) not in aclrtMemcpyKind._value2member_map_:
        raise AclError(f"aclrtMemcpy kind {kind} is not an aclrtMemcpyKind value",
                       fix="pass ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE "
                           "or ACL_MEMCPY_HOST_TO_HOST", kind="memcpy-kind", code=ACL_ERROR_INVALID_PARAM)
    kind = aclrtMemcpyKind(int(kind))
    dst, src = _struct_of(dst), _struct_of(src)
    if count > destMax:
        raise AclError(f"aclrtMemcpy of count = {count:,} bytes into destMax = {destMax:,}: the count exceeds "
                       "what the destination can take, so nothing is copied",
                       fix="pass the destination buffer's byte size as destMax and copy at most that many bytes",
                       kind="dest-max", code=ACL_ERROR_INVALID_PARAM)
    if kind is not aclrtMemcpyKind.ACL_MEMCPY_DEFAULT:
        want_dst, want_src = _KIND_SIDES[kind]
        got_dst, got_src = _is_device(dst), _is_device(src)
        if (want_dst, want_src) != (got_dst, got_src):
            side = lambda d: "device" if d else "host"      # noqa: E731
            right = next(k for k, v in _KIND_SIDES.items() if v == (got_dst, got_src))
            raise AclError(f"aclrtMemcpy with {kind.name} copies {side(want_src)} -> {side(want_dst)} memory, but "
                           f"the source is {_describe(src)} and the destination {_describe(dst)}",
                           fix=f"use {right.name} for this copy (or swap dst and src: aclrtMemcpy(dst, destMax, "
                               "src, count, kind))", kind="memcpy-direction", code=ACL_ERROR_RT_PARAM_INVALID)
    if count == 0:
        return ACL_SUCCESS
    out = _bytes(dst, "aclrtMemcpy", "destination", count)
    out[...] = _bytes(src, "aclrtMemcpy", "source", count)
    if isinstance(dst, Struct):         # the bytes written into a struct variable: read its fields back
        dst.assign(type(dst).from_bytes(out))
    return ACL_SUCCESS


def aclrtMemset(devPtr: Any, maxCount: int, value: int, count: int) -> int:
    """Set ``count`` bytes of device memory to ``value`` (its low byte); ``maxCount`` is the bytes there."""
    maxCount, count = int(maxCount), int(count)
    if count > maxCount:
        raise AclError(f"aclrtMemset of count = {count:,} bytes into maxCount = {maxCount:,}",
                       fix="pass the buffer's byte size as maxCount and set at most that many bytes",
                       kind="dest-max", code=ACL_ERROR_INVALID_PARAM)
    if not _is_device(devPtr):
        raise AclError(f"aclrtMemset of {_describe(devPtr)}: aclrtMemset sets device memory",
                       fix="pass a pointer from aclrtMalloc (fill host memory on the host, e.g. std::fill)",
                       kind="memset-host", code=ACL_ERROR_INVALID_PARAM)
    if count:
        _bytes(devPtr, "aclrtMemset", "destination", count)[...] = int(value) & 0xFF
    return ACL_SUCCESS


# ----------------------------------------------------------------------------- the <<<>>> launch
def launch_kernel(k: Any, blocks: int, stream: Any, *args: Any) -> None:
    """``k<<<blocks, l2ctrl, stream>>>(args...)``: run ``k`` with each DevicePtr as a view of its allocation.

    The run is simulated at once; the allocations it was given stay "in flight" on ``stream`` until the host
    synchronises it. The ``LaunchResult`` is kept in ``current().launches``.
    """
    _need_device("a <<<...>>> launch")
    s = _stream(stream, "the <<<...>>> launch")
    name = getattr(k, "__name__", "kernel")
    params = [p[0] for p in getattr(k, "params", ())]         # a C++ kernel's parameter names, for messages
    gm, touched = [], []
    for i, a in enumerate(args):
        arg = f"argument {i}" + (f" ({params[i]})" if i < len(params) else "") + f" of {name}<<<...>>>"
        if isinstance(a, DevicePtr):
            if a.alloc.freed:
                raise AclError(f"{arg} is {a.alloc.name}, already freed by aclrtFree (use after free)",
                               fix="free device memory after the launch and aclrtSynchronizeStream, not before",
                               kind="use-after-free")
            if not 0 <= a.offset < a.alloc.data.size:
                raise AclError(f"{arg} points {a.offset:,} bytes into {a.alloc.name}, outside it",
                               fix="pass a pointer inside the allocation", kind="out-of-bounds")
            gm.append(a.alloc.data[a.offset:])
            touched.append(a.alloc)
        elif isinstance(a, (HostPtr, np.ndarray)):
            raise AclError(f"{arg} is {_describe(a)}: a kernel reads and writes device (GM) memory only",
                           fix="aclrtMalloc a device buffer, aclrtMemcpy the data ACL_MEMCPY_HOST_TO_DEVICE and "
                               "pass the device pointer", kind="host-pointer-launch")
        else:
            gm.append(a)
    result = launch(k, int(blocks), *gm, chip=_state.chip, gm_names=params or None, auto_sync=_state.auto_sync)
    _state.launches.append((name, int(blocks), result))
    for alloc in touched:
        alloc.in_flight = s
        s.pending.append(alloc)
