"""benchmarks/matmul_features.py (RESULTS 1d): the directions the model must get right, and the L2 tiling port."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import matmul_features as mf  # noqa: E402


def test_split_k_over_two_cores_is_faster_and_its_partials_add_up():
    """Matmul高阶API使能多核切K.md: M = N = 16, K = 1024 on 1 then 2 AIC gets faster (19.60 -> 13.70 us)."""
    one, err1 = mf.run_split_k(1, numerics=True)
    two, err2 = mf.run_split_k(2, numerics=True)
    assert mf.core_us(two, "mean") < mf.core_us(one, "mean")
    assert max(err1, err2) < 1e-3


def test_l2_optimizer_picks_the_samples_l2_blocks():
    """l2_cache_optimizer.h on M30720 N1024 K4096, 24 cores, 128 x 256 tiles, by hand: 240 x 4 tiles; the
    largest m block under 100 MB whose tail fills the 24 cores is 24 (240 % 24 = 0), n keeps all 4: 10 L2 blocks.
    Every tile of C is computed once, in both orders."""
    opt = mf.L2CacheOptimizer(30720, 1024, 4096, 24)
    assert (opt.mL2TileNum, opt.nL2TileNum, opt.mL2BlockNum, opt.nL2BlockNum) == (24, 4, 10, 1)
    for split in (True, False):
        o = mf.L2CacheOptimizer(30720, 1024, 4096, 24, split=split)
        assert len({o.block_coord(i) for i in range(o.tile_num())}) == 960
    first_wave = {opt.block_coord(i)[0] for i in range(96)}     # the first L2 block: m tiles 0..23 only
    assert first_wave == {128 * i for i in range(24)}


def test_split_k_uses_canns_base_block_one_copy_per_operand():
    """CANN's GetL0FactorsCand for M = N = 16 (one fractal each): the largest kL0 with mL0 * kL0 <= (64 KB L0A / 2
    buffers) / 512 B = 64 fractals, so baseK = the core's whole K slice (1024 on 1 core, 512 on 2) and A and B load
    whole (stepKa = stepKb = 1). By hand: per core one A copy of 16 rows x slice halves and one B copy of slice
    rows x 16 halves: 2 x 16 x 1024 x 2 B = 65,536 B on 1 core, 2 x 16,384 B per core on 2; one Mmad a core.
    GetTiling's default here (baseK 64, stepKa 16) made 32 copies of 2 KB and 16 Mmads."""
    for cores, slice_k in ((1, 1024), (2, 512)):
        t = mf.split_k_tiling(cores)
        assert (t.baseM, t.baseN, t.baseK, t.stepKa, t.stepKb) == (16, 16, slice_k, 1, 1)
        assert t.baseM * t.baseK * 2 * t.dbL0A <= 64 * 1024          # L0A: 16 x 1024 x 2 B x 2 = 64 KB exactly
        res, err = mf.run_split_k(cores, numerics=True)
        assert err < 1e-3
        for core in range(cores):
            recs = [r for r in res.trace.records if r.core == core]
            copies = [r.nbytes for r in recs if r.op == "DataCopy" and r.src == "GM"]
            assert copies == [16 * slice_k * 2, slice_k * 16 * 2]
            assert sum(1 for r in recs if r.op == "Mmad") == 1


def test_same_window_rows_study_counts_rows_in_their_predecessors_window():
    """benchmarks/same_window_rows_study.py, by hand. Back-to-back rows start in the window where the previous row
    ended unless they start exactly on a window boundary: split-K's B copy (1,024 rows of 32 B from a window start)
    fills 64 windows with 16 rows each, so 1,023 - 63 = 960 rows count; 8 rows of 128 B from byte 2 never start on
    a boundary (2 + 128 i), so all 7 count; rows of 512 B at the ND2NZ case's pitch of 8,190 B never share."""
    import same_window_rows_study as st
    assert st.rows_in_previous_window(0, 1024, 32, 32) == 960
    assert st.rows_in_previous_window(2, 8, 128, 128) == 7
    assert st.rows_in_previous_window(0, 256, 512, 8190) == 0
