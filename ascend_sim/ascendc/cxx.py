"""PROVISIONAL (branch h-host): the two runtime-support types the simulated ACL runtime needs, written to
contract 4 of the issue-27 design until the front end's ``cxx.py`` (branch h-front) lands and replaces this file.

``HostPtr`` is a host pointer (a numpy uint8 buffer, a byte offset and the pointee dtype); ``Ref`` is ``&x`` of
a local lvalue (``get()`` / ``set(v)``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


class HostPtr:
    """A host pointer ``T*``: ``buf`` (np.uint8, the whole allocation), ``offset`` in bytes, ``dtype``."""

    __slots__ = ("buf", "offset", "dtype")

    def __init__(self, buf: np.ndarray, offset: int = 0, dtype: Any = np.uint8):
        self.buf, self.offset, self.dtype = buf, int(offset), np.dtype(dtype)

    def __add__(self, n: int) -> "HostPtr":
        return HostPtr(self.buf, self.offset + int(n) * self.dtype.itemsize, self.dtype)

    def cast(self, dtype: Any) -> "HostPtr":
        return HostPtr(self.buf, self.offset, dtype)

    def _view(self) -> np.ndarray:
        end = self.offset + (self.buf.size - self.offset) // self.dtype.itemsize * self.dtype.itemsize
        return self.buf[self.offset:end].view(self.dtype)

    def __getitem__(self, i: int):
        return self._view()[i]

    def __setitem__(self, i: int, v) -> None:
        self._view()[i] = v


class Ref:
    """``&x``: reads and writes the variable through ``get`` / ``set``."""

    __slots__ = ("get", "set")

    def __init__(self, get: Callable[[], Any], set: Callable[[Any], None]):
        self.get, self.set = get, set
