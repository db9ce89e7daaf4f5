"""Attention: the naive and the FlashAttention-style kernels agree with numpy for both layouts, both masks and
ragged sizes; the flash kernel's memory does not grow with S^2, and its work runs on the cube and vector cores."""
import numpy as np
import pytest

from ascend_sim.kernels.m4.attention import attention_flash, attention_ref, attention_tiling, split_parts
from ascend_sim.kernels.m4.attention_naive import attention_naive

CASES = [  # layout, shape, heads, causal, kv_len
    ("BNSD", (1, 1, 128, 64), 1, False, None),
    ("BNSD", (2, 2, 100, 32), 2, True, None),              # S not a multiple of the 64-row block
    ("BSH", (2, 130, 128), 2, False, [130, 77]),           # padding mask, two heads interleaved in H
    ("BSH", (1, 200, 128), 1, True, [150]),                # causal and padding together
    ("BNSD", (1, 1, 64, 128), 1, False, [1]),              # one valid key: the output is that value row
]


@pytest.mark.parametrize("fn", [attention_flash, attention_naive], ids=["flash", "naive"])
@pytest.mark.parametrize("layout, shape, heads, causal, kv_len", CASES)
def test_attention_matches_numpy_within_half_precision(fn, layout, shape, heads, causal, kv_len):
    rng = np.random.default_rng(sum(shape))
    q, k, v = (rng.uniform(-2, 2, shape).astype(np.float16) for _ in range(3))
    out, _ = fn(q, k, v, layout=layout, num_heads=heads, causal=causal, kv_len=kv_len)
    ref = attention_ref(q, k, v, layout=layout, num_heads=heads, causal=causal, kv_len=kv_len)
    # P is rounded to half before P V (as on the device): errors of a few 1e-4 on values of order 1
    np.testing.assert_allclose(out, ref, atol=2e-3, rtol=2e-3)
    wrong = attention_ref(q, k, v, layout=layout, num_heads=heads, causal=not causal, kv_len=kv_len)
    if causal or kv_len is None:
        assert np.abs(out - wrong).max() > 1e-2        # the mask matters, and the check would see it missing


@pytest.mark.parametrize("layout, shape, heads, causal, kv_len", [
    ("BNSD", (1, 2, 300, 64), 2, True, None),              # the causal band across 128 x 128 blocks, a ragged tail
    ("BSH", (2, 260, 256), 2, False, [260, 131]),          # D = 128 (the largest UB footprint), padding
])
def test_flash_with_128_row_query_blocks_matches_numpy(layout, shape, heads, causal, kv_len):
    rng = np.random.default_rng(sum(shape))
    q, k, v = (rng.uniform(-2, 2, shape).astype(np.float16) for _ in range(3))
    out, _ = attention_flash(q, k, v, layout=layout, num_heads=heads, causal=causal, kv_len=kv_len, br=128)
    ref = attention_ref(q, k, v, layout=layout, num_heads=heads, causal=causal, kv_len=kv_len)
    np.testing.assert_allclose(out, ref, atol=2e-3, rtol=2e-3)


def test_flash_runs_qk_and_pv_on_the_cube_and_softmax_on_the_vector_cores():
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-1, 1, (1, 1, 128, 64)).astype(np.float16) for _ in range(3))
    _, (res,) = attention_flash(q, k, v)          # one launch: no split-KV merge at this size
    table = res.trace.table()
    by_core = {}
    for ct, op in zip(table.core_type.tolist(), table.op.tolist()):
        by_core.setdefault(ct, set()).add(op)
    assert {"Mmad", "Fixpipe"} <= by_core["AIC"]
    assert {"Exp", "WholeReduceMax", "WholeReduceSum", "Brcb"} <= by_core["AIV"]
    assert "Mmad" not in by_core["AIV"]


def _peaks(res) -> dict:
    """Per local memory, the highest byte any core allocated (UB on the AIVs, L1/L0 on the AIC)."""
    peaks = {}
    for bufs in res.buffers.values():
        for mem, allocs in bufs.items():
            peaks[mem] = max([peaks.get(mem, 0)] + [off + size for _, off, size in allocs])
    return peaks


def test_flash_memory_does_not_grow_with_s():
    # extra GM: one set of double-buffered tiles per core group, the same for S = 4,096 and 16,384 (the naive
    # version's score and probability matrices: 100 MB and 1.6 GB)
    ws = {s: attention_tiling(np.zeros((1, 1, s, 64), np.float16), "BNSD", 1).workspace_bytes
          for s in (4096, 16384)}
    split = 24 * (128 * 64 + 2 * 128) * 4                  # the split-KV parts: 8 blocks x 3 at both sizes
    assert ws[4096] == ws[16384] == 24 * 2 * 128 * (128 * 4 + 128 * 2 + 64 * 4) + split
    # on-chip: the same UB and L1 footprint at S = 128 and S = 512 (same query block), and it fits
    rng = np.random.default_rng(0)
    peaks = []
    for s in (128, 512):
        q = rng.uniform(-1, 1, (1, 1, s, 64)).astype(np.float16)
        peaks.append(_peaks(attention_flash(q, q, q, br=64)[1][0]))
    assert peaks[0] == peaks[1]
    assert 0 < peaks[0]["UB"] <= 184 * 1024 and 0 < peaks[0]["L1"] <= 512 * 1024


