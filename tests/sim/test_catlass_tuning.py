"""benchmarks/catlass_tuning.py: CATLASS's Matmul tuning page (hicann/catlass docs/zh/1_Practice/
11_matmul_optimization.md, TileShape调整 案例二 / 案例三 / 注意点, Swizzle调整 案例一) on catlass_matmul.py's kernel.

The tile counts and the swizzle's per-core work are the page's own statements; the copies are those of
include/catlass/gemm/tile/atlasa2/copy_gm_to_l1.hpp; the small launches check C exactly (integer inputs) in every
B layout and dtype the page uses.
"""
import os
import sys

import numpy as np
import pytest

from ascend_sim.api.ops.datacopy import BurstPlan, _nd_rows

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import catlass_matmul as cm  # noqa: E402
import catlass_tuning as ct  # noqa: E402


def test_tile_counts_are_the_pages():
    """案例二: CeilDiv(20/128) * CeilDiv(6144/256) = 24, then CeilDiv(20/32) * CeilDiv(6144/320) = 20; 案例三:
    CeilDiv(1/128) * CeilDiv(768/128) = 6, then CeilDiv(1/16) * CeilDiv(768/32) = 24; Swizzle 案例一: 2 x 24 = 48."""
    assert [ct.BY_KEY[k].tiles for k in ("case2 zN <128,256,256>", "case2 zN <32,320,128>",
                                         "case3 fp32 <128,128,256>", "case3 fp32 <16,32,1024>",
                                         "swizzle <3,1>")] == [24, 20, 6, 24, 48]
    assert {c.aic for c in ct.CASES if c.key.startswith("case3")} == {24}
    assert {c.aic for c in ct.CASES if not c.key.startswith("case3")} == {20}


@pytest.mark.parametrize("offset, cores, most", [(3, [1, 2, 5, 6], 128 + 128 + 32), (4, [12, 13, 14, 15], 128 + 128)])
def test_swizzle_puts_the_pages_most_rows_on_the_pages_cores(offset, cores, most):
    """Swizzle 案例一: 48 tiles (M 128 + 32, N 24 x 256) on 20 AIC, task t on core t % 20. The page: with <3, 1> cores
    1, 2, 5, 6 carry the most M rows (128 + 128 + 32); with <4, 1> cores 12-15 (128 + 128)."""
    rows = [0] * 20
    for task in range(48):
        mi, _ni = cm.swizzle_coord(task, 2, 24, offset, 1)
        rows[task % 20] += 128 if mi == 0 else 32
    assert max(rows) == most
    assert [c for c in range(20) if rows[c] == most] == cores


@pytest.mark.parametrize("key", [c.key for c in ct.CASES if "<4,1>" not in c.key])
def test_each_case_is_exact_on_a_small_problem(key):
    """Each configuration (B zN, RowMajor, ColumnMajor fp32; M 20 / 1 / 160 in tiles of 128, 32, 16; a narrow last N
    tile) on a small problem: C equals numpy's exactly, and a second run gives the same cycles."""
    c = ct.BY_KEY[key]
    small = dict(m=c.m if c.m < 200 else 32, n=2 * c.l1[1] + 64 if c.b_layout != "col" else 4 * c.l1[1],
                 k=2 * c.l1[2])
    res, out, ref = ct.run_case(c, numerics=True, **small)
    assert np.array_equal(out, ref)
    again, _, _ = ct.run_case(c, numerics=True, **small)
    assert again.cycles == res.cycles


def copies(res, core: int = 0) -> list:
    return [r for r in res.trace.records if r.core == core and r.pipe == "MTE2"]


def test_zn_b_is_one_strided_copy_a_k_tile_and_rowmajor_b_an_nd2nz():
    """CopyGmToL1<zN>: one DataCopy a K tile of n / 16 strips x k1 rows x 32 B; RowMajor B: one Nd2Nz of k1 rows of n.
    Block 0 of 案例二's first tiling on N 512, K 512 (2 K tiles, one 256-wide C tile): A and B copied per K tile,
    4 copies, B's 256 x 256 x 2 = 131,072 bytes each. The L0B loads: per L0 step (k0 64) 4 LoadData of 16 fractals
    (one per 16-row K block, transposed)."""
    for layout in ("zN", "RowMajor"):
        c = ct.BY_KEY[f"case2 {layout} <128,256,256>"]
        res, out, ref = ct.run_case(c, numerics=True, m=20, n=512, k=512)
        assert np.array_equal(out, ref)
        mte2 = copies(res)
        assert [r.nbytes for r in mte2] == [20 * 512, 131072] * 2
        ops = {r.op for r in mte2}
        assert ops == {"DataCopy"}
        loads = [r for r in res.trace.records if r.core == 0 and r.pipe == "MTE1"]
        assert len(loads) == 2 * 4 * (2 + 4)        # K tiles x L0 steps x (A: mRound 32 = 2 row blocks, B: 4)


