"""The Transformer's vector kernels: LayerNorm and GELU agree with numpy within half precision for ragged sizes,
the checks would catch the usual wrong formulas, the work runs on the vector cores, bad shapes are named."""
import numpy as np
import pytest

from ascend_sim import TilingError
from ascend_sim.kernels.m4.gelu import gelu, gelu_ref
from ascend_sim.kernels.m4.layernorm import layer_norm


def ln_numpy(x, g, b, eps=1e-5, ddof=0):
    x = x.astype(np.float32)
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=ddof)
    return (x - mu) / np.sqrt(var + eps) * g + b


def close(out, ref):
    """Half output of values of order a few: one half ulp of the result plus a little float32 slack."""
    return np.allclose(out.astype(np.float32), ref, atol=4e-3, rtol=2e-3)


@pytest.mark.parametrize("shape", [(1, 64), (37, 16), (130, 48), (1000, 64), (3, 5, 32)])
def test_layer_norm_matches_numpy(shape):
    rng = np.random.default_rng(shape[0])
    x = (rng.standard_normal(shape) * 2 + rng.uniform(-3, 3, shape[:-1] + (1,))).astype(np.float16)
    g = rng.uniform(0.5, 1.5, shape[-1]).astype(np.float32)
    b = rng.uniform(-1, 1, shape[-1]).astype(np.float32)
    y, res = layer_norm(x, g, b)
    assert y.shape == x.shape and y.dtype == np.float16
    assert close(y, ln_numpy(x, g, b))
    # the check sees the usual slips: unbiased variance, gamma and beta swapped, no mean subtraction
    assert not close(y, ln_numpy(x, g, b, ddof=1))
    assert not close(y, ln_numpy(x, b, g))
    assert not close(y, x.astype(np.float32) / np.sqrt(x.astype(np.float32).var(-1, keepdims=True) + 1e-5) * g + b)
    assert res.us > 0


def test_layer_norm_eps_matters_for_flat_rows():
    rng = np.random.default_rng(3)
    x = (1 + rng.standard_normal((16, 32)) * 3e-3).astype(np.float16)     # variance ~1e-5: eps is half of it
    g, b = np.ones(32, np.float32), np.zeros(32, np.float32)
    y, _ = layer_norm(x, g, b, eps=1e-5)
    assert close(y, ln_numpy(x, g, b, eps=1e-5))
    assert not close(y, ln_numpy(x, g, b, eps=1e-8))


def test_layer_norm_runs_on_the_vector_cores_with_the_api_steps():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float16)
    _, res = layer_norm(x, np.ones(64, np.float32), np.zeros(64, np.float32))
    table = res.trace.table()
    ops = set(table.op.tolist())
    assert {"WholeReduceSum", "Rsqrt", "Brcb", "Muls", "Sub", "Mul", "Add", "Cast"} <= ops
    assert set(table.core_type.tolist()) == {"AIV"}


def test_layer_norm_bad_shapes_are_named():
    x = np.zeros((4, 24), np.float16)
    with pytest.raises(TilingError, match="24 values") as err:
        layer_norm(x, np.ones(24, np.float32), np.zeros(24, np.float32))
    assert "multiple of 16" in err.value.fix
    with pytest.raises(ValueError, match="gamma"):
        layer_norm(np.zeros((4, 32), np.float16), np.ones(16, np.float32), np.zeros(32, np.float32))


@pytest.mark.parametrize("shape", [(5,), (37, 3), (1000, 128), (16, 17, 9)])
def test_gelu_matches_numpy(shape):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 3).astype(np.float16)
    x.flat[0] = -60000.0                     # exp(-sqrt(8/pi) (x + 0.044715 x^3)) would overflow without the cap
    y, res = gelu(x)
    assert y.shape == x.shape and y.dtype == np.float16 and np.isfinite(y).all()
    ref = gelu_ref(x)
    assert close(y, ref)
    xf = x.astype(np.float32)
    wrong = {"relu": np.maximum(xf, 0), "no cubic term": xf / (1 + np.exp(np.minimum(-np.sqrt(8 / np.pi) * xf, 80))),
             "sigmoid form 1.702": xf / (1 + np.exp(np.minimum(-1.702 * xf, 80)))}
    for name, w in wrong.items():
        assert not close(y, w), name
    assert res.us > 0


def test_gelu_runs_exp_and_div_on_the_vector_cores():
    _, res = gelu(np.linspace(-4, 4, 4096).astype(np.float16))
    table = res.trace.table()
    assert {"Exp", "Div", "Mins", "Cast"} <= set(table.op.tolist())
    assert set(table.core_type.tolist()) == {"AIV"}
