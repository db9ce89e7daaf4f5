"""Stage 4: the loaded translation unit: its kernels as launchable objects, its structs, its Python source.

``load()`` (ascend_sim/ascendc/__init__.py) parses, lowers and compiles a C++ file with the C++ path as the code's
file name, so tracebacks, ``KernelError`` sites and trace records name C++ lines with no line map at run time.
Translations are cached in memory by the sha256 of the source, every header it included, the defines and the
translator version.
"""
from __future__ import annotations

import ast
import hashlib
import linecache
import os
import inspect
import types
from collections.abc import Mapping
from pathlib import Path

from ascend_sim import Kernel, LaunchError
from ascend_sim.ascendc.diagnostics import CompileError, Diagnostic, display_name
from ascend_sim.ascendc.lower import TRANSLATOR_VERSION, Lowerer
from ascend_sim.ascendc.parse import parse
from ascend_sim.engine.spelling import CPP, register_cpp_file


class CppKernel(Kernel):
    """A ``__global__`` function of a C++ source: launch it like any kernel (``launch(k, blocks, *args)``).

    ``__gm__ T*`` / ``GM_ADDR`` parameters take numpy arrays (read as the declared ``T``), scalars take Python
    numbers, and a ``GM_ADDR tiling`` parameter read by ``GET_TILING_DATA`` takes an instance of the struct's
    class (``mod.structs.MyTilingData(...)``), a dict of its fields or its bytes.
    """

    source_language = CPP       # hints and fixes about it show C++ spelling (engine/spelling.py)

    def __init__(self, fn, name: str, core: str, params: list, template: list):
        super().__init__(fn, core)
        self.__name__ = name
        self.params = params
        self.template_params = template
        self._factory = fn if template else None
        self.tiling_space = None        # set when ASCENDC_TPL_* tables declare this template's parameters
        if template:
            self.fn = self._needs_template

    def template(self, *args) -> "CppKernel":
        """``add_custom<2048>`` is ``mod.add_custom.template(2048)`` (types as dtypes: ``template(half)``)."""
        if not self.template_params:
            raise LaunchError(f"{self.__name__} is not a template", fix=f"launch {self.__name__} directly",
                              site=("<launch>", 0))
        if len(args) != len(self.template_params):
            raise LaunchError(f"{self.__name__} takes {len(self.template_params)} template arguments "
                              f"({', '.join(self.template_params)}), got {len(args)}",
                              fix=f"{self.__name__}.template({', '.join(self.template_params)})", site=("<launch>", 0))
        inst = CppKernel(self._factory(*args), self.__name__, self.core, self.params, [])
        inst.__name__, inst.auto_sync = self.__name__, self.auto_sync
        return inst

    def _needs_template(self, *args):
        raise LaunchError(f"{self.__name__} is a kernel template (template <{', '.join(self.template_params)}>): "
                          "launch an instance",
                          fix=f"launch(mod.{self.__name__}.template({', '.join(self.template_params)}), blocks, ...)",
                          site=("<launch>", 0))

    def __repr__(self) -> str:
        t = f"<{', '.join(self.template_params)}>" if self.template_params else ""
        return f"<C++ kernel {self.__name__}{t} ({self.core}): {', '.join(p for p, _ in self.params)}>"


def make_kernel(fn, name: str, core: str, params: list, template: list) -> CppKernel:
    return CppKernel(fn, name, core, [tuple(p) for p in params], list(template))


class Structs(types.SimpleNamespace):
    """``mod.structs.X``: the Python classes of the translation unit's plain structs (tiling data)."""


class AscendCModule:
    """The kernels (as attributes), structs and generated Python of one C++ translation unit."""

    def __init__(self, filename: str, namespace: dict, python_source: str, kernels: list, struct_names: list,
                 functions: list):
        self.__file__ = filename
        self.namespace = namespace
        self.python_source = python_source
        self.kernels = {k.name: namespace[k.name] for k in kernels}
        self.structs = Structs(**{n: namespace[n] for n in struct_names})
        self.functions = {n: namespace[n] for n in functions if n in namespace}
        #: the TemplateSpace of ASCENDC_TPL_ARGS_DECL / ASCENDC_TPL_SEL (None without them): instance(key) launches
        self.tiling_space = namespace.get("__ascendc_tiling_space__")

    def __getattr__(self, attr):
        ns = self.__dict__.get("namespace", {})
        if attr in ns and not attr.startswith("_"):
            return ns[attr]
        raise AttributeError(f"{display_name(self.__dict__.get('__file__', '?'))} has no kernel, struct or "
                             f"function {attr!r} (kernels: {', '.join(self.__dict__.get('kernels', {})) or 'none'})")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.kernels) | set(self.functions))

    def __repr__(self) -> str:
        return f"<AscendCModule {display_name(self.__file__)}: kernels {', '.join(self.kernels) or 'none'}>"


# ----------------------------------------------------------------------------- the pipeline
_CACHE: dict = {}


