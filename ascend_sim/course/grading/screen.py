"""The allowlist an answer cell must keep to be run by the grader (checked in the AST, before anything runs).

The grader re-runs the learner's answers in a process of its own (``rerun.py``); what keeps that code away
from the simulator's recorder and the check's internals is this policy. An answer may:

* import only ``numpy`` (and ``numpy.random``, ``numpy.linalg``, ``numpy.fft``), ``math``, the public
  ``ascend_sim`` API (``ascend_sim``'s ``__all__``, ``ascend_sim.ascendc``, ``ascend_sim.models.datasets``,
  ``load_lenet_weights``) and the public names of the lab's own checks module;
* use a module only as ``module.name`` (no module bound to another name or passed around), where every step
  of the chain is public: ``ascend_sim.api`` or ``np.lib`` is refused, so is numpy's file and memory access
  (``np.fromfile``, ``np.save``, ``arr.tofile``, ``arr.ctypes`` ...);
* not touch a dunder (``__globals__``, ``__class__``; defining ``__init__`` is fine) or private (``._x``)
  name or attribute, frames and tracebacks (``f_back``, ``gi_frame``, ``tb_frame``), the simulator's raw
  memory (``.buf``, ``.raw``, ``.arena``, ``.tier``, ``.core``, ``.written_by``);
* not name at all (so not call, alias or shadow) ``exec``, ``eval``, ``compile``, ``getattr``,
  ``setattr``, ``delattr``, ``globals``, ``locals``, ``vars``, ``open``, ``input``, ``help``,
  ``breakpoint`` or ``get_ipython`` (IPython's ``!cmd`` and ``%magic`` become ``get_ipython()`` calls);
* not write, delete or mutate (``.update``, ``.append`` ...) anything reached from an imported name:
  ``np.isclose = ...``, ``AddTiling.tileLength = ...``.

A refusal names the cell's line and the rule: ``line 3: `np.fromfile` ... (rule: numpy file access)``.
A lab author can allow one key for one exercise (``@LAB.exercise("ex2", ..., allow=("os", "_exit"))``): the key
is the module, attribute or builtin named in the refusal. A cell that does not parse is left to the re-run,
which reports its SyntaxError at its line.
"""
from __future__ import annotations

import ast
import functools
import importlib
import types
from typing import Any, Iterable, Mapping

__all__ = ["screen_source", "import_bindings", "ALLOWED_MODULES", "FORBIDDEN_NAMES", "FORBIDDEN_ATTRS",
           "NUMPY_DENIED", "MUTATORS", "PUBLIC_ASCEND"]

ALLOWED_MODULES = ("numpy", "numpy.random", "numpy.linalg", "numpy.fft", "math")
PUBLIC_ASCEND: dict[str, frozenset[str] | None] = {     # module -> names that may be imported (None: its __all__)
    "ascend_sim": None, "ascend_sim.ascendc": None, "ascend_sim.models.datasets": None,
    "ascend_sim.models.lenet_reference": frozenset({"load_lenet_weights"})}
FORBIDDEN_NAMES = frozenset({"exec", "eval", "compile", "getattr", "setattr", "delattr", "globals", "locals", "vars",
                             "open", "input", "help", "breakpoint", "get_ipython", "memoryview"})
FORBIDDEN_ATTRS = frozenset({
    # the simulator's memory and machinery behind the public objects
    "buf", "raw", "arena", "shadow", "tier", "core", "written_by", "gm_written_by", "gm_view",
    # frames, code objects and tracebacks
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "f_trace", "gi_frame", "gi_code", "gi_yieldfrom",
    "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code", "tb_frame", "tb_next", "co_code", "co_consts",
    # numpy's raw memory and file access on arrays
    "ctypes", "tofile", "dump", "dumps"})
NUMPY_DENIED = frozenset({"fromfile", "load", "loads", "save", "savez", "savez_compressed", "savetxt", "loadtxt",
                          "genfromtxt", "fromregex", "memmap", "DataSource", "show_config", "show_runtime", "info",
                          "get_include", "ctypeslib", "lib", "testing", "f2py", "distutils", "core", "rec", "ma",
                          "from_dlpack", "seterrcall", "setbufsize", "add_docstring", "add_newdoc"})
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
                      "add", "discard", "sort", "reverse", "fill", "itemset", "resize", "setflags", "put"})
RULE_IMPORT = ("an answer may import only numpy, math and the public ascend_sim API "
               "(`from ascend_sim import ...`)")


def screen_source(source: str, *, checks_module: str = "", allow: Iterable[str] = (),
                  bound: Mapping[str, Any] | None = None) -> list[str]:
    """Every reason to refuse ``source`` ('line N: ... (rule: ...)'); empty when it keeps the allowlist.

    ``bound``: names the lab's setup cells imported (name -> object), resolved like the cell's own imports.
    """
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return []
    policy = _Policy(checks_module, set(allow), dict(bound or {}))
    policy.collect_imports(tree)
    policy.visit(tree)
    return list(dict.fromkeys(policy.reasons))


