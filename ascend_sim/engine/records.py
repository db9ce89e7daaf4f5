"""One launch's instruction records, kept compact: numpy columns in chunks, not a tuple per record.

``Core.issue_n`` appends one tuple per instruction (``Instr``'s fields) to a :class:`RecordList`, a list, so
the hot path keeps the list's own ``append`` and ``len``. Every ``CHUNK`` records the issue path calls
:meth:`RecordList.pack`: the chunk's tuples become numpy columns (strings and kernel sites as small codes into
shared tables; the region lists, which the ops' plans share, as one object column) and their list entries
become ``None``. A record costs about 90 bytes instead of about 350. Reading one record (``rl[i]``), iterating or
taking the columns (:meth:`RecordList.columns`, what trace/table.py reads) sees the tuples as appended.
"""
from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

import numpy as np

CHUNK = 1 << 15                 # records per packed chunk
_INTS = (0, 1, 8, 9, 12)        # index, core, wait_on, nbytes, flops
_FLOATS = (5, 6, 7)             # ready, start, end
_CODED = (2, 3, 4, 10, 11, 13, 14)      # core_type, pipe, op, src, dst, site, klass: codes into ``values``
_OBJECTS = (15, 16)             # reads, writes (Region lists, shared by the plans)
_SITE = 13
NFIELDS = 17
_first, _second = itemgetter(0), itemgetter(1)
_EMPTY: tuple = ()


def _objects(values) -> np.ndarray:
    """A 1-D object array of ``values`` (tuples and lists stay elements, never become rows)."""
    values = list(values)
    return np.fromiter(values, object, len(values))     # one C loop; each value stays one element


class RecordList(list):
    """A launch's records: ``list`` of tuples whose first ``packed`` entries live in numpy chunks (entries None)."""

    def __init__(self):
        super().__init__()
        self.packed = 0
        self.chunks: list[dict[int, np.ndarray]] = []
        self.starts: list[int] = []     # the first record of each chunk
        self.codes: dict = {}           # value (string) -> code
        self.site_codes: dict = {}      # site (code object or file, offset or line) by (id, int) -> code
        self.values: list = []          # code -> value (it keeps every coded site alive, so ids stay unique)

    def _code(self, col) -> np.ndarray:
        codes, values = self.codes, self.values
        for v in set(col) - codes.keys():       # the few new values, then one C-level pass of look-ups
            codes[v] = len(values)
            values.append(v)
        return np.fromiter(map(codes.__getitem__, col), np.int32, len(col))

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
        objs, which = np.unique(ids, return_inverse=True)       # 1-D integer sorts: a few ms
        keys = which.reshape(-1).astype(np.int64) * (int(offs.max()) + 1) + offs
        uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        codes, values = self.site_codes, self.values
        table = np.empty(len(uniq), np.int32)
        for u, i in enumerate(first.tolist()):
            key = (int(ids[i]), int(offs[i]))
            c = codes.get(key)
            if c is None:
                c = codes[key] = len(values)
                values.append(col[i])
            table[u] = c
        return table[inv.reshape(-1)]

    def pack(self) -> None:
        """Move the unpacked records into a numpy chunk (called by the issue path every ``CHUNK`` records)."""
        lo, hi = self.packed, len(self)
        if hi <= lo:
            return
        cols = list(zip(*list.__getitem__(self, slice(lo, hi))))
        chunk: dict[int, np.ndarray] = {}
        for f in _INTS:
            chunk[f] = np.array(cols[f], np.int64)
        for f in _FLOATS:
            chunk[f] = np.array(cols[f], np.float64)
        for f in _CODED:
            chunk[f] = self._code_sites(cols[f]) if f == _SITE else self._code(cols[f])
        for f in _OBJECTS:
            chunk[f] = _objects(r or _EMPTY for r in cols[f])
        self.chunks.append(chunk)
        self.starts.append(lo)
        list.__setitem__(self, slice(lo, hi), [None] * (hi - lo))
        self.packed = hi

    def _row(self, i: int) -> tuple:
        c = bisect_right(self.starts, i) - 1
        j = i - self.starts[c]
        ch, values = self.chunks[c], self.values
        return tuple(values[ch[f][j]] if f in _CODED else ch[f][j].item() if f not in _OBJECTS else ch[f][j]
                     for f in range(NFIELDS))

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
        values = _objects(self.values)
        out = []
        for f in range(NFIELDS):
            parts = [ch[f] for ch in self.chunks]
            if f in _CODED:
                parts = [values[p] for p in parts]
            if f in _OBJECTS:
                t = _objects(r or _EMPTY for r in tail[f])
            elif f in _CODED:
                t = _objects(tail[f])
            else:
                t = np.array(tail[f], np.float64 if f in _FLOATS else np.int64)
            out.append(np.concatenate(parts + [t]) if parts else t)
        return out
