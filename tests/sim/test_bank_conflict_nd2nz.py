"""The ND -> NZ bank-conflict sample's replica (benchmarks/bank_conflict_nd2nz.py, validated in RESULTS 1c).

The tiling is the sample's (bank_conflict_nd2nz.asc, dav-2201): 57 row tiles of 144 rows (the last 128) split
10, 10, 10, 9, 9, 9 over 6 row splits, 8 column tiles per column split, 48 blocks; nzBuf 1152 blocks in Case 1 and
1160 in Case 2 (the README's UB 占用变化 table). A small matrix (300 x 1024: 3 row tiles, one per block of the first
three row splits) checks the NZ output and the copy's cost per repeat: 8 writes in one bank group in Case 1.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bank_conflict_nd2nz as nd  # noqa: E402


def test_the_tiles_are_the_samples():
    c = nd.CASES[1]
    counts = [len(c.tiles(b)) for b in range(c.blocks)]
    assert c.blocks == 48
    assert counts == [80] * 24 + [72] * 24           # 10 or 9 row tiles x 8 column tiles
    assert sum(counts) == 57 * 64
    first, last = c.tiles(0), c.tiles(47)
    assert first[:2] == [(0, 0), (0, 128)] and first[8] == (144, 0)     # row-major over the block's tiles
    assert last[-1] == (56 * 144, 63 * 128)                              # the 128-row tail tile, last column tile
    assert 8192 - last[-1][0] == 128


@pytest.mark.parametrize("number, stride, blocks", [(1, 144, 1152), (2, 145, 1160)])
def test_the_nz_buffer_is_the_readmes(number, stride, blocks):
    c = nd.CASES[number]
    assert c.c0_stride == stride and c.nz_elems == blocks * 16


@pytest.mark.parametrize("number", sorted(nd.CASES))
def test_the_output_is_the_nz_layout(number):
    res, exact = nd.launch_case(number, numerics=True, m=300, n=1024)
    assert exact
    # one vector copy (a Muls by 1 in place of Copy) per tile: 3 row tiles x 8 column tiles
    assert len([r for r in res.trace if r.op == "Muls"]) == 24


@pytest.mark.parametrize("number, cycles", [
    (1, 20 + 144 * 8),      # vec_startup + 144 repeats, each writing 8 blocks 144 apart: one bank group, 8 cycles
    (2, 20 + 144 * 1),      # 145 apart: 8 groups, one cycle a repeat (the README's 1 拍 / 8 拍)
])
def test_the_copy_pays_the_bank_group(number, cycles):
    res, _ = nd.launch_case(number, m=300, n=1024)
    copy = next(r for r in res.trace if r.op == "Muls" and r.core == 0)
    assert copy.end - copy.start == cycles


def test_deterministic():
    a, b = (nd.launch_case(2, m=300, n=1024)[0] for _ in range(2))
    assert a.cycles == b.cycles and a.core_times == b.core_times
