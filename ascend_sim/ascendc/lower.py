"""Stage 3: a parsed translation unit -> one Python ``ast.Module`` whose every node carries its C++ line and column.

Declarations (structs, classes, templates, functions, kernels, constants) are lowered here; statements and
expressions in lower_stmt.py and lower_expr.py, calls and constructions in lower_call.py. Names are resolved
now, from libclang's semantic references: a call to ``AscendC::DataCopy`` becomes the public API's ``DataCopy``,
a user function its Python function; nothing is looked up by name at run time.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from ascend_sim.ascendc.clang_util import evaluate
from ascend_sim.ascendc.diagnostics import CompileError, Unsupported, at_cursor, unsupported
from ascend_sim.ascendc.lower_call import CallLowering
from ascend_sim.ascendc.lower_expr import ExprLowering, call, children, const, name
from ascend_sim.ascendc.lower_std import StdLowering
from ascend_sim.ascendc.lower_stmt import FnContext, StmtLowering
from ascend_sim.ascendc.lower_types import is_pointer, is_record, tkind
from ascend_sim.ascendc.parse import INCLUDE_DIR, ParsedUnit, cindex
from ascend_sim.ascendc.tiling_template import DECL_TABLE, read_tables
from ascend_sim.ascendc.tiling_template import TABLES as TPL_TABLES

TRANSLATOR_VERSION = "1"
_KEYWORDS = set(__import__("keyword").kwlist) | {"self", "cxx", "None", "True", "False", "range", "int", "float",
                                                  "bool", "setattr", "print", "len"}
KERNEL_QUALIFIERS = {"__global__", "__vector__", "__cube__", "__mix__", "__aicore__"}
SKIPPED_DECLS = {"USING_DIRECTIVE", "USING_DECLARATION", "TYPE_ALIAS_DECL", "TYPEDEF_DECL", "STATIC_ASSERT",
                 "NAMESPACE_ALIAS", "TYPE_ALIAS_TEMPLATE_DECL", "UNEXPOSED_DECL"}


@dataclass
class KernelInfo:
    """What module.py needs to wrap a lowered ``__global__`` function as a launchable kernel."""

    name: str                       # the C++ name (and the Python one)
    core: str                       # "AIV", "AIC" or "MIX"
    params: list                    # [(name, kind)]: kind "gm" (a __gm__ pointer / GM_ADDR) or "scalar"
    template: list = field(default_factory=list)     # template parameter names ([] for a plain kernel)
    line: int = 0


@dataclass
class Lowered:
    tree: ast.Module
    kernels: list
    structs: list                   # Python names of the generated struct classes
    functions: list                 # Python names of the other functions (host code, helpers)
    externs: list = field(default_factory=list)     # ExternKernel: declared, launched, defined elsewhere
    header_functions: dict = field(default_factory=dict)    # (name, first line) -> the user header it is from


class Lowerer(ExprLowering, StmtLowering, CallLowering, StdLowering):
    """Lowers one translation unit. ``lower()`` returns a Lowered or raises CompileError."""

    def __init__(self, unit: ParsedUnit, defines: dict | None = None):
        self.unit = unit
        self.defines = dict(defines or {})
        self.imports: set[str] = set()
        self.host_modules: set[str] = set()
        self.names: dict = {}                   # decl key -> Python name (globals, classes, members)
        self.taken: set[str] = set()            # Python names taken at module level
        self.fn: FnContext | None = None
        self.kernels: list[KernelInfo] = []
        self.structs: list[str] = []
        self.functions: list[str] = []
        self.diagnostics = []
        self.class_stack: list = []
        self.template_stack: list = []          # the template parameter names in scope, outermost first
        self.tpl_tables: dict = {}              # the ASCENDC_TPL_* tables, by variable name
        self.source_file: str | None = None     # the user header whose function is being lowered (None: main file)
        self.header_functions: dict = {}        # (Python name, first line) -> that header (module.py renames them)
        self.externs: dict = {}                 # pyname -> ExternKernel (launched, declared, not defined here)

    # ------------------------------------------------------------------ helpers
    def displayed(self, d):
        """A diagnostic with the main file under its display name (``<ascendc:x>`` for a source string)."""
        import dataclasses
        return dataclasses.replace(d, file=self.unit.display_file) if d.file == self.unit.main_file else d

    def key(self, c):
        c = c.canonical if c is not None else c
        loc = c.location
        return (loc.file.name if loc.file else "", loc.offset, c.spelling)

    def is_header(self, c) -> bool:
        f = c.location.file
        return f is not None and os.path.abspath(f.name).startswith(str(INCLUDE_DIR))

    def user_header(self, c) -> str | None:
        """The file of cursor ``c`` when it is a header of the kernel's own (not the main file, not ours)."""
        f = c.location.file
        if f is None or f.name == self.unit.main_file or self.is_header(c) or not os.path.isfile(f.name):
            return None
        return f.name

    def is_main_file(self, c) -> bool:
        f = c.location.file
        return f is not None and f.name == self.unit.main_file

    def host_module_of(self, c) -> str | None:
        from ascend_sim.ascendc.bindings import HOST_HEADERS
        f = c.location.file
        return HOST_HEADERS.get(os.path.basename(f.name)) if f is not None and self.is_header(c) else None

    def host_has(self, host: str, spelling: str) -> bool:
        """Whether host module ``host`` (ascend_sim.ascendc.host.X) models ``spelling``; the others are diagnostics.
        Registers the module for the generated code's imports."""
        import importlib
        module = importlib.import_module(f"ascend_sim.ascendc.host.{host}")
        if spelling.startswith("_") or not hasattr(module, spelling):
            return False
        self.host_modules.add(host)
        return True

    def is_user_record(self, t) -> bool:
        from ascend_sim.ascendc.lower_types import record_decl
        d = record_decl(t)
        return d is not None and not self.is_header(d)

    def py_ident(self, s: str) -> str:
        return s + "_" if s in _KEYWORDS else s

    def qualified(self, c) -> str:
        parts = []
        while c is not None and c.kind.name not in ("TRANSLATION_UNIT",):
            if c.spelling:
                parts.append(c.spelling)
            c = c.semantic_parent
        return "::".join(reversed(parts))

    def loc(self, node, c, only_missing: bool = False):
        """Give ``node`` (and its children without one) the C++ position of cursor ``c``."""
        loc = c.location
        line = loc.line if loc.file is not None and loc.file.name == (self.source_file or self.unit.main_file) \
            else self.here_line
        if line <= 0:
            line = self.here_line
        col = max(loc.column - 1, 0) if line == loc.line else 0
        for n in ast.walk(node):
            if "lineno" in n._attributes and (not hasattr(n, "lineno") or not only_missing and n is node):
                if n is node or not hasattr(n, "lineno"):
                    n.lineno, n.col_offset = line, col
                    n.end_lineno, n.end_col_offset = line, col + 1
        if line > 0:
            self.here_line = line
        return node

    here_line = 1

    def declare_global(self, ref) -> str:
        """The module-level Python name of a user declaration (a function, class, struct or global)."""
        k = self.key(ref)
        if k in self.names:
            return self.names[k]
        base = self.py_ident(ref.spelling or "anon")
        pyname, n = base, 1
        while pyname in self.taken:
            n += 1
            pyname = f"{base}_{n}"
        self.taken.add(pyname)
        self.names[k] = pyname
        return pyname

    def member_name(self, ref) -> str:
        k = self.key(ref)
        if k in self.names:
            return self.names[k]
        if ref.kind.name == "CXX_METHOD" and not self.is_header(ref):
            parent = ref.semantic_parent
            same = [m for m in children(parent) if m.kind.name in ("CXX_METHOD", "FUNCTION_TEMPLATE")
                    and m.spelling == ref.spelling]
            if len(same) > 1:
                idx = next((i for i, m in enumerate(same) if self.key(m) == k), 0)
                pyname = self.py_ident(ref.spelling) + ("" if idx == 0 else f"_{idx + 1}")
                self.names[k] = pyname
                return pyname
        return self.py_ident(ref.spelling)

    def local_name(self, ref) -> str:
        if self.fn is not None and self.key(ref) in self.fn.locals:
            return self.fn.locals[self.key(ref)]
        return self.py_ident(ref.spelling)

    # ------------------------------------------------------------------ the translation unit
    def lower(self) -> Lowered:
        tu = self.unit.tu
        body = []
        self.lower_decls(list(tu.cursor.get_children()), body, prev_end=0)
        space = self.tiling_space() if self.tpl_tables else None
        if self.diagnostics:
            raise CompileError([self.displayed(d) for d in self.diagnostics])
        head = [ast.ImportFrom("ascend_sim.ascendc", [ast.alias("cxx")], 0)]
        if self.imports:
            head.insert(0, ast.ImportFrom("ascend_sim", [ast.alias(n) for n in sorted(self.imports)], 0))
        for m in sorted(self.host_modules):
            head.append(ast.Assign([ast.Name(m, ast.Store())], call("cxx.host_module", [ast.Constant(m)])))
        for k in self.kernels:
            args = [name(k.name), ast.Constant(k.name), ast.Constant(k.core),
                    ast.List([ast.Tuple([ast.Constant(p), ast.Constant(kind)], ast.Load()) for p, kind in k.params],
                             ast.Load()),
                    ast.List([ast.Constant(t) for t in k.template], ast.Load())]
            node = ast.Assign([ast.Name(k.name, ast.Store())], call("cxx.kernel", args))
            body.append(_at_line(node, k.line))
        if space is not None:
            body.append(_at_line(space, 1))
        for n in head:
            _at_line(n, 1)
        tree = ast.Module(head + body, [])
        ast.fix_missing_locations(tree)
        return Lowered(tree, self.kernels, self.structs, self.functions, list(self.externs.values()),
                       self.header_functions)

    def tiling_space(self) -> ast.stmt | None:
        """``__ascendc_tiling_space__ = cxx.tiling_space(op, declared, selections, [kernel templates])``."""
        try:
            op, declared, selections = read_tables(self.tpl_tables)
        except Unsupported as e:
            self.diagnostics.append(e.diagnostic)
            return None
        names = {n for n, _, _ in declared}
        templates = [k for k in self.kernels if set(k.template) == names]
        if not templates and not self.diagnostics:     # (a kernel that failed to lower is reported already)
            c = self.tpl_tables.get(DECL_TABLE) or next(iter(self.tpl_tables.values()))
            self.diagnostics.append(at_cursor(c, f"ASCENDC_TPL_ARGS_DECL declares {', '.join(sorted(names))} but no "
                                                 "__global__ kernel template has exactly these template parameters"))
            return None
        frozen = [tuple((n, kind, tuple(v)) for n, kind, v in ps) for ps in (declared, *selections)]
        spec = [ast.Constant(op), ast.Constant(frozen[0]), ast.Constant(tuple(frozen[1:])),
                ast.List([name(k.name) for k in templates], ast.Load())]
        return ast.Assign([ast.Name("__ascendc_tiling_space__", ast.Store())], call("cxx.tiling_space", spec))

    def lower_decls(self, decls, body: list, prev_end: int) -> None:
        for c in decls:
            if c.location.file is None or self.is_header(c):
                continue
            if c.extent.start.file is None or c.extent.start.file.name != c.location.file.name or \
                    prev_end > c.extent.start.offset:
                prev_end = 0
            try:
                body += self.decl(c, prev_end)
            except Unsupported as e:
                self.diagnostics.append(e.diagnostic)
            except CompileError as e:
                self.diagnostics += e.diagnostics
            except Exception as e:        # a bug of the translator: still a diagnostic at the learner's line
                if os.environ.get("ASCEND_SIM_ASCENDC_DEBUG"):
                    raise
                self.diagnostics.append(at_cursor(c, f"the C++ front end failed here ({type(e).__name__}: {e}); "
                                                     "please report it", "error"))
            prev_end = c.extent.end.offset

    def decl(self, c, prev_end: int) -> list:
        kind = c.kind.name
        if kind in SKIPPED_DECLS:
            return []
        if kind == "NAMESPACE":
            out = []
            self.lower_decls(list(c.get_children()), out, prev_end)
            return out
        if kind == "LINKAGE_SPEC":
            out = []
            self.lower_decls(list(c.get_children()), out, c.extent.start.offset)
            return out
        if kind in ("STRUCT_DECL", "CLASS_DECL"):
            return self.record(c, [])
        if kind == "CLASS_TEMPLATE":
            return self.record(c, self.template_param_names(c))
        if kind in ("CLASS_TEMPLATE_PARTIAL_SPECIALIZATION",):
            raise unsupported(c, "partial specialisation of a class template")
        if kind == "UNION_DECL":
            raise unsupported(c, "unions")
        if kind == "ENUM_DECL":
            return []               # enumerators lower to their values
        if kind == "VAR_DECL" and c.spelling in TPL_TABLES:
            self.tpl_tables[c.spelling] = c         # ASCENDC_TPL_ARGS_DECL / ASCENDC_TPL_SEL (tiling_template.py)
            return []
        if kind == "VAR_DECL":
            return self.global_var(c)
        if kind in ("FUNCTION_DECL", "FUNCTION_TEMPLATE"):
            if c.semantic_parent is not None and c.semantic_parent.kind.name in ("CLASS_DECL", "STRUCT_DECL",
                                                                                 "CLASS_TEMPLATE"):
                return []           # an out-of-line method: lowered with its class
            if not c.is_definition():
                return []
            return self.function(c, prev_end)
        if kind == "CXX_METHOD" or kind == "CONSTRUCTOR" or kind == "DESTRUCTOR":
            return []               # out-of-line definitions: lowered with their class
        raise unsupported(c, f"this declaration ({kind.lower().replace('_', ' ')})")

    def template_param_names(self, c) -> list:
        from ascend_sim.ascendc.clang_util import template_params
        out = []
        for p in template_params(c):
            if p.kind.name == "TEMPLATE_TEMPLATE_PARAMETER":
                raise unsupported(p, "template template parameters")
            if any(t.spelling == "..." for t in p.get_tokens()):
                raise unsupported(p, "variadic templates")
            out.append(self.py_ident(p.spelling))
        return out

    def global_var(self, c) -> list:
        pyname = self.declare_global(c)
        inits = [x for x in children(c) if x.kind.is_expression()]
        saved, self.fn = self.fn, FnContext()
        try:
            if inits:
                v = evaluate(inits[-1]) if not is_record(c.type) else None
                value = const(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and \
                    not self.is_float_type(c.type) else self.initial_value(c, c.type, inits[-1])
            else:
                value = self.initial_value(c, c.type, None)
        finally:
            self.fn = saved
        return [self.loc(ast.Assign([ast.Name(pyname, ast.Store())], value), c)]

    def is_number_type(self, t) -> bool:
        from ascend_sim.ascendc.lower_types import int_info, is_dependent, is_float
        return not is_dependent(t) and (int_info(t) is not None or is_float(t))

    def is_float_type(self, t) -> bool:
        from ascend_sim.ascendc.lower_types import is_float
        return is_float(t)

    # ------------------------------------------------------------------ functions
    def qualifier_tokens(self, c, prev_end: int) -> set:
        """The kernel qualifier macros (__global__, __vector__ ...) written before ``c``'s name.

        The CPU-twin header defines them empty, so they are not in the AST; they are in the tokens between the
        previous declaration and this one's name.
        """
        tu = self.unit.tu
        f = c.location.file
        first_line = max(c.extent.start.line - 4, 1)
        start = tu.get_location(f.name, (first_line, 1))
        if prev_end and prev_end > start.offset:
            start = tu.get_location(f.name, min(prev_end, c.extent.start.offset))
        end = c.location
        ci = cindex()
        toks = tu.get_tokens(extent=ci.SourceRange.from_locations(start, end))
        return {t.spelling for t in toks} & KERNEL_QUALIFIERS

    def function(self, c, prev_end: int) -> list:
        quals = self.qualifier_tokens(c, prev_end)
        is_kernel = "__global__" in quals
        tparams = self.template_param_names(c) if c.kind.name == "FUNCTION_TEMPLATE" else []
        pyname = self.declare_global(c)
        if tparams:
            self.template_stack.append(tparams)
        try:
            fn_def, ctx = self.function_def(c, pyname, tparams, is_kernel=is_kernel, host=not quals)
        finally:
            if tparams:
                self.template_stack.pop()
        out = [fn_def]
        if tparams:
            out = [self.template_factory(pyname, tparams, out, pyname, c)]
        if is_kernel:
            core = "MIX" if "__mix__" in quals else "AIC" if "__cube__" in quals else "AIV"
            core = ctx.task_type or core
            params = [(self.py_ident(p.spelling), "gm" if is_pointer(p.type) else "scalar")
                      for p in c.get_arguments()] if c.kind.name == "FUNCTION_DECL" else \
                [(self.py_ident(p.spelling), "gm" if is_pointer(p.type) else "scalar")
                 for p in children(c) if p.kind.name == "PARM_DECL"]
            self.kernels.append(KernelInfo(pyname, core, params, tparams, c.location.line))
        else:
            self.functions.append(pyname)
        return out

    def template_factory(self, pyname: str, tparams: list, body: list, returned: str, c) -> ast.stmt:
        """``@cxx.template def name(T, N): <body>; return name``: one instantiation per argument tuple."""
        fn = ast.FunctionDef(pyname, self.arguments(tparams, []), body + [ast.Return(name(returned))],
                             [name("cxx.template")], None)
        return self.loc(fn, c)

    def arguments(self, names: list, defaults: list) -> ast.arguments:
        return ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None, kwonlyargs=[],
                             kw_defaults=[], kwarg=None, defaults=defaults)

    def function_def(self, c, pyname: str, tparams: list, is_kernel: bool = False, method: bool = False,
                     decorators=(), leading=(), host: bool = False) -> tuple:
        """``def pyname(params): body`` for function (or method) cursor ``c`` and the function's context."""
        definition = c.get_definition() or c
        saved, self.fn = self.fn, FnContext()
        saved_file, saved_line = self.source_file, self.here_line
        self.source_file = self.user_header(definition)
        if self.source_file is not None:       # its lines are the header's (module.py gives it that file name)
            self.here_line = definition.location.line
        try:
            self.fn.used.update(tparams)
            self.fn.used.add("self")
            params = [p for p in children(definition) if p.kind.name == "PARM_DECL"]
            names, defaults, prologue = [], [], []
            for p in params:
                pn = self.new_local(p) if p.spelling else self.fresh("unnamed")
                names.append(pn)
                inits = [x for x in children(p) if x.kind.is_expression()]
                if inits:
                    defaults.append(self.rvalue(inits[-1]))
                elif defaults:
                    raise unsupported(p, "a parameter without a default after one with a default")
                if is_kernel and not is_pointer(p.type) and not is_record(p.type) and self.is_number_type(p.type):
                    # a scalar launch argument as its C++ type (a Python float becomes float32, an int wraps)
                    prologue.append(self.loc(ast.Assign([ast.Name(pn, ast.Store())],
                                                        call("cxx.convert", [self.dtype_of(p.type, p), name(pn)])),
                                             p))
                if is_kernel and is_pointer(p.type):
                    pointee = p.type.get_pointee() if p.type.get_pointee().spelling else \
                        p.type.get_canonical().get_pointee()
                    prologue.append(self.loc(ast.Assign([ast.Name(pn, ast.Store())],
                                                        call("cxx.gm_param", [name(pn), self.dtype_of(pointee, p)])),
                                             p))
                elif host and is_pointer(p.type) and self.is_number_type(p.type.get_canonical().get_pointee()):
                    # a host T* given a numpy array (a check's buffer): a pointer to its first element
                    pointee = p.type.get_canonical().get_pointee()
                    prologue.append(self.loc(ast.Assign([ast.Name(pn, ast.Store())], call(
                        "cxx.host_param", [name(pn), self.dtype_of(pointee, p), ast.Constant(p.spelling)])), p))
            self.mark_boxed(definition)
            for p in params:
                if self.scalar_out_param(p):           # T& of a scalar: the caller's Box or Ref, used as .value
                    pn = self.fn.locals[self.key(p)]
                    self.fn.aliases[self.key(p)] = lambda n=pn: ast.Attribute(name(n), "value", ast.Load())
                    continue
                if self.key(p) in self.fn.boxed:
                    pn = self.fn.locals[self.key(p)]
                    prologue.append(self.loc(ast.Assign([ast.Name(pn, ast.Store())], call("cxx.Box", [name(pn)])),
                                             p))
                    self.fn.aliases[self.key(p)] = lambda n=pn: ast.Attribute(name(n), "value", ast.Load())
            body_cursor = next((x for x in children(definition) if x.kind.name == "COMPOUND_STMT"), None)
            body = prologue + (self.stmts(body_cursor) if body_cursor is not None else [])
            names[0:0] = list(leading)
            if method:
                names.insert(0, "self")
            fn = ast.FunctionDef(pyname, self.arguments(names, defaults), body or [ast.Pass()], list(decorators),
                                 None)
            self.loc(fn, definition if self.source_file is not None else c)
            if self.source_file is not None:
                first = min([fn.lineno] + [d.lineno for d in fn.decorator_list if hasattr(d, "lineno")])
                self.header_functions[(pyname, first)] = self.source_file
            return fn, self.fn
        finally:
            self.fn = saved
            if saved_file is not None or self.source_file is not None:
                self.source_file, self.here_line = saved_file, saved_line

    def mark_boxed(self, fn_cursor) -> None:
        """Locals whose address is taken (``&x`` of a scalar, or passed to a header function's ``T&``) live in
        a cxx.Box, which the callee reads and writes through ``get()`` / ``set(v)``."""
        from ascend_sim.ascendc.clang_util import unary_op
        for n in fn_cursor.walk_preorder():
            if n.kind.name == "CALL_EXPR" and n.referenced is not None and \
                    n.referenced.kind.name in ("FUNCTION_DECL", "CXX_METHOD"):
                params = list(n.referenced.get_arguments() or [])
                args = list(n.get_arguments())
                if n.spelling == "operator()" and len(args) == len(params) + 1:
                    args = args[1:]                     # a lambda's call: the closure object comes first
                for p, a in zip(params, args):
                    if self.scalar_out_param(p):
                        target = a
                        while target.kind.name in ("PAREN_EXPR", "UNEXPOSED_EXPR") and children(target):
                            target = children(target)[0]
                        ref = target.referenced if target.kind.name == "DECL_REF_EXPR" else None
                        if ref is not None and ref.kind.name in ("VAR_DECL", "PARM_DECL"):
                            self.fn.boxed.add(self.key(ref))
            if n.kind.name == "UNARY_OPERATOR" and unary_op(n) == "&":
                target = children(n)[0]
                while target.kind.name in ("PAREN_EXPR", "UNEXPOSED_EXPR") and children(target):
                    target = children(target)[0]
                ref = target.referenced if target.kind.name == "DECL_REF_EXPR" else None
                if ref is not None and ref.kind.name in ("VAR_DECL", "PARM_DECL") and not is_record(ref.type):
                    self.fn.boxed.add(self.key(ref))

    def scalar_out_param(self, p) -> bool:
        """A parameter ``T&`` (not const) of a scalar type: the callee writes the caller's variable."""
        from ascend_sim.ascendc.lower_types import int_info, is_float
        if tkind(p.type) != "LVALUEREFERENCE" or p.type.get_pointee().is_const_qualified():
            return False
        t = p.type.get_pointee()
        return int_info(t) is not None or is_float(t) or is_pointer(t)

    def task_type_of(self, c) -> str:
        """KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_...): the core type it pins (read from the argument's declaration:
        the call is a macro expansion, whose source tokens libclang may not give)."""
        v = [x.spelling for x in c.walk_preorder()
             if x.kind.name == "DECL_REF_EXPR" and x.spelling.startswith("KERNEL_TYPE_")]
        v = v or [t.spelling for t in c.get_tokens() if t.spelling.startswith("KERNEL_TYPE_")]
        kind = v[0] if v else ""
        return "MIX" if "MIX" in kind else "AIC" if "AIC" in kind else "AIV"

    # ------------------------------------------------------------------ structs and classes
    def record(self, c, tparams: list) -> list:
        if not c.is_definition():
            return []
        pyname = self.declare_global(c)
        for ch in children(c):
            if ch.kind.name == "CXX_METHOD" and ch.is_virtual_method():
                raise unsupported(ch, "virtual functions (a kernel has no dynamic dispatch); use a template "
                                      "parameter or an ordinary member function")
            if ch.kind.name in ("STRUCT_DECL", "CLASS_DECL", "CLASS_TEMPLATE", "UNION_DECL") and ch.is_definition():
                raise unsupported(ch, "a type nested in a class; declare it at namespace scope")
        bases = [ch for ch in children(c) if ch.kind.name == "CXX_BASE_SPECIFIER"]
        fields = [ch for ch in children(c) if ch.kind.name == "FIELD_DECL"]
        methods = [ch for ch in children(c) if ch.kind.name in ("CXX_METHOD", "FUNCTION_TEMPLATE")]
        ctors = [ch for ch in children(c) if ch.kind.name == "CONSTRUCTOR" and ch.get_definition() is not None
                 and not ch.is_copy_constructor() and not ch.is_move_constructor()]
        is_struct = not tparams and not ctors and not bases and all(self.plain_field(f) for f in fields)
        self.class_stack.append(c)
        self.template_stack.append(tparams)
        try:
            body = []
            if is_struct:
                body += self.struct_layout(c, fields)
            else:
                body.append(self.init_method(c, fields, ctors, bases))
            for m in methods:
                definition = m.get_definition()
                if definition is None:
                    continue
                mt = self.template_param_names(m) if m.kind.name == "FUNCTION_TEMPLATE" else []
                decos = [name("staticmethod")] if m.is_static_method() else []
                self.template_stack.append(mt)
                try:        # a member function template takes its template arguments first
                    fn, _ = self.function_def(m, self.member_name(m), tparams + mt, method=not m.is_static_method(),
                                              decorators=decos, leading=mt)
                finally:
                    self.template_stack.pop()
                body.append(fn)
        finally:
            self.class_stack.pop()
            self.template_stack.pop()
        base_nodes = [self.class_ref(b.referenced or b.type.get_declaration(), b) for b in bases]
        if is_struct:
            base_nodes = [name("cxx.Struct")]
            self.structs.append(pyname)
        cls = self.loc(ast.ClassDef(pyname, base_nodes, [], body or [ast.Pass()], []), c)
        if tparams:
            return [self.template_factory(pyname, tparams, [cls], pyname, c)]
        return [cls]

    def plain_field(self, f) -> bool:
        """A field a C layout can hold (a number, a pointer, an array of those, a plain struct)."""
        from ascend_sim.ascendc.lower_types import int_info, is_float
        t = f.type.get_canonical()
        if tkind(t) == "CONSTANTARRAY":
            t = t.get_array_element_type().get_canonical()
        if int_info(t) is not None or is_float(t):
            return True
        if is_record(t) and self.is_user_record(t):
            return True
        return self.is_std_string(t)

    def is_std_string(self, t) -> bool:
        """``std::string`` (a Python str: immutable, so a struct holding one still copies by value)."""
        from ascend_sim.ascendc.lower_types import record_decl
        d = record_decl(t)
        return d is not None and self.is_header(d) and self.qualified(d) == "std::string"

    def struct_layout(self, c, fields) -> list:
        """``__slots__``, ``_fields`` (name, default) and the C layout of a plain struct."""
        fnames, layout, host_only = [], [], []
        for f in fields:
            fname = self.py_ident(f.spelling)
            self.names[self.key(f)] = fname
            inits = [x for x in children(f) if x.kind.is_expression()]
            saved, self.fn = self.fn, FnContext()
            try:
                default = self.initial_value(f, f.type, inits[-1] if inits else None)
            finally:
                self.fn = saved
            fnames.append(ast.Tuple([ast.Constant(fname), default], ast.Load()))
            t = f.type.get_canonical()
            if self.is_std_string(t):           # host only: no C bytes (to_bytes refuses the struct)
                host_only.append(ast.Constant(fname))
                continue
            count = 1
            if tkind(t) == "CONSTANTARRAY":
                count = t.get_array_size()
                t = t.get_array_element_type().get_canonical()
            offset = c.type.get_offset(f.spelling) // 8
            layout.append(ast.Tuple([ast.Constant(fname), const(offset), self.dtype_of(t, f), const(count)],
                                    ast.Load()))
        return [
            ast.Assign([ast.Name("__slots__", ast.Store())], ast.Tuple([ast.Constant(e.elts[0].value)
                                                                       for e in fnames], ast.Load())),
            ast.Assign([ast.Name("_fields", ast.Store())], ast.Tuple(fnames, ast.Load())),
            ast.Assign([ast.Name("_layout", ast.Store())], ast.Tuple(layout, ast.Load())),
            ast.Assign([ast.Name("_size", ast.Store())], const(c.type.get_size())),
        ] + ([ast.Assign([ast.Name("_host_only", ast.Store())], ast.Tuple(host_only, ast.Load()))] if host_only else [])

    def init_method(self, c, fields, ctors, bases) -> ast.FunctionDef:
        """``__init__``: fields to their defaults, then the constructor's initialiser list and body."""
        if len(ctors) > 1:
            raise unsupported(ctors[1], "more than one constructor (overloaded constructors)")
        saved, self.fn = self.fn, FnContext()
        try:
            stmts = []
            for b in bases:
                bref = b.referenced or b.type.get_declaration()
                stmts.append(self.loc(ast.Expr(call(ast.Attribute(self.class_ref(bref, b), "__init__",
                                                                  ast.Load()), [name("self")])), b))
            inits = {}
            ctor = ctors[0].get_definition() if ctors else None
            if ctor is not None:
                pending = None
                for ch in children(ctor):
                    if ch.kind.name == "MEMBER_REF":
                        pending = ch
                    elif pending is not None and ch.kind.is_expression():
                        inits[self.key(pending.referenced)] = ch
                        pending = None
            params = []
            if ctor is not None:
                for p in [p for p in children(ctor) if p.kind.name == "PARM_DECL"]:
                    params.append(self.new_local(p))
            for f in fields:
                fname = self.py_ident(f.spelling)
                self.names[self.key(f)] = fname
                init = inits.get(self.key(f))
                if init is None:
                    ins = [x for x in children(f) if x.kind.is_expression() and not self.is_template_arg_child(x, f)]
                    init = ins[-1] if ins else None
                if init is not None and init.kind.name == "PAREN_LIST_EXPR":
                    init = children(init)[0]
                value = self.initial_value(f, f.type, init)
                stmts.append(self.loc(ast.Assign([ast.Attribute(name("self"), fname, ast.Store())], value),
                                      init if init is not None else f))
            if ctor is not None:
                body = next((x for x in children(ctor) if x.kind.name == "COMPOUND_STMT"), None)
                if body is not None:
                    stmts += self.stmts(body)
            fn = ast.FunctionDef("__init__", self.arguments(["self"] + params, []), stmts or [ast.Pass()], [], None)
            return self.loc(fn, ctor or c)
        finally:
            self.fn = saved


def _at_line(node, line: int):
    for n in ast.walk(node):
        if "lineno" in n._attributes:
            n.lineno = n.end_lineno = line
            n.col_offset, n.end_col_offset = 0, 1
    return node
