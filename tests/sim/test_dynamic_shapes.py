"""Dynamic shapes (动态shape): every library operator with a host tiling, over random shapes and dtypes.

add_custom_template / split_even, conv2d and maxpool2d have their properties in test_templates.py and
test_kernels_lenet.py; this file covers the rest: relu, softmax, linear (cube fp16, vector fp32), the
high-level Matmul (host GetTiling, tails on M, N and K, half / bfloat16 / int8) and the int8 cube matmul of
the migration runtime. Shapes include lengths that end off a 32-byte boundary.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from ascend_sim import bfloat16, float32, half, int8, int32, launch
from ascend_sim.analysis.verify import compare
from ascend_sim.kernels import linear, relu, softmax
from ascend_sim.kernels.m4.qmatmul import int8_linear_rows
from ascend_sim.models.lenet_reference import linear_ref, softmax_ref

PROPERTY = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
FLOATS = st.sampled_from(["float16", "float32"])


def _golden(ref, dtype, *arrays):
    if dtype == "float16":
        return ref(*arrays)
    return ref(*[a.astype(np.float64) for a in arrays]).astype(np.float32)


def _check(out, gold, dtype):
    assert out.dtype == np.dtype(dtype) and out.shape == gold.shape
    res = compare(out, gold, dtype)
    assert res.passed, str(res)


@PROPERTY
@given(shape=st.lists(st.integers(1, 37), min_size=1, max_size=3), dtype=FLOATS, seed=st.integers(0, 2**16))
def test_relu_any_shape(shape, dtype, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)
    y, _ = relu(x, dtype=dtype)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


@PROPERTY
@given(n=st.integers(1, 70), k=st.integers(1, 40), dtype=FLOATS, seed=st.integers(0, 2**16))
def test_softmax_any_shape(n, k, dtype, seed):
    x = np.random.default_rng(seed).uniform(-4, 4, (n, k)).astype(dtype)
    y, _ = softmax(x, dtype=dtype)
    _check(y, _golden(softmax_ref, dtype, x), dtype)


@PROPERTY
@given(n=st.integers(1, 150), k=st.integers(1, 130), o=st.integers(1, 70), dtype=FLOATS, seed=st.integers(0, 2**16))
def test_linear_any_shape(n, k, o, dtype, seed):
    rng = np.random.default_rng(seed)
    x, w, b = (rng.uniform(-1, 1, s).astype(dtype) for s in ((n, k), (o, k), (o,)))
    y, _ = linear(x, w, b, dtype=dtype)
    _check(y, _golden(linear_ref, dtype, x, w, b), dtype)


@PROPERTY
@given(o=st.integers(1, 70), k=st.integers(1, 200), p=st.integers(1, 300), relu_on=st.booleans(),
       seed=st.integers(0, 2**16))
def test_int8_cube_matmul_any_shape(o, k, p, relu_on, seed):
    rng = np.random.default_rng(seed)
    w = rng.integers(-128, 128, (o, k)).astype(np.int8)
    x = rng.integers(-128, 128, (p, k)).astype(np.int8)
    s = rng.uniform(1e-4, 1e-2, o).astype(np.float32)
    b = rng.uniform(-1, 1, o).astype(np.float32)
    y, _ = int8_linear_rows(w, x, s, b, relu=relu_on)
    acc = (w.astype(np.int64) @ x.T.astype(np.int64)).astype(np.float32) * s[:, None] + b[:, None]
    np.testing.assert_array_equal(y, (np.maximum(acc, 0) if relu_on else acc).astype(np.float16))


@PROPERTY
@given(m=st.integers(1, 200), n=st.integers(1, 200), k=st.integers(1, 300), cores=st.integers(1, 8),
       in_dt=st.sampled_from(["half", "bfloat16", "int8"]), seed=st.integers(0, 2**16),
       template=st.sampled_from(["CFG_NORM", "CFG_MDL"]))
def test_matmul_api_any_shape(m, n, k, cores, in_dt, seed, template):
    import ascend_sim
    from tests.sim.test_matmul_api import matmul_api_kernel, host_tiling
    dt = {"half": half, "bfloat16": bfloat16, "int8": int8}[in_dt]
    out_dt = int32 if dt == int8 else float32
    rng = np.random.default_rng(seed)
    lo, hi = (-100, 100) if dt == int8 else (-4, 5)
    a, b = rng.integers(lo, hi, (m, k)).astype(dt), rng.integers(lo, hi, (k, n)).astype(dt)
    trans_b = dt == int8                                   # int8 B lives as N x K in GM
    t = host_tiling(m, n, k, dt, out_dt, cores, trans_b=trans_b)
    c = np.zeros((m, n), out_dt)
    launch(matmul_api_kernel, t.usedCoreNum, a, np.ascontiguousarray(b.T) if trans_b else b, None, c, t,
           (dt, out_dt, False, trans_b, int32 if dt == int8 else float32, False, 0.0), getattr(ascend_sim, template))
    np.testing.assert_array_equal(c, (a.astype(np.float64) @ b.astype(np.float64)).astype(out_dt))
