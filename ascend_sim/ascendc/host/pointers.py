"""Host pointers (``T*`` to host memory) for the simulated ACL runtime and host functions: one type for both,
which the front end's runtime support (``ascend_sim.ascendc.cxx.host_param``) imports when a host function takes a
numpy array."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["HostPtr"]


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

