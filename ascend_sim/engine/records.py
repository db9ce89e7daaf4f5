"""One launch's instruction records, kept compact: numpy columns in chunks, not a tuple per record.

``Core.issue_n`` appends one tuple per instruction to a :class:`RecordList`, a list, so the hot path keeps
the list's own ``append`` and ``len``: ``Instr``'s fields but the first, the index, which is the record's
position (one field less to build, keep and pack). Every ``CHUNK`` records the issue path calls
:meth:`RecordList.pack`: the chunk's tuples become numpy columns and their list entries become ``None``.

A chunk keeps per record only what varies from instruction to instruction: ``start`` (float64), ``ready``
and ``end`` as float32 differences from ``start`` when those give back every value bit for bit (else
float64), ``wait_on`` in the narrowest integer dtype of its range, and small codes: the kernel site, the
read and the written region lists (which the ops' plans share) and the *kind*: the fields an op's plan
fixes (core, core type, pipe, op, nbytes, src, dst, flops, class), one tuple in a shared table. A record
costs about 25 bytes (a tuple: about 350). Reading one record (``rl[i]``), iterating or taking the columns
(:meth:`RecordList.columns`, what trace/table.py reads) sees ``Instr``'s 17 fields: the index, then the
tuple as appended.

Packing does no Python work per record: the tuples are transposed by ``zip``, numbers become arrays through
``struct``, and the records are grouped by the identities of their kind fields, region lists and site (read
from the column tuples as integers), so only one record per group is looked up in the tables.
"""
from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

import numpy as np

from ascend_sim.engine.columns import groups, ids, numbers

