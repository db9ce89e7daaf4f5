"""The Matmul best-practice sample's replica (benchmarks/matmul_high_performance.py): tilings, offsets and copies as
the sample's matmul.h / matmul.asc set them, at K = 512 (the full 8192^3 launches take minutes)."""
import os
import sys

from ascend_sim.engine.gmcheck import _partial_in
from ascend_sim.hw.chips import Ascend910B
from ascend_sim.trace.table import as_table

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import matmul_high_performance as hp  # noqa: E402

K = 512                 # 8 K steps of 64: an A tile of Case 5 (stepKa 8) holds all of K, B's (stepKb 4) half


def _l1(t) -> tuple:
    return (t.depthA1, t.depthB1, t.stepM, t.stepN, t.stepKa, t.stepKb)


def test_tilings_are_the_samples():
    """matmul.asc: SetFixSplit and SetL1 (Cases 0-3), SetSingleShape per split, the README's Case 4 L1 fields
    (depthA1 4 = stepKa 2 x ping/pong; depthB1 8), Case 5's set_depthA1(16) / set_stepKa(8), Cases 6-8's 1024 rows."""
    t = {n: hp.host_tiling(c) for n, c in hp.CASES.items()}
    assert (t[0].baseM, t[0].baseN, t[0].baseK) == (64, 64, 64)
    assert all((t[n].baseM, t[n].baseN, t[n].baseK) == (128, 256, 64) for n in range(1, 9))
    assert all(_l1(t[n]) == (1, 1, 1, 1, 1, 1) for n in range(4))
    assert (t[0].usedCoreNum, t[0].singleCoreM, t[0].singleCoreN) == (1, 8192, 8192)
    assert (t[2].usedCoreNum, t[2].singleCoreM, t[2].singleCoreN) == (24, 4096, 683)
    assert (t[3].singleCoreM, t[3].singleCoreN) == (2048, 1536)
    assert _l1(t[4]) == (4, 8, 1, 1, 2, 4)
    assert _l1(t[5]) == (16, 8, 1, 1, 8, 4)
    assert all((t[n].singleCoreM, t[n].singleCoreN, _l1(t[n])) == (1024, 1536, _l1(t[5])) for n in (6, 7, 8))
    assert all(t[n].singleCoreK == 8192 for n in t)


def test_core_offsets_are_calcoffsets():
    """Case 2: 2 x 12 tiles, block 23 is the last N tile (8192 - 11 x 683 = 679 columns: the README's tailN);
    Cases 6-8: 4 M tiles of 1024 rows, the second IterateAll 4096 rows further (the kernel's M >> 1)."""
    t2 = hp.host_tiling(hp.CASES[2])
    assert hp.core_offsets(t2, 23, False) == (4096 * 8192, 11 * 683 * 8192, 4096 * 8192 + 11 * 683, 4096, 679)
    assert hp.core_offsets(t2, 22, False)[3:] == (4096, 679) and hp.core_offsets(t2, 21, False)[3:] == (4096, 683)
    t6 = hp.host_tiling(hp.CASES[6])
    assert hp.core_offsets(t6, 7, True) == (3 * 1024 * 8192, 1536 * 8192, 3 * 1024 * 8192 + 1536, 1024, 1536)
    assert hp.core_offsets(t6, 23, True)[3:] == (1024, 512)     # 8192 - 5 x 1536: the README's tailN 512


def _copies(res) -> tuple[int, int]:
    """(GM -> L1 copies, their bytes) of the launch, from the trace."""
    table = as_table(res)
    copy = (table.pipe == "MTE2") & (table.op == "DataCopy")
    return int(copy.sum()), int(table.nbytes[copy].sum())


def test_copies_per_case():
    """2048 C blocks of 128 x 256 (64 x 32; a core 16 x 6, the 4 cores of the last N tile 16 x 2; Cases 6-8 half
    of it twice), 8 K steps; a block's K step needs 128 x 64 of A and 256 x 64 of B (48 KB). Norm with SetL1 (Case 3): one copy per base block, 2 x 8 per C block;
    MDL (Case 4) one per L1 tile: A 8 / stepKa 2 = 4, B 8 / stepKb 4 = 2; Case 6 (Case 5's stepKa 8, two halves of
    M): A 1, B 2. Every case moves the same bytes (no tile is kept across C blocks: M is the inner loop, and
    no B tile holds all of K)."""
    expect = {3: 16, 4: 6, 6: 3}
    for n, per_block in expect.items():
        res, _, _ = hp.simulate(hp.CASES[n], K)
        assert _copies(res) == (2048 * per_block, 2048 * 8 * (128 + 256) * 64 * 2), n


def test_constant_tiling_and_unit_flag_are_deterministic():
    """Case 7 is Case 6 without the TCubeTiling copy at Init; Case 8 adds UnitFlag. Same launch, same cycles."""
    chip = Ascend910B()
    r6, r7, r8, r8b = (hp.simulate(hp.CASES[n], 64)[0] for n in (6, 7, 8, 8))
    assert r8.cycles == r8b.cycles and r8.core_times == r8b.core_times
    s6, s7 = hp.figures(r6, 24)["aic_scalar_time"], hp.figures(r7, 24)["aic_scalar_time"]
    assert abs((s6 - s7) - chip.cycles_to_us(chip.matmul_tiling_copy_cycles)) < 1e-9
    assert r7.cycles < r6.cycles


def test_partial_chunks_in_a_range_are_the_scans():
    """gmcheck._partial_in (what makes Case 2's unaligned C rows simulable: hundreds of thousands of chunks written
    in part) returns what the scan of the whole dict returns, in the dict's order, by lookup or by scan."""
    partial = dict.fromkeys([40, 3, 17, 5, 900, 16, 4])
    for c0, c1 in ((0, 2), (3, 6), (4, 41), (16, 18), (0, 1000), (899, 901), (5, 5)):
        assert _partial_in(partial, c0, c1) == [c for c in partial if c0 <= c < c1], (c0, c1)
    assert _partial_in(partial, 3, 6) == [3, 5, 4]          # insertion order, not chunk order
