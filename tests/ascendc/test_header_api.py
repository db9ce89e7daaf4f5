"""The declaration header and the Python API cannot drift: every Ascend C name `ascend_sim` exports is declared in
ascend_sim/ascendc/include (parsed with libclang), with the same methods, the same enum members and, for every
parameter struct, the dataclass's fields in the dataclass's order (the front end brace-initialises by that order).
"""
from __future__ import annotations

import dataclasses
import enum

import pytest

import ascend_sim
from ascend_sim.ascendc.syntax import INCLUDE_DIR

pytest.importorskip("clang.cindex", reason="libclang (the PyPI wheel `libclang`) is not installed")
from ascend_sim.ascendc.header import CXX_SPELLING, PYTHON_ONLY, Declarations  # noqa: E402

BUILTIN_TYPES = {"float"}
# Python classes whose public CamelCase methods must be declared on the C++ class of the same name.
CLASSES = ["TPipe", "TQue", "TQueBind", "TBuf", "LocalTensor", "GlobalTensor", "LocalMemAllocator", "Matmul"]
@pytest.fixture(scope="module")
def decl() -> Declarations:
    d = Declarations()
    assert not d.errors, "libclang cannot parse our headers:\n" + "\n".join(d.errors)
    return d


def missing_names(d: Declarations) -> list[str]:
    out = []
    for name in ascend_sim.__all__:
        if name in PYTHON_ONLY:
            continue
        cxx = CXX_SPELLING.get(name, name)
        known = cxx in BUILTIN_TYPES or cxx in d.ours or (name in CXX_SPELLING and cxx in d.anywhere)
        if not known:
            out.append(name if cxx == name else f"{name} (C++ {cxx})")
    return out


def missing_methods(d: Declarations) -> list[str]:
    out = []
    for cls in CLASSES:
        obj = getattr(ascend_sim, cls)
        py = {m for m in dir(obj) if m[:1].isupper() and callable(getattr(obj, m))}
        out += [f"{cls}::{m}" for m in sorted(py - d.methods(cls))]
    tiling = ascend_sim.matmul_tiling.MultiCoreMatmulTiling
    py = {m for m in dir(tiling) if m[:1].isupper() and callable(getattr(tiling, m))}
    out += [f"matmul_tiling::MultiCoreMatmulTiling::{m}" for m in sorted(py - d.methods("MultiCoreMatmulTiling"))]
    return out


def field_mismatches(d: Declarations) -> list[str]:
    out = []
    for name in ascend_sim.__all__:
        obj = getattr(ascend_sim, name)
        if name in PYTHON_ONLY or not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
            continue
        py = [f.name for f in dataclasses.fields(obj)]
        if name == "MatmulType":   # a class template: its parameters are read back as static members
            cxx_has = d.methods("MatmulType")
            miss = [f for f in py if {"dtype": "T"}.get(f, f) not in cxx_has]
            out += [f"MatmulType lacks {miss}"] if miss else []
            continue
        cxx = d.all_fields(name)
        if cxx != py:
            out.append(f"{name}: header {cxx} != dataclass {py}")
    mmad = ["m", "n", "k", *ascend_sim.MmadParams._SIX]       # the brace form {m, n, k, unitFlag, ...}
    if d.all_fields("MmadParams")[:len(mmad)] != mmad:
        out.append(f"MmadParams: header {d.all_fields('MmadParams')} does not start with {mmad}")
    return out


def enum_mismatches(d: Declarations) -> list[str]:
    out = []
    for name in ascend_sim.__all__:
        obj = getattr(ascend_sim, name)
        if isinstance(obj, type) and issubclass(obj, enum.Enum):
            members = d.enumerators.get(name) or d.enumerators.get(d.aliases.get(name, ""), [])
            miss = [m.name for m in obj if m.name not in members]
            if miss:
                out.append(f"{name} lacks {miss}")
    return out


def config_mismatches(d: Declarations) -> list[str]:
    """constexpr struct constants (CFG_NORM, CFG_MDL ...) hold the values of the Python constants."""
    out = []
    for name in ascend_sim.__all__:
        obj = getattr(ascend_sim, name)
        if not dataclasses.is_dataclass(obj) or isinstance(obj, type) or name not in d.tokens:
            continue
        toks = d.tokens[name]
        body = toks[toks.index("{") + 1:toks.index("}")]
        values = [t for t in body if t != ","]
        want = [str(v).lower() if isinstance(v, bool) else str(getattr(v, "name", v))
                for v in dataclasses.astuple(obj)]
        got = [v for v in values if v not in ("::",) and v not in {type(x).__name__ for x in dataclasses.astuple(obj)}]
        if got != want:
            out.append(f"{name}: header {got} != Python {want}")
    return out


def test_every_exported_name_is_declared(decl):
    assert not missing_names(decl), f"declare these in ascend_sim/ascendc/include: {missing_names(decl)}"


def test_python_only_names_are_still_exported():
    stale = sorted(set(PYTHON_ONLY) - set(ascend_sim.__all__))
    assert not stale, f"PYTHON_ONLY lists names ascend_sim no longer exports: {stale}"


def test_every_method_is_declared(decl):
    assert not missing_methods(decl), missing_methods(decl)


def test_struct_fields_follow_the_dataclasses(decl):
    assert not field_mismatches(decl), "\n".join(field_mismatches(decl))


def test_enums_have_the_python_members(decl):
    assert not enum_mismatches(decl), "\n".join(enum_mismatches(decl))


def test_config_constants_hold_the_python_values(decl):
    assert {"CFG_NORM", "CFG_MDL", "MM_CFG_BB", "CFG_NZ"} <= set(decl.tokens)
    assert not config_mismatches(decl), "\n".join(config_mismatches(decl))


# ------------------------------------------------------------------ the checks fail on a drifted header
def _drifted(old: str, new: str) -> Declarations:
    text = (INCLUDE_DIR / "kernel_operator.h").read_text(encoding="utf-8")
    assert old in text, f"{old!r} is no longer in kernel_operator.h"
    return Declarations(overrides={"kernel_operator.h": text.replace(old, new, 1)})


def test_a_missing_declaration_is_reported():
    d = _drifted("__aicore__ inline void Brcb(", "__aicore__ inline void Brcbx(")
    assert "Brcb" in missing_names(d)


def test_a_missing_method_is_reported():
    d = _drifted("__aicore__ inline void SetL2CacheHint(", "__aicore__ inline void SetL2Hint(")
    assert "GlobalTensor::SetL2CacheHint" in missing_methods(d)


def test_swapped_fields_are_reported():
    d = _drifted("    uint16_t srcStride = 0;\n    uint16_t dstStride = 0;\n",
                 "    uint16_t dstStride = 0;\n    uint16_t srcStride = 0;\n")
    assert any(m.startswith("DataCopyParams:") for m in field_mismatches(d))


def test_a_missing_enumerator_is_reported():
    d = _drifted(" FIX_MTE2, MTE2_FIX,", " FIX_MTE2,")
    assert "HardEvent lacks ['MTE2_FIX']" in enum_mismatches(d)


def test_a_wrong_config_value_is_reported():
    d = _drifted("CFG_MDL = {false, false, true,", "CFG_MDL = {false, false, false,")
    assert any(m.startswith("CFG_MDL:") for m in config_mismatches(d))