def test_pingpong_copies_each_tiles_first_k_tile_when_it_starts():
    """00_basic_matmul (MmadAtlasA2Pingpong): no copy of the next C tile during this one's last K tile. 2 tiles on
    1 block, 2 K tiles each (L: one K tile's 4 loads). Pingpong: CC (K tile 0), CC (K tile 1) L, L, then the same for
    the second C tile; Preload: CC, CC L, CC (the next C tile's K tile 0) L, then CC L, L."""
    c = ct.BY_KEY["case3 fp32 <16,32,1024>"]
    for preload, order in ((False, "CCCCLLCCCCLL"), (True, "CCCCLCCLCCLL")):
        t = cm.Tiling(16, 32, 64, 32, 1, 64, 128, blocks=1, swizzle=(3, 0), unit_flag=True, b_layout="col",
                      preload=preload, dtype=c.dtype)
        a, _b, gm_b, out = ct.inputs(c, t, exact=True)
        res = ct.launch(cm.catlass_matmul, 1, a, gm_b, out, t, chip=ct.chip_of(c), gm_names=["a", "b", "c"])
        kinds = "".join("C" if r.pipe == "MTE2" else "L" for r in res.trace.records if r.pipe in ("MTE2", "MTE1"))
        # each K tile has 2 L0 steps, each an A and a B load: collapse each K tile's 4 loads to one "L"
        assert kinds.replace("LLLL", "L") == order
        assert np.array_equal(out, (a.astype(np.float32) @ _b.astype(np.float32)))


@pytest.mark.parametrize("count, blen, pitch, nd", [
    (16, 8192, 8192 + 16128 * 32, False),     # 案例二's zN B: 16 strips of 256 rows x 32 B, K 16384 apart
    (32, 64, 64, True),                       # an ND tile of 32 rows x 32 halves, copied as it is
    (64, 512, 512, True),                     # ND rows of 256 halves, back to back: no gap, still ND
    (128, 640, 12288, True),                  # RowMajor B's 320-half rows with DataCopy (not Nd2Nz): ND
    (256, 512, 12288, False),                 # the rule's blind spot: 256-half ND rows, 6144 apart, look like strips
    (256, 1024, 1024 + 512 * 3, False),       # whole fractals, whole-fractal gaps: strips (taken as zN)
    (1, 8192, 8192, False),                   # one burst: never ND rows
])
def test_nd_rows_rule(count, blen, pitch, nd):
    """engine/layout.ND_ROWS: a GM -> L1 DataCopy of several bursts wider than 32 B is ND rows, unless bursts and
    gaps are whole 512 B fractals with a gap (a zN / nZ matrix's strips, CATLASS's CopyGmToL1<zN>)."""
    assert _nd_rows(BurstPlan(count, blen, pitch, blen, blen)) is nd


def test_live_blocks_counts_the_waves_blocks_still_running():
    """``hbm_streams_live_blocks`` (what-if, off): the streams sharing HBM are the wave's blocks still running at the
    copy's start. By hand: wave 0 = blocks 0-3 (4 physical cores), 4-7 the next wave. At cycle 200 block 0 ended
    (at 100), block 1 ended later (at 300: it was still streaming), blocks 2 and 3 run: 3 of the 4. A block alone
    counts itself, and never more than the wave's ``active``."""
    from types import SimpleNamespace as NS

    from ascend_sim.engine.timing import live_blocks

    def block(group, done, end):
        return NS(done=done, core=NS(group=group, end_time=lambda: end))
    blocks = [block(0, True, 100), block(1, True, 300), block(2, False, 150), block(3, False, 250)]
    blocks += [block(g, False, 0.0) for g in range(4, 8)]
    launch_ = NS(physical=4, blocks=blocks)
    me = NS(group=3, launch=launch_)
    assert live_blocks(me, 200.0, 4) == 3
    assert live_blocks(me, 400.0, 4) == 2        # both ended by then
    assert live_blocks(me, 200.0, 2) == 2        # at most active
    assert live_blocks(NS(group=5, launch=launch_), 200.0, 4) == 4   # wave 1: its own four
    alone = NS(physical=4, blocks=[block(0, True, 50)])
    assert live_blocks(NS(group=0, launch=alone), 200.0, 4) == 1
