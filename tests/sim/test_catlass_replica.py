"""benchmarks/catlass_matmul.py runs CATLASS's 06_optimized_matmul as the example does (issue 30 audit).

hicann/catlass examples/06_optimized_matmul: one block per AIC (RunAdapter(..., aicCoreNum, ...)), each looping over
the C tiles GetBlockIdx(), GetBlockIdx() + GetBlockNum(), ... in GemmIdentityBlockSwizzle<3, 0> order
(include/catlass/gemm/block/block_swizzle.hpp), each starting its K loop at L1 tile GetBlockIdx() % kTiles
(ENABLE_SHUFFLE_K, block/block_mmad_preload.hpp). The old replica launched one block per tile (24 blocks on 20 AIC:
the 4 extra tiles went to the first cores to finish) with tiles in row-major order and every K loop from 0.
"""
import os
import sys

import numpy as np

from ascend_sim import half, launch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import catlass_matmul as cm  # noqa: E402


def launch_exact(t, blocks: int, seed: int):
    """Run the replica on small random integer matrices (exact in half) and check C against numpy."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (t.m, t.k)).astype(half)
    bt = rng.integers(-4, 5, (t.n, t.k)).astype(half)
    c = np.zeros((t.m, t.n), half)
    res = launch(cm.catlass_matmul, blocks, a, bt, c, t, gm_names=["a", "b", "c"])
    assert np.array_equal(c, (a.astype(np.float32) @ bt.astype(np.float32).T).astype(half))
    return res


def test_swizzle_3_0_on_the_documents_8_by_3_tiles():
    """By hand from GetBlockCoord (Zn, offset 3) for 8 x 3 tiles: strips of 3 tile rows, walked column by column,
    every other strip backwards; the last strip has 2 rows. Tasks 20-23 (the second tiles of blocks 0-3 on 20 AIC)
    are (6, 1), (7, 1), (6, 2), (7, 2): blocks 0 and 1 get two full 128 x 256 tiles, 2 and 3 a narrow one."""
    coords = [cm.swizzle_coord(i, 8, 3, 3, 0) for i in range(24)]
    assert coords[:9] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)]
    assert coords[9:12] == [(3, 2), (4, 2), (5, 2)]          # strip 1 runs backwards in n
    assert coords[20:] == [(6, 1), (7, 1), (6, 2), (7, 2)]
    assert sorted(coords) == [(m, n) for m in range(8) for n in range(3)]


def test_swizzle_3_1_walks_columns_of_tiles():
    """Nz, offset 3, on 2 x 4 tiles, by hand: strip 0 = tile columns 0-2 row by row, strip 1 = column 3 backwards in
    m: (0,0) (0,1) (0,2) (1,0) (1,1) (1,2) then (1,3) (0,3)."""
    assert [cm.swizzle_coord(i, 2, 4, 3, 1) for i in range(8)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3), (0, 3)]


def test_blocks_loop_over_swizzled_tiles_from_shuffled_k(monkeypatch):
    """4 x 3 tiles of 16 x 16 on 5 blocks, K = 3 L1 tiles of 32: block b computes tasks b, b + 5, b + 10 (blocks 0
    and 1 three tiles, the others two), and its first A copy reads K tile b % 3. C is exact."""
    t = cm.Tiling(16, 16, 32, 16, 64, 48, 96, blocks=5, swizzle=(3, 0), shuffle_k=True)
    copies = []
    real = cm.DataCopy

    def spy(dst, src, params):
        copies.append((cm.GetBlockIdx(), src.buf.name if hasattr(src.buf, "name") else id(src.buf), src.offset))
        return real(dst, src, params)
    monkeypatch.setattr(cm, "DataCopy", spy)
    res = launch_exact(t, 5, seed=1)
    fixpipes = [sum(1 for r in res.trace.records if r.core == b and r.op == "Fixpipe") for b in range(5)]
    assert fixpipes == [3, 3, 2, 2, 2]
    for b in range(5):
        first_a = next(off for blk, _name, off in copies if blk == b)    # A is copied first, then B
        mi, _ni = cm.swizzle_coord(b, 4, 3, 3, 0)
        assert first_a == 2 * (mi * 16 * t.k + (b % 3) * 32)       # GlobalTensor offsets are in bytes


def test_run_case_launches_one_block_per_aic():
    """The document's <128, 256, 256>: 24 tiles on the 20-AIC part -> 20 blocks (the old replica: 24)."""
    res, _ = cm.run_case(128, 256, numerics=False)
    assert res.block_dim == 20
    fixpipes = sorted(sum(1 for r in res.trace.records if r.core == b and r.op == "Fixpipe") for b in range(20))
    assert fixpipes == [1] * 16 + [2] * 4


def test_unit_flag_lets_the_fixpipe_drain_l0c_while_the_last_mmad_writes_it():
    """ENABLE_UNIT_FLAG (06_optimized_matmul: true): Mmads carry unitFlag 2, the tile's last 3, the Fixpipe 3, so the
    Fixpipe starts once the last Mmad's first 512 B are written (before that Mmad ends; with the M -> FIX flag it
    starts after it), and the next tile's first Mmad waits only for the blocks the Fixpipe frees. C is exact."""
    def run(unit_flag: bool):
        t = cm.Tiling(32, 32, 32, 16, 64, 64, 64, blocks=2, swizzle=(3, 0), shuffle_k=True, unit_flag=unit_flag)
        res = launch_exact(t, 2, seed=2)
        recs = [r for r in res.trace.records if r.core == 0 and r.op in ("Mmad", "Fixpipe")]
        first_fix = next(i for i, r in enumerate(recs) if r.op == "Fixpipe")
        return recs[first_fix - 1], recs[first_fix]       # the tile's last Mmad (32 x 32 fp32 = 8 blocks), its Fixpipe
    mmad, fix = run(True)
    assert mmad.start < fix.start < mmad.end
    mmad, fix = run(False)
    assert fix.start >= mmad.end


def test_the_next_k_tile_and_the_next_c_tile_are_copied_before_this_k_tiles_l0_loads():
    """MmadAtlasA2Preload (block/block_mmad_preload.hpp): at each K tile the next K tile's A and B copies are issued
    before this tile's LoadData; at the last K tile, the next C tile's first. Block 0 of 5 on 4 x 3 tiles, K = 3 L1
    tiles: C tiles 0, 5, 10, so by hand its program order is copy, copy (K tile 0), then per K tile two copies
    (the next tile) before its loads, and the last K tile of the last C tile copies nothing."""
    t = cm.Tiling(16, 16, 32, 16, 64, 48, 96, blocks=5, swizzle=(3, 0), shuffle_k=True)
    res = launch_exact(t, 5, seed=3)
    ops = [r.op for r in res.trace.records if r.core == 0 and r.op in ("DataCopy", "LoadData2D", "LoadData")]
    kinds = "".join("C" if op == "DataCopy" else "L" for op in ops)
    loads = kinds.count("L") // 9           # the same loads at each of the 3 C tiles x 3 K tiles
    assert loads == 4                       # L0 steps of 16: 2 a K tile, an A and a B load each
    k_tile = "CC" + "L" * loads             # a K tile: the next one's two copies, then its own loads
    assert kinds == "CC" + k_tile * 8 + "L" * loads
