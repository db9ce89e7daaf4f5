"""Compact trace records (engine/records.py, engine/columns.py): packed chunks read back exactly as appended."""
from __future__ import annotations

import numpy as np

from ascend_sim.engine.records import RecordList
from ascend_sim.kernels.matmul import run_matmul


def _rows(n: int) -> list[tuple]:
    rng = np.random.default_rng(0)
    ops = ("DataCopy", "Mmad", "LoadData", "SetFlag")
    shared = [object()]                 # a plan's region list, shared by many records
    out = []
    for i in range(n):
        out.append((i, int(rng.integers(0, 24)), "AIC", "MTE2", ops[i % 4], float(i), i + 0.5, i * 2.25,
                    int(rng.integers(-1, i + 1)), int(rng.integers(0, 1 << 40)), "GM", "L1", 2 * 128 * 256 * 64,
                    ("site", i % 7), "copy", shared if i % 3 else [], []))
    return out


def test_packed_records_read_back_as_appended():
    rows = _rows(1000)
    rl = RecordList()
    for k, r in enumerate(rows):
        rl.append(r[1:])                # (a record is appended without its index: its position)
        if k in (99, 511, 700):
            rl.pack()
    assert rl.packed == 701 and len(rl) == 1000
    assert list.__getitem__(rl, 5) is None          # packed: the tuple itself is gone
    def norm(rs):       # a packed record's empty region list reads back as ()
        return [r[:15] + (r[15] or (), r[16] or ()) for r in rs]
    assert norm(rl[i] for i in range(1000)) == norm(rows)
    assert [rl[i] for i in range(701, 1000)] == rows[701:]      # not packed: the tuples as appended
    assert norm(rl) == norm(rows)
    assert rl[-1] == rows[-1] and rl[10:13] == norm(rows[10:13])
    cols = rl.columns()
    for f, col in enumerate(zip(*norm(rows))):
        assert list(cols[f]) == list(col), f
    assert cols[15][1] is rows[1][15]               # the shared region list is kept, not copied
    assert isinstance(rl[3][5], float) and isinstance(rl[3][9], int)


def test_a_launch_trace_is_the_same_packed_or_not(monkeypatch):
    """The same launch with 16-record chunks gives the same records and table as with the default chunks."""
    from ascend_sim.engine import core as core_mod
    *_, res = run_matmul(128, 128, 128, 32)
    monkeypatch.setattr(core_mod, "_CHUNK_MASK", 15)
    *_, small = run_matmul(128, 128, 128, 32)
    assert small.trace._raw.packed > 0 and res.trace._raw.packed == 0
    a, b = res.trace.table(), small.trace.table()      # from the columns (before the Instr objects exist)
    for f in ("index", "start", "end", "op", "line", "nbytes", "klass"):
        assert list(getattr(a, f)) == list(getattr(b, f))
    assert a.regions() == b.regions()
    assert [r.as_dict() for r in small.trace.records] == [r.as_dict() for r in res.trace.records]


def test_sites_are_coded_by_their_code_object_not_its_value():
    """Kernel sites (code object, byte offset) read back with their own code object, even when two are equal."""
    def twin():
        return 1
    first = twin.__code__
    second = first.replace(co_name=first.co_name)      # a copy: equal, but another object
    assert first == second and first is not second
    sites = [(first, 4), (second, 4), (first, 10), ("<unknown>", 0), (second, 4)]
    rows = [r[:13] + (sites[i % 5],) + r[14:] for i, r in enumerate(_rows(50))]
    rl = RecordList()
    for r in rows:
        rl.append(r[1:])
    rl.pack()
    for i in range(50):
        assert rl[i][13] == sites[i % 5] and rl[i][13][0] is sites[i % 5][0], i
    odd = [r[:13] + ((None, (("site", i % 2), -3))[i % 2],) + r[14:] for i, r in enumerate(_rows(10))]
    rl2 = RecordList()                          # other shapes of site: coded by value
    for r in odd:
        rl2.append(r[1:])
    rl2.pack()
    assert [rl2[i][13] for i in range(10)] == [r[13] for r in odd]


