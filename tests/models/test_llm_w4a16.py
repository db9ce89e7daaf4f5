"""W4A16 through the kernels and sampling on the NPU (issue 28): the fused W4A16 prefill kernel (int4 codes
dequantised in UB, copied to L1, multiplied on the cube) against numpy, the tiny model's W4A16 logits and
held-out perplexity through it against the numpy reference on the same dequantised weights, and the sampling
kernel (greedy, temperature + top-k) against its numpy twin, used by NpuLM.generate."""
import numpy as np
import pytest

from ascend_sim import ArgumentError
from ascend_sim.kernels.m4.sampling import sample, sample_reference
from ascend_sim.kernels.m4.w4a16_matmul import dequantize_reference, w4a16_matmul, w4a16_tiling
from ascend_sim.migrate.llm_quant import Scheme, quantise, rtn_groups
from ascend_sim.models.llm import reference as R
from ascend_sim.models.llm.corpus import corpus_bytes, encode
from ascend_sim.models.llm.npu import NpuLM

W4 = Scheme("W4A16 RTN g32", 4, 32)
PPL_TOLERANCE = 0.005          # |kernels / reference - 1|: fp16 activations against the float32 reference


@pytest.fixture(scope="module")
def params():
    return R.load_lm_weights()


@pytest.mark.parametrize("M, N, K, group, bias", [(20, 64, 128, 32, False), (1, 192, 64, 32, True),
                                                  (40, 256, 512, 128, True), (128, 64, 4096, 128, False)])
def test_w4a16_matmul_matches_numpy(M, N, K, group, bias):
    rng = np.random.default_rng(M + N + K)
    codes, scales = rtn_groups(rng.standard_normal((N, K)).astype(np.float32) * 0.05, 4, group)
    x = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal(N).astype(np.float32) if bias else None
    y, res = w4a16_matmul(x, codes, scales, b)
    want = dequantize_reference(x, codes, scales) + (0 if b is None else b)
    assert y.dtype == np.float16 and y.shape == (M, N)
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
    wrong = dequantize_reference(x, codes, np.roll(scales, 1, axis=1)) + (0 if b is None else b)
    assert not np.allclose(y.astype(np.float32), wrong, rtol=2e-3, atol=2e-3 * np.abs(want).max()) or K == group
    if K == 4096:               # X does not fit L1 beside the B buffers: it comes in panels of whole K steps
        assert not w4a16_tiling(M, N, K, group, chip="Ascend310B").a_resident


def test_w4a16_matmul_refuses_a_separated_chip_and_bad_groups():
    codes, scales = np.zeros((64, 64), np.int8), np.ones((64, 2), np.float16)
    with pytest.raises(ArgumentError, match="UB -> L1 has no path"):
        w4a16_matmul(np.zeros((16, 64), np.float16), codes, scales, chip="Ascend910B")
    with pytest.raises(ArgumentError, match="a group must be whole 16-channel K blocks"):
        w4a16_matmul(np.zeros((16, 64), np.float16), codes, np.ones((64, 8), np.float16))


def test_sampling_kernel_picks_the_numpy_token():
    rng = np.random.default_rng(3)
    for _ in range(6):
        logits = (rng.standard_normal(256) * 3).astype(np.float32)
        logits[rng.integers(0, 256, 3)] = logits.max()                    # ties: the lower index wins
        for top_k, temp in ((1, 1.0), (8, 0.8), (40, 1.5)):
            u = float(rng.random())
            tok, res = sample(logits, top_k=top_k, temperature=temp, u=u)
            assert tok == sample_reference(logits, top_k, temp, u), (top_k, temp, u)
            assert res.cycles > 0
    top = np.argsort(-logits, kind="stable")
    assert sample(logits, top_k=8, u=0.0)[0] == top[0]                    # u = 0: the most likely token
    assert sample(logits, top_k=8, u=0.999999)[0] in top[:8]
    with pytest.raises(ArgumentError, match="top_k must be"):
        sample(logits, top_k=0)


def test_int4_prefill_logits_follow_the_reference_on_the_same_weights(params):
    q = quantise(params, W4)
    tokens = encode("The if statement is used for conditional execution")
    model = NpuLM(q.params, chip="Ascend310B", int4=q.int4())
    logits = model.forward(tokens)
    ref = R.forward(q.params, tokens)
    assert np.abs(logits - ref).max() < 0.05 * np.abs(ref).max()
    assert (logits.argmax(axis=1) == ref.argmax(axis=1)).mean() > 0.9
    kernels = {r.kernel_name for name, r in model.results if name.endswith((".qkv", ".fc2"))}
    assert kernels == {"w4a16_matmul_kernel"}, kernels


def test_w4a16_perplexity_through_the_kernels_equals_the_reference(params):
    """The W4A16 kernel path's held-out perplexity (a slice) is the numpy reference's on the same dequantised
    weights within PPL_TOLERANCE, and not the fp16 weights' (so the check sees which weights ran)."""
    q = quantise(params, W4)
    text = encode(corpus_bytes("heldout"))[:160]
    model = NpuLM(q.params, chip="Ascend310B", int4=q.int4())

    def npu(w):
        model.reset()
        return model.forward(w)

    ppl = R.perplexity(npu, text)
    ref = R.perplexity(lambda w: R.forward(q.params, w), text)
    fp16 = R.perplexity(lambda w: R.forward(params, w), text)
    assert abs(ppl / ref - 1) <= PPL_TOLERANCE, (ppl, ref)
    assert abs(ppl / fp16 - 1) > PPL_TOLERANCE, (ppl, fp16)


def test_sampled_generation_matches_the_reference_token_for_token(params):
    tokens = encode("A class definition defines a class object")
    model = NpuLM(params)
    for top_k, temp, seed in ((1, 1.0, 0), (8, 0.8, 1)):
        out = model.generate(tokens, 4, top_k=top_k, temperature=temp, seed=seed)
        assert out.tolist() == R.generate(params, tokens, 4, top_k=top_k, temperature=temp, seed=seed).tolist()
        assert [name for name, _ in model.results][-1] == "sample"


def test_w4a16_matmul_with_groups_spanning_several_k_steps():
    """Groups of 128 with K steps of 64 (the tiling a prompt of 256 rows needs: two A buffers in L0A): a step
    reads one group's scales, the group's second step the same ones."""
    rng = np.random.default_rng(7)
    codes, scales = rtn_groups(rng.standard_normal((64, 256)).astype(np.float32) * 0.05, 4, 128)
    x = rng.standard_normal((256, 256)).astype(np.float16)
    assert w4a16_tiling(256, 64, 256, 128, chip="Ascend310B").base_k == 64
    y, _ = w4a16_matmul(x, codes, scales)
    want = dequantize_reference(x, codes, scales)
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
