"""``<algorithm>``, ``std::ostream_iterator`` and local lambdas in host code (host/std_algorithm.py, lower_stmt.py).

What add.asc's host check does: a lambda that prints a vector's first elements with ``std::copy`` into an
``std::ostream_iterator<float>(std::cout, " ")`` (``std::min`` of the size and a limit), then ``std::equal`` of two
vectors' ``begin()``/``end()``. Each result here against C++'s: the range ends, the first of two equal values,
``==`` on floats (NaN is unequal), the digits ``operator<<`` prints."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import ArgumentError, OutOfBoundsError
from ascend_sim.ascendc import CompileError
from cxx_util import load_src

SRC = """
#include <cstdint>
#include <vector>
#include <algorithm>
#include <iterator>
#include <iostream>

struct Pair { int key; int tag; };
bool lessKey(const Pair& a, const Pair& b);

// out[0..6]: std::min / std::max of numbers and of a size
void minmax(int64_t* out)
{
    out[0] = std::min(3, -2); out[1] = std::max(3, -2);
    std::vector<float> v(5);
    size_t limit = 3;
    out[2] = std::min(v.size(), limit); out[3] = std::max(v.size(), limit);
    out[4] = std::min(-7, -7);
    out[5] = std::min(2.5f, 1.5f) * 2; out[6] = std::max(2.5f, 1.5f) * 2;
}

// copy [from, from + n) of a into b at offset at; out: b, then how far the returned iterator is past b.begin()
void copy_into(const float* a, int from, int n, int at, float* out)
{
    std::vector<float> src(a, a + 6);
    std::vector<float> dst(6);
    float* end = std::copy(src.begin() + from, src.begin() + from + n, dst.begin() + at);
    for (int i = 0; i < 6; i++) {
        out[i] = dst[i];
    }
    out[6] = end == dst.begin() + (at + n);
    out[7] = end == dst.begin() + at;           // only for an empty range
}

// std::min / std::max of equal values return the first: +0.0 and -0.0 are equal, 1 / x tells them apart
void signed_zeros(float* out)
{
    out[0] = 1.0f / std::min(0.0f, -0.0f); out[1] = 1.0f / std::min(-0.0f, 0.0f);
    out[2] = 1.0f / std::max(0.0f, -0.0f); out[3] = 1.0f / std::max(-0.0f, 0.0f);
}

bool same(const float* a, const float* b, int n)
{
    std::vector<float> x(a, a + n);
    std::vector<float> y(b, b + n);
    return std::equal(x.begin(), x.end(), y.begin());
}

bool prefix_of_longer(int n)
{
    std::vector<int32_t> shorter(n, 7);
    std::vector<int32_t> longer(4, 7);
    return std::equal(shorter.begin(), shorter.end(), longer.begin());
}

void show_all(const float* a, int n)
{
    auto show = [](std::vector<float>& v, size_t limit, const char* label) {
        std::cout << label << ": ";
        std::copy(v.begin(), v.begin() + std::min(v.size(), limit), std::ostream_iterator<float>(std::cout, " "));
        std::cout << std::endl;
    };
    std::vector<float> v(a, a + n);
    show(v, 3, "first");
    std::vector<int32_t> w = {1, -2, 3};
    std::copy(w.begin(), w.end(), std::ostream_iterator<int32_t>(std::cout, ","));
    std::copy(w.begin(), w.end(), std::ostream_iterator<int32_t>(std::cout));
    std::cout << std::endl;
}

