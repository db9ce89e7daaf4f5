"""One launch's instruction records, kept compact: numpy columns in chunks, not a tuple per record.

``Core.issue_n`` appends one tuple per instruction (``Instr``'s fields) to a :class:`RecordList`, a list, so
the hot path keeps the list's own ``append`` and ``len``. Every ``CHUNK`` records the issue path calls
:meth:`RecordList.pack`: the chunk's tuples become numpy columns and their list entries become ``None``.
Each column is stored as narrow as it can be stored exactly: the index not at all when it is the record's
position (it always is in a launch); integers in the smallest dtype that holds the chunk's range; strings,
kernel sites and the region lists (which the ops' plans share) as small codes into shared tables; ``ready``
and ``end`` as float32 differences from ``start`` when those give back every value bit for bit (else
float64). A record costs about 45 bytes instead of about 350 as a tuple. Reading one record (``rl[i]``),
iterating or taking the columns (:meth:`RecordList.columns`, what trace/table.py reads) sees the tuples as
appended.
"""
from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

import numpy as np

CHUNK = 1 << 15                 # records per packed chunk
_INDEX = 0
_INTS = (1, 8, 9, 12)           # core, wait_on, nbytes, flops: in the narrowest integer dtype of their range
_START = 6
_DELTAS = (5, 7)                # ready, end: float32 differences from start when exact, else float64
_CODED = (2, 3, 4, 10, 11, 13, 14)      # core_type, pipe, op, src, dst, site, klass: codes into ``values``
_OBJECTS = (15, 16)             # reads, writes (Region lists, shared by the plans): codes into ``objects``
_SITE = 13
NFIELDS = 17
_first, _second = itemgetter(0), itemgetter(1)
_EMPTY: tuple = ()