CHUNK = 1 << 15                 # records per packed chunk
NFIELDS = 17
_INDEX, _START, _WAIT, _SITE, _READS, _WRITES = 0, 6, 8, 13, 15, 16
_DELTAS = (5, 7)                # ready, end: float32 differences from start when exact, else float64
_KIND = (1, 2, 3, 4, 9, 10, 11, 12, 14)     # core, core_type, pipe, op, nbytes, src, dst, flops, klass
_KIND_INTS = (1, 9, 12)         # core, nbytes, flops: read back as int (int64 columns)
_CODED = (2, 3, 4, 10, 11, 13, 14)          # the fields that read back as objects (with reads and writes)
_GROUPED = _KIND + (_READS, _WRITES)        # the fields records are grouped by, by identity (and the site)
_kind_of = itemgetter(*_KIND)
_NORMALISE = tuple(f in _KIND_INTS for f in _KIND)
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
    """A launch's records: ``list`` of tuples (``Instr``'s fields but the index) whose first ``packed`` entries
    live in numpy chunks (entries None)."""

    def __init__(self):
        super().__init__()
        self.packed = 0
        self.chunks: list[dict] = []
        self.starts: list[int] = []     # the first record of each chunk
        self.kinds: list[tuple] = []    # code -> the kind fields (``_KIND``'s order)
        self.kind_codes: dict = {}      # kind fields as appended -> code
        self.sites: list = []           # code -> site (it keeps every coded site alive, so ids stay unique)
        self.site_codes: dict = {}      # (id of the code object or file, offset or line) -> code
        self.site_values: dict = {}     # a site of another shape, by value -> code
        self.object_codes: dict = {id(_EMPTY): 0}   # region list by id -> code
        self.objects: list = [_EMPTY]   # code -> region list (kept alive, so ids stay unique)

    # ------------------------------------------------------------------ packing
    def _site_keys(self, sites: tuple) -> np.ndarray:
        """Per site, (id of its code object or file, offset or line) as two uint64 rows; when the sites are not
        such pairs: their codes by value, one row."""
        n = len(sites)
        try:
            parts = list(zip(*sites))       # a site's first two items (as ``site[0]``, ``site[1]`` would give)
            if len(parts) >= 2:
                return np.stack([ids(parts[0]), numbers(parts[1], np.int64).view(np.uint64)])
        except (TypeError, ValueError, OverflowError):
            pass
        codes, values = self.site_values, self.sites
        for s in set(sites) - codes.keys():
            codes[s] = len(values)
            values.append(s)
        return np.fromiter(map(codes.__getitem__, sites), np.uint64, n)[None]

    def _kind_code(self, row: tuple) -> int:
        key = _kind_of(row)
        c = self.kind_codes.get(key)
        if c is None:
            c = self.kind_codes[key] = len(self.kinds)
            self.kinds.append(tuple(int(v) if norm else v for v, norm in zip(key, _NORMALISE)))
        return c

    def _object_code(self, regions) -> int:
        regions = regions or _EMPTY         # an empty (or None) region list reads back as ()
        c = self.object_codes.get(id(regions))
        if c is None:
            c = self.object_codes[id(regions)] = len(self.objects)
            self.objects.append(regions)
        return c

    def _site_code(self, site) -> int:
        key = (id(site[0]), int(site[1]))
        c = self.site_codes.get(key)
        if c is None:
            c = self.site_codes[key] = len(self.sites)
            self.sites.append(site)
        return c

    @staticmethod
    def _table(reps: list, keys: np.ndarray, code_of) -> np.ndarray:
        """``code_of(rep)`` for each of ``reps``, called once for the reps with equal ``keys`` (their columns)."""
        first, inv = groups(keys)
        return np.array([code_of(reps[i]) for i in first.tolist()], np.int64)[inv]

    def pack(self) -> None:
        """Move the unpacked records into a numpy chunk (called by the issue path every ``CHUNK`` records)."""
        lo, hi = self.packed, len(self)
        if hi <= lo:
            return
        n = hi - lo
        rows = list.__getitem__(self, slice(lo, hi))
        cols = [None, *zip(*rows)]          # by ``Instr``'s field numbers (the index is not appended)
        chunk: dict = {}
        start = chunk[_START] = numbers(cols[_START], np.float64)
        chunk[5] = _delta(numbers(cols[5], np.float64), start, -1)
        chunk[7] = _delta(numbers(cols[7], np.float64), start, 1)
        chunk[_WAIT] = _narrow(numbers(cols[_WAIT], np.int64))
        sites = self._site_keys(cols[_SITE])
        keys = np.empty((len(_GROUPED) + len(sites), n), np.uint64)
        for k, f in enumerate(_GROUPED):
            keys[k] = ids(cols[f])
        keys[len(_GROUPED):] = sites
        first, group = groups(keys)        # the same kind, region lists and site: one look-up per group
        reps, rkeys, nk = [(lo + i, *rows[i]) for i in first.tolist()], keys[:, first], len(_KIND)
        site_code = self._site_code if len(sites) == 2 else None
        tables = {"kind": self._table(reps, rkeys[:nk], self._kind_code),
                  _READS: self._table(reps, rkeys[nk:nk + 1], lambda r: self._object_code(r[_READS])),
                  _WRITES: self._table(reps, rkeys[nk + 1:nk + 2], lambda r: self._object_code(r[_WRITES])),
                  _SITE: (self._table(reps, rkeys[nk + 2:], lambda r: site_code(r[_SITE])) if site_code
                          else rkeys[nk + 2].astype(np.int64))}
        sizes = {"kind": len(self.kinds), _SITE: len(self.sites), _READS: len(self.objects),
                 _WRITES: len(self.objects)}
        for f, table in tables.items():
            chunk[f] = _codes(table, sizes[f])[group]
        self.chunks.append(chunk)
        self.starts.append(lo)
        list.__setitem__(self, slice(lo, hi), [None] * n)
        self.packed = hi

    # ------------------------------------------------------------------ reading
    def _tables(self) -> dict:
        """Decoding tables by field: the kind fields (int64 or object arrays), sites and region lists."""
        kinds = list(zip(*self.kinds)) or [()] * len(_KIND)
        out = {f: np.array(kinds[k], np.int64) if f in _KIND_INTS else _objects(kinds[k])
               for k, f in enumerate(_KIND)}
        out[_SITE] = _objects(self.sites)
        out[_READS] = out[_WRITES] = _objects(self.objects)
        return out

    def _column(self, c: int, f: int, tables: dict) -> np.ndarray:
        """Field ``f`` of chunk ``c`` decoded: int64, float64 or object."""
        ch = self.chunks[c]
        if f == _INDEX:
            return np.arange(self.starts[c], self.starts[c] + len(ch[_START]))
        if f in _KIND:
            return tables[f][ch["kind"]]
        a = ch[f]
        if f in tables:
            return tables[f][a]
        if f == _WAIT:
            return a.astype(np.int64)
        if f in _DELTAS and a.dtype == np.float32:
            return ch[_START] + (a.astype(np.float64) if f == 7 else -a.astype(np.float64))
        return a

    def _row(self, i: int) -> tuple:
        c = bisect_right(self.starts, i) - 1
        j = i - self.starts[c]
        ch = self.chunks[c]
        start = float(ch[_START][j])
        ready, end = float(ch[5][j]), float(ch[7][j])
        if ch[5].dtype == np.float32:
            ready = start - ready
        if ch[7].dtype == np.float32:
            end = start + end
        k = self.kinds[int(ch["kind"][j])]
        return (i, k[0], k[1], k[2], k[3], ready, start, end,
                int(ch[_WAIT][j]), k[4], k[5], k[6], k[7], self.sites[int(ch[_SITE][j])], k[8],
                self.objects[int(ch[_READS][j])], self.objects[int(ch[_WRITES][j])])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        r = list.__getitem__(self, i)
        i = i if i >= 0 else len(self) + i
        return self._row(i) if r is None else (i, *r)

    def __iter__(self):
        for i in range(self.packed):
            yield self._row(i)
        for k in range(self.packed, len(self)):
            yield (k, *list.__getitem__(self, k))

    def columns(self) -> list:
        """One sequence per field, in ``Instr``'s order: numpy arrays (coded fields decoded to objects) or lists."""
        lo, hi = self.packed, len(self)
        tail = [range(lo, hi), *zip(*list.__getitem__(self, slice(lo, hi)))] if hi > lo else [()] * NFIELDS
        tables = self._tables() if self.chunks else {}
        out = []
        for f in range(NFIELDS):
            parts = [self._column(c, f, tables) for c in range(len(self.chunks))]
            if f in (_READS, _WRITES):
                t = _objects(r or _EMPTY for r in tail[f])
            elif f in _CODED:
                t = _objects(tail[f])
            else:
                t = np.array(tail[f], np.float64 if f in _DELTAS or f == _START else np.int64)
            out.append(np.concatenate(parts + [t]) if parts else t)
        return out