def import_bindings(source: str, checks_module: str = "") -> dict[str, Any]:
    """name -> object for the imports of a (trusted) setup cell, resolved in the grader's process."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return {}
    policy = _Policy(checks_module, set(), {})
    policy.collect_imports(tree)
    return policy.bound


class _Policy(ast.NodeVisitor):
    def __init__(self, checks_module: str, allow: set[str], bound: dict[str, Any]):
        self.checks_module, self.allow, self.bound = checks_module, allow, bound
        self.reasons: list[str] = []
        self.parents: dict[int, ast.AST] = {}

    # --------------------------------------------------------------- helpers
    def refuse(self, key: str, node: ast.AST, text: str, rule: str) -> None:
        if key not in self.allow:
            self.reasons.append(f"line {getattr(node, 'lineno', '?')}: {text} (rule: {rule})")

    def collect_imports(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Import):
                for a in node.names:
                    self._import(node, a.name, None, a.asname)
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    self._import(node, "." * node.level + (node.module or ""), a.name, a.asname)

    def _import(self, node: ast.AST, module: str, name: str | None, asname: str | None) -> None:
        full = f"{module}.{name}" if name else module
        shown = f"from {module} import {name}" if name else f"import {module}"
        ok = self._module_ok(module)
        if ok and name is not None:
            ok = self._name_ok(module, name)
        if not ok:
            self.refuse(module.split(".")[0] or full, node, f"`{shown}` is not allowed", RULE_IMPORT)
            return
        try:
            mod = importlib.import_module(module)
        except Exception:  # noqa: BLE001 - an import that fails in the grader fails in the re-run too
            return
        if name is None:
            top = module.split(".")[0]
            self.bound[asname or top] = mod if asname else importlib.import_module(top)
        elif name != "*":
            if not hasattr(mod, name):
                try:
                    importlib.import_module(f"{module}.{name}")
                except Exception:  # noqa: BLE001
                    return
            value = getattr(mod, name, None)
            if isinstance(value, types.ModuleType) and not _module_allowed(value):
                self.refuse(name, node, f"`{shown}` imports the module {value.__name__}", RULE_IMPORT)
                return
            self.bound[asname or name] = value

    def _module_ok(self, module: str) -> bool:
        return module in ALLOWED_MODULES or module in PUBLIC_ASCEND or (
            bool(self.checks_module) and module == self.checks_module)

    def _name_ok(self, module: str, name: str) -> bool:
        if name.startswith("_"):
            return False
        if module == self.checks_module:
            return name not in ("LAB", "*") and _defined_in(module, name)
        if module.startswith("numpy"):
            return name != "*" and name not in NUMPY_DENIED
        if module == "math":
            return True
        names = PUBLIC_ASCEND[module]
        if names is not None:
            return name in names
        return name == "*" or name in _public_names(module)

    # --------------------------------------------------------------- names
    def visit_Name(self, node: ast.Name) -> None:
        if _dunder(node.id):
            self.refuse(node.id, node, f"`{node.id}` is a dunder name", "no dunder names or attributes")
        elif node.id in FORBIDDEN_NAMES:
            self.refuse(node.id, node, f"`{node.id}` is not allowed in an answer (not even as another name)",
                        "no exec/eval/compile/getattr/setattr/globals/vars/open and no aliases of them")
        elif (isinstance(node.ctx, ast.Load) and isinstance(self.bound.get(node.id), types.ModuleType)
              and not self._chain_root(node)):
            self.refuse("module-alias", node, f"the module `{node.id}` is used as a value",
                        "a module may only be used as `module.name`")
        self.generic_visit(node)

    def _def(self, node: ast.AST, name: str) -> None:
        if name in FORBIDDEN_NAMES:
            self.refuse(name, node, f"defining `{name}` shadows a builtin the grader forbids",
                        "no exec/eval/compile/getattr/setattr/globals/vars/open and no aliases of them")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._def(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._def(node, node.name)

    def visit_arg(self, node: ast.arg) -> None:
        if _dunder(node.arg):
            self.refuse(node.arg, node, f"`{node.arg}` is a dunder name", "no dunder names or attributes")

    def visit_alias(self, node: ast.alias) -> None:
        if node.asname and (node.asname in FORBIDDEN_NAMES or _dunder(node.asname)):
            self.refuse(node.asname, node, f"`as {node.asname}` shadows a forbidden name",
                        "no exec/eval/compile/getattr/setattr/globals/vars/open and no aliases of them")

    # --------------------------------------------------------------- attributes
    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if _dunder(attr):
            self.refuse(attr, node, f"`.{attr}` is a dunder attribute", "no dunder names or attributes")
        elif attr.startswith("_"):
            self.refuse(attr, node, f"`.{attr}` is a private attribute", "no private (`_name`) attribute access")
        elif attr in FORBIDDEN_ATTRS:
            self.refuse(attr, node, f"`.{attr}` reaches into simulator or interpreter internals",
                        "no access to frames, raw memory or files through attributes")
        else:
            self._resolve(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and self._rooted(node.value):
            self.refuse("module-write", node, f"`{ast.unparse(node)}` changes something the lab or a library owns",
                        "no writing to imported modules or objects")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)) and self._rooted(node.value):
            self.refuse("module-write", node, f"`{ast.unparse(node)}` changes something the lab or a library owns",
                        "no writing to imported modules or objects")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in MUTATORS and self._rooted(f.value) and not (
                isinstance(self._value(f.value), types.ModuleType)):
            self.refuse("module-write", node, f"`{ast.unparse(f)}(...)` changes something the lab or a library owns",
                        "no writing to imported modules or objects")
        self.generic_visit(node)

    def _resolve(self, node: ast.Attribute) -> None:
        """Follow an import-rooted chain statically: every module on it must be allowed, every step public."""
        base = self._value(node.value)
        if base is _UNKNOWN:
            return
        if isinstance(base, types.ModuleType):
            name = base.__name__
            if name.startswith("numpy") and node.attr in NUMPY_DENIED:
                self.refuse(node.attr, node, f"`{ast.unparse(node)}` is numpy's file or memory access",
                            "numpy file and memory access is not allowed")
                return
            if name == "ascend_sim" and node.attr not in _public_names("ascend_sim"):
                self.refuse(node.attr, node, f"`{ast.unparse(node)}` is not part of the public ascend_sim API",
                            "only `ascend_sim`'s public names (`from ascend_sim import ...`)")
                return
        value = self._value(node)
        if isinstance(value, types.ModuleType) and not _module_allowed(value):
            self.refuse(node.attr, node, f"`{ast.unparse(node)}` is the module {value.__name__}",
                        "only numpy, math and the public ascend_sim API may be reached")
        elif isinstance(value, types.ModuleType) and not self._chain_root(node):
            self.refuse("module-alias", node, f"the module `{ast.unparse(node)}` is used as a value",
                        "a module may only be used as `module.name`")

    def _value(self, node: ast.AST) -> Any:
        """The object an import-rooted chain names in the grader's process, or _UNKNOWN."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id, _UNKNOWN) if node.id in self.bound else _UNKNOWN
        if isinstance(node, ast.Attribute) and not node.attr.startswith("_"):
            base = self._value(node.value)
            if base is _UNKNOWN:
                return _UNKNOWN
            try:
                return getattr(base, node.attr)
            except Exception:  # noqa: BLE001 - a dynamic attribute: not resolvable statically
                return _UNKNOWN
        return _UNKNOWN

    def _rooted(self, node: ast.AST) -> bool:
        """Is this expression reached from an imported name (``np.x``, ``AddTiling``, ``CONST[0]``)?"""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.bound

    def _chain_root(self, node: ast.AST) -> bool:
        parent = self.parents.get(id(node))
        return isinstance(parent, ast.Attribute) and parent.value is node


