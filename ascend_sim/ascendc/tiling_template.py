"""Tiling-key templates of a C++ translation unit (Tiling模板编程): the ``ASCENDC_TPL_*`` tables as a TemplateSpace.

In Ascend C the operator declares its template parameters with ``ASCENDC_TPL_ARGS_DECL`` (``ASCENDC_TPL_DATATYPE_DECL``,
``ASCENDC_TPL_UINT_DECL``, ``ASCENDC_TPL_BOOL_DECL``) and the compiled combinations with ``ASCENDC_TPL_SEL``; the host
picks one by tiling key and the device runs the kernel template's instantiation for it (asc-devkit API docs,
"Utils API > Tiling模板编程 > 模板参数定义"). Our header expands the macros as CANN does, to two static tables of
``{name, paramType, bitWidth, {vals...}, "DECL"|"SEL"}``; this module reads those tables from libclang's AST at
lowering time (:func:`read_tables`) and, when the module runs, builds the ``ascend_sim.TemplateSpace`` of the
Python API from them and binds the kernel template whose template parameters carry the declared names
(:func:`build_space`), so ``space.instance(key)`` is that kernel's instantiation.
"""
from __future__ import annotations

import ast

from ascend_sim.ascendc.clang_util import evaluate
from ascend_sim.ascendc.diagnostics import unsupported

#: the variables the ASCENDC_TPL_ARGS_DECL / ASCENDC_TPL_SEL macros of kernel_operator.h declare
OP_TABLE, DECL_TABLE, SEL_TABLE = "g_tilingDeclareOp", "g_tilingDeclareParams", "g_tilingSelectParams"
TABLES = (OP_TABLE, DECL_TABLE, SEL_TABLE)
KINDS = {0: "datatype", 2: "uint", 3: "bool"}       # ASCENDC_TPL_DTYPE, (FORMAT: not modelled), UINT, BOOL
UI_RANGE, UI_LIST, UI_MIX = 0, 1, 2
#: C_DT_* (ge::DataType values) -> the Ascend C name of the dtype
C_DT = {0: "float", 1: "half", 2: "int8_t", 3: "int32_t", 4: "uint8_t", 6: "int16_t", 7: "uint16_t", 8: "uint32_t",
        9: "int64_t", 27: "bfloat16_t"}


def read_tables(found: dict) -> tuple[str, list, list]:
    """(op, declared params, selections) from the VAR_DECL cursors of :data:`TABLES`; params are
    ``(name, kind, values)`` with dtypes as their Ascend C names."""
    op_c, decl_c, sel_c = (found.get(n) for n in TABLES)
    if decl_c is None or sel_c is None:
        c = decl_c or sel_c or op_c
        raise unsupported(c, "a tiling-key template needs both ASCENDC_TPL_ARGS_DECL and ASCENDC_TPL_SEL")
    lit = [ch for ch in op_c.get_children() if ch.kind.name == "STRING_LITERAL"] if op_c is not None else []
    op = ast.literal_eval(lit[0].spelling) if lit else "op"
    declared = [_param(p) for p in _params(_init(decl_c))]
    rows = [ch for ch in _init(sel_c).get_children() if ch.kind.name == "INIT_LIST_EXPR"]
    selections = [[_param(p) for p in _params(row)] for row in rows]
    return op, declared, selections


def _init(var):
    init = [ch for ch in var.get_children() if ch.kind.name == "INIT_LIST_EXPR"]
    if not init:
        raise unsupported(var, f"{var.spelling} without its initialiser")
    return init[-1]


def _params(c):
    """The ``{name, type, bw, {vals}, macro}`` initialisers below ``c`` (one ParamStruct each)."""
    for ch in c.get_children():
        kind = ch.kind.name
        if kind == "CXX_FUNCTIONAL_CAST_EXPR":
            yield next(x for x in ch.get_children() if x.kind.name == "INIT_LIST_EXPR")
        elif kind in ("INIT_LIST_EXPR", "UNEXPOSED_EXPR"):
            yield from _params(ch)


