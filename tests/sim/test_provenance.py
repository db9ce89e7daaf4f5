"""Provenance: inside ``tracking_gm_writes`` every GM byte records the instruction that last wrote it."""
from __future__ import annotations

import numpy as np

from ascend_sim import launch
from ascend_sim.engine.memory import tracking_gm_writes
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom
from ascend_sim.kernels.matmul import run_matmul


def test_written_by_names_the_copy_out_of_every_output_byte():
    n = 8 * 2048
    x, y, z = np.ones(n, np.float16), np.ones(n, np.float16), np.zeros(n, np.float16)
    with tracking_gm_writes():
        res = launch(add_custom, 8, x, y, z, AddCustomTilingData(n, 8))
    wx, wy, wz = res.gm_written_by
    assert (wx == -1).all() and (wy == -1).all()            # inputs: read, never written
    assert (wz >= 0).all()
    records = res.trace.records
    ids, counts = np.unique(wz, return_counts=True)
    assert {records[i].op for i in ids} == {"DataCopy"} and {records[i].dst for i in ids} == {"GM"}
    assert all(c == records[i].nbytes for i, c in zip(ids, counts))


def test_outside_tracking_nothing_is_recorded():
    n = 2048
    res = launch(add_custom, 1, np.ones(n, np.float16), np.ones(n, np.float16), np.zeros(n, np.float16),
                 AddCustomTilingData(n, 8))
    assert res.gm_written_by == [None, None, None]


def test_fixpipe_writes_are_recorded():
    with tracking_gm_writes():
        _, _, _, res = run_matmul(64, 64, 64, 32)
    wc = res.gm_written_by[2]
    assert (wc >= 0).all()
    assert {res.trace.records[i].op for i in np.unique(wc)} == {"Fixpipe"}
