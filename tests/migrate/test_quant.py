"""PTQ numerics: each calibration method beats the naive one where it should, and round trips are exact."""
import numpy as np
import pytest

from ascend_sim.migrate import quant as q


def _heavy_tail(n=200000, seed=0):
    """Laplace-distributed values, like pre-activation outputs: a long tail that stretches min-max."""
    return np.random.default_rng(seed).laplace(0, 1, n).astype(np.float32)


def _mse(x, p):
    return float(np.mean((q.fake_quant(x, p) - x) ** 2))


def test_quantize_rounds_half_to_even_and_saturates():
    p = q.QuantParams(np.float32(1.0), np.int32(0))
    codes = q.quantize(np.array([0.5, 1.5, 2.5, -0.5, 300.0, -300.0], np.float32), p)
    assert codes.tolist() == [0, 2, 2, 0, 127, -128]


def test_minmax_covers_the_range_exactly():
    x = np.linspace(-3, 5, 101, dtype=np.float32)
    p = q.minmax(x)
    assert abs(q.dequantize(q.quantize(np.float32([5.0]), p), p)[0] - 5.0) <= float(p.scale)
    assert abs(q.dequantize(q.quantize(np.float32([-3.0]), p), p)[0] + 3.0) <= float(p.scale)


@pytest.mark.parametrize("symmetric", [False, True])
def test_ifmr_and_hfmg_beat_minmax_on_outliers(symmetric):
    x = _heavy_tail()
    base = _mse(x, q.minmax(x, symmetric=symmetric))
    assert _mse(x, q.ifmr(x, symmetric=symmetric)) < 0.8 * base
    assert _mse(x, q.hfmg([x[:100000], x[100000:]], symmetric=symmetric)) < 0.8 * base


def test_ifmr_search_stays_in_its_documented_window():
    x = np.random.default_rng(1).uniform(-1, 1, 5000).astype(np.float32)
    p = q.ifmr(x, symmetric=True)
    start = float(np.quantile(x, 0.999999))
    clip = float(p.scale) * 127
    assert 0.69 * start <= clip <= 1.31 * max(start, -float(np.quantile(x, 1 - 0.999999)))


def test_arq_per_channel_is_at_least_as_good_as_per_tensor():
    rng = np.random.default_rng(2)
    w = rng.normal(0, 1, (6, 1, 5, 5)).astype(np.float32) * np.array([0.01, 0.1, 1, 3, 0.5, 0.05],
                                                                      np.float32)[:, None, None, None]
    per_ch = q.arq(w, channel_wise=True)
    per_t = q.arq(w, channel_wise=False)
    assert per_ch.scale.shape == (6,)
    small = w[:1]                                # the 0.01-scaled filter: per tensor it gets a few codes
    assert _mse(small, q.QuantParams(per_ch.scale[:1], per_ch.offset[:1], axis=0)) < 0.01 * _mse(small, per_t)
    assert _mse(w, per_ch) <= _mse(w, per_t)
    assert np.abs(q.quantize(w, per_ch)).max() == 127


def test_int4_groups_pack_and_matmul():
    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.1, (128, 48)).astype(np.float32)
    codes, scales = q.quantize_int4_groups(w, 64)
    assert codes.min() >= -8 and codes.max() <= 7 and scales.shape == (2, 48)
    packed = q.pack_int4(codes)
    assert packed.nbytes * 8 == w.nbytes                  # int4 is 1/8 of fp32, 1/4 of fp16: -75 %
    assert np.array_equal(q.unpack_int4(packed), codes)
    x = rng.normal(0, 1, (4, 128)).astype(np.float16)
    y = q.w4a16_matmul_ref(x, codes, scales)
    exact = x.astype(np.float32) @ w
    assert np.abs(y.astype(np.float32) - exact).max() < 0.15 * np.abs(exact).max()


def test_int4_rejects_bad_groups_and_odd_axes():
    w = np.zeros((64, 8), np.float32)
    with pytest.raises(ValueError, match="multiple of 32"):
        q.quantize_int4_groups(w, 48)
    with pytest.raises(ValueError, match="pad K"):
        q.quantize_int4_groups(np.zeros((80, 8), np.float32), 32)
    with pytest.raises(ValueError, match="even inner axis"):
        q.pack_int4(np.zeros((2, 3), np.int8))


def test_a_wrong_scale_is_caught_by_these_checks():
    x = _heavy_tail()
    wrong = q.QuantParams(np.float32(float(q.minmax(x).scale) * 4), np.int32(0))
    assert _mse(x, wrong) > _mse(x, q.ifmr(x))
