"""ReduceSum/ReduceMax/ReduceMin through the C++ front end: the count form and GetReduceRepeatSumSpr<T>(), and the
mask/repeat overloads (continuous and bit mask), against plain numpy models of the ReduceSum/ReduceMax pages."""
from __future__ import annotations

import numpy as np

from ascend_sim import launch
from cxx_util import load_src

KERNEL = """
__global__ __vector__ void k(__gm__ T* x, __gm__ T* o)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 8192);
    LocalTensor<T> src = buf.Get<T>(N);
    LocalTensor<T> dst = buf.GetWithOffset<T>(32, 4096);
    GlobalTensor<T> xg;
    xg.SetGlobalBuffer(x, N);
    GlobalTensor<T> og;
    og.SetGlobalBuffer(o, 4);
    DataCopy(src, xg, N);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    BODY
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
    og.SetValue(0, dst.GetValue(0));
    og.SetValue(1, dst.GetValue(1));
    OUT
}
"""


def run(ctype: str, n: int, body: str, x: np.ndarray, out: str = "") -> np.ndarray:
    src = (f"using T = {ctype};\nconstexpr int32_t N = {n};\n"
           + KERNEL.replace("BODY", body).replace("OUT", out))
    o = np.zeros(4, x.dtype)
    launch(load_src(src, name="reduce").k, 1, x, o)
    return o


def data(dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-6, 6, n)).astype(dtype)


def trees(x: np.ndarray, width: int) -> np.ndarray:
    """Each ``width`` values (zero-padded) as a binary tree of neighbour pairs, rounding in x's dtype."""
    x = np.concatenate([x, np.zeros(-x.size % width, x.dtype)]).reshape(-1, width)
    while x.shape[1] > 1:
        x = (x[:, 0::2] + x[:, 1::2]).astype(x.dtype)
    return x[:, 0]


def test_count_form_and_get_reduce_repeat_sum_spr():
    """ReduceSum<float>(dst, src, tmp, 1000): 16 repeat trees added in order (ReduceSum.md 方式一), and
    GetReduceRepeatSumSpr<float>() reads the same value."""
    x = data(np.float32, 1000, 1)
    o = run("float", 1000, "ReduceSum<float>(dst, src, dst, 1000);", x,
            "og.SetValue(2, GetReduceRepeatSumSpr<float>());")
    per_repeat = trees(x, 64)
    acc = per_repeat[0]
    for v in per_repeat[1:]:
        acc = np.float32(acc + v)
    assert acc != trees(per_repeat, 16)[0]           # the data tells in order from a tree of the repeats
    assert o[0] == o[2] == acc


def test_mask_forms_continuous_and_bit_mask():
    """ReduceSum<half>(dst, src, tmp, 128, 8, 8) is a tree of the 8 repeat trees (方式二); ReduceMax<half> with a
    bit mask of every other lane over 8 repeats gives the largest even lane and its index repeat * 128 + lane."""
    x = data(np.float16, 1024, 3)
    o = run("half", 1024, "ReduceSum<half>(dst, src, dst, 128, 8, 8);", x)
    per_repeat = trees(x, 128)
    in_order = per_repeat[0]
    for v in per_repeat[1:]:
        in_order = np.float16(in_order + v)
    assert trees(per_repeat, 8)[0] != in_order              # the data tells 方式二 from 方式一
    assert o[0] == trees(per_repeat, 8)[0]
    x[3 * 128 + 7] = 50                                      # an odd lane: masked out
    x[5 * 128 + 6] = 40
    o = run("half", 1024, "uint64_t mask[2] = {0x5555555555555555ULL, 0x5555555555555555ULL};\n"
                          "    ReduceMax<half>(dst, src, dst, mask, 8, 8, true);", x)
    assert o[0] == 40 and int(o[1:2].view(np.uint16)[0]) == 5 * 128 + 6
