"""Kernel templates and tiling keys: ``ASCENDC_TPL_ARGS_DECL`` / ``ASCENDC_TPL_SEL`` in Python.

In Ascend C a kernel is a C++ template (``template <typename D_T_X, int TILE_NUM, ...>``); the operator
declares the space of its template arguments (``ASCENDC_TPL_ARGS_DECL``), selects the combinations that are
compiled (``ASCENDC_TPL_SEL``), and the host tiling function picks one at run time by a tiling key
(``ASCENDC_TPL_SEL_PARAM`` / ``SetTilingKey``). One binary entry exists per legal key, so asking for any
other combination fails. Here a :class:`TemplateSpace` does the same: ``space.kernel`` turns a Python
kernel body with keyword template arguments into one ``Kernel`` per legal combination (made on first use,
like an instantiation), and every other combination raises :class:`TilingError` naming the legal ones.

The key is a mixed-radix number over the declared parameters, in declaration order (the first parameter
is the lowest digit). CANN packs bit fields instead; its encoding is internal to the toolchain, so only
"one key per legal combination, decodable back" is kept.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ascend_sim.api.launch import Kernel, kernel
from ascend_sim.engine.errors import TilingError
from ascend_sim.hw.dtypes import as_dtype, ascend_name


@dataclass(frozen=True)
class TplParam:
    """One declared template parameter: its name, kind ("datatype", "uint", "bool") and allowed values."""

    name: str
    kind: str
    options: tuple

    def index(self, value: Any) -> int:
        """Position of ``value`` among the options (dtypes compare as dtypes, bools as 0/1)."""
        v = _normal(self, value)
        for i, o in enumerate(self.options):
            if o == v:
                return i
        raise TilingError(f"template parameter {self.name} = {_show(self, value)} is not declared: "
                          f"{self.name} takes {', '.join(_show(self, o) for o in self.options)}",
                          fix=f"use one of the declared values, or add the value to its ASCENDC_TPL_{self.kind.upper()}"
                              "_DECL", site=("<tiling>", 0))


def ASCENDC_TPL_DATATYPE_DECL(name: str, *dtypes) -> TplParam:
    """A type parameter (``typename D_T_X``) and the dtypes it may take (half, float32, bfloat16 ...)."""
    return TplParam(name, "datatype", tuple(as_dtype(d) for d in dtypes))


def ASCENDC_TPL_UINT_DECL(name: str, *values: int) -> TplParam:
    """An unsigned integer parameter (``int TILE_NUM``) and its values."""
    if not values or any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in values):
        raise TilingError(f"ASCENDC_TPL_UINT_DECL({name!r}, ...) needs unsigned integers, got {values!r}",
                          fix="list the values, e.g. ASCENDC_TPL_UINT_DECL('TILE_NUM', 1, 8)", site=("<tiling>", 0))
    return TplParam(name, "uint", tuple(values))


def ASCENDC_TPL_BOOL_DECL(name: str, *values: int) -> TplParam:
    """A boolean parameter (``int IS_SPLIT`` used as 0/1)."""
    return TplParam(name, "bool", tuple(int(bool(v)) for v in (values or (0, 1))))


@dataclass(frozen=True)
class TplSelection:
    """``ASCENDC_TPL_ARGS_SEL(...)``: for each parameter, the values this selection compiles."""

    choices: Mapping[str, tuple]


def ASCENDC_TPL_ARGS_SEL(**choices: Any) -> TplSelection:
    """One block of legal combinations: each parameter set to a value or a list of values (cross product)."""
    return TplSelection({k: tuple(v) if isinstance(v, (list, tuple)) else (v,) for k, v in choices.items()})


@dataclass
class TemplateSpace:
    """The declared template parameters of one operator and the combinations selected for compilation."""

    op: str
    params: tuple[TplParam, ...]
    legal_keys: set[int] = field(default_factory=set)
    _instances: dict[int, Kernel] = field(default_factory=dict, repr=False)
    _body: Callable | None = field(default=None, repr=False)
    _core: str = "AIV"
    _factory: Callable[[dict], Kernel] | None = field(default=None, repr=False)

    # --- keys ------------------------------------------------------------------------------
    def tiling_key(self, **values: Any) -> int:
        """The key of one combination (every parameter named); raises if it was not selected."""
        key = self._encode(values)
        if key not in self.legal_keys:
            legal = "; ".join(self.describe(k) for k in sorted(self.legal_keys)[:8])
            more = f" (and {len(self.legal_keys) - 8} more)" if len(self.legal_keys) > 8 else ""
            raise TilingError(
                f"{self.op}: no kernel is compiled for {self.describe(key)}: ASCENDC_TPL_SEL selects only "
                f"{legal}{more}", fix="choose a selected combination in the host tiling function, or add an "
                "ASCENDC_TPL_ARGS_SEL block that covers this one", site=("<tiling>", 0))
        return key

    def decode(self, key: int) -> dict[str, Any]:
        """The template arguments of a key (the inverse of :meth:`tiling_key`)."""
        out, rest = {}, int(key)
        for p in self.params:
            rest, i = divmod(rest, len(p.options))
            out[p.name] = p.options[i]
        if rest:
            raise TilingError(f"{self.op}: tiling key {key} is outside the declared space",
                              fix="make keys with tiling_key(...)", site=("<tiling>", 0))
        return out

    def legal(self) -> list[dict[str, Any]]:
        """Every selected combination, by key."""
        return [self.decode(k) for k in sorted(self.legal_keys)]

    def describe(self, key: int) -> str:
        """``D_T_X=half, TILE_NUM=8``."""
        return ", ".join(f"{p.name}={_show(p, v)}" for p, v in zip(self.params, self.decode(key).values()))

    def _encode(self, values: Mapping[str, Any]) -> int:
        names = [p.name for p in self.params]
        missing, extra = [n for n in names if n not in values], sorted(set(values) - set(names))
        if missing or extra:
            raise TilingError(f"{self.op}: template arguments {sorted(values)} do not match the declared "
                              f"parameters {names}" + (f" (missing {missing})" if missing else "")
                              + (f" (not declared: {extra})" if extra else ""),
                              fix="name every declared parameter once", site=("<tiling>", 0))
        key, radix = 0, 1
        for p in self.params:
            key += p.index(values[p.name]) * radix
            radix *= len(p.options)
        return key

    # --- instances -------------------------------------------------------------------------
    def kernel(self, fn: Callable | None = None, *, core: str = "AIV"):
        """Decorator: ``fn(*args, **template_args)`` becomes the templated kernel body of this space.

        The function is returned unchanged; launch an instance: ``launch(space.instance(key), blocks, ...)``.
        """
        def wrap(f: Callable) -> Callable:
            self._body, self._core = f, core
            return f
        return wrap(fn) if fn is not None else wrap

    def bind(self, factory: Callable[[dict], Kernel], *, core: str = "AIV") -> None:
        """Instances come from ``factory(template_args)`` (a C++ kernel template's instantiation) instead of a body."""
        self._factory, self._core = factory, core

    def instance(self, key: int) -> Kernel:
        """The ``Kernel`` compiled for ``key`` (made on first use, then reused)."""
        if self._body is None and self._factory is None:
            raise TilingError(f"{self.op}: no kernel body is registered", fix="decorate it with @space.kernel",
                              site=("<tiling>", 0))
        if key not in self.legal_keys:
            self.tiling_key(**self.decode(key))         # raises with the legal combinations
        inst = self._instances.get(key)
        if inst is None and self._factory is not None:
            inst = self._instances[key] = self._factory(self.decode(key))
        if inst is None:
            args, body = self.decode(key), self._body

            def entry(*a):
                body(*a, **args)
            entry.__wrapped__ = body                     # the instance's code is its body's (the grader's provenance)
            entry.__name__ = f"{getattr(body, '__name__', self.op)}<{self.describe(key)}>"
            inst = self._instances[key] = kernel(entry, core=self._core)
        return inst


def ASCENDC_TPL_ARGS_DECL(op: str, *params: TplParam) -> TemplateSpace:
    """Declare the template parameters of operator ``op`` (nothing is legal until ``ASCENDC_TPL_SEL``)."""
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise TilingError(f"{op}: a template parameter is declared twice in {names}",
                          fix="give each parameter one DECL", site=("<tiling>", 0))
    return TemplateSpace(op, tuple(params))


def ASCENDC_TPL_SEL(space: TemplateSpace, *selections: TplSelection) -> TemplateSpace:
    """Select the combinations that are compiled: the union of the cross products of each selection."""
    for sel in selections:
        unknown = sorted(set(sel.choices) - {p.name for p in space.params})
        if unknown:
            raise TilingError(f"{space.op}: ASCENDC_TPL_ARGS_SEL names undeclared parameters {unknown}",
                              fix="select only declared parameters", site=("<tiling>", 0))
        pools = [sel.choices.get(p.name, p.options) for p in space.params]
        for combo in itertools.product(*pools):
            space.legal_keys.add(space._encode(dict(zip((p.name for p in space.params), combo))))
    return space


def _normal(p: TplParam, value: Any) -> Any:
    if p.kind == "datatype":
        try:
            return as_dtype(value)
        except Exception:  # noqa: BLE001 - an unknown dtype is reported as an undeclared value
            return value
    if p.kind == "bool":
        return int(bool(value))
    return value


def _show(p: TplParam, v: Any) -> str:
    if p.kind == "datatype":
        try:
            return ascend_name(v)
        except Exception:  # noqa: BLE001 - show whatever was passed
            return repr(v)
    return str(v)


__all__ = ["TplParam", "TplSelection", "TemplateSpace", "ASCENDC_TPL_ARGS_DECL", "ASCENDC_TPL_DATATYPE_DECL",
           "ASCENDC_TPL_UINT_DECL", "ASCENDC_TPL_BOOL_DECL", "ASCENDC_TPL_ARGS_SEL", "ASCENDC_TPL_SEL"]
