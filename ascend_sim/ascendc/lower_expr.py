"""Stage 3b: C++ expressions -> Python ``ast`` expressions, with C++ integer semantics where the types need them.

Unsigned arithmetic is modular: ``+ - * << & | ^ ~`` commute with the wrap, so their Python results stay unwrapped
(the node is marked ``_wrap = bits``) and ``& 0xFFFFFFFF`` is emitted only where a value is observed (stored, passed,
compared, divided, shifted right). Signed overflow is undefined in C++ and is not wrapped; conversions to a narrower
or signed type are (``cxx.s32``). Division of signed integers truncates toward zero (``cxx.sdiv``).
"""
from __future__ import annotations

import ast

import ascend_sim
from ascend_sim.ascendc import bindings
from ascend_sim.ascendc.bindings import FLOAT_CLASSES
from ascend_sim.ascendc.clang_util import binary_op, evaluate, unary_op
from ascend_sim.ascendc.diagnostics import unsupported
from ascend_sim.ascendc.lower_types import (FLOATS, canonical_spelling, int_info, is_dependent, is_float, is_pointer,
                                           is_record, strip_ref)

PY_BINOP = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "%": ast.Mod, "<<": ast.LShift,
            ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor}
PY_CMP = {"<": ast.Lt, ">": ast.Gt, "<=": ast.LtE, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
RING_OPS = {"+", "-", "*", "<<", "&", "|", "^"}
FLOAT_CONVERT = {"float32": "cxx.f32", "half": "cxx.f16", "bfloat16": "cxx.bf16", "cxx.float64": "float"}
CAST_KINDS = ("CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR", "CXX_REINTERPRET_CAST_EXPR",
              "CXX_CONST_CAST_EXPR")
REJECTED = {
    "LAMBDA_EXPR": "a lambda used other than as a local's initialiser (auto f = [](...) {...};)",
    "CXX_THROW_EXPR": "exceptions (throw): a kernel has no exception handling",
    "CXX_NEW_EXPR": "new: a kernel has no heap; use TPipe/TBuf or LocalMemAllocator",
    "CXX_DELETE_EXPR": "delete: a kernel has no heap",
    "CXX_TYPEID_EXPR": "typeid (run-time type information)",
    "CXX_DYNAMIC_CAST_EXPR": "dynamic_cast (run-time type information)",
    "STMT_EXPR": "statement expressions",
}


def name(s: str) -> ast.expr:
    """A Python name, or a dotted attribute chain (``cxx.s32``)."""
    parts = s.split(".")
    node: ast.expr = ast.Name(parts[0], ast.Load())
    for p in parts[1:]:
        node = ast.Attribute(node, p, ast.Load())
    return node


def call(f, args=(), keywords=()) -> ast.Call:
    return ast.Call(name(f) if isinstance(f, str) else f, list(args), list(keywords))


def const(v) -> ast.expr:
    if isinstance(v, (int, float)) and v < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-v))
    return ast.Constant(v)


def mark(node: ast.expr, bits: int) -> ast.expr:
    node._wrap = bits
    return node


def exact(node: ast.expr) -> ast.expr:
    """``node`` reduced to its unsigned type's range if a ring operation may have left it outside."""
    bits = getattr(node, "_wrap", 0)
    if not bits:
        return node
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return ast.Constant(node.value & ((1 << bits) - 1))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return ast.Constant(-node.operand.value & ((1 << bits) - 1))
    return ast.BinOp(node, ast.BitAnd(), ast.Constant((1 << bits) - 1))


def children(c) -> list:
    return list(c.get_children())


def strip(c):
    """Through implicit casts and parentheses to the expression underneath."""
    while c.kind.name in ("UNEXPOSED_EXPR", "PAREN_EXPR"):
        ch = children(c)
        if len(ch) != 1:
            break
        c = ch[0]
    return c