def _objects(values) -> np.ndarray:
    """A 1-D object array of ``values`` (tuples and lists stay elements, never become rows)."""
    values = list(values)
    return np.fromiter(values, object, len(values))     # one C loop; each value stays one element


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` (integers) in the smallest integer dtype that holds its values."""
    if a.size == 0:
        return a
    dt = np.promote_types(np.min_scalar_type(int(a.min())), np.min_scalar_type(int(a.max())))
    return a if dt.itemsize == 8 else a.astype(dt)      # (uint64: kept int64)


def _codes(a: np.ndarray, n: int) -> np.ndarray:
    """Codes below ``n`` in uint8, uint16 or int32."""
    return a.astype(np.uint8 if n <= 1 << 8 else np.uint16 if n <= 1 << 16 else np.int32)


def _delta(x: np.ndarray, start: np.ndarray, sign: int) -> np.ndarray:
    """``x`` as float32 ``sign * (x - start)`` when ``start + sign * d`` gives back every bit of ``x``; else ``x``."""
    d = ((x - start) * sign).astype(np.float32)
    back = start + sign * d.astype(np.float64)
    return d if np.array_equal(back.view(np.int64), x.view(np.int64)) else x


class RecordList(list):
    """A launch's records: ``list`` of tuples whose first ``packed`` entries live in numpy chunks (entries None)."""

    def __init__(self):
        super().__init__()
        self.packed = 0
        self.chunks: list[dict[int, np.ndarray | None]] = []
        self.starts: list[int] = []     # the first record of each chunk
        self.codes: dict = {}           # value (string) -> code
        self.site_codes: dict = {}      # site (code object or file, offset or line) by (id, int) -> code
        self.values: list = []          # code -> value (it keeps every coded site alive, so ids stay unique)
        self.object_codes: dict = {id(_EMPTY): 0}   # region list by id -> code
        self.objects: list = [_EMPTY]   # code -> region list (kept alive, so ids stay unique)

    def _code(self, col) -> np.ndarray:
        codes, values = self.codes, self.values
        for v in set(col) - codes.keys():       # the few new values, then one C-level pass of look-ups
            codes[v] = len(values)
            values.append(v)
        return np.fromiter(map(codes.__getitem__, col), np.int32, len(col))

    def _by_identity(self, col, keys: np.ndarray, codes: dict, values: list, key_of) -> np.ndarray:
        """Codes of ``col``'s entries by integer ``keys`` (equal keys: the same entry): distinct ones looked up."""
        uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)     # 1-D integer sorts: ms
        table = np.empty(len(uniq), np.int32)
        for u, i in enumerate(first.tolist()):
            key = key_of(i)
            c = codes.get(key)
            if c is None:
                c = codes[key] = len(values)
                values.append(col[i])
            table[u] = c
        return table[inv.reshape(-1)]

    def _code_sites(self, col) -> np.ndarray:
        """Codes of kernel sites, (code object or file name, byte offset or line) pairs, by the first's identity.

        Hashing a site hashes its code object (its bytecode, constants and names): 70 ms a chunk. The
        pairs are made unique as integers instead, and only the distinct ones are looked up.
        """
        n = len(col)
        try:
            ids = np.fromiter(map(id, map(_first, col)), np.uint64, n)
            offs = np.fromiter(map(_second, col), np.int64, n)
        except (TypeError, IndexError, OverflowError):     # a site of another shape: code it by value
            return self._code(col)
        if n == 0 or offs.min() < 0:
            return self._code(col)
        _, which = np.unique(ids, return_inverse=True)
        keys = which.reshape(-1).astype(np.int64) * (int(offs.max()) + 1) + offs
        return self._by_identity(col, keys, self.site_codes, self.values, lambda i: (int(ids[i]), int(offs[i])))

    def _code_objects(self, col) -> np.ndarray:
        """Codes of region lists by identity (an empty one reads back as ``()``)."""
        col = [r or _EMPTY for r in col]
        ids = np.fromiter(map(id, col), np.uint64, len(col))
        return self._by_identity(col, ids, self.object_codes, self.objects, lambda i: int(ids[i]))

    def pack(self) -> None:
        """Move the unpacked records into a numpy chunk (called by the issue path every ``CHUNK`` records)."""
        lo, hi = self.packed, len(self)
        if hi <= lo:
            return
        cols = list(zip(*list.__getitem__(self, slice(lo, hi))))
        chunk: dict[int, np.ndarray | None] = {}
        index = np.array(cols[_INDEX], np.int64)
        chunk[_INDEX] = None if np.array_equal(index, np.arange(lo, hi)) else index    # None: the position
        for f in _INTS:
            chunk[f] = _narrow(np.array(cols[f], np.int64))
        start = chunk[_START] = np.array(cols[_START], np.float64)
        chunk[5] = _delta(np.array(cols[5], np.float64), start, -1)
        chunk[7] = _delta(np.array(cols[7], np.float64), start, 1)
        for f in _CODED:
            chunk[f] = self._code_sites(cols[f]) if f == _SITE else self._code(cols[f])
        for f in _CODED:
            chunk[f] = _codes(chunk[f], len(self.values))
        for f in _OBJECTS:
            chunk[f] = _codes(self._code_objects(cols[f]), len(self.objects))
        self.chunks.append(chunk)
        self.starts.append(lo)
        list.__setitem__(self, slice(lo, hi), [None] * (hi - lo))
        self.packed = hi

    def _column(self, c: int, f: int, tables: tuple) -> np.ndarray:
        """Field ``f`` of chunk ``c`` decoded: int64, float64 or object (``tables``: values and objects as arrays)."""
        ch = self.chunks[c]
        a = ch[f]
        if f == _INDEX:
            return np.arange(self.starts[c], self.starts[c] + len(ch[_START])) if a is None else a
        if f in _INTS:
            return a.astype(np.int64)
        if f in _DELTAS:
            if a.dtype == np.float64:
                return a
            return ch[_START] + (a.astype(np.float64) if f == 7 else -a.astype(np.float64))
        if f in _CODED:
            return tables[0][a]
        if f in _OBJECTS:
            return tables[1][a]
        return a

    def _row(self, i: int) -> tuple:
        c = bisect_right(self.starts, i) - 1
        j = i - self.starts[c]
        ch, values, objects = self.chunks[c], self.values, self.objects
        start = float(ch[_START][j])
        out = []
        for f in range(NFIELDS):
            a = ch[f]
            if f == _INDEX:
                out.append(i if a is None else int(a[j]))
            elif f in _CODED:
                out.append(values[int(a[j])])
            elif f in _OBJECTS:
                out.append(objects[int(a[j])])
            elif f in _DELTAS and a.dtype == np.float32:
                out.append(start + float(a[j]) if f == 7 else start - float(a[j]))
            else:
                out.append(a[j].item())
        return tuple(out)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        r = list.__getitem__(self, i)
        if r is None:
            return self._row(i if i >= 0 else len(self) + i)
        return r

    def __iter__(self):
        for i in range(self.packed):
            yield self._row(i)
        for k in range(self.packed, len(self)):
            yield list.__getitem__(self, k)

    def columns(self) -> list:
        """One sequence per field, in ``Instr``'s order: numpy arrays (coded fields decoded to objects) or lists."""
        tail = list(zip(*list.__getitem__(self, slice(self.packed, len(self))))) or [()] * NFIELDS
        tables = (_objects(self.values), _objects(self.objects))
        out = []
        for f in range(NFIELDS):
            parts = [self._column(c, f, tables) for c in range(len(self.chunks))]
            if f in _OBJECTS:
                t = _objects(r or _EMPTY for r in tail[f])
            elif f in _CODED:
                t = _objects(tail[f])
            else:
                t = np.array(tail[f], np.float64 if f in _DELTAS or f == _START else np.int64)
            out.append(np.concatenate(parts + [t]) if parts else t)
        return out
