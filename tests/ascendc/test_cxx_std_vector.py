"""``<vector>`` in host code: ``std::vector<T>`` of a number type is a numpy array of T's dtype (host/std_vector.py).

Value semantics as in C++ (a copy when constructed from, assigned, passed or returned by value; a reference
aliases), ``data()`` a pointer to the elements themselves, ``operator[]`` checked; the members not modelled are
``unsupported`` diagnostics at their line."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import ArgumentError, OutOfBoundsError
from ascend_sim.ascendc import CompileError
from cxx_util import load_src

SRC = """
#include <vector>
#include <iterator>

std::vector<float> doubled(const std::vector<float>& v)
{
    std::vector<float> r(v.size());
    for (size_t i = 0; i < v.size(); i++) {
        r[i] = v[i] * 2.0f;
    }
    return r;
}

void scribble(std::vector<float> byValue, std::vector<float>& byRef)
{
    byValue[0] = -1.0f;
    byRef[0] = -2.0f;
}

// out[0..15]: what the vectors hold after each step
void vectors(const float* in, float* out)
{
    std::vector<float> a(in, in + 4);               // two pointers: a copy of in[0..3]
    std::vector<float> b = a;                       // a copy
    b[1] = 100.0f;
    std::vector<float> c(3, 2.5f);                  // size and value
    std::vector<float> d = doubled(a);              // returned by value
    float* p = a.data();                            // a pointer to a's elements
    p[2] = 50.0f;
    std::vector<float> e(2);                        // zeros
    scribble(a, e);                                 // a by value: unchanged; e by reference: changed
    std::vector<float> f;
    f = c;                                          // copy assignment
    f[0] = 9.0f;
    out[0] = a[0]; out[1] = a[1]; out[2] = a[2]; out[3] = b[1];
    out[4] = c[0]; out[5] = c[2]; out[6] = d[3]; out[7] = e[0];
    out[8] = e[1]; out[9] = f[0]; out[10] = c[0];
    out[11] = a.size(); out[12] = f.empty(); out[13] = std::vector<float>().empty();
    out[14] = b[2]; out[15] = d.size();
}

// out[0..4]: a braced list is the vector's elements (never a count and a value)
void braced(int* out)
{
    std::vector<int> two{3, 4};
    std::vector<float> three = {0.5f, 1, 2};
    out[0] = two.size(); out[1] = two[0]; out[2] = two[1]; out[3] = three.size(); out[4] = three[0] * 4;
}

float read_at(const float* in, int i)
{
    std::vector<float> v(in, in + 4);
    return v[i];
}

float from_two_buffers(const float* x, const float* y)
{
    std::vector<float> v(x, y);
    return v.size();
}
"""


def test_vectors_copy_alias_and_construct_as_in_cxx():
    mod = load_src(SRC, name="std_vector")
    x = np.array([1, 2, 3, 4], np.float32)
    out = np.full(16, np.nan, np.float32)
    mod.vectors(x, out)
    #                        a[0] a[1] a[2] b[1] c[0] c[2] d[3] e[0] e[1] f[0] c[0] size empty empty() b[2] d.size
    expected = np.array([1, 2, 50, 100, 2.5, 2.5, 8, -2, 0, 9, 2.5, 4, 0, 1, 3, 4], np.float32)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(x, [1, 2, 3, 4])            # std::vector(first, last) copied the caller's array


def test_a_braced_list_gives_the_elements():
    mod = load_src(SRC, name="std_vector")
    out = np.zeros(5, np.int32)
    mod.braced(out)
    np.testing.assert_array_equal(out, [2, 3, 4, 3, 2])


def test_an_index_outside_the_vector_names_its_size():
    mod = load_src(SRC, name="std_vector")
    x = np.arange(4, dtype=np.float32)
    assert mod.read_at(x, 3) == 3
    for bad, index in ((4, 4), (-1, 2**64 - 1)):        # operator[] takes a size_t: -1 is 2^64 - 1
        with pytest.raises(OutOfBoundsError, match=rf"std::vector index {index} is outside the vector's 4 elements"):
            mod.read_at(x, bad)


def test_two_pointers_into_different_buffers_are_no_range():
    mod = load_src(SRC, name="std_vector")
    with pytest.raises(ArgumentError, match="first and last point into two different host buffers"):
        mod.from_two_buffers(np.zeros(4, np.float32), np.zeros(4, np.float32))


@pytest.mark.parametrize("body, says", [
    ("std::vector<float> v(4); v.push_back(1.0f);", "std::vector::push_back: the simulator's <vector> models"),
    ("std::vector<float> v(4); float& b = v.front();", "std::vector::front"),
    ("std::vector<std::vector<float>> v(4);", "std::vector<std::vector<float>>: the simulator's <vector> holds "
                                              "numbers, pointers and user structs"),
    ("std::vector<float> v(4); auto n = std::distance(v.data(), v.data() + 4);",
     "std::distance is declared in <iterator> but the simulator does not implement it yet"),
])
def test_what_the_vector_does_not_model_is_unsupported_at_its_line(body, says):
    with pytest.raises(CompileError) as e:
        load_src("#include <vector>\n#include <iterator>\nvoid f()\n{\n    " + body + "\n}\n", name="unsupported")
    text = str(e.value)
    assert text.startswith("<ascendc:unsupported>:7:") and "unsupported: " + says in text, text   # the body's line
