"""C++ types as the lowering needs them: integer width and signedness, the dtype a type names, what is a struct.

``int_info`` drives the integer semantics (where a wrap or a truncating division is emitted); ``dtype_name`` gives
the Python expression of a scalar type (``half``, ``float32``, a template parameter ``T``).
"""
from __future__ import annotations

from ascend_sim.ascendc.bindings import FLOAT_CLASSES

#: canonical spelling of a builtin integer type -> (bits, signed)
INTS = {
    "bool": (1, False),
    "char": (8, True), "signed char": (8, True), "unsigned char": (8, False),
    "short": (16, True), "unsigned short": (16, False),
    "int": (32, True), "unsigned int": (32, False),
    "long": (64, True), "unsigned long": (64, False),
    "long long": (64, True), "unsigned long long": (64, False),
    "char16_t": (16, False), "char32_t": (32, False), "wchar_t": (32, True),
}
#: canonical spelling of a builtin floating type -> the Python dtype name
FLOATS = {"float": "float32", "double": "cxx.float64", "_Float16": "half", "__bf16": "bfloat16",
          "long double": "cxx.float64", **FLOAT_CLASSES}
#: (bits, signed) -> the Python dtype name
INT_DTYPES = {(8, True): "int8", (8, False): "uint8", (16, True): "int16", (16, False): "uint16",
              (32, True): "int32", (32, False): "uint32", (64, True): "int64", (64, False): "cxx.uint64",
              (1, False): "cxx.bool_"}
#: builtin type keywords (template arguments written as tokens, e.g. ``AllocTensor<float>``)
KEYWORD_TYPES = {"float": "float32", "double": "cxx.float64", "int": "int32", "unsigned": "uint32",
                 "short": "int16", "char": "int8", "bool": "cxx.bool_", "long": "int64"}


def tkind(t) -> str:
    """The name of a type's kind ("POINTER", "RECORD" ...); "BUILTIN" for kinds the bindings do not name
    (libclang 18's Python bindings raise on _Float16 and __bf16)."""
    try:
        return t.kind.name
    except ValueError:
        return "BUILTIN"


def canonical_spelling(t) -> str:
    c = t.get_canonical()
    s = c.spelling
    for q in ("const ", "volatile "):
        s = s.replace(q, "")
    return s.strip()


def int_info(t):
    """(bits, signed) of an integer (or enum) type, else None."""
    if tkind(t.get_canonical()) == "ENUM":
        return None
    return INTS.get(canonical_spelling(t))


def is_float(t) -> bool:
    return canonical_spelling(t) in FLOATS


def is_pointer(t) -> bool:
    return tkind(t.get_canonical()) == "POINTER"


def is_reference(t) -> bool:
    return tkind(t) in ("LVALUEREFERENCE", "RVALUEREFERENCE")


def is_record(t) -> bool:
    """A struct or class (the header's half/bfloat16_t classes are scalars, not records)."""
    return tkind(t.get_canonical()) == "RECORD" and canonical_spelling(t) not in FLOAT_CLASSES


def is_dependent(t) -> bool:
    return "type-parameter" in t.get_canonical().spelling or t.spelling == "<dependent type>"


def strip_ref(t):
    return t.get_pointee() if is_reference(t) else t


def record_decl(t):
    """The declaration cursor of a struct/class type (through references and typedefs), or None."""
    t = strip_ref(t)
    c = t.get_canonical()
    if not is_record(c):
        return None
    return c.get_declaration()