def test_narrow_columns_read_back_bit_for_bit():
    """Columns stored narrow (float32 differences, small integers, codes) give back every value exactly,
    and fall back to float64 / int64 where narrowing would lose bits."""
    rng = np.random.default_rng(3)
    rows = _rows(600)
    for k in range(600):
        start = float(rng.random() * 1e7)
        ready = start - (float(k % 5) if k < 300 else float(rng.random() * 1e6))     # exact in float32 below 300
        end = start + (0.5 * k if k < 300 else float(rng.random()) * 1e6)
        rows[k] = rows[k][:5] + (ready, start, end) + rows[k][8:]
    rl = RecordList()
    for k, r in enumerate(rows):
        rl.append(r[1:])
        if k in (299, 599):
            rl.pack()
    first, second = rl.chunks
    assert first[5].dtype == np.float32 and first[7].dtype == np.float32 and 0 not in first     # no index
    assert second[5].dtype == np.float64 and second[7].dtype == np.float64
    assert first["kind"].dtype == np.uint16 and first[8].dtype == np.int32  # 300 kinds (core, nbytes up to 2^40...)
    for k in range(600):
        got = rl[k]
        assert got[5:8] == rows[k][5:8] and got[:5] == rows[k][:5] and got[8:15] == rows[k][8:15], k
    cols = rl.columns()
    assert cols[5].dtype == np.float64 and np.array_equal(cols[5], [r[5] for r in rows])
    assert np.array_equal(cols[7], [r[7] for r in rows]) and np.array_equal(cols[9], [r[9] for r in rows])


def test_a_launch_record_costs_under_32_bytes():
    """Case (f)'s records packed: the columns take under 32 bytes a record (a tuple per record: about 350)."""
    from ascend_sim.engine import core as core_mod
    import pytest
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(core_mod, "_CHUNK_MASK", 255)
        *_, res = run_matmul(256, 256, 256, 64)
    rl = res.trace._raw
    size = sum(a.nbytes for ch in rl.chunks for a in ch.values() if a is not None)
    assert rl.packed >= 256 and size / rl.packed < 32, size / rl.packed


def _fresh_rows(n: int) -> list[tuple]:
    """Rows whose equal fields are often distinct objects (fresh empty lists, strings, big ints, sites), as
    the generic issue path and f-string op names make them."""
    rng = np.random.default_rng(5)
    plans = [[object()], [object(), object()]]
    code = _fresh_rows.__code__
    out = []
    for i in range(n):
        k = int(rng.integers(0, 3))
        op = "".join(["Data", "Copy"]) if k else "Mmad"                 # equal strings, distinct objects
        nbytes = int("1" + "0" * (k + 3))                               # equal big ints, distinct objects
        reads = [] if k == 0 else plans[k - 1]                          # a fresh empty list or a plan's
        out.append((i, k, "AIC", "MTE1", op, float(i), i + 0.25, i + 1.0, -1 if k else i - 1, nbytes, "L1",
                    "L0A", k << 40, (code, 1000 + 2 * k), "copy", reads, [] if k else plans[0]))
    return out


def _norm(rows):
    return [r[:15] + (r[15] or (), r[16] or ()) for r in rows]


def _packed(rows, every: int) -> RecordList:
    rl = RecordList()
    for k, r in enumerate(rows):
        rl.append(r[1:])
        if k % every == every - 1:
            rl.pack()
    return rl


def test_records_grouped_by_identity_read_back_by_value():
    """Equal fields that are distinct objects, fresh empty region lists: every record reads back as appended,
    and the plans' region lists as the very lists."""
    rows = _fresh_rows(3000)
    rl = _packed(rows, 1000)
    assert rl.packed == 3000 and len(rl.kinds) == 3 and len(rl.objects) == 3 and len(rl.sites) == 3
    assert _norm(rl) == _norm(rows)
    assert all(rl[i][15] is rows[i][15] for i in range(3000) if rows[i][15])
    cols = rl.columns()
    for f, col in enumerate(zip(*_norm(rows))):
        assert list(cols[f]) == list(col), f


def test_grouping_stays_exact_when_the_mixed_keys_collide(monkeypatch):
    """Records are grouped by one mixed integer per record, checked exactly: with every mixed integer equal,
    or with hash slots that collide in every round, the records still read back as appended."""
    from ascend_sim.engine import columns
    rows = _fresh_rows(2000)
    for sorted_below in (4096, 0):                                      # sorted, or in the hash table's rounds
        monkeypatch.setattr(columns, "_SORTED", sorted_below)
        monkeypatch.setattr(columns, "_MIX", np.zeros(16, np.uint64))    # every record mixes to 0
        assert _norm(_packed(rows, 700)) == _norm(rows)
        monkeypatch.setattr(columns, "_MIX", np.ones(16, np.uint64))
        monkeypatch.setattr(columns, "_SLOT_BITS", 1)                 # one bit a round: most lose their slot
        assert _norm(_packed(rows, 700)) == _norm(rows)


def test_ids_read_from_tuples_are_the_ids():
    """The ids the packing reads from a tuple's items are ``id``'s (else it calls ``id``)."""
    from ascend_sim.engine import columns
    items = (object(), "x", 1 << 80, [], None, -1, 2.5)
    assert columns.ids(items).tolist() == columns.ids_called(items).tolist() == [id(v) for v in items]
