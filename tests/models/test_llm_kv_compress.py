"""RazorAttention-style cache compression of the tiny model (models/llm/kv_compress.py)."""
import numpy as np
import pytest

from ascend_sim.models.llm import reference as R
from ascend_sim.models.llm.corpus import corpus_bytes, encode
from ascend_sim.models.llm.kv_compress import Razor, razor_attend, retrieval_heads
from ascend_sim.models.llm.passkey import heldout_prompts, passkey_accuracy


def _qkv(n=2, s=20, d=16):
    rng = np.random.default_rng(3)
    return (rng.standard_normal((n, s, d)) for _ in range(3))


def test_a_window_covering_the_prefix_is_full_attention():
    q, k, v = _qkv()
    np.testing.assert_allclose(razor_attend(q, k, v, 0, [False, False], 20, 4, True), R.attend(q, k, v, 0), atol=1e-12)


def test_one_query_by_hand():
    """Query 19 with 4 sinks and a window of 5: keys 0..3 and 15..19 plus the mean of keys 4..14, weight x 11."""
    q, k, v = _qkv()
    out = razor_attend(q, k, v, 0, [True, False], 5, 4, True)
    h, keep = 1, list(range(4)) + list(range(15, 20))
    kc, vc = k[h, 4:15].mean(0), v[h, 4:15].mean(0)
    s = np.append(k[h, keep] @ q[h, 19], kc @ q[h, 19]) / 4.0
    s[-1] += np.log(11)
    p = np.exp(s - s.max())
    p /= p.sum()
    np.testing.assert_allclose(out[h, 19], p[:-1] @ v[h, keep] + p[-1] * vc, atol=1e-12)
    np.testing.assert_allclose(out[0], R.attend(q, k, v, 0)[0], atol=1e-12)        # the retrieval head: whole


def test_cache_bytes_saved():
    p = Razor(frozenset({(0, 0), (3, 1)}), window=16, sinks=4)
    assert p.kept_tokens(128) == 2 * 128 + 14 * 21
    assert p.saved(128) == pytest.approx(1 - (2 * 128 + 14 * 21) / (16 * 128))
    assert Razor(window=200).saved(128) == 0


def test_compression_costs_perplexity():
    params = R.load_lm_weights(R.PASSKEY_WEIGHTS_FILE)
    text = encode(corpus_bytes("heldout"))[:300]
    full = R.perplexity(lambda w: R.forward(params, w), text)
    wide = Razor(window=128)
    assert R.perplexity(lambda w: R.forward(params, w, attention=wide.attention), text) == pytest.approx(full)
    tight = Razor(window=4)
    assert R.perplexity(lambda w: R.forward(params, w, attention=tight.attention), text) > 1.1 * full


def test_retrieval_needs_the_retrieval_head_whole():
    """The passkey sits ~100 tokens back: a window of 16 in every head loses it; the head of the highest passkey
    score (measured on training-text prompts) kept whole keeps it; the two best heads of the data-free induction +
    echo score do not (this model retrieves with a head that score misses)."""
    params = R.load_lm_weights(R.PASSKEY_WEIGHTS_FILE)
    prompts = heldout_prompts(32)
    full = passkey_accuracy(params, prompts)[0]
    assert full >= 0.9
    assert passkey_accuracy(params, prompts, Razor(window=16).attention)[0] < 0.2
    measured = retrieval_heads(params, 1, by="passkey")
    assert passkey_accuracy(params, prompts, Razor(measured, window=16).attention)[0] >= full - 0.1
    data_free = retrieval_heads(params, 2)
    assert not measured <= data_free
    assert passkey_accuracy(params, prompts, Razor(data_free, window=16).attention)[0] < 0.2
    with pytest.raises(ValueError, match="by='heads'"):
        retrieval_heads(params, 1, by="heads")