_UNKNOWN = object()


def _dunder(name: str) -> bool:
    return name.startswith("__")


def _defined_in(module: str, name: str) -> bool:
    """A name the checks module defines itself (a tiling struct, a helper, a constant), not one it imported."""
    value = getattr(importlib.import_module(module), name, None)
    if isinstance(value, types.ModuleType):
        return False
    owner = getattr(value, "__module__", None)
    return owner == module or owner is None or not callable(value) or getattr(value, "__self__", None) is not None


def _module_allowed(mod: types.ModuleType) -> bool:
    name = mod.__name__
    return name in ALLOWED_MODULES or name in PUBLIC_ASCEND or name in _public_modules()


@functools.lru_cache(maxsize=None)
def _public_names(module: str) -> frozenset[str]:
    mod = importlib.import_module(module)
    return frozenset(n for n in getattr(mod, "__all__", ()) if not n.startswith("_"))


@functools.lru_cache(maxsize=1)
def _public_modules() -> frozenset[str]:
    """Modules the public ascend_sim API itself exposes (``ascend_sim.matmul_tiling``)."""
    import ascend_sim
    return frozenset(v.__name__ for n in _public_names("ascend_sim")
                     if isinstance(v := getattr(ascend_sim, n, None), types.ModuleType))


def _python(source: str) -> str:
    """The Python that IPython would run for ``source`` (``!cmd`` and ``%magic`` become calls)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - without IPython, screen the text as it is
        return source
