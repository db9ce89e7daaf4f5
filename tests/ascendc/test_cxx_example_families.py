"""The header branch's kernels (tests/ascendc/kernels/README.md: one per official example family, both kernel
styles, vector, cube and MIX) launched through the C++ front end and compared with their numpy references."""
from pathlib import Path

import numpy as np

from ascend_sim import launch
from ascend_sim.ascendc import load

KERNELS = Path(__file__).parent / "kernels"
rng = np.random.default_rng(27)


def mod(name: str):
    return load(KERNELS / name)


def test_add_tque_legacy_tiling():
    m = mod("add_tque.cpp")
    n = 8 * 2048
    x, y = rng.uniform(-1, 1, (2, n)).astype(np.float16)
    z = np.zeros_like(x)
    launch(m.add_tque, 8, x, y, z, None, m.structs.AddTqueTilingData(totalLength=n, tileNum=8))
    np.testing.assert_array_equal(z, x + y)


def test_add_tbuf_kernel_template():
    m = mod("add_tbuf.asc")
    n = 8 * 2048
    x, y = rng.uniform(-1, 1, (2, n)).astype(np.float32)
    z = np.zeros_like(x)
    launch(m.add_tbuf.template(256), 8, x, y, z, 2048)
    np.testing.assert_array_equal(z, x + y)


def test_add_static_block_idx():
    m = mod("add_static.asc")
    n = 4 * 2 * 1024
    x, y = rng.uniform(-1, 1, (2, n)).astype(np.float32)
    z = np.zeros_like(x)
    launch(m.add_static, 4, x, y, z, 2)
    np.testing.assert_array_equal(z, x + y)


def test_leaky_relu_half_tiling():
    m = mod("leaky_relu.cpp")
    n = 8 * 1024
    x = rng.uniform(-2, 2, n).astype(np.float16)
    z = np.zeros_like(x)
    launch(m.leaky_relu, 8, x, z, None, m.structs.LeakyReluTilingData(totalLength=n, tileNum=4, negativeSlope=0.2))
    slope = np.float16(0.2)
    np.testing.assert_array_equal(z, np.where(x >= 0, x, slope * x))


def test_data_copy_pad_unaligned_rows():
    m = mod("data_copy_pad.asc")
    x = rng.uniform(-1, 1, (4 * 16, 20)).astype(np.float16)
    z = np.zeros_like(x)
    launch(m.data_copy_pad, 4, x, z)
    np.testing.assert_array_equal(z, x * np.float16(2))


def test_cast_roundtrip():
    m = mod("cast.asc")
    x = rng.uniform(-100, 100, 4 * 512).astype(np.float32)
    xh, xb = np.zeros(x.size, np.float16), np.zeros_like(x)
    launch(m.cast_roundtrip, 4, x, xh, xb)
    np.testing.assert_array_equal(xh, x.astype(np.float16))
    np.testing.assert_array_equal(xb, x.astype(np.float16).astype(np.float32))


def test_compare_lt_bitmask():
    m = mod("compare.asc")
    x, y = rng.uniform(-1, 1, (2, 4 * 256)).astype(np.float32)
    mask = np.zeros(4 * 256 // 8, np.uint8)
    launch(m.compare_lt, 4, x, y, mask)
    np.testing.assert_array_equal(mask, np.packbits(x < y, bitorder="little"))


def test_select_min():
    m = mod("select.asc")
    x, y = rng.uniform(-1, 1, (2, 4 * 512)).astype(np.float16)
    z = np.zeros_like(x)
    launch(m.select_min, 4, x, y, z)
    np.testing.assert_array_equal(z, np.where(x < y, x, y))


def test_reduce_sum_max():
    m = mod("reduce.asc")
    x = rng.uniform(-1, 1, (4, 1024)).astype(np.float32)
    sums, maxes = np.zeros(4 * 8, np.float32), np.zeros(4 * 8, np.float32)
    launch(m.reduce_sum_max, 4, x, sums, maxes)
    np.testing.assert_allclose(sums[::8], x.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(maxes[::8], x.max(1))


def test_brcb_duplicate():
    m = mod("brcb_duplicate.asc")
    x = rng.uniform(-1, 1, 4 * 64).astype(np.float32)
    out, fill = np.zeros(x.size * 8, np.float32), np.zeros(x.size * 8, np.float32)
    launch(m.brcb_duplicate, 4, x, out, fill)
    np.testing.assert_array_equal(out, np.repeat(x, 8))
    np.testing.assert_array_equal(fill, np.full(fill.size, 3.5, np.float32))


def test_matmul_mmad_cube():
    m = mod("matmul_mmad.asc")
    M, N, K = 128, 128, 128
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    r = launch(m.matmul_mmad, (M // 64) * (N // 64), a, b, c, M, N, K)
    assert m.matmul_mmad.core == "AIC" and {rec.core_type for rec in r.trace.records} == {"AIC"}
    ref = a.astype(np.float32) @ b.astype(np.float32)       # the cube sums in fp32 in its own order
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def test_matmul_leakyrelu_mix():
    m = mod("matmul_leakyrelu_mix.asc")
    M, N, K = 128, 128, 64
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    work = np.zeros((M, N), np.float32)
    c = np.zeros((M, N), np.float32)
    slope = np.float32(0.1)
    r = launch(m.matmul_leakyrelu, (M // 64) * (N // 64), a, b, work, c, N, K, slope)
    assert m.matmul_leakyrelu.core == "MIX" and {rec.core_type for rec in r.trace.records} == {"AIC", "AIV"}
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, np.where(ref >= 0, ref, slope * ref), rtol=1e-6, atol=1e-6)


def test_sync_all_atomic_add():
    m = mod("sync_all_atomic.asc")
    blocks = 4
    x, y = rng.uniform(-1, 1, (2, blocks * 256)).astype(np.float32)
    acc, z = np.zeros(256, np.float32), np.zeros_like(x)
    launch(m.sync_all_atomic, blocks, x, y, acc, z)
    total = np.zeros(256, np.float32)
    for row in x.reshape(blocks, 256):
        total = total + row                     # the atomic adds land in block order on the simulator
    np.testing.assert_array_equal(acc, total)
    np.testing.assert_array_equal(z, (total + y.reshape(blocks, 256)).reshape(-1))


def test_bank_conflict_costs_cycles():
    m = mod("bank_conflict_add.asc")
    x, y = rng.uniform(-1, 1, (2, 4096)).astype(np.float32)
    cycles = {}
    for off in (0x4000, 0x4100):
        z = np.zeros_like(x)
        r = launch(m.bank_conflict_add, 1, x, y, z, off, chip="Ascend910B")
        np.testing.assert_array_equal(z, x + y)
        adds = [rec for rec in r.trace.records if rec.op == "Add"]
        cycles[off] = adds[0].end - adds[0].start
    assert cycles[0x4000] > cycles[0x4100]
