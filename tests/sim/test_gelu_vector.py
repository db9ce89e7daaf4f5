"""The A2 vector Gelu replica (benchmarks/gelu_vector.py, validated in RESULTS 1c).

The split: gelu.asc's singleCoreN 4096 and tileLen 2 x 4096, M in 24 blocks of 342 rows (the last 326) for 48 AIV.
A small matrix (50 x 512, blocks of 10 x 256: 5 x 2 blocks, 5 tiles of two rows each) checks the result against the
formula in float64 and the eight instructions of GeluMemBaseCompute per tile, in order.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import gelu_vector as gv  # noqa: E402

SMALL = {"m": 50, "n": 512, "core_m": 10, "core_n": 256}


def test_the_split_gives_48_blocks():
    s = gv.A2
    assert s.blocks == 48 and s.tile_len == 8192
    assert s.block(0) == (0, 342, 4096)
    assert s.block(23) == (23 * 342 * 8192, 8192 - 23 * 342, 4096)     # the tail: 326 rows
    assert s.block(24) == (4096, 342, 4096)                             # N index 1: the right half
    assert 4 * s.tile_len * 4 <= 192 * 1024                             # ping-pong x and y fit the UB


def test_the_gelu_is_the_formula_and_its_eight_instructions():
    res, close = gv.launch_split(numerics=True, **SMALL)
    assert res.block_dim == 10 and close
    ops = [r.op for r in res.trace if r.core == 0 and r.klass in ("simple", "transcendental")]
    assert ops == ["Mul", "Mul", "Muls", "Add", "Muls", "Exp", "Adds", "Div"] * 5


def test_deterministic():
    a, b = (gv.launch_split(**SMALL)[0] for _ in range(2))
    assert a.cycles == b.cycles and a.core_times == b.core_times
    assert np.isfinite(a.cycles)