def translate(text: str, clang_name: str, display_file: str, defines=None, include_dirs=()):
    """(code object, python source, Lowered) for a C++ source, from the cache when nothing it read changed."""
    key0 = hashlib.sha256("\0".join([TRANSLATOR_VERSION, text, clang_name, display_file, repr(sorted(
        (defines or {}).items())), repr(list(map(str, include_dirs)))]).encode()).hexdigest()
    hit = _CACHE.get(key0)
    if hit is not None and all(_digest(p) == d for p, d in hit[0]):
        return hit[1]
    unit = parse(text, clang_name, display_file, defines, include_dirs)
    lowered = Lowerer(unit, defines).lower()
    code = _header_files(compile(lowered.tree, display_file, "exec"), lowered.header_functions)
    source = render(lowered.tree, display_file)
    deps = [(inc.include.name, _digest(inc.include.name)) for inc in unit.tu.get_includes()]
    _CACHE[key0] = (deps, (code, source, lowered))
    return code, source, lowered


def _header_files(code, header_functions: dict):
    """``code`` with the functions lowered from the kernel's own headers under their header's file name, so their
    trace records and errors name ``kernel.h:129``, not the main file (one compile has one file name)."""
    if not header_functions:
        return code
    consts = tuple(_header_files(k, header_functions) if hasattr(k, "co_consts") else k for k in code.co_consts)
    header = header_functions.get((code.co_name, code.co_firstlineno))
    if header is not None:
        return _renamed(code.replace(co_consts=consts), header)
    return code.replace(co_consts=consts)


def _renamed(code, filename: str):
    """``code`` and the code nested in it (lambdas, comprehensions) under ``filename``."""
    consts = tuple(_renamed(k, filename) if hasattr(k, "co_consts") else k for k in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def instantiate(code, source: str, lowered, display_file: str, externs: Mapping | None = None,
                auto_sync: bool = True) -> AscendCModule:
    """The module of a translated unit; ``auto_sync=False``: its kernels as built with ``--cce-auto-sync=off``."""
    mod_name = "ascendc_" + "".join(ch if ch.isalnum() else "_" for ch in os.path.basename(display_file))
    ns: dict = {"__name__": mod_name, "__file__": display_file}
    ns.update(link_externs(lowered.externs, externs or {}))
    register_cpp_file(display_file)        # errors at its lines speak C++ (engine/spelling.py)
    exec(code, ns)
    module = AscendCModule(display_file, ns, source, lowered.kernels, lowered.structs, lowered.functions)
    for k in module.kernels.values():
        k.auto_sync = auto_sync
    return module


def link_externs(declared: list, externs: Mapping) -> dict:
    """{python name: kernel} for each kernel the source declares and launches but does not define, from ``externs``
    (the notebook's names: an earlier ``%%ascendc`` or Python cell defined it). A missing or mismatched kernel is a
    link error at the declaration, as ``undefined reference`` is for the real toolchain."""
    out, errors = {}, []
    for d in declared:
        found = externs.get(d.name)
        problem = _link_problem(d, found)
        if problem:
            errors.append(Diagnostic(d.file, d.line, d.col, "error", problem))
        else:
            out[d.pyname] = found
    if errors:
        raise CompileError(errors)
    return out


def _link_problem(d, found) -> str:
    """Why ``found`` cannot be the kernel that declaration ``d`` names ("" when it can)."""
    if found is None:
        return (f"undefined kernel '{d.name}': it is declared and launched here but defined nowhere (not in this "
                f"source, not in an earlier cell); run the cell that defines {d.name} first, or define it here")
    if not isinstance(found, Kernel):
        return (f"'{d.name}' is a {type(found).__name__} in the notebook, not a kernel: the declaration needs a "
                f"kernel of that name (a __global__ function of an earlier %%ascendc cell, or a @kernel in Python); "
                f"run the cell that defines the kernel {d.name} again")
    takes = _param_count(found)
    if takes is not None and takes != d.params:
        return (f"'{d.name}' is declared here with {d.params} parameters, but the kernel {d.name} defined earlier "
                f"takes {takes}; declare it with the parameters of its definition")
    return ""


def _param_count(k: Kernel) -> int | None:
    """The parameters of a kernel: a C++ one's from its declaration, a Python one's from its signature."""
    if isinstance(k, CppKernel):
        return len(k.params)
    try:
        ps = inspect.signature(k.fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in ps):
        return None
    return sum(1 for p in ps if p.default is p.empty)


def register_source(display_file: str, text: str) -> None:
    """Make a pseudo file (``<ascendc:name>``) readable by linecache: tracebacks and the trace show its lines."""
    lines = text.splitlines(keepends=True)
    linecache.cache[display_file] = (len(text), None, lines, display_file)


# ----------------------------------------------------------------------------- readable source
def render(tree: ast.Module, display_file: str) -> str:
    """``ast.unparse`` of the generated module with ``# file:line`` after each statement (for a learner)."""
    base = display_name(display_file)
    text = ast.unparse(tree)
    stmts = _statements(tree.body)
    out, i = [], 0
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("@") or s in ("else:", "try:", "finally:") or i >= len(stmts):
            out.append(line)
            continue
        out.append(f"{line}  # {base}:{stmts[i].lineno}")
        i += 1
    if i != len(stmts):         # the pairing went wrong: plain source rather than wrong line comments
        return "# generated from " + base + "\n" + text
    return f"# generated from {base} by ascend_sim.ascendc\n" + "\n".join(out) + "\n"


def _statements(body) -> list:
    out = []
    for s in body:
        out.append(s)
        if isinstance(s, (ast.FunctionDef, ast.ClassDef)):
            out += _statements(s.body)
        elif isinstance(s, (ast.For, ast.While)):
            out += _statements(s.body)
        elif isinstance(s, ast.If):
            out += _statements(s.body)
            out += _statements(s.orelse)
    return out
