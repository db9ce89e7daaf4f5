"""What libclang knows that its Python bindings do not wrap: operator kinds and constant evaluation.

Operators come from ``clang_getCursorBinaryOperatorKind`` / ``clang_getCursorUnaryOperatorKind`` (libclang 17+)
and constants from ``clang_Cursor_Evaluate``, so the front end never reads operators or literals off source text
(a literal from a macro, ``#define N 128``, evaluates like any other).
"""
from __future__ import annotations

import ctypes

from ascend_sim.ascendc.parse import cindex

BINARY = {3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 10: "<=>", 11: "<", 12: ">", 13: "<=",
          14: ">=", 15: "==", 16: "!=", 17: "&", 18: "^", 19: "|", 20: "&&", 21: "||", 22: "=", 23: "*=",
          24: "/=", 25: "%=", 26: "+=", 27: "-=", 28: "<<=", 29: ">>=", 30: "&=", 31: "^=", 32: "|=", 33: ","}
UNARY = {1: "post++", 2: "post--", 3: "++", 4: "--", 5: "&", 6: "*", 7: "+", 8: "-", 9: "~", 10: "!"}

_ready = False


def _lib():
    global _ready
    ci = cindex()
    lib = ci.conf.lib
    if not _ready:
        lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
        lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
        lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
        lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
        lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
        lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        for name, res in (("getKind", ctypes.c_int), ("getAsLongLong", ctypes.c_longlong),
                          ("isUnsignedInt", ctypes.c_uint), ("getAsUnsigned", ctypes.c_ulonglong),
                          ("getAsDouble", ctypes.c_double), ("getAsStr", ctypes.c_char_p)):
            f = getattr(lib, "clang_EvalResult_" + name)
            f.argtypes = [ctypes.c_void_p]
            f.restype = res
        lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_dispose.restype = None
        _ready = True
    return lib


def binary_op(cursor) -> str:
    return BINARY.get(_lib().clang_getCursorBinaryOperatorKind(cursor), "?")


def unary_op(cursor) -> str:
    return UNARY.get(_lib().clang_getCursorUnaryOperatorKind(cursor), "?")


_NOTHING = object()


def evaluate(cursor):
    """The constant value of an expression cursor (int, float or str), or None when it is not a constant."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == 1:
            if lib.clang_EvalResult_isUnsignedInt(res):
                return int(lib.clang_EvalResult_getAsUnsigned(res))
            return int(lib.clang_EvalResult_getAsLongLong(res))
        if kind == 2:
            return float(lib.clang_EvalResult_getAsDouble(res))
        if kind == 4:
            raw = lib.clang_EvalResult_getAsStr(res)
            return raw.decode("utf-8", "replace") if raw is not None else None
        return None
    finally:
        lib.clang_EvalResult_dispose(res)


def specialized_template(cursor):
    """The template a specialization (a class, a function) was instantiated from, or None."""
    ci = cindex()
    lib = _lib()
    f = lib.clang_getSpecializedCursorTemplate
    f.argtypes = [ci.Cursor]
    f.restype = ci.Cursor
    res = f(cursor)
    return None if res is None or res.kind.is_invalid() else res


def template_params(template_cursor) -> list:
    """The template parameter cursors of a class or function template, in order."""
    ci = cindex()
    kinds = (ci.CursorKind.TEMPLATE_TYPE_PARAMETER, ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER,
             ci.CursorKind.TEMPLATE_TEMPLATE_PARAMETER)
    return [c for c in template_cursor.get_children() if c.kind in kinds]


def num_overloaded_decls(cursor) -> int:
    """How many declarations an OVERLOADED_DECL_REF may mean."""
    ci = cindex()
    f = _lib().clang_getNumOverloadedDecls
    f.argtypes = [ci.Cursor]
    f.restype = ctypes.c_uint
    return int(f(cursor))


def overloaded_decl(cursor, index: int = 0):
    """Declaration ``index`` of an OVERLOADED_DECL_REF (None when there is none)."""
    if num_overloaded_decls(cursor) <= index:
        return None
    ci = cindex()
    f = _lib().clang_getOverloadedDecl
    f.argtypes = [ci.Cursor, ctypes.c_uint]
    f.restype = ci.Cursor
    res = f(cursor, index)
    return None if res is None or res.kind.is_invalid() else res
