"""The package's layers point one way: a module imports only its own layer and the layers below it.

Parses every module's imports with ``ast`` (top level and inside functions alike) and fails on a module that
imports a layer above its own, on an import cycle between modules, and on a private name (``_x``) taken from
another module. The order is the one docs/architecture.md draws; a new subpackage must be added here.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "ascend_sim"

#: Layer rank of each top-level part of the package (lower ranks never import higher ones).
RANK = {
    "hw": 0,            # chip profiles and dtypes: every hardware number
    "engine": 1,        # current core, issue path, shadow memory, timing, scheduler
    "trace": 2,         # the record container and its one table reader
    "analysis": 3,      # clients of a trace: profile, Chrome export, verify, diagnose
    "api": 4,           # the Ascend C surface
    "": 5,              # the ascend_sim facade (__init__, __main__)
    "kernels": 6, "models": 6, "ascendc": 6,
    "viz": 7,
    "cluster": 8, "migrate": 8, "tools": 8, "course": 8, "projects": 8,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _layer(module: str) -> str:
    if module == "ascend_sim.__main__":         # `python -m ascend_sim` runs the command line
        return "tools"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else ""


def _imports(module: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) of every ascend_sim import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "ascend_sim"]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: use absolute imports (from ascend_sim.x import y)"
            mod = node.module or ""
            if mod.split(".")[0] != "ascend_sim":
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((sub, None, node.lineno) if sub in MODULES else (mod, a.name, node.lineno))
    return out


def _target(imported: str) -> str:
    """The module an import loads (a name inside a module resolves to that module)."""
    while imported not in MODULES and "." in imported:
        imported = imported.rsplit(".", 1)[0]
    return imported


GRAPH = {m: {_target(i) for i, _, _ in _imports(m, p)} - {m} for m, p in MODULES.items()}


def test_every_part_of_the_package_has_a_layer():
    unknown = sorted({m.split(".")[1] for m in MODULES if "." in m and m.split(".")[1] not in RANK
                      and not MODULES[m].name == "__main__.py" and MODULES[m].parent != PKG})
    assert not unknown, f"add these subpackages to RANK in {__file__}: {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_its_own_layer_or_below(module):
    mine = RANK[_layer(module)]
    bad = [f"line {ln}: {imp}" + (f" ({name})" if name else "") + f" is layer '{_layer(_target(imp)) or 'facade'}'"
           for imp, name, ln in _imports(module, MODULES[module])
           if RANK[_layer(_target(imp))] > mine]
    assert not bad, f"{module} (layer '{_layer(module) or 'facade'}') imports a layer above it:\n" + "\n".join(bad)


def _private_module_outside(imported: str, module: str) -> bool:
    """``imported`` is a private module (``pkg._helpers``) and ``module`` lives outside ``pkg``."""
    parts = _target(imported).split(".")
    private = [i for i, p in enumerate(parts) if p.startswith("_") and not p.startswith("__")]
    if not private:
        return False
    owner = ".".join(parts[:private[0]])
    return module != owner and not module.startswith(owner + ".")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_takes_no_private_name_from_another_module(module):
    bad = [f"line {ln}: {name} from {imp}" for imp, name, ln in _imports(module, MODULES[module])
           if name and name.startswith("_") and not name.startswith("__") and _target(imp) != module]
    bad += sorted({f"line {ln}: {imp} is private to its package" for imp, _, ln in _imports(module, MODULES[module])
                   if _private_module_outside(imp, module)})
    assert not bad, f"{module} imports private names of other modules:\n" + "\n".join(bad)


def test_no_import_cycles():
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v: str) -> None:                 # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for m in sorted(GRAPH):
        if m not in index:
            visit(m)
    assert not cycles, "import cycles (each list imports itself round the circle):\n" + "\n".join(map(str, cycles))


def test_the_checks_fail_on_a_bad_module(tmp_path, monkeypatch):
    """The layer and privacy rules catch an engine module that imports the API and a private name."""
    bad = tmp_path / "bad.py"
    bad.write_text("from ascend_sim.api.launch import launch\nfrom ascend_sim.engine.core import _ranges\n")
    private_module = tmp_path / "reach.py"
    private_module.write_text("from ascend_sim.viz._widget import esm\n")
    monkeypatch.setitem(MODULES, "ascend_sim.course.reach", private_module)
    with pytest.raises(AssertionError, match="private to its package"):
        test_takes_no_private_name_from_another_module("ascend_sim.course.reach")
    monkeypatch.setitem(MODULES, "ascend_sim.engine.bad", bad)
    with pytest.raises(AssertionError, match="imports a layer above it"):
        test_imports_only_its_own_layer_or_below("ascend_sim.engine.bad")
    with pytest.raises(AssertionError, match="private names"):
        test_takes_no_private_name_from_another_module("ascend_sim.engine.bad")
    monkeypatch.setitem(GRAPH, "ascend_sim.engine.bad", {"ascend_sim.hw.chips"})
    monkeypatch.setitem(GRAPH, "ascend_sim.hw.chips", GRAPH["ascend_sim.hw.chips"] | {"ascend_sim.engine.bad"})
    with pytest.raises(AssertionError, match="import cycles"):
        test_no_import_cycles()


#: Modules that may touch ``.records``: the engine writes them, trace/ holds and reads them, the launch hands
#: them over, and the synthetic trace builder keeps its own list. Everything else reads trace/table.py.
RECORD_OWNERS = ("ascend_sim.engine.", "ascend_sim.trace.", "ascend_sim.api.launch", "ascend_sim.viz.synthetic",
                 # follows the engine's live record list while a kernel runs (not a finished trace), until the
                 # engine offers a callback after each instruction
                 "ascend_sim.tools.overflow",
                 # the copy-out paths name the record they just issued as the writer of each GM byte (provenance)
                 "ascend_sim.api.ops.",
                 # the grader's evidence copies the GM records with each site's full path (library code or not)
                 "ascend_sim.course.grading.evidence")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_analyses_and_views_read_the_trace_through_its_table(module):
    if module.startswith(RECORD_OWNERS):
        return
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    lines = sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "records"})
    assert not lines, (f"{module} reads .records at lines {lines}: read the trace with "
                       "ascend_sim.trace.table.as_table(result) instead")
