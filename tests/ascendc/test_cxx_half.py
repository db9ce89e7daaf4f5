"""half and bfloat16_t scalars: C++ half arithmetic rounds to fp16 each operation, like numpy's float16."""
import numpy as np

from cxx_util import load_src, run_scalars


def test_half_scalars_round_per_operation():
    out = run_scalars("""
    half a = 0.1f;
    half b = 1000.0f;
    half s = a + b;                     // fp16: 1000.1 rounds to 1000.0
    float f = a;                        // widening keeps fp16's value of 0.1
    out.SetValue(0, s);
    out.SetValue(1, (half)(f * 3.0f));
""", 2, dtype=np.float16, name="half")
    a, b = np.float16(0.1), np.float16(1000.0)
    assert out[0] == a + b
    assert out[1] == np.float16(np.float32(a) * np.float32(3.0))


def test_float_scalars_are_float32():
    mod = load_src("float Third(float v) { return v / 3.0f; }", name="f32")
    assert mod.Third(np.float32(1.0)) == np.float32(1.0) / np.float32(3.0)
    assert isinstance(mod.Third(np.float32(1.0)), np.float32)


def test_bfloat16_scalars():
    import ml_dtypes
    mod = load_src("bfloat16_t Sum(bfloat16_t a, bfloat16_t b) { return a + b; }", name="bf16")
    a, b = ml_dtypes.bfloat16(1.0), ml_dtypes.bfloat16(0.00390625)
    assert mod.Sum(a, b) == a + b


def test_scalar_launch_arguments_take_their_cpp_types():
    from ascend_sim import launch
    mod = load_src("""
__global__ __vector__ void run(__gm__ float* o, float s, int8_t n)
{
    GlobalTensor<float> out;
    out.SetGlobalBuffer(o, 2);
    out.SetValue(0, s / 3.0f);          // a Python float argument is float32 in the kernel
    out.SetValue(1, (float)n);          // an int8_t argument wraps
}""", name="scalarargs")
    res = np.zeros(2, np.float32)
    launch(mod.run, 1, res, 0.1, 200)
    assert res[0] == np.float32(0.1) / np.float32(3.0)
    assert res[1] == -56.0
