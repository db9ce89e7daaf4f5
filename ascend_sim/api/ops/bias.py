"""``DataCopy(dst C2 (BT), src L1 (C1), count)``: the bias table (BiasTable Buffer) that Mmad adds on MTE1.

Documented behaviour implemented (DK 基础API/矩阵计算 "L1ToBiasTable-Buffer数据搬运（DataCopy）"):
"DataCopy数据搬运支持将矩阵计算用到的Bias参数从L1 Buffer移动到BiasTable Buffer"; A2 src half, int32_t or
float, dst int32_t or
float (half converts to float on the way); BT destination 64-byte aligned, L1 source 32-byte aligned;
"count * sizeof(T)需要32字节对齐" (the device silently rounds down; the simulator refuses).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.engine import context, timing
from ascend_sim.engine.context import current_core
from ascend_sim.engine.core import MTE1, regions_of, region
from ascend_sim.engine.errors import AlignmentError, ArgumentError, DtypeError, OutOfBoundsError
from ascend_sim.hw.dtypes import ascend_name, float32, half, int32
from ascend_sim.api.checks import integer
from ascend_sim.api.tensor import writable_view
from ascend_sim.api.ops.cube import CubePlan, cached_plan, tier_of
from ascend_sim.api.ops.datacopy import TIER_COPIES

_PAIRS = {(half, float32), (float32, float32), (int32, int32)}      # (L1 dtype, BT dtype) on A2


def bias_copy(dst, src, count, site) -> None:
    """Copy ``count`` bias values from L1 into the bias table, converting half to float."""
    core = context.current or current_core()
    try:
        key = ("BiasCopy", count, dst.tier, dst.addr, dst.size, dst.dtype, src.tier, src.addr, src.size, src.dtype)
        hash(key)
    except (AttributeError, TypeError):
        key = None
    plan = cached_plan(core, key, _plan, core, dst, src, count, site)
    core.issue_n(MTE1, "DataCopy", plan.cost, plan.rd, plan.wr, plan.nbytes, "L1", "BT", 0, "copy", site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d, s = plan.views
    np.copyto(d, s, casting="unsafe")


def _plan(core, dst, src, count, site) -> CubePlan:
    tier_of(dst, ("BT",), "DataCopy", "dst", site)
    tier_of(src, ("L1",), "DataCopy", "src (the bias in L1, TPosition C1)", site)
    if count.__class__ is not int:
        raise ArgumentError(f"DataCopy L1 -> BT takes an element count here, got {type(count).__name__}",
                            fix="DataCopy(biasC2, biasC1, n): the DataCopyParams form of this path is not modelled",
                            site=site)
    n = integer("DataCopy", "count", count, site, 1)
    if (src.dtype, dst.dtype) not in _PAIRS:
        raise DtypeError(f"DataCopy L1 -> BT from {ascend_name(src.dtype)} to {ascend_name(dst.dtype)}: the bias "
                         "table takes half -> float, float -> float or int32_t -> int32_t",
                         fix="allocate the C2 tensor as float (int32_t for an int8 matmul)", site=site)
    if (n * src.dtype.itemsize) % 32:
        raise AlignmentError(f"DataCopy L1 -> BT of {n} {ascend_name(src.dtype)} = {n * src.dtype.itemsize} bytes: "
                             "\"count * sizeof(T)需要32字节对齐\" (the device would silently drop the tail)",
                             fix=f"pad the bias to a multiple of {32 // src.dtype.itemsize} values", site=site)
    if dst.addr % core.chip.bt_align or src.addr % 32:
        raise AlignmentError(f"DataCopy L1 -> BT: BT address {dst.addr} must be {core.chip.bt_align}-byte aligned "
                             f"and L1 address {src.addr} 32-byte aligned", fix="allocate the tensors from queues",
                             site=site)
    for t in (src, dst):
        if n > t.size:
            raise OutOfBoundsError(f"DataCopy L1 -> BT of {n} values, but the {t.tier.name} tensor holds {t.size}",
                                   fix="copy at most the tensor's size", site=site)
    nbytes = n * src.dtype.itemsize
    cost = timing.local_transfer(core, nbytes, core.chip.l1_to_bt_bytes_per_cycle, core.chip.mte1_startup)
    return CubePlan(cost, regions_of((region(src, nbytes),)), regions_of((region(dst, n * dst.dtype.itemsize),)),
                    nbytes, 0, (writable_view(dst, n), src.view(n)))


TIER_COPIES["BT"] = bias_copy
