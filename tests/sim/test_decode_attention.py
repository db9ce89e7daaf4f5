"""The language model's decode kernels: decode attention over a GM KV cache (append + one query, split over the
AIV cores, merged), the prefill cache fill and the embedding gather agree with numpy; the checks would catch
the usual slips; bad shapes are named."""
import numpy as np
import pytest

from ascend_sim import TilingError
from ascend_sim.kernels.m4.decode_attention import decode_attention, decode_attention_ref, decode_tiling, kv_append
from ascend_sim.kernels.m4.embedding import embedding

N, S, D = 4, 128, 16


def caches(rng, pos, n=N, s=S, d=D):
    k = np.zeros((n, s, d), np.float16)
    v = np.zeros((n, s, d), np.float16)
    k[:, :pos] = rng.standard_normal((n, pos, d)) * 2
    v[:, :pos] = rng.standard_normal((n, pos, d))
    return k, v


@pytest.mark.parametrize("pos, chunk, parts", [(0, None, 1), (9, None, 1), (63, None, 1), (64, 32, 3),
                                               (127, 16, 8), (100, 40, 3)])
def test_decode_attention_matches_numpy_and_appends(pos, chunk, parts):
    rng = np.random.default_rng(pos)
    k, v = caches(rng, pos)
    qkv = (rng.standard_normal((3, N, D)) * 2).astype(np.float16)
    qkv[1] = qkv[0] * np.float16(0.5)          # the new key follows the query: the new token carries weight
    qkv = qkv.reshape(-1)
    k0, v0 = k.copy(), v.copy()
    ref = decode_attention_ref(qkv, k, v, pos)
    out, res = decode_attention(qkv, k, v, pos, chunk=chunk)
    assert decode_tiling(N, D, S, pos, chunk=chunk).parts == parts
    assert len(res) == (2 if parts > 1 else 1) and res[0].block_dim == N * parts
    np.testing.assert_allclose(out, ref, atol=2e-3, rtol=2e-3)
    # the append wrote row pos of every head and nothing else
    new = qkv.reshape(3, N, D)
    assert np.array_equal(k[:, pos], new[1]) and np.array_equal(v[:, pos], new[2])
    rest = np.ones(S, bool)
    rest[pos] = False
    assert np.array_equal(k[:, rest], k0[:, rest]) and np.array_equal(v[:, rest], v0[:, rest])
    if pos:     # the check sees the usual slips: the new token left out, the scale forgotten
        q = new[0].astype(np.float64)
        kk = np.concatenate([k0[:, :pos], new[1][:, None]], 1).astype(np.float64)
        vv = np.concatenate([v0[:, :pos], new[2][:, None]], 1).astype(np.float64)
        for wrong in (attend_np(q, kk[:, :-1], vv[:, :-1], D), attend_np(q, kk, vv, 1)):
            assert not np.allclose(out, wrong, atol=2e-3, rtol=2e-3)
        assert np.allclose(out, attend_np(q, kk, vv, D), atol=2e-3, rtol=2e-3)


def attend_np(q, k, v, d):
    s = np.einsum("nd,nsd->ns", q, k) / np.sqrt(d)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return np.einsum("ns,nsd->nd", p / p.sum(axis=1, keepdims=True), v).reshape(-1)


def test_decode_attention_head_size_32_and_timing_only():
    rng = np.random.default_rng(5)
    k, v = caches(rng, 50, n=2, s=64, d=32)
    qkv = rng.standard_normal(3 * 2 * 32).astype(np.float16)
    ref = decode_attention_ref(qkv, k, v, 50)
    out, res = decode_attention(qkv, k.copy(), v.copy(), 50, chunk=24)
    np.testing.assert_allclose(out, ref, atol=2e-3, rtol=2e-3)
    out0, res0 = decode_attention(qkv, k.copy(), v.copy(), 50, chunk=24, numerics=False)
    assert not out0.any() and [r.cycles for r in res0] == [r.cycles for r in res]


def test_decode_attention_bad_inputs_are_named():
    rng = np.random.default_rng(0)
    k, v = caches(rng, 3)
    qkv = np.zeros(3 * N * D, np.float16)
    with pytest.raises(TilingError, match="position 128 is outside the cache of 128 rows"):
        decode_attention(qkv, k, v, 128)
    with pytest.raises(TilingError, match="multiple of 8"):
        decode_attention(qkv, k, v, 10, chunk=12)
    with pytest.raises(TilingError, match="head size D = 24"):
        decode_tiling(2, 24, 16, 3)
    with pytest.raises(ValueError, match="contiguous half array"):
        decode_attention(qkv, k.astype(np.float32), v, 3)
    with pytest.raises(ValueError, match="3 \\* N \\* D = 192"):
        decode_attention(qkv[:100], k, v, 3)


def test_kv_append_fills_the_prompt_rows_per_head():
    rng = np.random.default_rng(1)
    qkv = rng.standard_normal((20, 3 * N * D)).astype(np.float16)
    k, v = np.zeros((N, S, D), np.float16), np.zeros((N, S, D), np.float16)
    kv_append(qkv, k, v, 3)
    heads = qkv.reshape(20, 3, N, D).transpose(1, 2, 0, 3)
    assert np.array_equal(k[:, 3:23], heads[1]) and np.array_equal(v[:, 3:23], heads[2])
    assert not k[:, :3].any() and not k[:, 23:].any() and not v[:, 23:].any()
    with pytest.raises(TilingError, match="do not fit the cache of 128 rows"):
        kv_append(qkv, k, v, 120)


def test_embedding_gathers_token_and_position_rows():
    rng = np.random.default_rng(2)
    table = rng.standard_normal((256, 64)).astype(np.float16)
    pos = rng.standard_normal((128, 64)).astype(np.float16)
    ids = rng.integers(0, 256, 77)
    x, res = embedding(ids, table, pos, 30)
    want = (table[ids].astype(np.float32) + pos[30:107]).astype(np.float16)
    assert np.array_equal(x, want)
    assert not np.array_equal(x, (table[ids].astype(np.float32) + pos[:77]).astype(np.float16))   # positions from 0
    assert res.block_dim > 1
    with pytest.raises(TilingError, match="token id 256 is outside the table's 256 rows"):
        embedding(np.array([1, 256]), table, pos)
    with pytest.raises(TilingError, match="exceed the 128 learned positions"):
        embedding(ids, table, pos, 60)
