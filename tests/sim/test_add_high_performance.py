"""The Add sample's Cases 3-6 replica (benchmarks/add_high_performance.py, validated in RESULTS 1c) adds exactly.

A 256 x 256 matrix with 256-half copies: 5 or 6 rows per core, 5 or 6 copies each, so the ping-pong buffers, the
event ids and the last copy all run; z must equal x + y in every case.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import add_high_performance as hp  # noqa: E402


@pytest.mark.parametrize("number", sorted(hp.CASES))
def test_each_case_adds_exactly(number):
    res, exact = hp.run(number, numerics=True, side=256, copy_len=256)
    assert exact
    assert len([r for r in res.trace if r.op == "Add"]) == 256 * 256 // 256     # one Add per copy: 256 in all


@pytest.mark.parametrize("number, ping, pong", [
    # add.asc: xAddrPing 0, yAddrPing 16384 x 2, zAddrPing 2 x 32768; the pong triple from 3 x 32768 on
    (5, (0, 32768, 65536), (98304, 131072, 163840)),
    # ...BankConflict: y 16256 x 2 = 32,512 B after x, z at 4 x 32768 (+ 32,512 for pong), pong x at 2 x 32768
    (6, (0, 32512, 131072), (65536, 98048, 163584)),
])
def test_the_buffers_sit_where_the_sample_puts_them(number, ping, pong):
    res, _ = hp.run(number, side=256, copy_len=256)
    adds = [r for r in res.trace if r.op == "Add" and r.core == 0][:2]
    for add, (x, y, z) in zip(adds, (ping, pong)):
        assert [a[1] for a in add.reads] == [x, y] and add.writes[0][1] == z
