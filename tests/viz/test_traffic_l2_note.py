"""The traffic diagram's note reports what L2 served when it is given a LaunchResult."""
from __future__ import annotations

import numpy as np

from ascend_sim import DataCopy, GlobalTensor, TBuf, TPipe, TPosition, half, kernel, launch
from ascend_sim.viz.traffic_view import TrafficData


@kernel
def read_shared(x):
    g = GlobalTensor(half)
    g.SetGlobalBuffer(x, 4096)
    buf = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(buf, 8192)
    DataCopy(buf.Get(half), g, 4096)


def test_note_gives_the_l2_hit_rate_and_hbm_bytes():
    res = launch(read_shared, 4, np.zeros(4096, half))          # one miss, three hits of the same 8 KB
    note = TrafficData.from_trace(res).payload()["note"]
    assert "read hit rate 75%" in note and "HBM read 8,192 B" in note
    assert "hit rate" not in TrafficData.from_trace(res.trace).payload()["note"]   # a bare trace has no L2 totals