// a lambda with parameters by value, by reference and a return value, called twice
void lambdas(int32_t* out)
{
    auto add_to = [](int32_t a, int32_t& acc, std::vector<int32_t>& log) {
        acc = acc + a;
        log[0] = log[0] + 1;
        return acc * 10;
    };
    int32_t total = 1;
    std::vector<int32_t> log(1);
    out[0] = add_to(4, total, log);
    out[1] = add_to(out[0], total, log);
    out[2] = total; out[3] = log[0];
}
"""


@pytest.fixture(scope="module")
def mod():
    return load_src(SRC, name="std_algorithm")


def test_min_and_max_return_the_first_of_equal_values_and_keep_the_type(mod):
    out = np.zeros(7, np.int64)
    mod.minmax(out)
    np.testing.assert_array_equal(out, [-2, 3, 3, 5, -7, 3, 5])


def test_min_and_max_of_equal_values_return_the_first(mod):
    out = np.zeros(4, np.float32)
    with np.errstate(divide="ignore"):          # 1 / +-0.0 is +-inf, as in C++
        mod.signed_zeros(out)
    np.testing.assert_array_equal(out, [np.inf, -np.inf, np.inf, -np.inf])


@pytest.mark.parametrize("frm, n, at", [(0, 6, 0), (1, 3, 2), (2, 0, 5), (5, 1, 0)])
def test_copy_writes_exactly_the_range_and_returns_its_end(mod, frm, n, at):
    a = np.arange(1, 7, dtype=np.float32) * 1.5
    out = np.full(8, np.nan, np.float32)
    mod.copy_into(a, frm, n, at, out)
    expected = np.zeros(6, np.float32)
    expected[at:at + n] = a[frm:frm + n]
    np.testing.assert_array_equal(out[:6], expected)
    assert (out[6], out[7]) == (1, n == 0)


def test_copy_past_the_destination_names_the_buffer(mod):
    with pytest.raises(OutOfBoundsError, match="std::copy's output: 3 elements from byte 16 run to byte 28 of a "
                                               "24-byte buffer"):
        mod.copy_into(np.zeros(6, np.float32), 0, 3, 4, np.zeros(8, np.float32))


def test_equal_compares_every_element_with_eq(mod):
    a = np.array([1, 2, 3, 4], np.float32)
    assert mod.same(a, a.copy(), 4)
    assert mod.same(a, np.array([1, 2, 3, 5], np.float32), 3)           # only [first1, last1) is compared
    assert not mod.same(a, np.array([1, 2, 3, 5], np.float32), 4)       # the last element differs
    assert not mod.same(np.array([np.nan], np.float32), np.array([np.nan], np.float32), 1)  # NaN != NaN
    assert mod.same(np.array([0.0], np.float32), np.array([-0.0], np.float32), 1)           # 0.0 == -0.0
    assert mod.prefix_of_longer(3)
    with pytest.raises(OutOfBoundsError, match="std::equal's second range: 5 elements"):
        mod.prefix_of_longer(5)


def test_ostream_iterator_prints_as_cxx(mod, capfd):
    mod.show_all(np.array([0.1, 2.0, 1e7, 4.0], np.float32), 4)
    assert capfd.readouterr().out == "first: 0.1 2 1e+07 \n1,-2,3,1-23\n"


def test_a_local_lambda_is_a_function_of_its_parameters(mod):
    out = np.zeros(4, np.int32)
    mod.lambdas(out)
    np.testing.assert_array_equal(out, [50, 550, 55, 2])      # acc 1 -> 5 -> 55


@pytest.mark.parametrize("body, says", [
    ("int k = 2; auto f = [k](int a) { return a * k; }; int r = f(1);", "a lambda that captures variables"),
    ("int k = 2; auto f = [&](int a) { return a * k; }; int r = f(1);", "a lambda that captures variables"),
    ("auto f = [](auto a) { return a; }; int r = f(1);", "a generic lambda (auto parameters)"),
    ("int r = [](int a) { return a; }(3);", "a lambda used other than as a local's initialiser"),
    ("std::vector<float*> v(2); std::copy(v.begin(), v.end(), v.begin());", "std::vector::begin of a vector of "
                                                                            "pointers or structs"),
    ("std::vector<float> v(2); auto n = std::distance(v.begin(), v.end());",
     "std::distance is declared in <iterator> but the simulator does not implement it yet"),
])
def test_what_is_not_modelled_is_unsupported_at_its_line(body, says):
    with pytest.raises(CompileError) as e:
        load_src("#include <vector>\n#include <algorithm>\n#include <iterator>\nvoid f()\n{\n    " + body + "\n}\n",
                 name="unsupported")
    text = str(e.value)
    assert text.startswith("<ascendc:unsupported>:8:") and "unsupported: " + says in text, text   # the body's line


def test_an_algorithm_the_header_does_not_declare_is_clangs_error():
    with pytest.raises(CompileError, match="no member named 'sort' in namespace 'std'"):
        load_src("#include <vector>\n#include <algorithm>\nvoid f()\n{\n    std::vector<float> v(2);\n"
                 "    std::sort(v.begin(), v.end());\n}\n", name="sort")
