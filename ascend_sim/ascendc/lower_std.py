"""Stage 3d: the C++ standard library containers of host code (``<vector>``) -> ascend_sim.ascendc.host.

``std::vector<T>`` of a number type ``T`` lowers to ``std_vector.vector`` (host/std_vector.py): a constructor
(a braced list ``{1, 2, 3}`` included: ``<initializer_list>``) to one of its factories, chosen here from the constructor clang resolved (never from the values at run time); ``data()``,
``size()``, ``empty()`` and ``operator[]`` to its methods; any other member to an "unsupported" diagnostic naming
it. A vector has value semantics: copied when passed, returned or assigned by value, like a user struct.
"""
from __future__ import annotations

import ast

from ascend_sim.ascendc import bindings
from ascend_sim.ascendc.diagnostics import unsupported
from ascend_sim.ascendc.lower_expr import call
from ascend_sim.ascendc.lower_types import is_pointer, record_decl, strip_ref

VECTOR = "std::vector"
VECTOR_CLASS = "std_vector.vector"
OBJECT_VECTOR_CLASS = "std_vector.object_vector"
_NO_ARGS = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


class StdLowering:
    """Mixin of the Lowerer."""

    def is_std_vector(self, t) -> bool:
        d = record_decl(t)
        return d is not None and self.is_header(d) and self.qualified(d) == VECTOR

    def has_value_semantics(self, t) -> bool:
        """A record copied when passed, returned or assigned by value: a user struct or class, a std::vector."""
        return self.is_user_record(t) or self.is_std_vector(t)

    def vector_construct(self, decl, args: list, c) -> ast.expr:
        """``std::vector<T> v(...)``: the factory of the constructor clang chose (``c`` is its call, or the
        declaration of a default-constructed vector)."""
        elem = decl.get_template_argument_type(0)
        self.host_modules.add("std_vector")
        if self.is_number_type(elem):
            return self._construct(VECTOR_CLASS, self.dtype_of(elem, c), args, c)
        return self._construct(OBJECT_VECTOR_CLASS, self.element_factory(elem, c), args, c)

    def element_factory(self, elem, c) -> ast.expr:
        """A vector of pointers or user structs: the callable that value-initialises one element."""
        if is_pointer(elem):
            return ast.Lambda(_NO_ARGS, ast.Constant(None))                    # T* value-initialised: nullptr
        d = record_decl(elem)
        if d is not None and self.is_user_record(elem) and d.get_num_template_arguments() <= 0:
            return self.class_ref(d, c)
        raise unsupported(c, f"std::vector<{elem.spelling}>: the simulator's <vector> holds numbers, pointers and "
                             "user structs; keep other elements in a C array")

    def _construct(self, cls: str, elem: ast.expr, args: list, c) -> ast.expr:
        """The factory of ``cls`` for the constructor clang chose; ``elem`` is the dtype or element factory."""
        dtype = elem
        ctor = c.referenced if c.kind.name == "CALL_EXPR" else None
        params = list(ctor.get_arguments()) if ctor is not None and ctor.kind.name == "CONSTRUCTOR" else []
        first = record_decl(strip_ref(params[0].type)) if params else None
        if len(args) == 1 and first is not None and self.qualified(first) == "std::initializer_list":
            return call(f"{cls}.of", [dtype] + args)                             # {1, 2, 3}: a Python list
        if len(args) == 1 and first is not None:                                # the copy constructor
            return call(ast.Attribute(args[0], "copy", ast.Load()))
        if len(args) == 2 and params and is_pointer(params[0].type):
            if cls == OBJECT_VECTOR_CLASS:
                raise unsupported(c, "std::vector(first, last) of pointers or structs: the simulator builds a "
                                     "vector from a range of numbers only; construct it with a size and assign v[i]")
            return call(f"{cls}.from_range", [dtype] + args)
        if len(args) == 2:
            return call(f"{cls}.filled", [dtype] + args)
        return call(cls, [dtype] + args)

    def check_vector_member(self, decl, c) -> None:
        """A member of std::vector the simulator does not model: an unsupported diagnostic naming it."""
        elem = decl.semantic_parent.type.get_template_argument_type(0)
        if decl.spelling in ("data", "begin", "end") and elem.kind.name != "INVALID" and not self.is_number_type(elem):
            raise unsupported(c, f"std::vector::{decl.spelling} of a vector of pointers or structs: the simulator "
                                 "gives pointers into numbers only; index the elements with v[i]")
        if decl.spelling in bindings.STD_VECTOR_MEMBERS:
            return
        raise unsupported(c, f"std::vector::{decl.spelling}: the simulator's <vector> models the constructors "
                             "(size, size and value, two pointers, braced list, copy), data(), size(), empty(), operator[], "
                             "begin(), end() and "
                             "copy assignment only; size the vector when you construct it and write its elements "
                             "with v[i] or through v.data()")
