"""Host pointers (``T*`` to host memory) for the simulated ACL runtime and host functions: one type for both,
which the front end's runtime support (``ascend_sim.ascendc.cxx.host_param``) imports when a host function takes a
numpy array."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascend_sim.engine.errors import ArgumentError, OutOfBoundsError

__all__ = ["HostPtr", "pointer_range", "read_elements"]


class HostPtr:
    """A host pointer ``T*``: ``buf`` (np.uint8, the whole allocation), ``offset`` in bytes, ``dtype``."""

    __slots__ = ("buf", "offset", "dtype")

    def __init__(self, buf: np.ndarray, offset: int = 0, dtype: Any = np.uint8):
        self.buf, self.offset, self.dtype = buf, int(offset), np.dtype(dtype)

    def __add__(self, n: int) -> "HostPtr":
        return type(self)(self.buf, self.offset + int(n) * self.dtype.itemsize, self.dtype)

    __radd__ = __add__

    def __eq__(self, other: Any) -> bool:
        """``p == q``: the same address (one buffer, one byte offset), whatever the pointee type."""
        return isinstance(other, HostPtr) and other.buf is self.buf and other.offset == self.offset

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((id(self.buf), self.offset))

    def cast(self, dtype: Any) -> "HostPtr":
        """``(T*)p``: the same address read as another type."""
        return type(self)(self.buf, self.offset, dtype)

    def _view(self) -> np.ndarray:
        end = self.offset + (self.buf.size - self.offset) // self.dtype.itemsize * self.dtype.itemsize
        return self.buf[self.offset:end].view(self.dtype)

    def __getitem__(self, i: int):
        return self._view()[i]

    def __setitem__(self, i: int, v) -> None:
        self._view()[i] = v

    def __repr__(self) -> str:
        return f"HostPtr({self.buf.size}-byte buffer+{self.offset}B, {self.dtype})"



def pointer_range(first: Any, last: Any, what: str, dtype: np.dtype | None = None) -> np.ndarray:
    """The elements of ``[first, last)`` in one host buffer, read as ``dtype`` (by default the pointers' own type,
    which must then be the same), a view; what C++ leaves undefined is an error naming ``what``."""
    for p, which in ((first, "first"), (last, "last")):
        if not isinstance(p, HostPtr):
            raise ArgumentError(f"{what}: {which} is {type(p).__name__} {p!r}, not a host pointer or vector iterator",
                                fix="pass two pointers into one host buffer: v.begin(), v.end(), or (T*)p and "
                                    "(T*)(p + bytes); device memory must be copied to the host first")
    same = first.buf is last.buf or (first.buf.ctypes.data == last.buf.ctypes.data and
                                     first.buf.size == last.buf.size)
    if not same or (dtype is None and first.dtype != last.dtype):
        raise ArgumentError(f"{what}: first and last point into two different host buffers, so [first, last) is no "
                            "range (C++ leaves it undefined)", fix="take both ends from one buffer: v.begin(), "
                            "v.end(), or (T*)p and (T*)(p + bytes)")
    dtype = first.dtype if dtype is None else dtype
    span = last.offset - first.offset
    if span < 0 or span % dtype.itemsize:
        raise ArgumentError(f"{what}: last is {span} bytes after first, which is not a whole number (>= 0) of "
                            f"{dtype.itemsize}-byte elements", fix="pass the range in order (first <= last), both "
                            "ends cast to the element type T* before the arithmetic")
    return read_elements(first, span // dtype.itemsize, what, dtype)


def read_elements(p: HostPtr, n: int, what: str, dtype: np.dtype | None = None) -> np.ndarray:
    """``n`` elements (of ``dtype``, by default ``p``'s) from ``p``, a view; an OutOfBoundsError past its buffer."""
    dtype = p.dtype if dtype is None else dtype
    end = p.offset + n * dtype.itemsize
    if p.offset < 0 or end > p.buf.size:
        raise OutOfBoundsError(f"{what}: {n} elements from byte {p.offset:,} run to byte {end:,} of a "
                               f"{p.buf.size:,}-byte buffer", fix="keep the range inside the buffer: end at v.end() "
                               "(elements * sizeof(T) bytes from its start)")
    return p.buf[p.offset:end].view(dtype)
