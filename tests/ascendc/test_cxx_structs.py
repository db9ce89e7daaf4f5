"""Structs: brace initialisation (with default member initialisers), the header's DataCopyParams brace-initialised
into the Python dataclass by field name, and the C layout libclang computes."""
import numpy as np

from ascend_sim import DataCopyParams
from cxx_util import load_src, run_scalars

PRELUDE = """
struct Shape { uint32_t rows; uint32_t cols = 8; uint16_t pad[2]; };
uint32_t Area(Shape s) { return s.rows * s.cols; }
DataCopyParams Params() { return DataCopyParams{2, 3, 4, 5}; }
"""


def test_brace_init_and_defaults():
    out = run_scalars("""
    Shape a{3};
    Shape b{3, 4};
    Shape c = {5, 6, {1, 2}};
    out.SetValue(0, Area(a));
    out.SetValue(1, Area(b));
    out.SetValue(2, c.pad[1]);
""", 3, prelude=PRELUDE, name="structs")
    assert out.tolist() == [24, 12, 2]


def test_header_struct_brace_init_is_the_python_dataclass():
    mod = load_src(PRELUDE, name="structs2")
    p = mod.Params()
    assert isinstance(p, DataCopyParams)
    assert (p.blockCount, p.blockLen, p.srcStride, p.dstStride) == (2, 3, 4, 5)


def test_struct_layout_is_the_c_layout():
    mod = load_src(PRELUDE + "struct Mixed { uint8_t a; uint32_t b; float c; uint16_t d; };", name="layout")
    Mixed = mod.structs.Mixed
    assert Mixed._size == 16
    assert [off for _, off, _, _ in Mixed._layout] == [0, 4, 8, 12]
    raw = Mixed(1, 2, 3.5, 4).to_bytes()
    ref = np.zeros(16, np.uint8)
    ref[0] = 1
    ref[4:8] = np.array([2], np.uint32).view(np.uint8)
    ref[8:12] = np.array([3.5], np.float32).view(np.uint8)
    ref[12:14] = np.array([4], np.uint16).view(np.uint8)
    np.testing.assert_array_equal(raw, ref)
    back = Mixed.from_bytes(raw)
    assert (back.a, back.b, float(back.c), back.d) == (1, 2, 3.5, 4)


def test_a_header_struct_template_default_constructs_without_its_type_argument():
    # DataCopyPadExtParams<T> p;  T only types the padding value: the dataclass gets its C++ defaults, and T is
    # never passed as the first field (isPad), which the sanitizer refuses as a non-bool
    from ascend_sim import DataCopyPadExtParams
    mod = load_src("""
template <typename T> DataCopyPadExtParams<T> Pad() { DataCopyPadExtParams<T> p; return p; }
DataCopyPadExtParams<half> PadHalf() { return Pad<half>(); }
DataCopyPadExtParams<float> PadBrace() { return DataCopyPadExtParams<float>{true, 1, 2, 0}; }
""", name="padparams")
    p = mod.PadHalf()
    assert isinstance(p, DataCopyPadExtParams) and p.isPad is False and (p.leftPadding, p.rightPadding) == (0, 0)
    q = mod.PadBrace()
    assert q.isPad is True and (q.leftPadding, q.rightPadding) == (1, 2)


def test_a_host_function_returns_a_local_struct_by_value():
    """``return t;`` of a local struct is C++17's implicit move (a move-constructor call in clang's tree): the caller
    gets a copy of the fields, as a host tiling function filling its tiling struct returns it."""
    mod = load_src("""
struct Tiling { uint32_t M; uint32_t singleM; };
Tiling MakeTiling(uint32_t M, uint32_t blocks)
{
    Tiling t{M, 0};
    t.singleM = (M + blocks - 1) / blocks;
    return t;
}
""", name="return_local")
    t = mod.MakeTiling(800, 24)
    assert isinstance(t, mod.structs.Tiling) and (t.M, t.singleM) == (800, 34)
