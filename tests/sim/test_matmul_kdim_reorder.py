"""MatmulConfig.enableKdimReorderLoad (MDL): each core starts its K loop at its own L1 tile of K and wraps round
(k_loop_mdl_reorder.h in asc-devkit: start = blockIdx % K tiles x stepK), so cores sharing A read different GM
addresses at a time; the result is the same product."""
import dataclasses

import numpy as np
import pytest

from ascend_sim import CFG_MDL, CFG_NORM, KernelError, launch
from ascend_sim.kernels.opt.default_matmul import default_matmul_kernel, default_tiling

REORDER = dataclasses.replace(CFG_MDL, enableKdimReorderLoad=True)


def run(cfg, m=64, n=256, k=1024, cores=4, numerics=True):
    """4 cores, each 64 x 64 of C over all of K (base K 64, stepK 4: four L1 tiles of K)."""
    t = dataclasses.replace(default_tiling(m, n, k, cores=cores, out_dtype=np.float32), singleCoreM=m,
                            singleCoreN=n // cores, baseM=64, baseN=64, baseK=64, stepKa=4, stepKb=4, depthA1=8,
                            depthB1=8, usedCoreNum=cores)
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    res = launch(default_matmul_kernel, cores, a, b, None, c, t, np.dtype(np.float32), cfg, numerics=numerics)
    return res, c, a.astype(np.float32) @ b.astype(np.float32)


def test_reordered_k_gives_the_same_product():
    res, c, ref = run(REORDER)
    assert np.array_equal(c, ref)


def test_each_core_starts_at_its_own_k_tile():
    """Block b's K steps run from L1 tile b % 4 round (16 K steps of 64, 4 per tile): block 1 starts at step 4."""
    from ascend_sim.api.highlevel import matmul as mm_module
    orders = {}
    orig = mm_module.Matmul._k_order

    def spy(self, steps):
        order = list(orig(self, steps))
        orders.setdefault(mm_module.current_core().block_idx, order)
        return order
    mm_module.Matmul._k_order = spy
    try:
        run(REORDER, numerics=False)
        plain = dict(orders)
        orders.clear()
        run(CFG_MDL, numerics=False)
    finally:
        mm_module.Matmul._k_order = orig
    assert [plain[b][0] for b in range(4)] == [0, 4, 8, 12]
    assert plain[1] == list(range(4, 16)) + list(range(4))
    assert all(orders[b] == list(range(16)) for b in range(4))        # without the switch: 0, 1, ... everywhere


def test_reorder_is_mdl_only():
    with pytest.raises(KernelError, match="only supported by the MDL template"):
        run(dataclasses.replace(CFG_NORM, enableKdimReorderLoad=True), numerics=False)
