"""Attention: the naive and the FlashAttention-style kernels agree with numpy for both layouts, both masks and
ragged sizes; the flash kernel's memory does not grow with S^2, and its work runs on the cube and vector cores."""
import numpy as np
import pytest

from ascend_sim.kernels.m4.attention import attention_flash, attention_ref, attention_tiling
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


def test_flash_runs_qk_and_pv_on_the_cube_and_softmax_on_the_vector_cores():
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-1, 1, (1, 1, 128, 64)).astype(np.float16) for _ in range(3))
    _, res = attention_flash(q, k, v)
    table = res.trace.table()
    by_core = {}
    for ct, op in zip(table.core_type.tolist(), table.op.tolist()):
        by_core.setdefault(ct, set()).add(op)
    assert {"Mmad", "Fixpipe"} <= by_core["AIC"]
    assert {"Exp", "WholeReduceMax", "WholeReduceSum", "Brcb"} <= by_core["AIV"]
    assert "Mmad" not in by_core["AIV"]


def test_flash_memory_grows_with_s_not_s_squared():
    ws = {s: attention_tiling(np.zeros((1, 1, s, 64), np.float16), "BNSD", 1).workspace_bytes
          for s in (256, 4096, 16384)}
    assert ws[4096] == ws[16384] < 4 * 1024 * 1024        # one set of tiles per core group, whatever S
    assert ws[256] < ws[4096]                             # fewer groups when there are fewer query blocks


def test_bad_shapes_are_named():
    q = np.zeros((1, 1, 64, 24), np.float16)
    with pytest.raises(ValueError, match="multiple of 16"):
        attention_flash(q, q, q)
    q = np.zeros((1, 64, 96), np.float16)
    with pytest.raises(ValueError, match="multiple of num_heads"):
        attention_flash(q, q, q, layout="BSH", num_heads=5)
    with pytest.raises(ValueError, match="kv_len"):
        attention_flash(q, q, q, layout="BSH", num_heads=2, kv_len=[0])
