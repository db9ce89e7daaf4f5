"""Static screen of answer cells: a second layer behind the trusted checks, run by the grader before execution.

An answer cell is refused (its exercise scores 0 with the reason, the cell is not run) when it:

* imports a module that reaches outside the exercise: ``os``, ``sys``, ``subprocess``, ``ctypes``, ``gc``,
  ``inspect``, ``importlib``, ``builtins``, ``signal``, ``threading`` ... (``FORBIDDEN_MODULES``), or an
  ``ascend_sim`` module other than the public ones (``ascend_sim``, ``ascend_sim.models.datasets``,
  ``load_lenet_weights``, and the public names of the lab's own checks module);
* writes or deletes an attribute of a module (``np.isclose = ...``, ``ascend_sim.launch = ...``);
* touches simulator internals or frames: ``.buf``, ``.raw``, ``.arena``, ``.written_by``, ``__globals__``,
  ``f_back`` ... (``FORBIDDEN_ATTRS``), or a private (``_name``) attribute of a module;
* calls ``exec``, ``eval``, ``compile``, ``__import__``, ``setattr``, ``delattr``, ``globals``, ``vars``,
  ``open``, ``get_ipython`` or ``breakpoint``.

The lab author can allow any of these keys for one exercise: ``@LAB.exercise("ex2", ..., allow=("os",))``.
Cells are read with IPython's input transformer, so ``!cmd`` and ``%magic`` lines are screened as the
``get_ipython()`` calls they become. A cell that does not parse is left to the kernel (a SyntaxError).
"""
from __future__ import annotations

import ast
from typing import Iterable

__all__ = ["screen_source", "FORBIDDEN_MODULES", "FORBIDDEN_ATTRS", "FORBIDDEN_CALLS", "PUBLIC_ASCEND"]

FORBIDDEN_MODULES = frozenset({
    "os", "sys", "subprocess", "ctypes", "gc", "inspect", "importlib", "builtins", "signal", "threading",
    "_thread", "multiprocessing", "concurrent", "socket", "shutil", "pathlib", "io", "tempfile", "glob", "fcntl",
    "posix", "pty", "resource", "mmap", "pickle", "marshal", "runpy", "code", "codeop", "types", "traceback",
    "atexit", "faulthandler", "sysconfig", "site", "asyncio", "selectors", "select", "IPython", "ipykernel",
    "jupyter_client", "zmq", "nbformat", "nbclient", "numpy.testing", "pytest", "unittest"})
FORBIDDEN_ATTRS = frozenset({
    "buf", "raw", "arena", "shadow", "written_by", "gm_written_by", "__globals__", "__code__", "__closure__",
    "__builtins__", "__subclasses__", "__dict__", "__bases__", "__mro__", "__import__", "__loader__", "__spec__",
    "f_globals", "f_locals", "f_back", "f_builtins", "gi_frame", "cr_frame", "tb_frame", "tb_next"})
FORBIDDEN_CALLS = frozenset({"exec", "eval", "compile", "__import__", "setattr", "delattr", "globals", "vars",
                             "open", "get_ipython", "breakpoint"})
PUBLIC_ASCEND = {"ascend_sim": None, "ascend_sim.models.datasets": None,
                 "ascend_sim.models.lenet_reference": {"load_lenet_weights"}}


def screen_source(source: str, *, checks_module: str = "", allow: Iterable[str] = ()) -> list[str]:
    """Every reason to refuse ``source`` (empty: accepted)."""
    allow = set(allow)
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return []
    modules: set[str] = set()           # names bound to modules by the cell's imports
    out: list[str] = []

    def refuse(key: str, text: str, node: ast.AST) -> None:
        if key not in allow:
            out.append(f"line {getattr(node, 'lineno', '?')}: {text}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                modules.add((a.asname or a.name).split(".")[0])
                _check_module(a.name, None, checks_module, refuse, node)
        elif isinstance(node, ast.ImportFrom):
            mod = "." * node.level + (node.module or "")
            for a in node.names:
                _check_module(mod, a.name, checks_module, refuse, node)
    modules |= {"np", "numpy", "ascend_sim"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            root = _root(node)
            if node.attr in FORBIDDEN_ATTRS:
                refuse(node.attr, f"`.{node.attr}` reaches into simulator or interpreter internals", node)
            elif node.attr in FORBIDDEN_MODULES or node.attr in ("f2py", "ctypeslib", "distutils"):
                refuse(node.attr, f"`.{node.attr}` reaches a module outside the exercise", node)
            elif root in modules and node.attr.startswith("_"):
                refuse(node.attr, f"`{root}....{node.attr}` is a private name of a module", node)
            if isinstance(node.ctx, (ast.Store, ast.Del)) and root in modules:
                refuse("module-write", f"changing `{ast.unparse(node)}` rewrites a module that the checks use", node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            refuse(node.func.id, f"`{node.func.id}(...)` is not allowed in an answer", node)
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__import__"):
            refuse(node.id, f"`{node.id}` is not allowed in an answer", node)
    return list(dict.fromkeys(out))


def _check_module(name: str, imported: str | None, checks_module: str, refuse, node: ast.AST) -> None:
    full = f"{name}.{imported}" if imported and name else (imported or name)
    top = name.split(".")[0]
    if name.startswith(".") or top in FORBIDDEN_MODULES or name in FORBIDDEN_MODULES or full in FORBIDDEN_MODULES:
        refuse(top or full, f"`import {full}` is not allowed in an answer: it reaches outside the exercise", node)
    elif top == "ascend_sim":
        if name == checks_module:
            ok = imported is None or not (imported.startswith("_") or imported in ("LAB", "*"))
        elif name in PUBLIC_ASCEND:
            names = PUBLIC_ASCEND[name]
            ok = names is None or imported in names or (name == "ascend_sim" and imported is None)
            ok = ok and not (imported or "").startswith("_")
            if name == "ascend_sim" and imported is not None:
                ok = ok and imported not in ("engine", "api", "course", "kernels", "trace", "analysis", "hw",
                                             "tools", "viz", "models", "cluster", "migrate")
        else:
            ok = False
        if not ok:
            refuse(name, f"`{full}` is not part of the public ascend_sim API an answer may use "
                         "(`from ascend_sim import ...`)", node)


def _root(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else ""


def _python(source: str) -> str:
    """The Python that IPython would run for ``source`` (``!cmd`` and ``%magic`` become calls)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - without IPython, screen the text as it is
        return source