def test_flash_is_faster_than_naive_at_s_1024():
    # the naive version moves the S x S scores through GM three times in three launches; flash overlaps
    # cube and vector work and keeps its tiles in L2 (deterministic cycles, RESULTS 12)
    rng = np.random.default_rng(1024)
    q, k, v = (rng.uniform(-2, 2, (1, 1, 1024, 64)).astype(np.float16) for _ in range(3))
    _, flash = attention_flash(q, k, v, numerics=False)
    _, naive = attention_naive(q, k, v)
    flash_cycles, naive_cycles = (sum(r.cycles for r in runs) for runs in (flash, naive))
    assert flash_cycles < 0.7 * naive_cycles, (flash_cycles, naive_cycles)


def test_timing_only_launch_gives_the_same_cycles():
    rng = np.random.default_rng(7)
    q, k, v = (rng.uniform(-2, 2, (1, 13, 130, 64)).astype(np.float16) for _ in range(3))
    kw = dict(causal=True, br=128, parts=2)                    # 26 blocks: 24 whole, 2 split in 2 key ranges
    out, res = attention_flash(q, k, v, **kw)
    blank, dry = attention_flash(q, k, v, numerics=False, **kw)
    assert len(res) == len(dry) == 2                            # the MIX kernel and the split-KV merge
    assert all(d.cycles == r.cycles and len(d.trace) == len(r.trace) for d, r in zip(dry, res))
    assert np.abs(out).max() > 0.1 and not blank.any()        # the timing-only run computed nothing


@pytest.mark.parametrize("shape, causal, kv_len, parts", [
    ((2, 13, 130, 64), True, [130, 60], 3),     # 52 blocks: 48 whole, 4 cut in 3 key ranges (one is empty)
    ((1, 25, 256, 64), False, None, 2),         # 50 blocks: 48 whole, 2 cut in 2
])
def test_split_kv_parts_merge_to_the_same_attention(shape, causal, kv_len, parts):
    rng = np.random.default_rng(sum(shape))
    q, k, v = (rng.uniform(-2, 2, shape).astype(np.float16) for _ in range(3))
    t = attention_tiling(q, "BNSD", 1, causal=causal, kv_len=kv_len, parts=parts)
    assert t.br == 128 and t.tail * t.parts <= t.blocks == 24
    out, res = attention_flash(q, k, v, causal=causal, kv_len=kv_len, parts=parts)
    assert [r.kernel_name for r in res] == ["flash_attention_kernel", "merge_parts_kernel"]
    ref = attention_ref(q, k, v, causal=causal, kv_len=kv_len)
    np.testing.assert_allclose(out, ref, atol=2e-3, rtol=2e-3)
    with pytest.raises(ValueError, match="split-KV parts = 2"):
        attention_tiling(q[:, :12], "BNSD", 1, causal=causal, kv_len=kv_len, parts=2)    # 24 blocks: no tail


def test_split_parts_fill_the_idle_groups():
    # S = 4,096: 32 blocks of 128 rows on 24 groups -> the 8 left cut in 3 (24 pieces of ~11 key blocks);
    # S = 8,192: 64 blocks -> 16 left cut in 3 (48 pieces, two rounds of ~22 blocks instead of one of 64)
    assert [split_parts(8, 24, 32), split_parts(16, 24, 64)] == [3, 3]
    assert split_parts(2, 24, 3) == 1                   # too few key blocks to be worth a merge


def test_query_block_choice_follows_the_read_cost():
    def br(s):
        return attention_tiling(np.zeros((1, 1, s, 64), np.float16), "BNSD", 1).br
    assert br(1024) == 64                # 16 blocks of 64 rows on 16 groups beat 8 blocks of 128 on 8
    assert br(4096) == br(8192) == 128   # 2 (3) rounds of 128-row blocks beat 3 (6) rounds of 64
    with pytest.raises(ValueError, match="br = 32"):
        attention_tiling(np.zeros((1, 1, 256, 64), np.float16), "BNSD", 1, br=32)


def test_bad_shapes_are_named():
    q = np.zeros((1, 1, 64, 24), np.float16)
    with pytest.raises(ValueError, match="multiple of 16"):
        attention_flash(q, q, q)
    q = np.zeros((1, 64, 96), np.float16)
    with pytest.raises(ValueError, match="multiple of num_heads"):
        attention_flash(q, q, q, layout="BSH", num_heads=5)
    with pytest.raises(ValueError, match="kv_len"):
        attention_flash(q, q, q, layout="BSH", num_heads=2, kv_len=[0])
