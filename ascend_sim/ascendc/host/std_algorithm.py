"""``<algorithm>`` and ``std::ostream_iterator`` (``<iterator>``) of host code, over host pointers.

The failure this exists to prevent: an official example's host code prints and checks its output with
``std::copy(v.begin(), v.begin() + n, std::ostream_iterator<float>(std::cout, " "))`` and
``std::equal(golden.begin(), golden.end(), output.begin())``; a check that compared the wrong range, or printed
other digits than C++, would pass or fail where the real program does not.

A vector's iterators are ``T*`` (:class:`HostPtr`, host/std_vector.py), so the ranges here are pointer ranges
into one host buffer, checked where C++ leaves them undefined (two buffers, ``last`` before ``first``, a read past
the buffer). Semantics from cppreference: "std::min" (returns ``a`` unless ``b < a``), "std::max" (``a`` unless
``a < b``), "std::copy", "std::equal" (elements compared with ``==``), "std::ostream_iterator" (each assignment
writes the value as ``T``, then the delimiter), https://en.cppreference.com/w/cpp/algorithm.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascend_sim import ArgumentError
from ascend_sim.ascendc.host.pointers import HostPtr, pointer_range, read_elements

__all__ = ["min", "max", "copy", "equal", "ostream_iterator"]


def min(a: Any, b: Any) -> Any:      # noqa: A001 (std::min)
    """``std::min(a, b)``: ``b`` if ``b < a``, else ``a`` (the first of two equal values)."""
    return b if b < a else a


def max(a: Any, b: Any) -> Any:      # noqa: A001 (std::max)
    """``std::max(a, b)``: ``b`` if ``a < b``, else ``a``."""
    return b if a < b else a


class ostream_iterator:
    """``std::ostream_iterator<T>(stream, delim)``: each element written to the stream as ``T``, then ``delim``."""

    __slots__ = ("dtype", "stream", "delim")

    def __init__(self, dtype: Any, stream: str, delim: str | None = None):
        self.dtype, self.stream, self.delim = np.dtype(dtype), stream, delim

    def put(self, value: Any) -> None:
        from ascend_sim.ascendc.cxx import ostream_write
        v = self.dtype.type(value)
        ostream_write(self.stream, v.item() if self.dtype.kind in "iub" else v,
                      *([self.delim] if self.delim else []))


def copy(first: HostPtr, last: HostPtr, d_first: Any) -> Any:
    """``std::copy(first, last, d_first)``: the elements in order into ``d_first`` (a pointer, or an
    ostream_iterator); returns the output iterator past the last element written."""
    values = pointer_range(first, last, "std::copy")
    if isinstance(d_first, ostream_iterator):
        for v in values:
            d_first.put(v)
        return d_first
    if not isinstance(d_first, HostPtr):
        raise ArgumentError(f"std::copy: the output is {type(d_first).__name__}, not a pointer or ostream_iterator",
                            fix="copy into v.begin() of a vector with room for the elements, or an ostream_iterator")
    read_elements(d_first, values.size, "std::copy's output")[...] = values    # memmove: the values are read first
    return d_first + values.size


def equal(first1: HostPtr, last1: HostPtr, first2: HostPtr) -> bool:
    """``std::equal(first1, last1, first2)``: every element of [first1, last1) ``==`` its match from ``first2``."""
    a = pointer_range(first1, last1, "std::equal")
    if not isinstance(first2, HostPtr):
        raise ArgumentError(f"std::equal: first2 is {type(first2).__name__}, not a host pointer or vector iterator",
                            fix="pass the second vector's begin()")
    b = read_elements(first2, a.size, "std::equal's second range")
    return bool(np.all(a == b))
