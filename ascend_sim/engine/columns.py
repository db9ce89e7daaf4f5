"""Python columns (tuples of objects or numbers) to numpy without a Python step per item (engine/records.py).

- :func:`ids`: the ``id`` of every item of a tuple, read from the tuple (in CPython an id is the object's address
  and a tuple's items are those addresses, right after its header; checked against ``id`` at import, else one
  ``id`` call per item);
- :func:`numbers`: Python floats or ints as a float64 or int64 array through ``struct`` (one C loop);
- :func:`groups`: equal columns of a uint64 matrix, numbered in the order they first appear: the rows mixed into
  one integer per column, a hash table in numpy, and every group checked exactly (a collision falls back to a sort).
"""
from __future__ import annotations

import struct
import sys
from functools import lru_cache

import numpy as np

_MIX = np.random.default_rng(14).integers(1, 1 << 63, 16, np.uint64) | np.uint64(1)    # odd multipliers
_SLOT_BITS = 16                 # at most 2^16 hash slots in ``_first_equal``
_SORTED = 4096                  # ``_first_equal`` sorts this many entries or fewer


class _Words:
    """``n`` machine words at ``address`` inside ``owner`` (kept alive), for numpy to copy as uint64."""

    def __init__(self, owner, address: int, n: int):
        self.owner = owner
        self.__array_interface__ = {"data": (address, True), "shape": (n,), "typestr": "<u8", "version": 3}


def _ids_read(t: tuple) -> np.ndarray:
    """``id`` of every item of ``t`` as uint64, read from the tuple: in CPython an id is the object's address
    and a tuple's items are those addresses, right after its header (no call per item: ``map(id, t)`` costs
    about 150 instructions an item)."""
    return np.array(_Words(t, id(t) + tuple.__basicsize__, len(t)), np.uint64)


def ids_called(t: tuple) -> np.ndarray:
    """``id`` of every item of ``t`` as uint64, one call each."""
    return np.fromiter(map(id, t), np.uint64, len(t))


def _reads_ids() -> bool:
    """Whether ``_ids_read`` gives ``id`` (a CPython with 64-bit addresses and the usual tuple layout)."""
    if sys.implementation.name != "cpython" or np.dtype(np.uintp).itemsize != 8:
        return False
    probe = (object(), "probe", 1 << 70, [])
    return _ids_read(probe).tolist() == list(map(id, probe))


ids = _ids_read if _reads_ids() else ids_called


@lru_cache(maxsize=64)
def _packer(code: str, n: int) -> struct.Struct:
    return struct.Struct(f"<{n}{code}")


def numbers(col: tuple, dtype) -> np.ndarray:
    """``col`` (Python numbers) as a float64 or int64 array: ``struct`` converts them in one C loop (about 80
    instructions a number; numpy's ``fromiter`` 210); numpy's own conversion for what ``struct`` refuses."""
    try:
        return np.frombuffer(_packer("d" if dtype == np.float64 else "q", len(col)).pack(*col), dtype)
    except struct.error:
        return np.array(col, dtype)


def _first_equal(h: np.ndarray) -> np.ndarray:
    """For each entry of ``h`` (uint64), the position of the first equal one: a hash table in numpy with about
    two slots an entry, a slice of ``h``'s bits a round (the entries whose slot another value took first go
    to the next round, with the next slice)."""
    n = len(h)
    if n <= _SORTED:                # few: one sort costs less than the rounds' numpy calls
        _, first, inv = np.unique(h, return_index=True, return_inverse=True)
        return first[inv.reshape(-1)]
    bits = min((2 * n - 1).bit_length(), _SLOT_BITS)
    rep = np.empty(n, np.intp)
    todo = np.arange(n)
    for shift in range(64 - bits, -1, -bits):
        slot = ((h[todo] >> np.uint64(shift)) & np.uint64((1 << bits) - 1)).astype(np.intp)
        table = np.full(1 << bits, n, np.intp)
        np.minimum.at(table, slot, todo)
        cand = table[slot]
        won = h[cand] == h[todo]
        rep[todo[won]] = cand[won]
        todo = todo[~won]
        if not todo.size:
            return rep
    _, first, inv = np.unique(h[todo], return_index=True, return_inverse=True)     # (never seen)
    rep[todo] = todo[first][inv.reshape(-1)]
    return rep


def groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first column of each group, group of each column) of the uint64 matrix ``keys`` (a row per key): equal
    columns and only those share a group; groups are numbered in the order they first appear."""
    h = keys[0] * _MIX[0]
    for j in range(1, len(keys)):
        h += keys[j] * _MIX[j]
    rep = _first_equal(h)
    if not all(np.array_equal(row[rep], row) for row in keys):      # two mixed integers collided: sort all
        _, first, inv = np.unique(keys, axis=1, return_index=True, return_inverse=True)
        rep = first[inv.reshape(-1)]
    is_first = rep == np.arange(len(rep))
    return np.flatnonzero(is_first), (np.cumsum(is_first) - 1)[rep]