def member_base(member_ref) -> list:
    """The object expression of ``obj.f`` / ``p->f`` ([] when ``this`` is implicit); the template arguments of
    ``f<...>``, also children of the cursor, come after the member's name and are not it."""
    arrow = None
    depth = 0
    for t in member_ref.get_tokens():
        sp = t.spelling
        if sp in ("(", "[", "<"):
            depth += 1
        elif sp in (")", "]", ">"):
            depth -= 1
        elif sp in (".", "->") and depth == 0:
            arrow = t.extent.start.offset
    if arrow is None:
        return []
    return [x for x in children(member_ref) if x.kind.is_expression() and x.extent.end.offset <= arrow]


def is_default_arg(c) -> bool:
    """A CXXDefaultArgExpr: libclang shows it as an unexposed expression with no location."""
    return c.kind.name == "UNEXPOSED_EXPR" and c.location.line == 0


class ExprLowering:
    """Mixin of the Lowerer: ``expr(cursor)`` -> ast.expr."""

    # ------------------------------------------------------------------ entry points
    def expr(self, c) -> ast.expr:
        kind = c.kind.name
        if kind in REJECTED:
            raise unsupported(c, REJECTED[kind])
        handler = getattr(self, "x_" + kind, None)
        if handler is None:
            raise unsupported(c, f"this kind of expression ({kind.lower().replace('_', ' ')})")
        return self.loc(handler(c), c)

    def rvalue(self, c) -> ast.expr:
        return exact(self.expr(c))

    # ------------------------------------------------------------------ literals
    def _constant(self, c):
        v = evaluate(c)
        if v is None:
            raise unsupported(c, "a literal libclang could not evaluate")
        return v

    def x_INTEGER_LITERAL(self, c):
        return const(self._constant(c))

    def x_FLOATING_LITERAL(self, c):
        v = self._constant(c)
        conv = FLOAT_CONVERT.get(FLOATS.get(canonical_spelling(c.type), ""), "float")
        return const(float(v)) if conv == "float" else call(conv, [const(float(v))])

    def x_CHARACTER_LITERAL(self, c):
        return const(self._constant(c))

    def x_STRING_LITERAL(self, c):
        v = evaluate(c)
        if v is None:
            v = "".join(ast.literal_eval(t.spelling) for t in c.get_tokens() if t.spelling.startswith('"'))
        return ast.Constant(v)

    def x_CXX_BOOL_LITERAL_EXPR(self, c):
        v = evaluate(c)
        return ast.Constant(bool(v))

    def x_CXX_NULL_PTR_LITERAL_EXPR(self, c):
        return ast.Constant(None)

    x_GNU_NULL_EXPR = x_CXX_NULL_PTR_LITERAL_EXPR

    def x_CXX_THIS_EXPR(self, c):
        return name("self")

    def x_PAREN_EXPR(self, c):
        return self.expr(children(c)[0])

    def x_CXX_UNARY_EXPR(self, c):          # sizeof, alignof
        ch = children(c)
        if ch and canonical_spelling(ch[0].type) in FLOAT_CLASSES:
            return const(2)                 # the header's half/bfloat16_t classes stand for 2-byte types
        v = evaluate(c)
        if v is not None:
            return const(v)
        ch = children(c)
        arg_t = ch[0].type if ch else None
        if arg_t is not None:
            return ast.Attribute(self.dtype_of(arg_t, c), "itemsize", ast.Load())
        raise unsupported(c, "sizeof of a dependent type that is not a template parameter")

    # ------------------------------------------------------------------ names
    def x_DECL_REF_EXPR(self, c):
        ref = c.referenced
        if ref is None:
            same = self.same_type(c)            # IsSameType<T, U>::value in a function template
            if same is not None:
                return same
            raise unsupported(c, f"the name {c.spelling!r} (libclang could not resolve it)")
        return self.ref_to(ref, c)

    def x_OVERLOADED_DECL_REF(self, c):
        from ascend_sim.ascendc.clang_util import overloaded_decl
        decl = overloaded_decl(c, 0)
        if decl is None:
            raise unsupported(c, f"the name {c.spelling!r} (no declaration found)")
        return self.ref_to(decl, c)

    def ref_to(self, ref, c) -> ast.expr:
        """The Python expression that names declaration ``ref`` (used at ``c``)."""
        kind = ref.kind.name
        if kind == "ENUM_CONSTANT_DECL":
            return self.enum_constant(ref)
        if kind == "TEMPLATE_NON_TYPE_PARAMETER" or kind == "TEMPLATE_TYPE_PARAMETER":
            return name(self.local_name(ref))
        if self.is_header(ref):
            return self.header_ref(ref, c)
        alias = self.fn.aliases.get(self.key(ref)) if self.fn else None
        if alias is not None:
            return alias()
        if kind in ("VAR_DECL", "PARM_DECL") and self.fn and self.key(ref) in self.fn.locals:
            return name(self.fn.locals[self.key(ref)])
        if kind == "VAR_DECL" and ref.semantic_parent is not None and \
                ref.semantic_parent.kind.name in ("CLASS_DECL", "STRUCT_DECL", "CLASS_TEMPLATE"):
            init = [x for x in children(ref) if x.kind.is_expression()]
            v = evaluate(init[-1]) if init else None
            if v is None:
                raise unsupported(c, f"the static member {ref.spelling} (only constants are supported)")
            return const(v)             # a static constexpr member: its value
        if kind == "FIELD_DECL":            # a member named without this-> inside a method
            return ast.Attribute(name("self"), self.member_name(ref), ast.Load())
        if kind == "CXX_METHOD":
            if ref.is_static_method():
                return ast.Attribute(self.class_ref(ref.semantic_parent, c), self.member_name(ref), ast.Load())
            return ast.Attribute(name("self"), self.member_name(ref), ast.Load())
        pyname = self.names.get(self.key(ref))
        if pyname is None:
            pyname = self.declare_global(ref)
        return name(pyname)

    def header_ref(self, ref, c) -> ast.expr:
        """A name declared in our headers: the public API object, a cxx helper, the host runtime or a constant."""
        spelling = ref.spelling
        kind = ref.kind.name
        if kind == "VAR_DECL":
            if self.qualified(ref) in ("std::cout", "std::cerr"):
                return ast.Constant(spelling)             # a stream is its name (cxx.ostream_write's first argument)
            if spelling in bindings.VARIABLES:
                return call(self.api(bindings.VARIABLES[spelling]))
            if hasattr(ascend_sim, spelling):
                return self.api(spelling)
            init = [ch for ch in children(ref) if ch.kind.is_expression()]
            if init:
                v = evaluate(init[-1])
                if v is not None:
                    return const(v)
            raise unsupported(c, f"{spelling} is declared in the header but the simulator does not model it")
        if spelling in bindings.CXX_FUNCTIONS:
            return name("cxx." + bindings.CXX_FUNCTIONS[spelling])
        if "/libc/" in ref.location.file.name.replace("\\", "/") and spelling in bindings.LIBC_FUNCTIONS:
            return name(bindings.LIBC_FUNCTIONS[spelling])
        host = self.host_module_of(ref)
        if host and self.host_has(host, spelling):
            self.host_modules.add(host)
            return name(f"{host}.{spelling}")
        if hasattr(ascend_sim, spelling):
            return self.api(spelling)
        raise unsupported(c, f"{self.qualified(ref)} is declared in {_header_name(ref)} but the simulator does "
                             "not implement it yet")

    def api(self, spelling: str) -> ast.expr:
        self.imports.add(spelling)
        return name(spelling)

    def enum_constant(self, ref) -> ast.expr:
        enum = ref.semantic_parent
        if self.is_header(ref):
            ename = enum.spelling
            if ename and hasattr(ascend_sim, ename) and hasattr(getattr(ascend_sim, ename), ref.spelling):
                return ast.Attribute(self.api(ename), ref.spelling, ast.Load())
            if hasattr(ascend_sim, ref.spelling):
                return self.api(ref.spelling)
            return const(ref.enum_value)
        return const(ref.enum_value)

    def x_MEMBER_REF_EXPR(self, c):
        same = self.same_type(c)
        if same is not None:
            return same
        ch = member_base(c)
        base = self.expr(ch[0]) if ch else name("self")
        ref = c.referenced
        member = self.member_name(ref) if ref is not None else self.dependent_member(c)
        return ast.Attribute(base, member, ast.Load())

    def same_type(self, c) -> ast.expr | None:
        """``AscendC::IsSameType<A, B>::value`` (dependent in a template): ``A == B`` of the two dtypes, else None."""
        head = next(iter(c.get_children()), None)
        ref = head.referenced if head is not None and head.kind.name == "TEMPLATE_REF" else None
        if ref is None or ref.spelling != "IsSameType" or not self.is_header(ref) or c.spelling not in ("", "value"):
            return None
        args = self.written_template_args(c, None)
        if len(args) != 2:
            raise unsupported(c, "IsSameType takes two types")
        return ast.Compare(args[0], [ast.Eq()], [args[1]])

    def dependent_member(self, c) -> str:
        """The member name of ``this->x`` in a template (libclang leaves it unresolved): its last token."""
        toks = [t.spelling for t in c.get_tokens()]
        if not toks:
            raise unsupported(c, "a member of a dependent type")
        return self.py_ident(toks[-1])

    # ------------------------------------------------------------------ conversions
    def x_UNEXPOSED_EXPR(self, c):
        ch = children(c)
        if len(ch) == 1:
            return self.convert(self.expr(ch[0]), self.type_of(ch[0]), c.type, c)
        if not ch:
            v = evaluate(c)
            if v is not None:
                return const(v)
            if is_record(c.type):       # T() / a default-constructed temporary
                return self.construct(c.type, [], c)
            raise unsupported(c, "an implicit expression libclang does not expose")
        if is_record(c.type):           # an implicit construction from several values
            return self.construct(c.type, [self.rvalue(x) for x in ch], c)
        raise unsupported(c, "an implicit expression libclang does not expose")

    def convert(self, node: ast.expr, src, dst, c) -> ast.expr:
        """``node`` (of C++ type ``src``) converted to ``dst`` as C++ converts."""
        src, dst = strip_ref(src), strip_ref(dst)
        if is_dependent(src) or is_dependent(dst):
            return node
        si, di = int_info(src), int_info(dst)
        if di is not None and si is not None:
            (sb, ss), (db, ds) = si, di
            if db == 1 or sb == 1:
                return node
            if not ds:                                      # to unsigned: modular, wrap when observed
                if not ss and sb <= db:                     # widening: a pending narrower wrap happens first
                    return exact(node) if 0 < getattr(node, "_wrap", 0) < db else node
                return mark(node, db) if not getattr(node, "_wrap", 0) or node._wrap >= db else mark(exact(node), db)
            if ss and sb <= db:
                return node
            if not ss and sb < db:
                return exact(node)
            if isinstance(node, ast.Constant) and isinstance(node.value, int):
                v = node.value & ((1 << db) - 1)
                return const(v - (1 << db) if v >> (db - 1) else v)
            return call(f"cxx.s{db}", [node])
        if di is not None and is_float(src):
            v = call("int", [node])                         # truncation toward zero
            bits, signed = di
            if bits == 1:
                return call("bool", [node])
            return call(f"cxx.s{bits}", [v]) if signed else exact(mark(v, bits))
        if is_float(dst):
            target = FLOATS[canonical_spelling(dst)]
            if is_float(src) and FLOATS[canonical_spelling(src)] == target:
                return node
            return call(FLOAT_CONVERT[target], [exact(node)])
        return node

    def cast(self, c):
        ch = [x for x in children(c) if x.kind.is_expression()]
        operand = ch[-1]
        node = self.expr(operand)
        dst = c.type
        if is_pointer(dst) and not is_dependent(dst):
            pointee = dst.get_canonical().get_pointee()
            if canonical_spelling(pointee) in ("void", "void *") or is_pointer(pointee):
                return node
            if is_pointer(operand.type) and canonical_spelling(pointee) != canonical_spelling(
                    operand.type.get_canonical().get_pointee()):
                return call(ast.Attribute(node, "cast", ast.Load()), [self.dtype_of(pointee, c)])
            return node
        if is_pointer(dst) and is_dependent(dst):
            return call(ast.Attribute(node, "cast", ast.Load()), [self.dtype_of(dst.get_pointee(), c)])
        if is_dependent(dst) and not is_record(dst):
            return call("cxx.convert", [self.dtype_of(dst, c), exact(node)])
        return self.convert(node, operand.type, dst, c)

    for _k in CAST_KINDS:
        locals()["x_" + _k] = lambda self, c: self.cast(c)
    del _k

    # ------------------------------------------------------------------ operators
    def x_UNARY_OPERATOR(self, c):
        op = unary_op(c)
        operand = children(c)[0]
        if op in ("++", "--", "post++", "post--"):
            raise unsupported(c, f"{op.replace('post', '')} inside an expression; write it as its own statement")
        if op == "!":
            return ast.UnaryOp(ast.Not(), self.rvalue(operand))
        if op == "&":
            return self.address_of(operand, c)
        if op == "*":
            return self.deref(operand, c)
        ii = int_info(c.type)
        if op == "-":
            node = ast.UnaryOp(ast.USub(), self.expr(operand))
            return mark(node, ii[0]) if ii and not ii[1] else node
        if op == "~":
            node = ast.UnaryOp(ast.Invert(), self.expr(operand))
            return mark(node, ii[0]) if ii and not ii[1] else node
        if op == "+":
            return self.expr(operand)
        raise unsupported(c, f"the unary operator {op}")

    def address_of(self, operand, c):
        """``&x``: a Ref to a scalar lvalue (host code passes these to ACL); objects are their own address."""
        if is_record(operand.type):
            return self.expr(operand)
        inner = strip(operand)
        ref = inner.referenced if inner.kind.name == "DECL_REF_EXPR" else None
        if ref is not None and self.fn is not None and self.key(ref) in self.fn.boxed:
            return name(self.fn.locals[self.key(ref)])          # the variable's Box is its address
        target = self.lvalue(operand)
        load = self.expr(operand)
        setter = ast.Lambda(_args(["__value"]), _assign_expr(target, name("__value")))  # C++ reserves __ names: no clash
        return call("cxx.Ref", [ast.Lambda(_args([]), load), setter])

    def deref(self, operand, c):
        inner = strip(operand)
        if inner.kind.name == "CXX_THIS_EXPR":
            return name("self")
        return call(ast.Attribute(self.rvalue(operand), "get", ast.Load()))

    def x_BINARY_OPERATOR(self, c):
        op = binary_op(c)
        lhs, rhs = children(c)
        if op in ("=",) or op.endswith("=") and op not in ("==", "!=", "<=", ">="):
            raise unsupported(c, "an assignment inside an expression; write it as its own statement")
        if op == ",":
            raise unsupported(c, "the comma operator")
        if op in ("&&", "||"):
            return ast.BoolOp(ast.And() if op == "&&" else ast.Or(), [self.rvalue(lhs), self.rvalue(rhs)])
        if op in PY_CMP:
            return ast.Compare(self.rvalue(lhs), [PY_CMP[op]()], [self.rvalue(rhs)])
        lt, rt, t = self.type_of(lhs), self.type_of(rhs), c.type
        if is_dependent(t):
            t = self.common_type(lt, rt) or t
        return self.arith(op, self.expr(lhs), self.expr(rhs), t, lt, rt, c)

    def type_of(self, c):
        """``c``'s C++ type; for ``this->x`` in a class template (dependent for clang) the field's declared type."""
        t = c.type
        if not is_dependent(t):
            return t
        inner = strip(c)
        if inner.kind.name == "MEMBER_REF_EXPR" and inner.referenced is None and self.class_stack:
            member = self.dependent_member(inner)
            for f in self.class_stack[-1].get_children():
                if f.kind.name == "FIELD_DECL" and self.py_ident(f.spelling) == member and not is_dependent(f.type):
                    return f.type
        if inner.kind.name in ("BINARY_OPERATOR",) and binary_op(inner) in RING_OPS | {"/", "%", ">>"}:
            a, b = children(inner)
            return self.common_type(self.type_of(a), self.type_of(b)) or t
        return t

    def common_type(self, a, b):
        """C++'s usual arithmetic conversion of two integer types (the wider; unsigned at equal width)."""
        ia, ib = int_info(a), int_info(b)
        if ia is None or ib is None:
            return None
        if ia[0] != ib[0]:
            return a if ia[0] > ib[0] else b
        return a if not ia[1] else b

    def arith(self, op: str, left, right, t, lt, rt, c) -> ast.expr:
        """``left op right`` with the C++ semantics of result type ``t``."""
        if op not in PY_BINOP:
            raise unsupported(c, f"the operator {op}")
        if is_pointer(lt) and op in "+-":
            if is_pointer(rt):
                raise unsupported(c, "the difference of two pointers")
            return ast.BinOp(left, PY_BINOP[op](), exact(right))
        if is_pointer(rt) and op == "+":
            return ast.BinOp(right, ast.Add(), exact(left))
        ii = int_info(t)
        if ii is not None:
            bits, signed = ii
            if op in RING_OPS:
                if signed:
                    return ast.BinOp(exact(left), PY_BINOP[op](), exact(right))
                node = ast.BinOp(left, PY_BINOP[op](), right)
                if op in "&|^" and not getattr(left, "_wrap", 0) and not getattr(right, "_wrap", 0):
                    return node
                return mark(node, bits)
            if op in "/%":
                if signed:
                    return call("cxx.sdiv" if op == "/" else "cxx.srem", [exact(left), exact(right)])
                return ast.BinOp(exact(left), ast.FloorDiv() if op == "/" else ast.Mod(), exact(right))
            return ast.BinOp(exact(left), PY_BINOP[op](), exact(right))         # >>
        if is_float(t):
            return ast.BinOp(exact(left), PY_BINOP[op](), exact(right))
        if op == "/":       # a dependent type (a template parameter): decided at run time
            return call("cxx.div", [exact(left), exact(right)])
        return ast.BinOp(exact(left), PY_BINOP[op](), exact(right))

    def x_CONDITIONAL_OPERATOR(self, c):
        cond, a, b = children(c)
        return ast.IfExp(self.rvalue(cond), self.rvalue(a), self.rvalue(b))

    def x_ARRAY_SUBSCRIPT_EXPR(self, c):
        base, index = children(c)
        return ast.Subscript(self.rvalue(base), self.rvalue(index), ast.Load())

    def x_INIT_LIST_EXPR(self, c):
        items = [x for x in children(c) if x.kind.is_expression()]
        t = c.type
        if is_record(t):
            return self.construct(t, [self.rvalue(x) for x in items], c, brace=True)
        return ast.List([self.rvalue(x) for x in items], ast.Load())

    def x_CXX_FUNCTIONAL_CAST_EXPR(self, c):
        if is_record(c.type):
            items = [x for x in children(c) if x.kind.is_expression()]
            if len(items) == 1 and items[0].kind.name == "INIT_LIST_EXPR":
                return self.expr(items[0])
            return self.construct(c.type, [self.rvalue(x) for x in items], c)
        return self.cast(c)

    # ------------------------------------------------------------------ lvalues
    def lvalue(self, c) -> ast.expr:
        """The assignable Python target for a C++ lvalue."""
        inner = c
        while inner.kind.name in ("PAREN_EXPR", "UNEXPOSED_EXPR") and len(children(inner)) == 1:
            inner = children(inner)[0]
        node = self.expr(inner)
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            return _store(node)
        raise unsupported(c, "assigning to this kind of expression")


def _header_name(ref) -> str:
    """How a learner includes the header of declaration ``ref``: ``kernel_operator.h``, ``<iterator>``."""
    path = ref.location.file.name.replace("\\", "/") if ref.location.file is not None else "kernel_operator.h"
    base = path.rsplit("/", 1)[-1]
    return f"<{base}>" if "/libc/" in path else base


def _store(node):
    if isinstance(node, ast.Name):
        return ast.Name(node.id, ast.Store())
    if isinstance(node, ast.Attribute):
        return ast.Attribute(node.value, node.attr, ast.Store())
    return ast.Subscript(node.value, node.slice, ast.Store())


def _args(names) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def _assign_expr(target, value):
    """An assignment usable inside a lambda: setattr / operator.setitem / a walrus can't bind outer names."""
    if isinstance(target, ast.Attribute):
        return call("setattr", [target.value, ast.Constant(target.attr), value])
    if isinstance(target, ast.Subscript):
        return call(ast.Attribute(target.value, "__setitem__", ast.Load()), [target.slice, value])
    return call("cxx.cannot_assign", [ast.Constant(target.id)])
