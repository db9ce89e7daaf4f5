"""The 1.5B model's 310B table (migrate/llm_edge.py): shapes, byte counts and what each launch is bound by."""
from ascend_sim.migrate.llm_edge import Linear, linears, time_decode_attention, time_linear_gemv, tile_for


def test_shapes_are_the_1_5b_model():
    params = sum(lin.K * lin.O * lin.count for lin in linears())
    assert 1.30e9 < params - 1536 * 151936 < 1.32e9          # decoder linears, llm_edge.md section 2.5: 1.310 B
    assert Linear("x", 1536, 2048, 1).bytes(4) * 4 < Linear("x", 1536, 2048, 1).bytes(16) * 1.04   # 4.125 b/w


def test_lm_head_is_padded_to_whole_tiles():
    tile, O = tile_for(151936)
    assert O % tile == 0 and 0 <= O - 151936 < tile


def test_decode_rows_name_their_bound():
    lin = Linear("o_proj", 1536, 1536, 28)
    fp16, int4 = time_linear_gemv(lin, 16, "Ascend310B"), time_linear_gemv(lin, 4, "Ascend310B")
    assert fp16.bound == "MTE2" and int4.bound == "V" and int4.us < fp16.us / 2
    attn = time_decode_attention(256, "Ascend310B")
    assert attn.bytes == 2 * 2 * 257 * 128 * 2 and attn.us > 0 and attn.bound


def test_int4_prefill_through_the_fused_kernel_beats_fp16_on_the_cube():
    """Time to first token with int4 weights: the fused W4A16 kernel reads a quarter of the weight bytes, so a
    prefill linear of 64 rows is faster than the fp16 Matmul; both are timing-only launches on the 310B."""
    from ascend_sim.migrate.llm_edge import time_linear_w4a16
    from ascend_sim.migrate.resnet50 import time_gemm
    lin = Linear("o_proj", 1536, 1536, 28)
    int4, fp16 = time_linear_w4a16(lin, 64, "Ascend310B"), time_gemm(64, lin.O, lin.K, chip="Ascend310B")
    assert int4.us < fp16.us / 1.5, (int4.us, fp16.us)
