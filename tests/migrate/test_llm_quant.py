"""Weight-only group-wise RTN of the language model: codes and scales as documented, the weight memory counted
exactly (codes + fp16 scales), and perplexity ordered fp16 <= W8A16 < W4A16."""
import numpy as np
import pytest

from ascend_sim.migrate.llm_quant import Scheme, dequantize_groups, key_layers, quantise, rtn_groups
from ascend_sim.models.llm import reference as R
from ascend_sim.models.llm.corpus import corpus_bytes, encode


@pytest.mark.parametrize("bits, group", [(8, 64), (4, 32), (4, 64), (4, 256)])
def test_rtn_groups_codes_scales_and_error(bits, group):
    rng = np.random.default_rng(bits + group)
    w = (rng.standard_normal((48, 128)) * rng.uniform(0.1, 2, (48, 1))).astype(np.float16)
    codes, scales = rtn_groups(w, bits, group)
    g = min(group, 128)
    qmax = 2 ** (bits - 1) - 1
    assert codes.shape == w.shape and scales.shape == (48, 128 // g) and scales.dtype == np.float16
    assert codes.min() >= -qmax - 1 and codes.max() <= qmax
    amax = np.abs(w.astype(np.float32)).reshape(48, -1, g).max(axis=2)
    np.testing.assert_allclose(scales.astype(np.float32), amax / qmax, rtol=1e-3)
    err = np.abs(dequantize_groups(codes, scales).astype(np.float32) - w).reshape(48, -1, g)
    assert (err <= 0.5 * scales.astype(np.float32)[..., None] * 1.01 + 1e-3).all()    # half a step (+ fp16)
    with pytest.raises(ValueError, match="group that divides K"):
        rtn_groups(w, bits, 48)


def test_weight_memory_counts_codes_and_scales():
    params = R.load_lm_weights()
    linears = [params[n].shape for n in R.linear_names()]
    elems = sum(o * k for o, k in linears)
    other = sum(v.size for k, v in params.items() if k not in R.linear_names()) * 2
    fp16 = quantise(params, Scheme("fp16", 16))
    w4 = quantise(params, Scheme("w4", 4, 64))
    w8 = quantise(params, Scheme("w8", 8, 32))
    assert fp16.linear_bytes == 2 * elems and fp16.total_bytes == 2 * elems + other
    assert w4.linear_bytes == elems // 2 + sum(o * (k // 64) for o, k in linears) * 2
    assert w8.linear_bytes == elems + sum(o * (k // 32) for o, k in linears) * 2
    kept = quantise(params, Scheme("w4 key", 4, 64, key_layers(8)))
    assert w4.linear_bytes < kept.linear_bytes < w8.linear_bytes
    assert np.array_equal(fp16.params["l0.qkv.w"], params["l0.qkv.w"])


def test_perplexity_orders_fp16_w8_w4():
    params = R.load_lm_weights()
    held = encode(corpus_bytes("heldout"))[:1024]
    ppl = {}
    for name, scheme in (("fp16", Scheme("fp16", 16)), ("w8", Scheme("w8", 8, 64)), ("w4", Scheme("w4", 4, 32))):
        q = quantise(params, scheme).params
        ppl[name] = R.perplexity(lambda x: R.forward(q, x), held)
    assert abs(ppl["w8"] / ppl["fp16"] - 1) < 0.01
    assert ppl["w4"] > ppl["w8"]


def test_gptq_lowers_the_layer_output_error_and_the_perplexity_of_rtn():
    from ascend_sim.migrate.llm_quant import calibration_inputs, gptq_groups
    params = R.load_lm_weights()
    calib = calibration_inputs(params, windows=4)
    for name in ("l0.qkv.w", "l2.fc2.w"):
        w, x = params[name].astype(np.float64), calib[name]
        out = {}
        for method, fn in (("rtn", lambda: rtn_groups(w, 4, 64)), ("gptq", lambda: gptq_groups(w, x, 4, 64))):
            codes, scales = fn()
            assert codes.min() >= -8 and codes.max() <= 7 and scales.shape == (w.shape[0], w.shape[1] // 64)
            out[method] = np.linalg.norm(x @ (w - dequantize_groups(codes, scales).astype(np.float64)).T)
        assert out["gptq"] < 0.8 * out["rtn"], (name, out)
    held = encode(corpus_bytes("heldout"))[:1024]
    ppl = {}
    for method in ("rtn", "gptq"):
        q = quantise(params, Scheme(method, 4, 64, method=method), calib).params
        ppl[method] = R.perplexity(lambda t: R.forward(q, t), held)
    assert ppl["gptq"] < ppl["rtn"]
    with pytest.raises(ValueError, match="method 'awq'"):
        quantise(params, Scheme("x", 4, 64, method="awq"))
