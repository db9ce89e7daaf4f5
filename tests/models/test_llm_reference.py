"""The tiny language model's corpus, shipped weights and numpy reference: the split is disjoint, the KV-cache
decode gives the full forward pass's logits, every held-out token is scored once, and the trained weights
predict held-out text far better than chance (and than the same weights scrambled)."""
import numpy as np
import pytest

from ascend_sim.models.llm import reference as R
from ascend_sim.models.llm.corpus import corpus_bytes, decode, encode, split_topics

PROMPT = "The return statement leaves the current function"


@pytest.fixture(scope="module")
def params():
    return R.load_lm_weights()


def test_corpus_split_is_disjoint_and_complete():
    from pydoc_data.topics import topics
    train, held = split_topics("train"), split_topics("heldout")
    assert not set(train) & set(held) and sorted(train + held) == sorted(topics)
    assert held == sorted(topics)[9::10]
    assert corpus_bytes("heldout") not in corpus_bytes("train")
    assert decode(encode("Zen of Python: naïve")) == "Zen of Python: naïve" and encode("a").tolist() == [97]


def test_shipped_weights_have_the_documented_shape(params):
    assert all(v.dtype == np.float16 for v in params.values())
    assert sum(v.size for v in params.values()) == 224_640
    bad = dict(params)
    bad["l1.fc1.w"] = bad["l1.fc1.w"][:, :32]
    with pytest.raises(ValueError, match=r"'l1.fc1.w': expected shape \(256, 64\), got \(256, 32\)"):
        R.check_weights(bad)


def test_kv_cache_decode_gives_the_full_forward_logits(params):
    tokens = encode(PROMPT)
    full = R.forward(params, tokens)
    cache = R.KVCache()
    steps = [R.forward(params, tokens[:20], cache)] + [R.forward(params, tokens[i:i + 1], cache)
                                                       for i in range(20, len(tokens))]
    assert cache.length == len(tokens)
    np.testing.assert_allclose(np.concatenate(steps), full, atol=1e-4, rtol=1e-4)
    # a cache that forgets the earlier tokens (positions right, keys gone) is visibly different
    assert not np.allclose(R.forward(params, tokens[-1:], R.KVCache()), full[-1:], atol=1e-2)
    with pytest.raises(ValueError, match="exceed the model's context of 128"):
        R.forward(params, np.zeros(129, np.int32))


def test_greedy_generation_is_the_argmax_of_the_full_forward(params):
    prompt = encode(PROMPT)
    out = R.greedy_generate(params, prompt, 8)
    seq = np.concatenate([prompt, out])
    assert out.tolist() == R.forward(params, seq[:-1])[len(prompt) - 1:].argmax(axis=1).tolist()


@pytest.mark.parametrize("n, stride", [(300, 64), (128, 128), (129, 64), (5, 64), (1000, 1)])
def test_windows_score_every_token_once_with_context(n, stride):
    scored = []
    for start, end, first in R.windows(n, stride):
        assert end - start <= R.CONTEXT and start <= first - 1
        if start > 0:
            assert first - start >= R.CONTEXT - stride           # at least CONTEXT - stride tokens of context
        scored += range(first, end)
    assert scored == list(range(1, n))


def test_heldout_perplexity_beats_chance_and_scrambled_weights(params):
    held = encode(corpus_bytes("heldout"))[:2048]
    ppl = R.perplexity(lambda w: R.forward(params, w), held)
    assert 1.0 < ppl < 8.0                                          # uniform over bytes would be 256
    scrambled = dict(params)
    scrambled["embed"] = params["embed"][np.random.default_rng(0).permutation(256)]
    assert R.perplexity(lambda w: R.forward(scrambled, w), held[:512]) > 4 * ppl
