"""Argument rules shared by the API calls: integers, scalars, dtypes, enum members, live local tensors.

Each check raises a KernelError subclass naming the call, the rule, the value and the fix. They run
where a call is checked: in the plan builders (once per operand shape), or on every call for the
calls that have no plan. ``docs/sanitizer.md`` lists the rules.
"""
from __future__ import annotations

import numbers
from operator import attrgetter

import numpy as np

from ascend_sim.engine.errors import ArgumentError, DtypeError, PositionError, QueueError, site_outside
from ascend_sim.hw.dtypes import SUPPORTED, as_dtype, ascend_name, bfloat16, int4b_t

DTYPES = SUPPORTED + (int4b_t,)


def integer(op: str, name: str, v, site, lo: int | None = None, hi: int | None = None, fix: str = "") -> int:
    """``v`` as an int when it is an integer (Python or numpy, not bool) in ``lo..hi``; else ArgumentError."""
    if v.__class__ is int and (lo is None or v >= lo) and (hi is None or v <= hi):
        return v                        # the usual case, first
    if v.__class__ is bool or not isinstance(v, (int, np.integer)):
        raise ArgumentError(f"{op}: {name} must be an integer, got {type(v).__name__} {v!r}",
                            fix=fix or f"pass {name} as an int (e.g. «int(x) or x // y, not x / y|"
                                           "static_cast<int32_t>(x)»)", site=site)
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"in {lo}..{hi}" if lo is not None and hi is not None else (
            f"at least {lo}" if lo is not None else f"at most {hi}")
        raise ArgumentError(f"{op}: {name} = {v}, but it must be {rng}",
                            fix=fix or f"pass {name} {rng}", site=site)
    return v


def scalar(op: str, name: str, v, dtype: np.dtype, site):
    """A scalar operand for a ``dtype`` instruction: a real number (an integer in range for integer dtypes)."""
    ok = v.__class__ is not bool and isinstance(v, numbers.Real) or (
        isinstance(v, (np.ndarray, np.generic)) and v.ndim == 0 and (v.dtype.kind in "biuf" or v.dtype == bfloat16))
    if not ok:
        raise ArgumentError(f"{op}: {name} must be a real number for {ascend_name(dtype)} data, "
                            f"got {type(v).__name__} {v!r}",
                            fix=f"pass a Python int or float (it is converted to {ascend_name(dtype)})", site=site)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if isinstance(v, (numbers.Integral, np.integer)):   # exact: float(2**63 - 1) rounds up past int64_t
            whole = True
            iv = int(v)
        else:
            f = float(v)
            whole = bool(np.isfinite(f) and f == int(f))
            iv = int(f) if whole else 0
        if not (whole and info.min <= iv <= info.max):
            raise ArgumentError(f"{op}: {name} {v!r} is not an integer in the {ascend_name(dtype)} range "
                                f"{info.min}..{info.max}",
                                fix=f"pass an integer that {ascend_name(dtype)} can hold", site=site)
    return v


_KNOWN: dict = {}      # dtype arguments seen before -> their np.dtype


def dtype_arg(op: str, d, site) -> np.dtype:
    """A dtype argument (np.float16, half, "float" ...) that the simulator's chips support."""
    try:
        return _KNOWN[d]
    except (KeyError, TypeError):       # new, or unhashable
        pass
    try:
        dt = as_dtype(d)
    except (TypeError, ValueError):
        dt = None
    if dt is None or dt not in DTYPES:
        names = ", ".join(ascend_name(x) for x in DTYPES)
        raise DtypeError(f"{op}: {d!r} is not an Ascend C data type", fix=f"use one of {names}", site=site)
    _KNOWN[d] = dt
    return dt


def member(op: str, name: str, v, enum_type, site):
    """``v`` when it is a member of ``enum_type``; else ArgumentError listing the members."""
    if not isinstance(v, enum_type):
        names = ", ".join(f"{enum_type.__name__}.{m.name}" for m in enum_type)
        raise ArgumentError(f"{op}: {name} must be a {enum_type.__name__}, got {v!r}", fix=f"pass one of {names}",
                            site=site)
    return v


def live(op: str, role: str, t, site) -> None:
    """``t`` is a LocalTensor that was not given back with FreeTensor (use after free)."""
    if t.tier.freed:
        raise QueueError(f"{op}: {role} is a tensor that was given back with FreeTensor (use after free): "
                         f"its {t.tier.name} bytes {t.addr}..{t.addr + t.nbytes - 1} belong to the queue again "
                         f"and the next AllocTensor hands them out",
                         fix="finish every read and write of a tensor before FreeTensor, or AllocTensor "
                             "a new one", site=site)


def int_fields(struct, names: tuple[str, ...], lo: int = 0) -> None:
    """A parameter struct's integer fields, checked when it is built (``__post_init__``): ints >= ``lo``.

    Plans are cached by these fields, so a float 1.0 must be refused before it can find the plan of 1.
    Callers guard it with a class test of each field (negative ints are caught by the plan builders).
    """
    getter = _GETTERS.get(names)
    if getter is None:
        getter = _GETTERS[names] = attrgetter(*names) if len(names) > 1 else (lambda s, n=names[0]: (getattr(s, n),))
    values = getter(struct)
    if set(map(type, values)) == _INT and min(values) >= lo:     # the usual struct: all ints, in range (in C)
        return
    for name, v in zip(names, values):
        if v.__class__ is not int or v < lo:
            integer(type(struct).__name__, name, v, site_outside(3), lo)


_GETTERS: dict = {}     # field names -> operator.attrgetter of them (a tuple of the values in one call)
_INT = {int}



# ----------------------------------------------------------------------------- parameter struct fields
C_RANGES = {"uint8_t": (0, 2**8 - 1), "uint16_t": (0, 2**16 - 1), "uint32_t": (0, 2**32 - 1),
            "uint64_t": (0, 2**64 - 1), "int32_t": (-2**31, 2**31 - 1), "int64_t": (-2**63, 2**63 - 1)}


def field_spec(**fields: str) -> tuple:
    """A struct's fields and their C++ types (``uint8_t`` ... or ``bool``), for :func:`check_fields`."""
    return tuple((name, C_RANGES.get(ctype), ctype) for name, ctype in fields.items())


def check_fields(struct, spec: tuple, depth: int = 3) -> None:
    """Each field of a parameter struct has its C++ type: an integer in the type's range, or a bool for a bool.

    Called from the struct's ``__post_init__`` (or ``__init__``), so the error points at the line that built it
    (``depth``: frames from here to the learner). Plans are keyed by these fields, so a float 1.0 or a bool
    must not pass for an integer; a field assigned after construction is checked where the struct is used.
    """
    for name, rng, ctype in spec:
        v = getattr(struct, name)
        if rng is None:                     # bool
            if v.__class__ is bool or v.__class__ is np.bool_:
                continue
            raise ArgumentError(f"{type(struct).__name__}: {name} must be «True» or «False» (a bool field), got "
                                f"{type(v).__name__} {v!r}",
                                fix=f"pass «{name}=True» or «{name}=False»", site=site_outside(depth))
        if v.__class__ is int and rng[0] <= v <= rng[1]:
            continue
        integer(type(struct).__name__, name, v, site_outside(depth), rng[0], rng[1],
                fix=f"{name} is a {ctype} field in C++: an integer in {rng[0]}..{rng[1]}")
