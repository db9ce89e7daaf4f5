"""``std::vector<T>`` of host code (``<vector>``), for a number type ``T``: a numpy array of T's dtype.

The failure this exists to prevent: an official example's host ``main()`` keeps its inputs and outputs in
``std::vector<float>``s (filled by ``ReadFile(path, size, x.data(), bytes)``, handed to ACL through ``x.data()``,
built back from a host buffer with ``std::vector<float> z(first, last)``); without a vector the whole program
cannot run, and a vector that copied where C++ aliases (or aliased where C++ copies) would give wrong outputs
silently. Here ``data()`` is a :class:`HostPtr` to the elements themselves, a copy is a copy, and the reads C++
leaves undefined (an index past ``size()``, a pointer range that is not one buffer) raise at the learner's line.

Modelled (cppreference, "std::vector", https://en.cppreference.com/w/cpp/container/vector): the constructors
``vector()``, ``vector(count)`` (value-initialised: zeros), ``vector(count, value)``, ``vector(first, last)`` from
two ``T*``, ``vector{a, b, c}`` and the copy; ``data()``, ``size()``, ``empty()``, ``operator[]``, copy assignment;
``begin()`` / ``end()`` as ``T*`` (a vector's iterators are random-access over contiguous elements, so a pointer
steps, compares and reads as they do). A vector of pointers or of user structs (``std::vector<uint8_t*>``,
``std::vector<ArgInfo>``) is an :class:`object_vector`: the same constructors but the two-pointer one, ``size()``,
``empty()``, ``operator[]`` (``&v[i]`` is a reference to the slot) and the copy, which copies each struct.
The front end lowers every other member of ``<vector>`` to an "unsupported" diagnostic.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ascend_sim import ArgumentError, OutOfBoundsError
from ascend_sim.ascendc.host.pointers import HostPtr, pointer_range

__all__ = ["vector", "object_vector"]


class vector:
    """A ``std::vector<T>``: ``dtype`` (T) and ``array``, the elements (their own numpy buffer, C order)."""

    __slots__ = ("dtype", "array", "_bytes")

    def __init__(self, dtype: Any, count: int = 0):
        """``std::vector<T> v(count)``: ``count`` value-initialised (zero) elements."""
        self.dtype = np.dtype(dtype)
        self._own(np.zeros(_checked_count(count), self.dtype))

    def _own(self, array: np.ndarray) -> None:
        self.array = array
        self._bytes = array.view(np.uint8)      # one byte view, so every data() is the same allocation

    @classmethod
    def filled(cls, dtype: Any, count: int, value: Any) -> "vector":
        """``std::vector<T> v(count, value)``."""
        v = cls(dtype, count)
        v.array[...] = value
        return v

    @classmethod
    def of(cls, dtype: Any, values: list) -> "vector":
        """``std::vector<T> v = {a, b, c}``: the braced list's values, converted to T."""
        v = cls(dtype)
        v._own(np.array(values, v.dtype).reshape(-1))
        return v

    @classmethod
    def from_range(cls, dtype: Any, first: Any, last: Any) -> "vector":
        """``std::vector<T> v(first, last)``: a copy of the elements of one host buffer in [first, last)."""
        v = cls(dtype)
        v._own(pointer_range(first, last, f"std::vector<{v.dtype.name}>(first, last)", v.dtype).copy())
        return v

    # -- members
    def data(self) -> HostPtr:
        """``v.data()``: a ``T*`` to the first element (writes through it change the vector)."""
        return HostPtr(self._bytes, 0, self.dtype)

    def begin(self) -> HostPtr:
        """``v.begin()``: the iterator to the first element, a ``T*`` (as ``data()``)."""
        return self.data()

    def end(self) -> HostPtr:
        """``v.end()``: one past the last element, a ``T*``."""
        return HostPtr(self._bytes, self._bytes.size, self.dtype)

    def size(self) -> int:
        return int(self.array.size)

    def empty(self) -> bool:
        return self.array.size == 0

    def copy(self) -> "vector":
        """A copy (a vector passed, returned or assigned by value)."""
        v = object.__new__(vector)
        v.dtype = self.dtype
        v._own(self.array.copy())
        return v

    def _index(self, pos: Any) -> int:
        return _checked_index(pos, self.array.size)

    def __getitem__(self, pos: Any):
        v = self.array[self._index(pos)]
        return v.item() if self.dtype.kind in "iub" else v      # integers as Python ints, as the lowering uses them

    def __setitem__(self, pos: Any, value: Any) -> None:
        self.array[self._index(pos)] = value

    def __len__(self) -> int:
        return int(self.array.size)

    def __repr__(self) -> str:
        return f"std::vector<{self.dtype.name}>({self.array.size} elements)"


def _checked_count(count: Any) -> int:
    """A constructor's element count (a size_t: a negative value is a huge one, which throws std::length_error)."""
    count = int(count)
    if count < 0:
        raise ArgumentError(f"std::vector of {count} elements: the count is a size_t, so a negative value "
                            "wraps to a size no host can allocate (C++ throws std::length_error)",
                            fix="compute the element count as an unsigned value (elements, not bytes)")
    return count


def _checked_index(pos: Any, n: int) -> int:
    """``operator[]``'s index into ``n`` elements (C++ does not check: an index outside is undefined)."""
    i = int(pos)
    if not 0 <= i < n:
        raise OutOfBoundsError(
            f"std::vector index {i} is outside the vector's {n} elements (operator[] does not check: on the host "
            "this reads or writes memory that is not the vector's)",
            fix=f"keep the index in 0 .. size() - 1 = {n - 1}" if n else
                "the vector is empty: construct it with a size (std::vector<T> v(n)) before indexing it")
    return i


class object_vector:
    """A ``std::vector<T>`` of pointers or user structs: ``make()`` builds a value-initialised T (``nullptr``, or
    the struct with its default members), ``items`` the elements (a struct element is its own object, so
    ``v[i].x = 1`` writes the vector's element, as ``operator[]`` returns a reference)."""

    __slots__ = ("make", "items")

    def __init__(self, make: Callable[[], Any], count: int = 0):
        """``std::vector<T> v(count)``: ``count`` value-initialised elements (null pointers, default structs)."""
        self.make = make
        self.items = [make() for _ in range(_checked_count(count))]

    @classmethod
    def filled(cls, make: Callable[[], Any], count: int, value: Any) -> "object_vector":
        """``std::vector<T> v(count, value)``: ``count`` copies of ``value``."""
        v = cls(make)
        v.items = [_copy(value) for _ in range(int(count))]
        return v

    @classmethod
    def of(cls, make: Callable[[], Any], values: list) -> "object_vector":
        """``std::vector<T> v = {a, b}``: copies of the braced list's values (an initializer_list is copied from)."""
        v = cls(make)
        v.items = [_copy(x) for x in values]
        return v

    def size(self) -> int:
        return len(self.items)

    def empty(self) -> bool:
        return not self.items

    def copy(self) -> "object_vector":
        """A copy (passed, returned or assigned by value): each struct element copied, pointers shared."""
        return object_vector.of(self.make, self.items)

    def _index(self, pos: Any) -> int:
        return _checked_index(pos, len(self.items))

    def __getitem__(self, pos: Any):
        return self.items[self._index(pos)]

    def __setitem__(self, pos: Any, value: Any) -> None:
        self.items[self._index(pos)] = _copy(value)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"std::vector({len(self.items)} elements)"


def _copy(value: Any) -> Any:
    """An element stored by value: a struct is copied, a pointer or number is itself."""
    return value.copy() if hasattr(value, "copy") and hasattr(value, "_fields") else value
