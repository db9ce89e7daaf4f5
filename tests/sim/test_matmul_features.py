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
