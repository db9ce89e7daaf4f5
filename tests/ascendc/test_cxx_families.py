"""Our C++ kernels of the official example families (tests/ascendc/kernels/README.md) run through the front end
and match their numpy references; a kernel with a wrong operation fails the same comparison."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascend_sim import launch
from ascend_sim.ascendc import load

KERNELS = Path(__file__).resolve().parent / "kernels"


def _rng():
    return np.random.default_rng(27)


def _f16(a):
    return a.astype(np.float32)


def add_tque(mod):
    n = 8 * 2048
    x, y = _rng().uniform(-1, 1, (2, n)).astype(np.float16)
    z = np.zeros(n, np.float16)
    launch(mod.add_tque, 8, x, y, z, None, mod.structs.AddTqueTilingData(totalLength=n, tileNum=8))
    return [(z, x + y, 0)]


def add_tbuf(mod):
    n = 4 * 2048
    x, y = _rng().uniform(-1, 1, (2, n)).astype(np.float32)
    z = np.zeros(n, np.float32)
    launch(mod.add_tbuf.template(256), 4, x, y, z, 2048)
    return [(z, x + y, 0)]


def add_static(mod):
    n = 4 * 2 * 1024
    x, y = _rng().uniform(-1, 1, (2, n)).astype(np.float32)
    z = np.zeros(n, np.float32)
    launch(mod.add_static, 4, x, y, z, 2)
    return [(z, x + y, 0)]


def leaky_relu(mod):
    n = 8 * 1024
    x = _rng().uniform(-1, 1, n).astype(np.float16)
    z = np.zeros(n, np.float16)
    tiling = mod.structs.LeakyReluTilingData(totalLength=n, tileNum=2, negativeSlope=0.1)
    launch(mod.leaky_relu, 8, x, z, None, tiling)
    return [(_f16(z), np.where(x >= 0, _f16(x), _f16(x) * np.float32(np.float16(0.1))), 1e-3)]


def data_copy_pad(mod):
    x = _rng().uniform(-1, 1, (4 * 16, 20)).astype(np.float16)
    z = np.zeros_like(x)
    launch(mod.data_copy_pad, 4, x, z)
    return [(z, x * np.float16(2), 0)]


def cast(mod):
    x = _rng().uniform(-100, 100, 4 * 512).astype(np.float32)
    narrow, back = np.zeros(x.size, np.float16), np.zeros_like(x)
    launch(mod.cast_roundtrip, 4, x, narrow, back)
    return [(narrow, x.astype(np.float16), 0), (back, x.astype(np.float16).astype(np.float32), 0)]


def compare(mod):
    x, y = _rng().uniform(-1, 1, (2, 4 * 256)).astype(np.float32)
    mask = np.zeros(4 * 256 // 8, np.uint8)
    launch(mod.compare_lt, 4, x, y, mask)
    return [(mask, np.packbits(x < y, bitorder="little"), 0)]


def select(mod):
    x, y = _rng().uniform(-1, 1, (2, 4 * 512)).astype(np.float16)
    z = np.zeros_like(x)
    launch(mod.select_min, 4, x, y, z)
    return [(z, np.where(x < y, x, y), 0)]


def reduce(mod):
    x = _rng().uniform(-1, 1, 4 * 1024).astype(np.float32)
    sums, maxes = np.zeros(4 * 8, np.float32), np.zeros(4 * 8, np.float32)
    launch(mod.reduce_sum_max, 4, x, sums, maxes)
    return [(sums[::8], x.reshape(4, -1).sum(1), 1e-5), (maxes[::8], x.reshape(4, -1).max(1), 0)]


def brcb_duplicate(mod):
    x = _rng().uniform(-1, 1, 4 * 64).astype(np.float32)
    out, fill = np.zeros(x.size * 8, np.float32), np.zeros(x.size * 8, np.float32)
    launch(mod.brcb_duplicate, 4, x, out, fill)
    return [(out, np.repeat(x, 8), 0), (fill, np.full(fill.size, 3.5, np.float32), 0)]


def _ab(m=128, n=128, k=128):
    rng = _rng()
    return rng.uniform(-1, 1, (m, k)).astype(np.float16), rng.uniform(-1, 1, (k, n)).astype(np.float16)


def matmul_mmad(mod):
    a, b = _ab()
    c = np.zeros((128, 128), np.float16)
    launch(mod.matmul_mmad, 4, a, b, c, 128, 128, 128)
    return [(_f16(c), _f16((_f16(a) @ _f16(b)).astype(np.float16)), 2e-3)]


def matmul_api(mod):
    from ascend_sim import float32, half
    from ascend_sim import matmul_tiling as mt

    M, N, K = 256, 128, 128
    tiler = mt.MultiCoreMatmulTiling()
    tiler.SetDim(4)
    for set_type, dtype in ((tiler.SetAType, half), (tiler.SetBType, half), (tiler.SetCType, float32),
                            (tiler.SetBiasType, float32)):
        set_type("GM", mt.CubeFormat.ND, dtype)
    tiler.SetShape(M, N, K)
    tiler.SetOrgShape(M, N, K)
    tiling = tiler.tiling_or_raise()
    a, b = _ab(M, N, K)
    c = np.zeros((M, N), np.float32)
    launch(mod.matmul_api, tiling.usedCoreNum, a, b, c, tiling)
    assert "CFG_MDL" in mod.python_source                      # the template argument reached Python
    return [(c, _f16(a) @ _f16(b), 1e-5)]


def matmul_leakyrelu_mix(mod):
    a, b = _ab()
    work, c = np.zeros((128, 128), np.float32), np.zeros((128, 128), np.float32)
    launch(mod.matmul_leakyrelu, 4, a, b, work, c, 128, 128, 0.1)
    r = _f16(a) @ _f16(b)
    return [(c, np.where(r >= 0, r, np.float32(0.1) * r), 1e-5)]


def sync_all_atomic(mod):
    blocks = 4
    x, y = _rng().uniform(-1, 1, (2, blocks * 256)).astype(np.float32)
    acc, z = np.zeros(256, np.float32), np.zeros_like(x)
    launch(mod.sync_all_atomic, blocks, x, y, acc, z)
    total = x.reshape(blocks, 256).sum(0)
    return [(acc, total, 1e-6), (z.reshape(blocks, 256), total + y.reshape(blocks, 256), 1e-6)]


def bank_conflict_add(mod):
    x, y = _rng().uniform(-1, 1, (2, 4096)).astype(np.float32)
    out = []
    for offset in (0x4000, 0x4100):
        z = np.zeros_like(x)
        launch(mod.bank_conflict_add, 1, x, y, z, offset)
        out.append((z, x + y, 0))
    return out


FAMILIES = {   # kernel file -> runner (returns (actual, expected, rtol) triples)
    "add_tque.cpp": add_tque, "add_tbuf.asc": add_tbuf, "add_static.asc": add_static,
    "leaky_relu.cpp": leaky_relu, "data_copy_pad.asc": data_copy_pad, "cast.asc": cast,
    "compare.asc": compare, "select.asc": select, "reduce.asc": reduce, "brcb_duplicate.asc": brcb_duplicate,
    "matmul_mmad.asc": matmul_mmad, "matmul_api.asc": matmul_api, "matmul_leakyrelu_mix.asc": matmul_leakyrelu_mix,
    "sync_all_atomic.asc": sync_all_atomic, "bank_conflict_add.asc": bank_conflict_add,
}


def _matches(results) -> bool:
    return all(a.shape == e.shape and np.allclose(a.astype(np.float64), e.astype(np.float64), rtol=tol, atol=tol)
               for a, e, tol in results)


@pytest.mark.parametrize("kernel", sorted(FAMILIES))
def test_family_kernel_matches_numpy(kernel):
    results = FAMILIES[kernel](load(KERNELS / kernel))
    for actual, expected, tol in results:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol)


def test_every_kernel_file_has_a_family_test():
    files = {p.name for p in KERNELS.iterdir() if p.suffix in (".asc", ".cpp")}
    others = {"add_custom.cpp", "leaky_relu_flags.cpp"}      # the front end's own kernels (test_cxx_kernels.py)
    assert files - others == set(FAMILIES)


MUTANTS = [   # (kernel, original text, wrong text): each must fail its numpy comparison
    ("add_tque.cpp", "Add(zLocal, xLocal, yLocal, tileLength);", "Sub(zLocal, xLocal, yLocal, tileLength);"),
    ("compare.asc", "CMPMODE::LT", "CMPMODE::GE"),
    ("select.asc", "CMPMODE::LT", "CMPMODE::GT"),
    ("brcb_duplicate.asc", "3.5f", "2.5f"),
    ("data_copy_pad.asc", "static_cast<half>(2.0f)", "static_cast<half>(3.0f)"),
    ("matmul_leakyrelu_mix.asc", "LeakyRelu(outTile, tileIn, slope,", "LeakyRelu(outTile, tileIn, 0.2f,"),
    ("matmul_api.asc", "mm.SetTensorA(aGm[mIdx * t.singleCoreM * t.Ka]);", "mm.SetTensorA(aGm[0]);"),
]


@pytest.mark.parametrize("kernel, old, new", MUTANTS, ids=[f"{k}:{n}" for k, _, n in MUTANTS])
def test_a_wrong_kernel_fails_its_reference(kernel, old, new):
    text = (KERNELS / kernel).read_text(encoding="utf-8")
    assert old in text
    results = FAMILIES[kernel](load(text.replace(old, new, 1), name=f"mutant_{Path(kernel).stem}"))
    assert not _matches(results)


def test_bank_conflict_costs_cycles():
    """The 256-byte shift of y takes Add from two cycles a repeat to one (the figures of the guide's case)."""
    mod = load(KERNELS / "bank_conflict_add.asc")
    x, y = _rng().uniform(-1, 1, (2, 4096)).astype(np.float32)
    cycles = {}
    for offset in (0x4000, 0x4100):
        result = launch(mod.bank_conflict_add, 1, x, y, np.zeros_like(x), offset)
        (add,) = [r for r in result.trace if r.op == "Add"]
        cycles[offset] = add.end - add.start
    assert cycles[0x4000] - cycles[0x4100] == 64       # one extra cycle on each of the 64 repeats


COUNTER_MODE = '''#include "kernel_operator.h"
using namespace AscendC;
__global__ __vector__ void masked_add(__gm__ float* x, __gm__ float* y, __gm__ float* z, int32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 512 * sizeof(float));
    LocalTensor<float> all = buf.Get<float>();
    LocalTensor<float> xs = all, ys = all[512], zs = all[1024];
    GlobalTensor<float> xg, yg, zg;
    xg.SetGlobalBuffer(x, 512);
    yg.SetGlobalBuffer(y, 512);
    zg.SetGlobalBuffer(z, 512);
    Duplicate(zs, -1.0f, 512);
    DataCopy(xs, xg, 512);
    DataCopy(ys, yg, 512);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    SetMaskCount();
    SetVectorMask<float, MaskMode::COUNTER>(0, n);           // the next n elements, whatever the repeats
    Add<float, false>(zs, xs, ys, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    SetMaskNorm();
    ResetMask();
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(zg, zs, 512);
}
'''


@pytest.mark.parametrize("n", [100, 300])
def test_template_arguments_reach_the_python_keywords(n):
    """SetVectorMask<float, MaskMode::COUNTER> and Add<float, false>: counter mode adds exactly n elements."""
    mod = load(COUNTER_MODE, name="counter_mode")
    x, y = _rng().uniform(-1, 1, (2, 512)).astype(np.float32)
    z = np.zeros(512, np.float32)
    launch(mod.masked_add, 1, x, y, z, n)
    np.testing.assert_array_equal(z[:n], x[:n] + y[:n])
    np.testing.assert_array_equal(z[n:], -1.0)
    assert "isSetMask=False" in mod.python_source and "mode=MaskMode.COUNTER" in mod.python_source


REDUCE_REPEAT = '''#include "kernel_operator.h"
using namespace AscendC;
__global__ __vector__ void reduce_repeat(__gm__ float* x, __gm__ float* y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2048 * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer(x, 64);
    yg.SetGlobalBuffer(y, 8);
    DataCopy(t, xg, 64);
    PipeBarrier<PIPE_ALL>();
    ReduceRepeat<ReduceType::MAX>(t[1024], t, 64, 1, 1, 1, 8);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, t[1024], 8);
}
'''


def test_reduce_type_template_argument_becomes_the_first_argument():
    mod = load(REDUCE_REPEAT, name="reduce_repeat")
    x = _rng().uniform(-1, 1, 64).astype(np.float32)
    y = np.zeros(8, np.float32)
    launch(mod.reduce_repeat, 1, x, y)
    assert y[0] == x.max()


@pytest.mark.parametrize("config", ["CFG_ROW_MAJOR", "CFG_NZ"])
def test_fixpipe_config_template_argument_reaches_python(config):
    """Fixpipe<half, float, CFG_NZ> writes NZ fractals (N/16 column blocks of M x 16): the config is passed on."""
    text = (KERNELS / "matmul_mmad.asc").read_text(encoding="utf-8")
    mod = load(text.replace("Fixpipe(cGm[", f"Fixpipe<half, float, {config}>(cGm["), name=f"fixpipe_{config}")
    a, b = _ab(64, 64, 64)
    c = np.zeros(64 * 64, np.float16)
    launch(mod.matmul_mmad, 1, a, b, c, 64, 64, 64)
    nd = (_f16(a) @ _f16(b)).astype(np.float16)
    expected = nd.ravel() if config == "CFG_ROW_MAJOR" else nd.reshape(64, 4, 16).transpose(1, 0, 2).ravel()
    np.testing.assert_allclose(_f16(c), _f16(expected), rtol=2e-3, atol=2e-3)
