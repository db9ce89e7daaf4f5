"""``<vector>`` of pointers and user structs in host code (host/std_vector.py ``object_vector``).

What the official examples' host code does with them (bank_conflict_ub.asc's ``std::vector<ArgInfo>`` of file names
and sizes, its ``std::vector<uint8_t*>`` filled by ``aclrtMallocHost((void**)(&v[i]), n)``): value-initialised
elements (null pointers, default structs), a braced list of braced structs, ``operator[]`` a reference to the
element, a copy that copies each struct, and a struct that holds a ``std::string`` (host only)."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import ArgumentError, OutOfBoundsError
from ascend_sim.ascendc import CompileError
from cxx_util import load_src

SRC = """
#include <cstdint>
#include <string>
#include <vector>
#include "acl/acl.h"

struct Info {
    std::string name;
    size_t length = 3;
};

void set_length(size_t& n) { n = 40; }
void scribble(std::vector<Info> byValue, std::vector<Info>& byRef)
{
    byValue[0].length = 111;
    byRef[0].length = 222;
}

// out[0..9]: what the vectors hold after each step
void of_structs(int64_t* out)
{
    std::vector<Info> v = {{"x.bin", 16}, {"y.bin", 32}};
    std::vector<Info> d(2);                     // value-initialised: default member initialisers
    out[0] = v.size(); out[1] = v[0].length; out[2] = v[1].length; out[3] = d[1].length;
    std::vector<Info> c = v;                    // a copy: each struct copied
    c[0].length = 99;
    v[1].length = 64;                           // operator[] is a reference to the element
    out[4] = v[0].length; out[5] = c[0].length; out[6] = v[1].length;
    set_length(v[0].length);                    // a size_t& to an element's field
    scribble(v, v);
    out[7] = v[0].length;
    Info first = v[0];                          // a copy of the element
    first.length = 5;
    d[0].length = 8;                            // each value-initialised element is its own struct
    out[8] = v[0].length; out[9] = d.empty() + d[1].length;
}

std::string name_of(int i)
{
    std::vector<Info> v = {{"x.bin", 16}, {"y.bin", 32}};
    return v[i].name;
}

// out[0..3]: host buffers through a vector of pointers
void pointers(int64_t* out)
{
    std::vector<uint8_t*> p(2);
    out[0] = p[1] == nullptr;
    for (uint32_t i = 0; i < p.size(); i++) {
        aclrtMallocHost((void**)(&p[i]), 8);
        p[i][0] = 10 + i;
    }
    std::vector<uint8_t*> q = p;                // pointers are copied, not what they point to
    q[1][0] = 77;
    out[1] = p[0][0]; out[2] = p[1][0]; out[3] = q.size();
    aclrtFreeHost(p[0]);
    aclrtFreeHost(p[1]);
}

int read_at(int i)
{
    std::vector<Info> v(2);
    return v[i].length;
}

Info one() { Info a; a.length = 7; return a; }
"""


def test_vectors_of_structs_copy_alias_and_construct_as_in_cxx():
    mod = load_src(SRC, name="std_vector_objects")
    out = np.full(10, -1, np.int64)
    mod.of_structs(out)
    #                    size v0 v1 d1 v0 c0 v1 v0 v0 empty+d1
    np.testing.assert_array_equal(out, [2, 16, 32, 3, 16, 99, 64, 222, 222, 3])
    assert (mod.name_of(0), mod.name_of(1)) == ("x.bin", "y.bin")


def test_a_vector_of_pointers_holds_null_then_host_buffers():
    mod = load_src(SRC, name="std_vector_objects")
    out = np.full(4, -1, np.int64)
    mod.pointers(out)
    np.testing.assert_array_equal(out, [1, 10, 77, 2])


def test_an_index_outside_a_vector_of_structs_names_its_size():
    mod = load_src(SRC, name="std_vector_objects")
    assert mod.read_at(1) == 3
    with pytest.raises(OutOfBoundsError, match=r"std::vector index 2 is outside the vector's 2 elements"):
        mod.read_at(2)


def test_a_struct_holding_a_string_has_no_c_bytes():
    mod = load_src(SRC, name="std_vector_objects")
    with pytest.raises(ArgumentError, match=r"Info.to_bytes: its std::string field name has no bytes"):
        mod.one().to_bytes()


@pytest.mark.parametrize("body, says", [
    ("std::vector<std::vector<float>> v(4);", "std::vector<std::vector<float>>: the simulator's <vector> holds "
                                              "numbers, pointers and user structs"),
    ("S a[2]; std::vector<S> v(a, a + 2);", "std::vector(first, last) of pointers or structs"),
    ("std::vector<S> v(4); v.push_back(S{});", "std::vector::push_back: the simulator's <vector> models"),
])
def test_what_a_vector_of_objects_does_not_model_is_unsupported_at_its_line(body, says):
    with pytest.raises(CompileError) as e:
        load_src("#include <vector>\nstruct S { int x; };\nvoid f()\n{\n    " + body + "\n}\n", name="unsupported")
    text = str(e.value)
    assert text.startswith("<ascendc:unsupported>:7:") and "unsupported: " + says in text, text   # the body's line
