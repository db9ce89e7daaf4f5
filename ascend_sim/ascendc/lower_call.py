"""Stage 3c: calls, constructions, template arguments and dtypes.

A call to a function of our header becomes the public API function of the same name; its template arguments are
dropped, or prepended for the names in bindings.PREPEND_TEMPLATE_ARGS. A class template used as a type
(``TQue<TPosition::VECIN, 2>``) constructs the Python class with its template arguments first. A user template is a
``cxx.template`` factory: ``KernelAdd<128>`` is ``KernelAdd(128)``. Template arguments come from clang's
specialisation when it has one, else from the written arguments (tokens between ``<`` and ``>``, with clang's
cursors for the expressions and type names inside).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import ascend_sim
from ascend_sim.ascendc import bindings
from ascend_sim.ascendc.clang_util import specialized_template, template_params
from ascend_sim.ascendc.diagnostics import at_cursor, unsupported
from ascend_sim.ascendc.lower_expr import call, children, const, is_default_arg, member_base, name, strip
from ascend_sim.ascendc.lower_types import (FLOATS, INT_DTYPES, INTS, KEYWORD_TYPES, canonical_spelling, int_info,
                                           is_float, is_record, is_reference, record_decl, strip_ref, tkind)

HEADER_DEFAULT_NONE = {"LocalTensor"}       # a default-constructed LocalTensor is assigned before use


@dataclass(frozen=True)
class ExternKernel:
    """A kernel the source declares (``extern "C" __global__ __aicore__ void k(GM_ADDR ...);``) and launches with
    ``<<<>>>`` but does not define: module.py links it to a kernel of that name defined elsewhere (an earlier
    notebook cell, the grader's namespace), as the linker resolves a declaration against another object file."""

    name: str                       # the C++ name, looked up in the externs namespace
    pyname: str                     # the generated module's global that the launches call
    params: int                     # the parameters the declaration lists
    file: str                       # where the declaration is (display name), for the link error
    line: int
    col: int


def _dependent_trait(t) -> str | None:
    """What to say when ``t`` names ``AscendC::Conditional<cond, A, B>::type`` with a condition the template's own
    parameters decide (a constant condition resolves before lowering and never gets here)."""
    decl = t.get_declaration()
    under = decl.underlying_typedef_type.spelling if decl is not None and decl.kind.name in (
        "TYPE_ALIAS_DECL", "TYPEDEF_DECL") else t.spelling
    if "Conditional<" not in under:
        return None
    return (f"the type {t.spelling!r} = {under}: AscendC::Conditional whose condition depends on a template "
            "parameter (the simulator picks the type when the condition is a constant, e.g. a constexpr bool "
            "outside the template)")


class CallLowering:
    """Mixin of the Lowerer."""

    decl_context = None         # the declaration whose initialiser is being lowered (for its written tokens)

    # ------------------------------------------------------------------ dtypes
    def dtype_of(self, t, c) -> ast.expr:
        """The Python dtype expression of C++ scalar type ``t`` (``float32``, ``half``, a parameter ``T``)."""
        t = strip_ref(t)
        spelling = canonical_spelling(t)
        if spelling in FLOATS:
            v = FLOATS[spelling]
            return name(v) if v.startswith("cxx.") else self.api(v)
        if spelling in INTS:
            v = INT_DTYPES[INTS[spelling]]
            return name(v) if v.startswith("cxx.") else self.api(v)
        if "type-parameter" in spelling or tkind(t) == "UNEXPOSED":
            decl = t.get_declaration()
            if decl is not None and decl.kind.name == "TEMPLATE_TYPE_PARAMETER":
                return name(self.py_ident(decl.spelling))
            if spelling.startswith("type-parameter-"):          # canonical: depth and index
                depth, index = (int(v) for v in spelling[len("type-parameter-"):].split("-"))
                if depth < len(self.template_stack) and index < len(self.template_stack[depth]):
                    return name(self.template_stack[depth][index])
            if t.spelling and all(ch.isalnum() or ch == "_" for ch in t.spelling):
                return name(self.py_ident(t.spelling))
        decl = record_decl(t)
        if decl is not None:
            if self.is_header(decl) and hasattr(ascend_sim, decl.spelling):
                if decl.get_num_template_arguments() > 0:      # MatmulType<GM, ND, half>: an instance
                    return self.construct(t, [], c)
                return self.api(decl.spelling)
            if not self.is_header(decl):
                return self.class_ref(decl, c)
        raise unsupported(c, _dependent_trait(t) or f"the type {t.spelling!r} as a dtype")

    # ------------------------------------------------------------------ classes
    def class_ref(self, decl, c) -> ast.expr:
        """The Python class of a user record (a template's instantiation included)."""
        if decl.kind.name in ("STRUCT_DECL", "CLASS_DECL") and decl.get_num_template_arguments() > 0:
            pattern = specialized_template(decl)
            args = self.semantic_template_args(decl, pattern, c)
            return call(name(self.declare_global(pattern)), args)
        if decl.kind.name == "CLASS_TEMPLATE":          # inside its own definition: the injected class name
            if self.class_stack and self.key(self.class_stack[-1]) == self.key(decl):
                return name(self.declare_global(decl))
        return name(self.declare_global(decl))

    def construct(self, t, args: list, c, brace: bool = False) -> ast.expr:
        """A value of record type ``t`` built from ``args`` (a declaration, a temporary, a brace list)."""
        t = strip_ref(t)
        decl = record_decl(t)
        if decl is None:
            if "type-parameter" in canonical_spelling(t) or t.spelling == "<dependent type>":
                return self.dependent_construct(t, args, c)
            raise unsupported(c, f"constructing a {t.spelling}")
        if self.is_header(decl) and self.qualified(decl) == "std::string":    # a Python str
            return args[0] if args else ast.Constant("")
        if self.is_std_vector(t):
            return self.vector_construct(decl, args, c)
        host = self.host_module_of(decl)
        if host and self.host_has(host, decl.spelling):     # std::ostream_iterator<float>(std::cout, " ")
            return call(name(f"{host}.{decl.spelling}"), self.type_template_args(t, decl, c) + args)
        if self.is_header(decl):
            cname = decl.spelling
            if cname in HEADER_DEFAULT_NONE and not args:
                return ast.Constant(None)
            if not hasattr(ascend_sim, cname):
                raise unsupported(c, f"{self.qualified(decl)} is declared in our headers but the simulator does not "
                                     "implement it yet")
            targs = self.type_template_args(t, decl, c)
            if _has_fields(specialized_template(decl) if decl.get_num_template_arguments() > 0 else decl):
                targs = []                       # DataCopyPadExtParams<T>: T only types a field (not a value)
            if cname == "LocalTensor" and args:       # LocalTensor<T>(pos, addr, tileSize): a static tensor
                return call(ast.Subscript(self.api(cname), targs[0], ast.Load()), args)
            targs = targs[:max(0, _positional_arity(cname) - len(args))] if _positional_arity(cname) is not None else targs
            if brace:                                # a parameter struct: keyword arguments by field
                pattern = specialized_template(decl) if decl.get_num_template_arguments() > 0 else None
                fields = [f.spelling for f in children(pattern or decl) if f.kind.name == "FIELD_DECL"]
                if len(args) > len(fields):
                    raise unsupported(c, f"{len(args)} values for {cname}, which has {len(fields)} fields")
                return call(self.api(cname), [], [ast.keyword(f, a) for f, a in zip(fields, args)])
            return call(self.api(cname), targs + args)
        cls = self.class_ref(decl, c) if decl.get_num_template_arguments() <= 0 else None
        if cls is None:
            pattern = specialized_template(decl)
            targs = self.type_template_args(t, decl, c)
            cls = call(name(self.declare_global(pattern)), targs)
        return call(cls, args)

    def template_construct(self, d, tref, args: list) -> ast.expr:
        """A member or variable of a dependent class template type (``GlobalTensor<T> xGm;`` in a template)."""
        tmpl = tref.referenced
        targs = self.written_template_args(d, tmpl)
        if self.is_header(tmpl):
            if tmpl.spelling in HEADER_DEFAULT_NONE and not args:
                return ast.Constant(None)
            if not hasattr(ascend_sim, tmpl.spelling):
                raise unsupported(d, f"AscendC::{tmpl.spelling} is declared in kernel_operator.h but the simulator "
                                     "does not implement it yet")
            arity = _positional_arity(tmpl.spelling)
            targs = targs[:max(0, arity - len(args))] if arity is not None else targs
            if _has_fields(tmpl):
                targs = []                       # DataCopyPadExtParams<T> p; in a template: T types a field only
            return call(self.api(tmpl.spelling), targs + args)
        return call(call(name(self.declare_global(tmpl)), targs), args)

    def dependent_construct(self, t, args, c):
        decl = t.get_declaration()
        if decl is not None and decl.kind.name == "TEMPLATE_TYPE_PARAMETER":
            return call("cxx.convert", [name(self.py_ident(decl.spelling))] + args) if args else \
                call("cxx.convert", [name(self.py_ident(decl.spelling)), const(0)])
        raise unsupported(c, f"constructing the dependent type {t.spelling}")

    # ------------------------------------------------------------------ template arguments
    def type_template_args(self, t, decl, c) -> list:
        """The template arguments of a class template specialisation type ``t`` as Python expressions (of a
        header class, only those written: the Python class has its own defaults)."""
        n = decl.get_num_template_arguments()
        if n > 0:
            words = written_words(c, decl.spelling)
            if words is None and self.decl_context is not None:      # `T x;`: the arguments are in the declaration
                words = written_words(self.decl_context, decl.spelling)
            args = self.semantic_template_args(decl, specialized_template(decl), c, words)
            return args[:len(words)] if self.is_header(decl) and words is not None else args
        return self.written_template_args(c, None)

    def semantic_template_args(self, spec, pattern, c, words=None) -> list:
        """Arguments clang deduced or substituted for specialisation ``spec`` (a class or function)."""
        params = template_params(pattern) if pattern is not None else []
        out = []
        for i in range(spec.get_num_template_arguments()):
            kind = spec.get_template_argument_kind(i).name
            if kind == "DECLARATION":       # a constexpr object (Matmul's CFG_MDL): the API constant of its name
                word = words[i].split("::")[-1] if words is not None and i < len(words) else ""
                if word and hasattr(ascend_sim, word):
                    out.append(self.api(word))
                    continue
                if words is not None and i >= len(words):
                    break                   # not written: the Python class's default
                raise unsupported(c, f"the template argument {word or i} (a declaration the simulator does not know)")
            if kind == "TYPE":
                out.append(self.dtype_of(spec.get_template_argument_type(i), c))
            elif kind == "INTEGRAL":
                value = spec.get_template_argument_value(i)
                ptype = params[i].type if i < len(params) else None
                out.append(self.integral_arg(value, ptype, spec, i, c))
            else:
                raise unsupported(c, f"a template argument of kind {kind.lower()}")
        return out

    def integral_arg(self, value: int, ptype, spec, i: int, c) -> ast.expr:
        """A non-type template argument: an enum constant by name (TPosition.VECIN), else the number."""
        if ptype is not None and tkind(ptype.get_canonical()) == "ENUM":
            enum = ptype.get_canonical().get_declaration()
            if enum.kind.name == "ENUM_DECL":
                if spec.get_template_argument_unsigned_value(i) != value and value < 0:
                    value = spec.get_template_argument_unsigned_value(i)
                for e in children(enum):
                    if e.kind.name == "ENUM_CONSTANT_DECL" and e.enum_value == value:
                        return self.enum_constant(e)
        if ptype is not None and int_info(ptype) is not None and not int_info(ptype)[1]:
            value = spec.get_template_argument_unsigned_value(i)
        if ptype is not None and int_info(ptype) == (1, False):
            return ast.Constant(bool(value))
        return const(value)

    def written_template_args(self, ref_expr, pattern) -> list:
        """Template arguments as written after a name (``Alloc<float, 256>``): tokens give the list, clang's
        cursors inside each argument give its meaning."""
        toks = list(ref_expr.get_tokens())
        start = next((i for i, t in enumerate(toks) if t.spelling == "<"), None)
        if start is None:
            return []
        args, depth, cur = [], 0, []
        for t in toks[start + 1:]:
            s = t.spelling
            if s in ("<", "(", "["):
                depth += 1
            elif s in (")", "]"):
                depth -= 1
            elif s == ">" and depth == 0 or s == ">>" and depth == 0:
                break
            elif s == ">":
                depth -= 1
            if s == "," and depth == 0:
                args.append(cur)
                cur = []
                continue
            cur.append(t)
        if cur:
            args.append(cur)
        inner = [x for x in ref_expr.walk_preorder() if x != ref_expr]
        out = []
        for arg in args:
            lo, hi = arg[0].extent.start.offset, arg[-1].extent.end.offset
            within = [x for x in inner if x.extent.start.file is not None and
                      lo <= x.extent.start.offset and x.extent.end.offset <= hi
                      and x.kind.name in ("TYPE_REF",) or x.kind.is_expression() and
                      lo <= x.extent.start.offset and x.extent.end.offset <= hi]
            words = " ".join(t.spelling for t in arg)
            top = _outermost(within)
            if top is not None and top.kind.is_expression():
                out.append(self.rvalue(top))
            elif top is not None and top.kind.name == "TYPE_REF":
                out.append(self.dtype_of(top.type, top))
            elif words in INTS or words in KEYWORD_TYPES:
                v = KEYWORD_TYPES.get(words) or INT_DTYPES[INTS[words]]
                out.append(name(v) if v.startswith("cxx.") else self.api(v))
            elif words in self.defines and self.defines[words] in FLOATS:
                v = FLOATS[self.defines[words]]
                out.append(name(v) if v.startswith("cxx.") else self.api(v))
            elif words in self.defines and self.defines[words] in KEYWORD_TYPES:
                v = KEYWORD_TYPES[self.defines[words]]
                out.append(name(v) if v.startswith("cxx.") else self.api(v))
            else:
                raise unsupported(ref_expr, f"the template argument {words!r}")
        return out

    def is_template_arg_child(self, x, decl) -> bool:
        """An expression child of a declaration that is one of its type's template arguments."""
        return x.extent.end.offset <= decl.location.offset and x.location.file is not None

    # ------------------------------------------------------------------ calls
    def x_CALL_EXPR(self, c):
        ref = c.referenced
        ch = children(c)
        if ref is not None and ref.kind.name == "CONSTRUCTOR" and is_float(c.type):      # half(v)
            vals = [a for a in ch if a.kind.is_expression() and not is_default_arg(a)]
            if len(vals) == 1:
                return self.convert(self.expr(vals[0]), self.type_of(vals[0]), c.type, c)
            return self.convert(const(0.0), c.type, c.type, c) if not vals else call("cxx.f16", [const(0.0)])
        if c.spelling.startswith("operator ") and ref is not None and ref.kind.name == "CONVERSION_FUNCTION":
            base = [x for x in children(children(c)[0]) if x.kind.is_expression()] if ch else []
            if base:                                     # half -> float: the class's conversion operator
                return self.convert(self.expr(base[0]), self.type_of(base[0]), c.type, c)
        if ref is not None and ref.kind.name == "CONSTRUCTOR":
            args = [self.rvalue(a) for a in ch if a.kind.is_expression() and not is_default_arg(a)]
            if len(args) == 1 and is_record(ch[0].type) and record_decl(ch[0].type) is not None and \
                    self.key(record_decl(ch[0].type)) == self.key(ref.semantic_parent) and \
                    (ref.is_copy_constructor() or ref.is_move_constructor()):      # `return t;` moves a local
                if ref.is_move_constructor() and self.is_std_vector(ch[0].type):
                    return args[0]                        # a moved vector keeps its elements (data() stays valid)
                return call("cxx.copy", args)
            return self.construct(c.type, args, c)
        if c.spelling.startswith("operator"):
            return self.operator_call(c, ch)
        if not ch:
            raise unsupported(c, "a call libclang does not expose")
        callee, args = ch[0], [a for a in ch[1:] if not is_default_arg(a)]
        target = strip(callee)
        if target.kind.name == "BINARY_OPERATOR":
            return self.launch_call(c, target, args)
        decl = ref if ref is not None and ref.kind.name != "OVERLOADED_DECL_REF" else self.callee_decl(target)
        if decl is None and target.kind.name == "MEMBER_REF_EXPR":
            return self.dependent_method_call(c, target, args)
        if decl is None:
            raise unsupported(c, "a call whose function libclang cannot resolve (a dependent call in a template "
                                 "with no visible declaration)")
        if decl.spelling in bindings.TILING_READERS:
            return self.tiling_call(c, decl, args)
        if decl.spelling == "__ascendc_kernel_task_type":
            return ast.Constant(None)
        if target.kind.name == "MEMBER_REF_EXPR":
            return self.method_call(c, target, decl, args)
        py_args = self.call_args(decl, args)
        if self.is_header(decl):
            fn = self.header_ref(decl, c)
            if decl.spelling in bindings.PREPEND_TEMPLATE_ARGS:
                py_args = self.header_template_args(decl, target) + py_args
            elif decl.spelling in bindings.TEMPLATE_ARGS:
                lead, keywords = self.mapped_template_args(decl, target)
                return call(fn, lead + py_args, keywords)
            return call(fn, py_args)
        if decl.kind.name == "CXX_METHOD":              # a static method named with Class::
            return call(self.ref_to(decl, c), py_args)
        fn = self.ref_to(decl, c)
        pattern = specialized_template(decl) if decl.kind.name == "FUNCTION_DECL" else None
        if pattern is not None and decl.get_num_template_arguments() > 0:
            fn = call(name(self.declare_global(pattern)), self.semantic_template_args(decl, pattern, c))
        elif decl.kind.name == "FUNCTION_TEMPLATE":
            fn = call(name(self.declare_global(decl)), self.written_template_args(target, decl))
        return call(fn, py_args)

    def callee_decl(self, target):
        """The declaration a callee names; for an unresolved (dependent) call, the first overload clang found."""
        if target.kind.name == "OVERLOADED_DECL_REF":
            return _first_overload(target)
        for x in target.get_children():
            if x.kind.name == "OVERLOADED_DECL_REF":
                return _first_overload(x)
        ref = target.referenced
        if ref is not None and ref.kind.name == "OVERLOADED_DECL_REF":
            return _first_overload(ref)
        return ref

    def call_args(self, decl, args) -> list:
        out = []
        params = list(decl.get_arguments() or []) if decl.kind.name != "FUNCTION_TEMPLATE" else \
            [p for p in children(decl) if p.kind.name == "PARM_DECL"]
        for i, a in enumerate(args):
            p = params[i] if i < len(params) else None
            if p is not None and self.scalar_out_param(p):
                out.append(self.out_argument(a))         # the callee writes it: a Box or a Ref
                continue
            v = self.rvalue(a)
            if p is not None and not self.is_header(decl) and not is_reference(p.type) and \
                    self.has_value_semantics(p.type) and strip(a).kind.name in ("DECL_REF_EXPR", "MEMBER_REF_EXPR"):
                v = call("cxx.copy", [v])
            out.append(v)
        return out

    def mapped_template_args(self, decl, target) -> tuple[list, list]:
        """The written template arguments of a call listed in bindings.TEMPLATE_ARGS, each prepended, passed by
        keyword or dropped as the table says (``Add<float, false>(...)`` -> ``Add(..., isSetMask=False)``)."""
        lead, keywords = [], []
        for role, arg in zip(bindings.TEMPLATE_ARGS[decl.spelling], self.written_template_args(target, None)):
            if role == "":
                lead.append(arg)
            elif role:
                keywords.append(ast.keyword(role, arg))
        return lead, keywords

    def out_argument(self, a) -> ast.expr:
        """The argument of a header function's ``T&`` parameter: the variable's Box, or a Ref to the lvalue."""
        target = strip(a)
        ref = target.referenced if target.kind.name == "DECL_REF_EXPR" else None
        if ref is not None and self.key(ref) in self.fn.boxed:
            return name(self.fn.locals[self.key(ref)])
        return self.address_of(a, a)

    def header_template_args(self, decl, target) -> list:
        """Template arguments of a call to a header function listed in PREPEND_TEMPLATE_ARGS."""
        if decl.kind.name == "FUNCTION_DECL" and decl.get_num_template_arguments() > 0:
            pattern = specialized_template(decl)
            written = self.written_count(target)
            return self.semantic_template_args(decl, pattern, target)[:written] if written is not None else \
                self.semantic_template_args(decl, pattern, target)
        return self.written_template_args(target, None)

    def written_count(self, target):
        """How many template arguments are written after the callee's name (None if it has no ``<``)."""
        toks = [t.spelling for t in target.get_tokens()]
        if "<" not in toks:
            return 0
        return None

    def method_call(self, c, target, decl, args) -> ast.expr:
        objs = member_base(target)
        base = self.expr(objs[0]) if objs else name("self")
        mname = self.member_name(decl) if decl.kind.name != "OVERLOADED_DECL_REF" else self.py_ident(decl.spelling)
        if objs and strip(objs[0]).kind.name == "CXX_THIS_EXPR" or not objs:
            base = name("self")
        if self.is_header(decl) and self.is_std_vector(decl.semantic_parent.type):
            self.check_vector_member(decl, c)
        py_args = self.call_args(decl, args)
        pattern = decl if decl.kind.name == "FUNCTION_TEMPLATE" else specialized_template(decl)
        if not self.is_header(decl) and pattern is not None and pattern.kind.name == "FUNCTION_TEMPLATE":
            py_args = self.member_template_args(c, target, pattern) + py_args
        if self.is_header(decl):
            if decl.spelling in bindings.PREPEND_TEMPLATE_ARGS:
                py_args = self.written_template_args(target, None) + py_args
                if not self.written_template_args(target, None) and decl.spelling in ("AllocTensor", "DeQue"):
                    ret = c.type
                    if ret.get_num_template_arguments() > 0:
                        py_args = [self.dtype_of(ret.get_template_argument_type(0), c)] + py_args
        return call(ast.Attribute(base, mname, ast.Load()), py_args)

    def dependent_method_call(self, c, target, args) -> ast.expr:
        """``obj.f(args)`` on an object of a dependent type (in a template): the name from the tokens."""
        objs = member_base(target)
        base = self.expr(objs[0]) if objs else name("self")
        toks = [t.spelling for t in target.get_tokens()]
        if "<" in toks:
            toks = toks[:toks.index("<")]
        mname = toks[-1] if toks else ""
        if not mname.isidentifier():
            raise unsupported(c, "a call whose function libclang cannot resolve")
        py_args = [self.rvalue(a) for a in args]
        if mname in bindings.PREPEND_TEMPLATE_ARGS:
            py_args = self.written_template_args(target, None) + py_args
        return call(ast.Attribute(base, self.py_ident(mname), ast.Load()), py_args)

    def member_template_args(self, c, target, pattern) -> list:
        """The template arguments of a call of a member function template: as written, then the defaults."""
        written = self.written_template_args(target, pattern)
        params = template_params(pattern)
        for p in params[len(written):]:
            default = [x for x in children(p) if x.kind.is_expression()]
            if not default:
                raise unsupported(c, f"a call of the member function template {pattern.spelling} with deduced "
                                     "template arguments; write them: obj.f<T>(...)")
            written.append(self.rvalue(default[-1]))
        return written

    def operator_call(self, c, ch) -> ast.expr:
        op = c.spelling
        args = [a for a in ch if a.kind.is_expression() and not (strip(a).kind.name == "DECL_REF_EXPR" and
                                                                 strip(a).spelling.startswith("operator"))]
        if op == "operator[]" and len(args) == 2:
            return ast.Subscript(self.rvalue(args[0]), self.rvalue(args[1]), ast.Load())
        if op == "operator()" and c.referenced is not None and _is_lambda(c.referenced.semantic_parent):
            return call(self.rvalue(args[0]), self.call_args(c.referenced, args[1:]))   # f(x): the lambda's def
        if op == "operator=":
            raise unsupported(c, "an assignment inside an expression; write it as its own statement")
        if op == "operator+" and len(args) == 2 and c.type.get_canonical().spelling in ("std::string", "string"):
            return ast.BinOp(self.rvalue(args[0]), ast.Add(), self.rvalue(args[1]))     # std::string is a str
        raise unsupported(c, f"calling {op} (user-defined operators)")

    def tiling_call(self, c, decl, args) -> ast.expr:
        """``GET_TILING_DATA(name, tiling)``: ``cxx.tiling(StructClass, tiling)``."""
        t = c.type
        d = record_decl(t)
        if d is None or self.is_header(d):
            raise unsupported(c, "GET_TILING_DATA needs the tiling struct declared in your source "
                                 "(REGISTER_TILING_DEFAULT(MyTilingData) first)")
        return call("cxx.tiling", [self.class_ref(d, c), self.rvalue(args[0])])

    def launch_call(self, c, comma, args) -> ast.expr:
        """``(__ascendc_launch(blocks, l2ctrl, stream), k)(args)``: ``acl.launch_kernel(k, blocks, stream, *args)``."""
        cfg, kernel = children(comma)
        if cfg.kind.name != "CALL_EXPR" or cfg.spelling != "__ascendc_launch":
            raise unsupported(c, "the comma operator")
        cfg_args = [a for a in children(cfg)[1:]]
        kref = strip(kernel)
        decl = kref.referenced
        k = name(self.declare_global(decl if decl.kind.name != "FUNCTION_DECL" or specialized_template(decl) is None
                                     else specialized_template(decl)))
        if decl.kind.name == "FUNCTION_DECL" and decl.get_definition() is None and specialized_template(decl) is None:
            self.extern_kernel(decl, k.id)
        if decl.kind.name == "FUNCTION_DECL" and decl.get_num_template_arguments() > 0:
            pattern = specialized_template(decl)
            k = call(ast.Attribute(k, "template", ast.Load()), self.semantic_template_args(decl, pattern, c))
        self.host_modules.add("acl")
        blocks = self.rvalue(cfg_args[0])
        stream = self.rvalue(cfg_args[2]) if len(cfg_args) > 2 else ast.Constant(None)
        return call("acl.launch_kernel", [k, blocks, stream] + [self.rvalue(a) for a in args])


    def extern_kernel(self, decl, pyname: str) -> None:
        """A launched kernel with no definition in this source: linked at load time (module.link_externs)."""
        if pyname not in self.externs:
            where = self.displayed(at_cursor(decl.canonical, "", "error"))
            params = sum(1 for _ in decl.get_arguments())
            self.externs[pyname] = ExternKernel(decl.spelling, pyname, params, where.file, where.line, where.col)


def _outermost(cursors):
    """The cursor among ``cursors`` whose extent contains all the others (the argument's root)."""
    best = None
    for x in cursors:
        if best is None or (x.extent.start.offset <= best.extent.start.offset and
                            x.extent.end.offset >= best.extent.end.offset):
            best = x
    return best


def _first_overload(c):
    """The first declaration an unresolved name (OVERLOADED_DECL_REF) may mean, or None."""
    from ascend_sim.ascendc.clang_util import overloaded_decl
    return overloaded_decl(c, 0)


_ARITY: dict = {}


def _has_fields(decl) -> bool:
    """Whether a header class (template) is a parameter struct: it has data members.

    Its template parameters then only type those members (``DataCopyPadExtParams<T>``), so they are not
    constructor arguments of the Python dataclass; a template of static members only (``MatmulType<...>``) is
    built from its template arguments.
    """
    return decl is not None and any(ch.kind.name == "FIELD_DECL" for ch in decl.get_children())


def _positional_arity(class_name: str):
    """How many positional arguments the Python class of a header class template takes (None: any number).

    A C++ template argument the Python API does not model (TQue's ``auto mask = 0``, given by default) is left out.
    """
    if class_name not in _ARITY:
        import inspect
        try:
            params = list(inspect.signature(getattr(ascend_sim, class_name)).parameters.values())
            if any(p.kind == p.VAR_POSITIONAL for p in params):
                _ARITY[class_name] = None
            else:
                _ARITY[class_name] = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        except (TypeError, ValueError, AttributeError):
            _ARITY[class_name] = None
    return _ARITY[class_name]


def written_words(c, template_name: str):
    """The template arguments written after ``template_name`` in ``c``'s tokens, as text (None: none written)."""
    toks = [t.spelling for t in c.get_tokens()]
    try:
        i = toks.index(template_name)
    except ValueError:
        return None
    if i + 1 >= len(toks) or toks[i + 1] != "<":
        return None
    words, cur, depth = [], [], 0
    for s in toks[i + 2:]:
        if s in ("<", "(", "[", "{"):
            depth += 1
        elif s in (")", "]", "}"):
            depth -= 1
        elif s in (">", ">>"):
            if depth == 0:
                break
            depth -= 1 if s == ">" else 2
            if depth < 0:
                break
        if s == "," and depth == 0:
            words.append(" ".join(cur))
            cur = []
            continue
        cur.append(s)
    if cur:
        words.append(" ".join(cur))
    return words


def _is_lambda(record) -> bool:
    """The closure class of a lambda expression (clang names it ``(lambda at file:line:col)``)."""
    return record is not None and record.kind.name == "CLASS_DECL" and record.type.spelling.startswith("(lambda at")