def _param(c) -> tuple[str, str, list]:
    fields = list(c.get_children())
    if len(fields) != 5 or fields[0].kind.name != "STRING_LITERAL":
        raise unsupported(c, "a template parameter that is not written with an ASCENDC_TPL_*_DECL / _SEL macro")
    pname = ast.literal_eval(fields[0].spelling)
    kind = KINDS.get(evaluate(fields[1]))
    if kind is None:
        raise unsupported(c, f"template parameter {pname}: only DATATYPE, UINT and BOOL parameters are modelled")
    vals = []
    for v in fields[3].get_children():
        x = evaluate(v)
        if not isinstance(x, int):
            raise unsupported(v, f"template parameter {pname}: a value that is not an integer constant")
        vals.append(x)
    macro = ast.literal_eval(fields[4].spelling)
    if kind == "datatype":
        bad = [x for x in vals if x not in C_DT]
        if bad:
            raise unsupported(c, f"template parameter {pname}: data type code {bad[0]} is not modelled "
                                 f"(use {', '.join('C_DT_' + n for n in ('FLOAT16', 'FLOAT', 'BF16', 'INT8', 'INT32'))} ...)")
        return pname, kind, [C_DT[x] for x in vals]
    if kind == "uint":
        return pname, kind, _uint_values(c, pname, vals, macro)
    return pname, kind, vals


def _uint_values(c, pname: str, vals: list, macro: str) -> list:
    """ASCENDC_TPL_UI_RANGE n, lo, hi, ... | UI_LIST v, ... | UI_MIX n, lo, hi, ..., v, ... (ranges inclusive)."""
    if not vals or vals[0] not in (UI_RANGE, UI_LIST, UI_MIX):
        raise unsupported(c, f"ASCENDC_TPL_UINT_{macro}({pname}, ...) needs ASCENDC_TPL_UI_RANGE, ASCENDC_TPL_UI_LIST "
                             "or ASCENDC_TPL_UI_MIX before its values")
    mode, rest = vals[0], vals[1:]
    if mode == UI_LIST:
        return rest
    n = rest[0] if rest else 0
    pairs, tail = rest[1:1 + 2 * n], rest[1 + 2 * n:]
    if len(pairs) != 2 * n or (mode == UI_RANGE and tail):
        raise unsupported(c, f"ASCENDC_TPL_UINT_{macro}({pname}, ...): {n} ranges need {2 * n} bounds after the count")
    out = [v for lo, hi in zip(pairs[::2], pairs[1::2]) for v in range(lo, hi + 1)]
    return out + [v for v in tail if v not in out]


def build_space(op: str, declared: list, selections: list, kernels: list):
    """The TemplateSpace of the tables, bound to the kernel template whose template parameters are the declared names
    (run by the generated module; ``kernels`` are its template CppKernels)."""
    from ascend_sim.api.template import (ASCENDC_TPL_ARGS_DECL, ASCENDC_TPL_ARGS_SEL, ASCENDC_TPL_BOOL_DECL,
                                         ASCENDC_TPL_DATATYPE_DECL, ASCENDC_TPL_SEL, ASCENDC_TPL_UINT_DECL)
    from ascend_sim.hw.dtypes import as_dtype
    make = {"datatype": ASCENDC_TPL_DATATYPE_DECL, "uint": ASCENDC_TPL_UINT_DECL, "bool": ASCENDC_TPL_BOOL_DECL}

    def values(kind, vals):
        return [as_dtype(v) for v in vals] if kind == "datatype" else list(vals)
    space = ASCENDC_TPL_ARGS_DECL(op, *(make[kind](n, *values(kind, v)) for n, kind, v in declared))
    ASCENDC_TPL_SEL(space, *(ASCENDC_TPL_ARGS_SEL(**{n: values(kind, v) for n, kind, v in row})
                             for row in selections))
    names = {n for n, _, _ in declared}
    for k in kernels:
        if set(k.template_params) == names:
            space.bind(lambda args, k=k: k.template(*(args[p] for p in k.template_params)), core=k.core)
            k.tiling_space = space
    return space
