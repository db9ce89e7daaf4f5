"""Shared harness of the vector/scalar conformance tests (issue 13): tests/sim/kernels_util, importable from here.

pytest puts this directory (not tests/sim) on the import path, so add tests/sim once here.
"""
from __future__ import annotations

import sys
from pathlib import Path

_SIM = str(Path(__file__).resolve().parents[1])
if _SIM not in sys.path:
    sys.path.insert(0, _SIM)

from kernels_util import assert_same, raises_rule, run_on_ub, vector_result  # noqa: E402

__all__ = ["assert_same", "raises_rule", "run_on_ub", "vector_result"]
