"""The language model on the simulated 910B: every layer a kernel launch (flash attention for the prompt,
decode attention over the GM KV cache after it) and greedy generation matching the numpy reference token for
token on a fixed prompt set."""
import numpy as np
import pytest

from ascend_sim.models.llm import reference as R
from ascend_sim.models.llm.corpus import decode, encode
from ascend_sim.models.llm.npu import NpuLM, launch_cycles

#: Fixed prompts (chosen before looking at any output), each continued by greedy decoding.
PROMPTS = ("The if statement is used for conditional execution",
           "A class definition defines a class object")
STEPS = 6


@pytest.fixture(scope="module")
def params():
    return R.load_lm_weights()


def test_prefill_logits_follow_the_reference(params):
    tokens = encode(PROMPTS[0])
    model = NpuLM(params)
    logits = model.forward(tokens)
    ref = R.forward(params, tokens)
    assert logits.shape == ref.shape == (len(tokens), 256) and logits.dtype == np.float32
    err = np.abs(logits - ref).max()
    assert err < 0.05 * np.abs(ref).max()                            # fp16 activations, fp32 accumulation
    assert (logits.argmax(axis=1) == ref.argmax(axis=1)).mean() > 0.9
    names = {name.split(".")[-1] for name, _ in model.results}
    assert {"embed", "ln1", "qkv", "cache", "attn", "proj", "res1", "ln2", "fc1", "gelu", "fc2", "res2", "ln",
            "head"} <= names
    assert model.length == len(tokens) and model.k_cache[0][:, :len(tokens)].any()
    assert not model.k_cache[0][:, len(tokens):].any()


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_generation_matches_the_reference_token_for_token(params, prompt):
    tokens = encode(prompt)
    ref = R.greedy_generate(params, tokens, STEPS)
    model = NpuLM(params)
    out = model.generate(tokens, STEPS)
    assert out.tolist() == ref.tolist(), f"kernel path {decode(out)!r} vs reference {decode(ref)!r}"
    assert model.length == len(tokens) + STEPS - 1
    cycles = launch_cycles(model.results)                            # the last decode step's launches
    assert cycles["attn"] > 0 and "cache" not in cycles              # decode attention appends itself


def test_prefill_after_cached_tokens_is_refused(params):
    model = NpuLM(params)
    model.forward(encode("ab"))
    with pytest.raises(ValueError, match="prefill of 2 tokens after 2 cached"):
        model.forward(encode("cd"))


def test_the_model_runs_end_to_end_on_the_310b(params):
    """The edge chip is coupled (no AIC/AIV pair): prefill takes the three-launch attention, decode the same
    decode kernel on its one core."""
    tokens = encode(PROMPTS[1])
    model = NpuLM(params, chip="Ascend310B")
    out = model.generate(tokens, 3)
    assert out.tolist() == R.greedy_generate(params, tokens, 3).tolist()
    assert all(r.chip.name == "Ascend310B" for _, r in model.results)
