"""GlobalTensor and LocalTensor: the typed views a kernel reads and writes through.

``GlobalTensor`` wraps a GM address (``GmPtr``, engine/memory.py); ``LocalTensor``
is a window onto one on-chip tier of the current core.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.checks import dtype_arg, integer
from ascend_sim.api.ops.scalar import gm_get_value, gm_set_value, local_get_value, local_set_value
from ascend_sim.engine.l2 import CacheMode
from ascend_sim.engine.errors import AlignmentError, ArgumentError, OutOfBoundsError
from ascend_sim.engine.memory import GRANULE, GmBuffer, GmPtr, Tier
from ascend_sim.hw.dtypes import as_dtype, ascend_name, elements_in, int4b_t

_new = object.__new__


class GlobalTensor:
    """``GlobalTensor<T>``: a typed window onto GM (an allocation, a byte offset into it, a length)."""

    __slots__ = ("dtype", "buf", "offset", "size", "l2_mode")
    position = "GM"

    def __init__(self, dtype=None):
        self.dtype = as_dtype(dtype) if dtype is not None else None
        self.buf: GmBuffer | None = None
        self.offset = 0
        self.size = 0
        self.l2_mode = CacheMode.CACHE_MODE_NORMAL

    def SetL2CacheHint(self, mode: CacheMode) -> None:
        """How this tensor's copies use the L2 cache (L2 缓存): ``CacheMode.CACHE_MODE_DISABLE`` for data
        read or written once (it then neither allocates lines nor evicts others), NORMAL by default."""
        if not isinstance(mode, CacheMode):
            raise ArgumentError(f"SetL2CacheHint takes a CacheMode, got {mode!r}",
                                fix="pass CacheMode.CACHE_MODE_DISABLE (read-once data) or CacheMode.CACHE_MODE_NORMAL")
        self.l2_mode = mode

    def SetGlobalBuffer(self, ptr: GmPtr, bufferSize: int | None = None) -> None:
        """Point this tensor at ``ptr`` holding ``bufferSize`` elements."""
        if not isinstance(ptr, GmPtr):
            raise ArgumentError(f"SetGlobalBuffer expects a GM address (a kernel argument, maybe "
                                f"plus an offset), got {type(ptr).__name__}",
                                fix="pass the kernel's GM_ADDR argument, e.g. x + offset")
        dtype = dtype_arg("GlobalTensor", self.dtype, None) if self.dtype is not None else ptr.dtype
        self.dtype = dtype
        self.buf = ptr.buf
        self.offset = ptr.offset
        if bufferSize is None:
            bufferSize = elements_in(ptr.buf.nbytes - ptr.offset, dtype)
        self.size = bufferSize if bufferSize.__class__ is int else _index(bufferSize, "bufferSize", "SetGlobalBuffer")

    @property
    def ptr(self) -> GmPtr | None:
        """The tensor's start as a typed GM address (None before SetGlobalBuffer)."""
        return None if self.buf is None else GmPtr(self.buf, self.offset, self.dtype)

    def _require(self) -> GmPtr:
        if self.buf is None:
            raise ArgumentError("GlobalTensor used before SetGlobalBuffer",
                                fix="call xGm.SetGlobalBuffer(x + offset, length) in Init")
        return self.ptr

    def __getitem__(self, offset: int) -> "GlobalTensor":
        """``xGm[offset]``: the tensor starting ``offset`` elements further."""
        if self.buf is None:
            self._require()
        off = offset if offset.__class__ is int else _index(offset, "offset", "GlobalTensor")
        sub = _new(GlobalTensor)        # hot (every tile): no __init__ (its dtype normalising)
        sub.dtype = dt = self.dtype
        sub.buf = self.buf
        sub.offset = self.offset + (off * dt.itemsize if dt is not int4b_t else off // 2)
        sub.size = self.size - off
        sub.l2_mode = self.l2_mode
        return sub

    def GetSize(self) -> int:
        return self.size

    def GetPhyAddr(self) -> GmPtr:
        return self._require()

    # --- scalar access (PIPE_S, GM) -----------------------------------------
    def GetValue(self, offset: int):
        """The element ``offset`` elements in, read by the scalar unit."""
        return gm_get_value(self, offset)

    def SetValue(self, offset: int, value) -> None:
        """Write the element ``offset`` elements in from the scalar unit."""
        gm_set_value(self, offset, value)

    @property
    def address(self) -> int:
        return self._require().address

    def gm_view(self, count: int, what: str = "access") -> np.ndarray:
        """Typed numpy view of ``count`` elements, bounds-checked against the allocation."""
        self._require()
        nbytes = count * self.dtype.itemsize if self.dtype is not int4b_t else (count + 1) // 2
        self.check_range(self.offset, nbytes, what)
        return self.buf.raw[self.offset:self.offset + nbytes].view(self.dtype)

    def check_range(self, byte_offset: int, nbytes: int, what: str) -> None:
        self._require()
        buf = self.buf
        if byte_offset < 0 or byte_offset + nbytes > buf.nbytes:
            isz = self.dtype.itemsize
            raise OutOfBoundsError(
                f"{what} of GM buffer {buf.name!r} out of bounds: bytes {byte_offset}..{byte_offset + nbytes - 1} "
                f"(elements {byte_offset // isz}..{(byte_offset + nbytes) // isz - 1}) but the allocation has "
                f"{buf.nbytes} bytes ({buf.nbytes // isz} {ascend_name(self.dtype)} elements)",
                fix="check the block offset (GetBlockIdx() * blockLength) and the tile loop bounds; "
                    "the last tile may need a shorter length")

    def __repr__(self) -> str:
        return f"GlobalTensor<{ascend_name(self.dtype)}>({self.ptr}, size={self.size})"


class LocalTensor:
    """``LocalTensor<T>``: a typed window onto one tier of the current core."""

    __slots__ = ("tier", "addr", "dtype", "size", "position", "slot", "core")

    def __init__(self, core, tier: Tier, addr: int, dtype: np.dtype, size: int, position, slot=None):
        self.core = core        # one statement each: faster than tuple unpacking into slots (hot path)
        self.tier = tier
        self.addr = addr
        self.dtype = dtype
        self.size = size
        self.position = position
        self.slot = slot

    def __class_getitem__(cls, dtype) -> "TypedLocalTensor":
        """``LocalTensor[half]`` is C++'s ``LocalTensor<half>``: call it with (pos, addr, tileSize) (static allocation)."""
        return TypedLocalTensor(dtype)

    # --- views and slicing -------------------------------------------------
    def __getitem__(self, key) -> "LocalTensor":
        """``t[offset]`` (Ascend C operator[]) or ``t[a:b]``: a sub-tensor by element offset."""
        d = self.dtype
        if key.__class__ is int and 0 <= key <= self.size and d is not int4b_t:     # _sub, inlined (hot)
            v = _new(LocalTensor)       # the slots set here, not by __init__: a fifth cheaper (a sub-tensor a LoadData)
            v.core = self.core
            v.tier = self.tier
            v.addr = self.addr + key * d.itemsize
            v.dtype = d
            v.size = self.size - key
            v.position = self.position
            v.slot = slot = self.slot
            if slot is not None:
                slot.views.append(v)
            return v
        if key.__class__ is slice:
            return self._slice(key)
        off = key if key.__class__ is int else _index(key, "offset")
        if off < 0 or off > self.size:
            raise OutOfBoundsError(
                f"offset {off} outside LocalTensor of {self.size} {ascend_name(self.dtype)} elements "
                f"({self.tier.name} bytes {self.addr}..{self.addr + self.nbytes - 1})",
                fix="keep offsets below the tensor's length")
        return self._sub(off, self.size - off)

    def _slice(self, key: slice) -> "LocalTensor":
        """``t[a:b]``: elements a..b-1, all inside the tensor (Ascend C has no clamping or negative offsets)."""
        if key.step not in (None, 1):
            raise ArgumentError(f"LocalTensor slices must be contiguous (step 1), got step {key.step!r}",
                                fix="use the repeat/stride form of the instruction for strided access")
        start = 0 if key.start is None else _index(key.start, "slice start")
        stop = self.size if key.stop is None else _index(key.stop, "slice stop")
        if not 0 <= start <= stop <= self.size:
            raise OutOfBoundsError(
                f"slice [{start}:{stop}] outside LocalTensor of {self.size} {ascend_name(self.dtype)} elements "
                f"({self.tier.name} bytes {self.addr}..{self.addr + self.nbytes - 1}): a slice must satisfy "
                f"0 <= start <= stop <= {self.size}",
                fix="keep slices inside the tensor; for the last tile, slice the shorter tail length")
        return self._sub(start, stop - start)

    def _sub(self, off: int, n: int) -> "LocalTensor":
        d = self.dtype
        if d is not int4b_t:
            v = LocalTensor(self.core, self.tier, self.addr + off * d.itemsize, d, n, self.position, self.slot)
        elif off % 2:
            raise AlignmentError(f"offset {off} into an int4b_t LocalTensor falls inside a byte (two int4b_t per byte)",
                                 fix="offset int4b_t tensors by an even number of elements")
        else:
            v = LocalTensor(self.core, self.tier, self.addr + off // 2, d, n, self.position, self.slot)
        if v.slot is not None:
            v.slot.views.append(v)      # FreeTensor marks the views of a queue buffer too
        return v

    def ReinterpretCast(self, dtype) -> "LocalTensor":
        """Read the same bytes as another dtype."""
        d = dtype_arg("ReinterpretCast", dtype, None)
        v = LocalTensor(self.core, self.tier, self.addr, d, elements_in(self.nbytes, d), self.position, self.slot)
        if v.slot is not None:
            v.slot.views.append(v)
        return v

    @property
    def nbytes(self) -> int:
        d = self.dtype
        return (self.size + 1) // 2 if d is int4b_t else self.size * d.itemsize

    def GetSize(self) -> int:
        return self.size

    def GetLength(self) -> int:
        return self.nbytes

    def GetPhyAddr(self) -> int:
        return self.addr

    def GetPosition(self):
        return self.position

    def view(self, count: int | None = None) -> np.ndarray:
        """A read-only numpy view of the first ``count`` elements (a debug aid, like ``peek``).

        Read-only so that a kernel cannot compute in numpy and write the answer into UB behind the simulator's
        back (docs/grading.md): values change only through instructions. The ops write through
        :func:`writable_view`, which the public ``ascend_sim`` API does not export.
        """
        v = writable_view(self, count)
        v.flags.writeable = False
        return v

    def peek(self) -> np.ndarray:
        """Debug aid (like DumpTensor): a host copy of the tensor. Not an instruction."""
        return self.view().copy()

    # --- scalar access (PIPE_S) ---------------------------------------------
    def GetValue(self, index: int):
        return local_get_value(self, index)

    def SetValue(self, index: int, value) -> None:
        local_set_value(self, index, value)

    def __repr__(self) -> str:
        return (f"LocalTensor<{ascend_name(self.dtype)}>({self.tier.name}@{self.addr}, "
                f"size={self.size}, {getattr(self.position, 'name', self.position)})")


def writable_view(t: LocalTensor, count: int | None = None) -> np.ndarray:
    """The ops' numpy view of the first ``count`` elements of ``t``, writable (not exported by ``ascend_sim``)."""
    n = t.size if count is None else count
    return t.tier.arena[t.addr:t.addr + n * t.dtype.itemsize].view(t.dtype)


class TypedLocalTensor:
    """``LocalTensor<T>`` before its constructor arguments: ``LocalTensor[T](pos, addr, tileSize)``.

    ``build`` is api/static.py's ``local_tensor_at`` (installed there: static allocation needs the positions
    of api/pipe.py, which builds on this module).
    """

    __slots__ = ("dtype",)
    build = None

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, pos, addr: int, tileSize: int) -> LocalTensor:
        return TypedLocalTensor.build(pos, addr, tileSize, self.dtype)


def _index(v, what: str, kind: str = "LocalTensor") -> int:
    """An element offset given to operator[] or a slice: an integer (Python or numpy, not bool)."""
    return integer(kind, what, v, None, fix="index with an int element offset «(x // y, not x / y)|"
                                            "(an integer: static_cast<uint32_t>(x))»")


def check_local_range(t: LocalTensor, count: int, what: str) -> None:
    """Raise if ``count`` elements from ``t`` run past the tensor."""
    if count > t.size or count < 0:
        rule, fix = bytes_not_elements(t, count) or ("", "")
        raise OutOfBoundsError(
            f"{rule}{what} touches {count} {ascend_name(t.dtype)} elements but the LocalTensor holds {t.size} "
            f"({t.tier.name} bytes {t.addr}..{t.addr + t.nbytes - 1})",
            fix=fix or "lower the count or allocate a larger buffer with pipe.InitBuffer(que, num, bytes)",
            kind="init-bytes" if rule else "")


def bytes_not_elements(t: LocalTensor, count: int) -> tuple[str, str] | None:
    """(rule, fix) when ``count`` elements overflow a queue buffer whose InitBuffer was given ``count`` bytes.

    The TPipe::InitBuffer page (asc-devkit docs/zh/api) on ``len``: "每个内存块的大小，单位为字节" (the size of
    each buffer, in bytes): a tile of n half elements needs n * sizeof(half) bytes, and the element count
    gives a buffer sizeof(T) times too small.
    """
    slot = t.slot
    que = getattr(slot, "que", None)
    size = t.dtype.itemsize
    if que is None or size == 1 or que.nbytes != count:
        return None
    name, dt = que.name, ascend_name(t.dtype)
    return (f"InitBuffer takes bytes: you passed {count} for {name}, a tile of {count} elements of {dt} "
            f"needs {size} * {count} = {size * count} bytes; ",
            f"pipe.InitBuffer({name}, num, {count} * {size}) (elements * sizeof({dt}))")


def check_aligned(addr: int, align: int, what: str, fix: str) -> None:
    if addr % align:
        raise AlignmentError(f"{what} address {addr} is not {align}-byte aligned ({addr} % {align} = {addr % align})",
                             fix=fix)


# ----------------------------------------------------------------------------- Python operators on tensors
_OPERATORS = {"__add__": "+", "__radd__": "+", "__sub__": "-", "__rsub__": "-", "__mul__": "*", "__rmul__": "*",
              "__truediv__": "/", "__rtruediv__": "/", "__floordiv__": "//", "__mod__": "%", "__pow__": "**",
              "__matmul__": "@", "__neg__": "-", "__abs__": "abs"}
_VECTOR_OP = {"+": "Add / Adds", "-": "Sub (or Adds with -scalar)", "*": "Mul / Muls", "/": "Div",
              "//": "Div and Cast", "%": "Div, Mul and Sub", "**": "Exp, Ln and Mul", "@": "Mmad (or the Matmul API)",
              "abs": "Abs"}


def _no_operator(symbol: str):
    def operator(self, other=None):
        kind = type(self).__name__
        what = f"{symbol}{kind}" if other is None and symbol in ("-", "abs") else (
            f"{kind} {symbol} {type(other).__name__}")
        offset = " (an offset is x[n], or SetGlobalBuffer(ptr + n, len) on the GM pointer)" if symbol in "+-" else ""
        raise ArgumentError(f"{what}: Python operators do not compute on tensors in Ascend C; a tensor is a window "
                            f"onto {getattr(self, 'position', 'memory')!s} that instructions read and write{offset}",
                            fix=f"use a vector instruction on UB tensors ({_VECTOR_OP[symbol]}), e.g. Add(dst, src0, src1, "
                                "count)")
    operator.__name__ = "operator"
    return operator


for _cls in (GlobalTensor, LocalTensor):
    for _name, _symbol in _OPERATORS.items():
        setattr(_cls, _name, _no_operator(_symbol))
