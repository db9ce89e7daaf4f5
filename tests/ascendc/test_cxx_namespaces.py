"""Namespaces: user namespaces, qualified and `using` names, AscendC:: spelled out or imported."""
from cxx_util import run_scalars

PRELUDE = """
namespace mytiling {
constexpr uint32_t ALIGN = 32;
inline uint32_t AlignUp(uint32_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }
namespace inner { inline uint32_t Twice(uint32_t n) { return 2 * n; } }
}
using mytiling::AlignUp;
namespace ti = mytiling::inner;
"""


def test_namespaces_and_using():
    out = run_scalars("""
    out.SetValue(0, mytiling::AlignUp(33));
    out.SetValue(1, AlignUp(64));
    out.SetValue(2, ti::Twice(mytiling::ALIGN));
    out.SetValue(3, AscendC::GetBlockNum());
""", 4, prelude=PRELUDE, name="namespaces")
    assert out.tolist() == [64, 64, 64, 1]


def test_overloads_resolve_by_clang():
    from cxx_util import load_src
    mod = load_src("""
int32_t Scale(int32_t v) { return v * 2; }
float Scale(float v) { return v * 0.5f; }
int32_t Scale(int32_t v, int32_t k) { return v * k; }
struct S { int32_t Get() const { return 1; } int32_t Get(int32_t k) const { return k; } };
int32_t f() { S s; return Scale(3) + (int32_t)Scale(4.0f) + Scale(2, 5) + s.Get() + s.Get(7); }
""", name="overloads")
    assert mod.f() == 6 + 2 + 10 + 1 + 7
