"""The decode GEMV (kernels/m4/weight_gemv.py): values against numpy, and the mechanism of INT4's speed-up."""
import numpy as np
import pytest

from ascend_sim import ArgumentError
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.m4.weight_gemv import dequantised, gemv_tiling, weight_gemv


@pytest.mark.parametrize("bits,chip", [(16, "Ascend310B"), (4, "Ascend310B"), (4, "Ascend910B")])
def test_gemv_matches_numpy(bits, chip):
    rng = np.random.default_rng(1)
    K, O = 256, 512
    x = rng.standard_normal(K).astype(np.float16)
    w = (rng.standard_normal((K, O)) * 0.05).astype(np.float32)
    y, res = weight_gemv(x, w, bits, tile=256, rows=16, chip=chip)
    assert res.block_dim == (2 if chip == "Ascend910B" else 1)          # 910B: the two tiles on two AIVs
    t = gemv_tiling(K, O, bits, tile=256, rows=16)
    wr = w.astype(np.float16).astype(np.float32) if bits == 16 else dequantised(w, t)
    ref = x.astype(np.float32) @ wr
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    if bits == 4:      # the int4 weights are not the fp16 ones: the check sees a wrong dequantisation
        assert np.abs(x.astype(np.float32) @ w - y).max() > 1e-3


def test_int4_speed_up_and_bounds_on_310b():
    """fp16: MTE2-bound, streaming at >= 85 % of one core's GM read rate. int4: 3.9x fewer bytes, but the cast
    and the float Axpy per weight make the single 310B vector core the bound: faster by 2x..3.9x, bound V."""
    chip = get_chip("Ascend310B")
    K, O = 1536, 2048
    x, w = np.zeros(K, np.float16), np.zeros((K, O), np.float32)
    _, r16 = weight_gemv(x, w, 16, numerics=False, tile=2048, rows=16, chip=chip)
    _, r4 = weight_gemv(x, w, 4, numerics=False, tile=2048, rows=16, chip=chip)
    bytes16, bytes4 = K * O * 2, K * O // 2 + K // 128 * O * 2
    floor16 = bytes16 / (chip.gm_read_bytes_per_cycle * chip.clock_ghz * 1e3)        # us at the read rate
    assert floor16 <= r16.us <= floor16 / 0.85
    assert r16.profile().bound == "MTE2" and r4.profile().bound == "V"
    assert 2.0 <= r16.us / r4.us <= bytes16 / bytes4


def test_bad_bits_and_tile_are_named():
    with pytest.raises(ArgumentError, match="bits=16 or bits=4"):
        gemv_tiling(256, 512, 8)
    with pytest.raises(ArgumentError, match="whole"):
        gemv_tiling(256, 500, 16, tile=256)
