"""Templates: function and class templates with type and value parameters, deduced and explicit arguments, and a
kernel template instantiated from Python (``mod.k.template(...)``)."""
import numpy as np

from ascend_sim import half, launch
from cxx_util import load_src, run_scalars

PRELUDE = """
template <typename T> T twice(T v) { return v + v; }
template <uint32_t N> uint32_t times(uint32_t v) { return v * N; }
template <typename T, int32_t SCALE>
class Scaler {
public:
    __aicore__ inline Scaler(T bias) : bias(bias) {}
    __aicore__ inline T Apply(T v) const { return v * SCALE + bias; }
private:
    T bias;
};
"""


def test_function_and_class_templates():
    out = run_scalars("""
    out.SetValue(0, twice(21));                 // deduced T = int
    out.SetValue(1, twice<int64_t>(1) );        // explicit
    out.SetValue(2, times<5>(7u));              // value parameter
    Scaler<int32_t, 3> s(4);
    out.SetValue(3, s.Apply(10));
    Scaler<int64_t, -2> t(1);
    out.SetValue(4, t.Apply(10));
""", 5, prelude=PRELUDE, name="templates")
    assert out.tolist() == [42, 2, 35, 34, -19]


def test_a_type_template_parameter_carries_the_dtype():
    out = run_scalars("""
    out.SetValue(0, sizeof(half));
    out.SetValue(1, Size<float>());
    out.SetValue(2, Size<uint8_t>());
""", 3, prelude="template <typename T> uint32_t Size() { return sizeof(T); }", name="tsize")
    assert out.tolist() == [2, 4, 1]


KERNEL_TEMPLATE = """
template <typename T, uint32_t LEN>
__global__ __vector__ void add_one(__gm__ T* x, __gm__ T* y)
{
    GlobalTensor<T> xGm, yGm;
    xGm.SetGlobalBuffer(x + GetBlockIdx() * LEN, LEN);
    yGm.SetGlobalBuffer(y + GetBlockIdx() * LEN, LEN);
    LocalMemAllocator<Hardware::UB> ub;
    LocalTensor<T> t = ub.Alloc<T, LEN>();
    DataCopy(t, xGm, LEN);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Adds(t, t, (T)1, LEN);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yGm, t, LEN);
}
"""


def test_kernel_template_instantiated_from_python():
    mod = load_src(KERNEL_TEMPLATE, name="ktemplate")
    x = np.arange(4 * 256, dtype=np.float16)
    y = np.zeros_like(x)
    launch(mod.add_one.template(half, 256), 4, x, y)
    np.testing.assert_array_equal(y, x + np.float16(1))


def test_launching_an_uninstantiated_kernel_template_names_the_fix():
    import pytest

    from ascend_sim import LaunchError
    mod = load_src(KERNEL_TEMPLATE, name="ktemplate")
    x = np.zeros(256, np.float16)
    with pytest.raises(LaunchError, match=r"add_one.template\(T, LEN\)"):
        launch(mod.add_one, 1, x, x.copy())


def test_member_function_templates_static_members_and_if_constexpr():
    out = run_scalars("""
    Picker<int32_t> p;
    out.SetValue(0, p.Pick<1>(5));
    out.SetValue(1, p.Pick<2>(5));
    out.SetValue(2, p.Pick(5));                 // the default template argument
    out.SetValue(3, p.Width());
""", 4, prelude="""
constexpr uint32_t MODE_DOUBLE = 1;
template <typename T>
class Picker {
    static constexpr uint32_t BASE = 100;
public:
    template <uint32_t MODE = 0>
    __aicore__ inline T Pick(T v)
    {
        if constexpr (MODE == MODE_DOUBLE) {
            return v * 2;
        } else if constexpr (MODE == 2) {
            return Pick<MODE_DOUBLE>(v) + BASE;
        } else {
            return v;
        }
    }
    __aicore__ inline uint32_t Width() { return sizeof(T) * BASE; }
};
""", name="membertemplates")
    assert out.tolist() == [10, 110, 5, 400]


def test_if_constexpr_lowers_only_the_branch_taken():
    from cxx_util import load_src
    mod = load_src("""
constexpr int32_t SCENARIO = 2;
int32_t Scenario() {
    if constexpr (SCENARIO == 1) { return 10; } else if constexpr (SCENARIO == 2) { return 20; } else { return 30; }
}""", name="constexprif")
    assert mod.Scenario() == 20
    assert "SCENARIO == 1" not in mod.python_source and "return 10" not in mod.python_source


def test_ascendc_conditional_picks_the_type_of_a_constant_condition():
    """``AscendC::Conditional<cond, T1, T2>::type`` (the std::conditional of kernel_utils_constants.h), as the
    reduce_repeat sample uses it: a constexpr bool outside the template, also inside a function template."""
    out = run_scalars("""
    using A = Conditional<true, float, half>::type;
    using B = typename AscendC::Conditional<false, float, half>::type;
    out.SetValue(0, sizeof(A));
    out.SetValue(1, sizeof(B));
    A a = 1.0f / 3;
    B b = 1.0f / 3;
    out.SetValue(2, (float)a == 1.0f / 3 ? 1 : 0);        // float keeps 1/3 in float
    out.SetValue(3, (float)b == 1.0f / 3 ? 1 : 0);        // half rounds it
    out.SetValue(4, Size<7>());
""", 5, prelude="constexpr bool IS_FLOAT = false;\n"
                "template <int N> uint32_t Size() { using T = typename AscendC::Conditional<IS_FLOAT, float, half>::type;"
                " T v = 0; return sizeof(v) + N; }", name="conditional")
    assert out.tolist() == [4, 2, 1, 0, 9]


def test_ascendc_conditional_on_a_template_parameter_is_unsupported_at_its_line():
    import pytest
    from ascend_sim.ascendc import CompileError
    src = ("template <bool F> __aicore__ inline uint32_t Size()\n{\n"
           "    using T = typename AscendC::Conditional<F, float, half>::type;\n    T v = 0;\n    return sizeof(v);\n}\n"
           "__global__ __vector__ void k(__gm__ uint32_t* o) { GlobalTensor<uint32_t> g; g.SetGlobalBuffer(o, 1); "
           "g.SetValue(0, Size<true>()); }\n")
    # line 7 (after the 2 header lines): `return sizeof(v);`, the first use that needs T as a dtype
    with pytest.raises(CompileError, match=r"<ascendc:dependent_conditional>:7:12: unsupported: the type 'T' = "
                                           r"typename AscendC::Conditional<F, float, half>::type: AscendC::Conditional "
                                           r"whose condition depends on a template parameter"):
        load_src(src, name="dependent_conditional")
