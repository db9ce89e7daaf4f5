"""ascend_sim.cluster imports only the layers below it that its brief allows, and no private names."""
from __future__ import annotations

import ast
import pathlib

import ascend_sim.cluster

ALLOWED = ("ascend_sim.hw", "ascend_sim.engine", "ascend_sim.trace", "ascend_sim.models", "ascend_sim.cluster")
THIRD_PARTY = ("numpy", "ml_dtypes", "torch")     # torch: gloo.py only, imported lazily (the distributed extra)


def imports(path: pathlib.Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                yield node.module, a.name


def test_cluster_imports_only_lower_layers():
    pkg = pathlib.Path(ascend_sim.cluster.__file__).parent
    files = sorted(pkg.glob("*.py"))
    assert len(files) >= 8
    for f in files:
        for module, name in imports(f):
            if module.startswith("ascend_sim"):
                assert module == "ascend_sim" or module.startswith(ALLOWED), (f.name, module)
                assert name is None or not name.startswith("_"), (f.name, module, name)
            else:
                top = module.split(".")[0]
                assert top in THIRD_PARTY or top in __import__("sys").stdlib_module_names, (f.name, module)
