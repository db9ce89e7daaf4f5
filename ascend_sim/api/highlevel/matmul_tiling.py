"""Host-side Matmul tiling: ``matmul_tiling::MatmulApiTiling`` / ``MultiCoreMatmulTiling`` and ``TCubeTiling``.

The failure this exists to prevent: a hand-made or hand-edited TCubeTiling that overflows L0C or L1,
or whose depthA1 is not stepM * stepKa * db, runs on the simulator with wrong numbers or a capacity
error deep inside the kernel. Here every documented constraint is checked on the host, by name.

Sources (cannmirror/asc-devkit, docs/zh/api/SIMD-API/高阶API/矩阵计算/Matmul-Tiling类/):
- ``TCubeTiling结构体.md`` table 1 (fields) and table 2 (constraints), quoted at each check below;
  the field order is the C++ one of ``include/adv_api/matmul/matmul_tilingdata.h``.
- ``Matmul-Tiling类使用说明.md`` (SetAType ... GetTiling), ``SetFixSplit.md``, ``SetDim.md``,
  ``SetBufferSpace.md``, ``SetTraverse.md``, ``GetTiling.md`` ("返回值为-1，则代表Tiling计算失败").
- Recommended values (same page, 性能调优推荐取值): base (128, 256, 64), dbL0A = dbL0B = 2,
  depthA1 / (stepM * stepKa) = 2, fill K in L1 first.

The search that ``GetTiling`` runs is ours, except the multi-core split of a large problem on A2, which is
CANN's (``matmul_split.py``, from the published host tiling): it starts from the
recommended base block, shrinks it to the shape and to the buffers, then fills K in L1. What it returns
always satisfies every documented constraint; ``check_tiling`` says which one a given tiling breaks.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from enum import Enum

import numpy as np

from ascend_sim.api.highlevel.matmul_split import basic_block, is_split_mn, split_mn
from ascend_sim.engine.errors import TilingError
from ascend_sim.hw.chips import ChipProfile, get_chip
from ascend_sim.hw.dtypes import bfloat16


class DataType(Enum):
    """``matmul_tiling::DataType``: the element types the tiling knows."""

    DT_FLOAT = "float32"
    DT_FLOAT16 = "float16"
    DT_BF16 = "bfloat16"
    DT_INT8 = "int8"
    DT_INT32 = "int32"
    DT_INT4 = "int4"


class CubeFormat(Enum):
    """``CubeFormat``: ND (row-major), NZ (fractal), ND_ALIGN, VECTOR."""

    ND = "ND"
    NZ = "NZ"
    ND_ALIGN = "ND_ALIGN"
    VECTOR = "VECTOR"


class MatrixTraverse(Enum):
    """``MatrixTraverse``: FIRSTM walks M first (iterateOrder 0), FIRSTN walks N first (1)."""

    FIRSTM = 0
    FIRSTN = 1


#: bytes per element; int4 counts as half a byte (two per byte)
_SIZE = {DataType.DT_FLOAT: 4.0, DataType.DT_FLOAT16: 2.0, DataType.DT_BF16: 2.0, DataType.DT_INT8: 1.0,
         DataType.DT_INT32: 4.0, DataType.DT_INT4: 0.5}

#: "float数据类型的C0_size为8，half/bfloat16_t数据类型的C0_size为16，int8_t ... 为32，int4b_t ... 为64" (TCubeTiling结构体.md)
_C0 = {DataType.DT_FLOAT: 8, DataType.DT_FLOAT16: 16, DataType.DT_BF16: 16, DataType.DT_INT8: 32,
       DataType.DT_INT32: 8, DataType.DT_INT4: 64}

#: the input pairs of "Matmul输入输出数据类型的支持列表" for Atlas A2 (A, B) -> legal (bias, C) types
_A2_TYPES = {
    (DataType.DT_FLOAT, DataType.DT_FLOAT): ({DataType.DT_FLOAT, DataType.DT_FLOAT16},
                                             {DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_BF16}),
    (DataType.DT_FLOAT16, DataType.DT_FLOAT16): ({DataType.DT_FLOAT, DataType.DT_FLOAT16},
                                                 {DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_BF16,
                                                  DataType.DT_INT8}),
    (DataType.DT_BF16, DataType.DT_BF16): ({DataType.DT_FLOAT, DataType.DT_FLOAT16},
                                           {DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_BF16,
                                            DataType.DT_INT8}),
    (DataType.DT_INT8, DataType.DT_INT8): ({DataType.DT_INT32}, {DataType.DT_INT32, DataType.DT_FLOAT16,
                                                                  DataType.DT_INT8}),
    (DataType.DT_INT4, DataType.DT_INT4): ({DataType.DT_INT32}, {DataType.DT_INT32, DataType.DT_FLOAT16}),
}


def data_type(dtype) -> DataType:
    """A ``DataType`` from itself, a numpy dtype, or a name such as ``"float16"``."""
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, str) and dtype in ("int4", "int4b_t"):
        return DataType.DT_INT4
    name = np.dtype(dtype).name if dtype is not bfloat16 else "bfloat16"
    for t in DataType:
        if t.value == name:
            return t
    raise TilingError(f"matmul tiling: the cube has no {name} matmul type",
                      fix="use half, bfloat16_t, float, int8_t or int4b_t for A and B (Matmul使用说明 table 2)")


@dataclass
class TCubeTiling:
    """``optiling::TCubeTiling``, fields in the C++ order of matmul_tilingdata.h (positional use matches C++)."""

    usedCoreNum: int = 0
    M: int = 0
    N: int = 0
    Ka: int = 0
    Kb: int = 0
    singleCoreM: int = 0
    singleCoreN: int = 0
    singleCoreK: int = 0
    baseM: int = 0
    baseN: int = 0
    baseK: int = 0
    depthA1: int = 0
    depthB1: int = 0
    stepM: int = 0
    stepN: int = 0
    isBias: int = 0
    transLength: int = 0
    iterateOrder: int = 0
    shareMode: int = 0
    shareL1Size: int = 0
    shareL0CSize: int = 0
    shareUbSize: int = 0
    batchM: int = 0
    batchN: int = 0
    singleBatchM: int = 0
    singleBatchN: int = 0
    stepKa: int = 0
    stepKb: int = 0
    depthAL1CacheUB: int = 0
    depthBL1CacheUB: int = 0
    dbL0A: int = 0
    dbL0B: int = 0
    dbL0C: int = 0

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class _MatrixType:
    pos: object = "GM"
    fmt: CubeFormat = CubeFormat.ND
    dtype: DataType = DataType.DT_FLOAT16
    trans: bool = False


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil(a, b) * b


@dataclass
class TilingContext:
    """What a tiling is checked against: the types, transposes, bias and the buffer sizes in bytes."""

    a: DataType = DataType.DT_FLOAT16
    b: DataType = DataType.DT_FLOAT16
    c: DataType = DataType.DT_FLOAT
    bias: DataType = DataType.DT_FLOAT
    trans_a: bool = False
    trans_b: bool = False
    a_nz: bool = False
    b_nz: bool = False
    l1: int = 0
    l0a: int = 0
    l0b: int = 0
    l0c: int = 0
    bt: int = 0
    cores: int = 0
    l1_db: int = 2

    @property
    def l0c_size(self) -> float:
        """"l0c_type为int32_t或者float": the accumulator element size."""
        return 4.0


def tiling_violations(t: TCubeTiling, ctx: TilingContext) -> list[str]:
    """Every documented TCubeTiling constraint ``t`` breaks, each as one sentence with its numbers."""
    out: list[str] = []
    sa, sb, sbias = _SIZE[ctx.a], _SIZE[ctx.b], _SIZE[ctx.bias]
    c0a, c0b = _C0[ctx.a], _C0[ctx.b]
    for name in ("singleCoreM", "singleCoreN", "singleCoreK", "baseM", "baseN", "baseK",
                 "depthA1", "depthB1", "stepM", "stepN", "stepKa", "stepKb"):
        if getattr(t, name) <= 0:
            out.append(f"{name} = {getattr(t, name)}: 该参数取值必须大于0 (must be > 0)")
    if out:
        return out
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        if getattr(t, name) not in (1, 2):
            out.append(f"{name} = {getattr(t, name)}: must be 1 (no double buffer) or 2")
    if t.iterateOrder not in (0, 1):
        out.append(f"iterateOrder = {t.iterateOrder}: must be 0 (M first) or 1 (N first)")
    if t.isBias not in (0, 1):
        out.append(f"isBias = {t.isBias}: must be 0 or 1")
    if ctx.cores and not 1 <= t.usedCoreNum <= ctx.cores:
        out.append(f"usedCoreNum = {t.usedCoreNum}: usedCoreNum <= aiCoreCnt ({ctx.cores}) and >= 1")
    if t.singleCoreM > t.M or t.singleCoreN > t.N:
        out.append(f"singleCoreM/N = {t.singleCoreM}/{t.singleCoreN} exceed M/N = {t.M}/{t.N} "
                   "(singleCoreM <= M; singleCoreN <= N)")
    if t.Ka != t.Kb:
        out.append(f"Ka = {t.Ka} and Kb = {t.Kb} differ: A is [M, K] and B is [K, N]")
    if t.singleCoreK != t.Ka:
        out.append(f"singleCoreK = {t.singleCoreK} but K = {t.Ka}: singleCoreK = K, 多核处理时不对K进行切分")
    want = _ceil(t.M, t.singleCoreM) * _ceil(t.N, t.singleCoreN)
    if t.usedCoreNum and t.usedCoreNum != want:
        out.append(f"usedCoreNum = {t.usedCoreNum} but (M / singleCoreM) * (N / singleCoreN) = "
                   f"ceil({t.M}/{t.singleCoreM}) * ceil({t.N}/{t.singleCoreN}) = {want}")
    if ctx.a_nz and (t.M % 16 or t.Ka % c0a or t.singleCoreM % 16):
        out.append(f"A in NZ: M ({t.M}) and singleCoreM ({t.singleCoreM}) must be multiples of 16 and "
                   f"Ka ({t.Ka}) of C0_size {c0a}")
    if ctx.b_nz and (t.N % 16 or t.Kb % c0b or t.singleCoreN % 16):
        out.append(f"B in NZ: N ({t.N}) and singleCoreN ({t.singleCoreN}) must be multiples of 16 and "
                   f"Kb ({t.Kb}) of C0_size {c0b}")
    # "baseM和baseN需要以16个元素对齐；A矩阵非转置且B矩阵转置场景，baseK需要以C0_size对齐；其余场景 ... baseK以16个元素对齐"
    if t.baseM % 16 or t.baseN % 16:
        out.append(f"baseM = {t.baseM}, baseN = {t.baseN}: baseM和baseN需要以16个元素对齐 (multiples of 16)")
    k_align = c0a if (not ctx.trans_a and ctx.trans_b) else 16
    if t.baseK % k_align:
        out.append(f"baseK = {t.baseK}: must be a multiple of {k_align} "
                   f"({'C0_size: A not transposed, B transposed' if k_align == c0a else '16 elements'})")
    # "baseM * baseK * sizeof(A_type) * dbL0A < l0a_size" (and B, C)
    la = t.baseM * t.baseK * sa * t.dbL0A
    if ctx.l0a and la > ctx.l0a:
        out.append(f"L0A: baseM * baseK * sizeof(A) * dbL0A = {t.baseM}*{t.baseK}*{sa:g}*{t.dbL0A} = "
                   f"{la:g} B > l0a_size {ctx.l0a} B")
    lb = t.baseN * t.baseK * sb * t.dbL0B
    if ctx.l0b and lb > ctx.l0b:
        out.append(f"L0B: baseN * baseK * sizeof(B) * dbL0B = {t.baseN}*{t.baseK}*{sb:g}*{t.dbL0B} = "
                   f"{lb:g} B > l0b_size {ctx.l0b} B")
    lc = t.baseM * t.baseN * ctx.l0c_size * t.dbL0C
    if ctx.l0c and lc > ctx.l0c:
        out.append(f"L0C: baseM * baseN * sizeof(l0c_type) * dbL0C = {t.baseM}*{t.baseN}*4*{t.dbL0C} = "
                   f"{lc:g} B > l0c_size {ctx.l0c} B")
    if t.isBias and ctx.bt and t.baseN * sbias > ctx.bt:
        out.append(f"BiasTable: baseN * sizeof(Bias) = {t.baseN}*{sbias:g} = {t.baseN * sbias:g} B > "
                   f"biasT_size {ctx.bt} B")
    # "stepM * stepKa * db = depthA1", "stepN * stepKb * db = depthB1" with db in {1, 2}
    if t.depthA1 not in (t.stepM * t.stepKa, 2 * t.stepM * t.stepKa):
        out.append(f"depthA1 = {t.depthA1} but stepM * stepKa * db = {t.stepM}*{t.stepKa}*db "
                   f"(db 1 or 2: {t.stepM * t.stepKa} or {2 * t.stepM * t.stepKa})")
    if t.depthB1 not in (t.stepN * t.stepKb, 2 * t.stepN * t.stepKb):
        out.append(f"depthB1 = {t.depthB1} but stepN * stepKb * db = {t.stepN}*{t.stepKb}*db "
                   f"(db 1 or 2: {t.stepN * t.stepKb} or {2 * t.stepN * t.stepKb})")
    al1, bl1 = l1_bytes(t, ctx)
    bias_l1 = t.baseN * sbias if t.isBias else 0
    if ctx.l1 and al1 + bl1 + bias_l1 > ctx.l1:
        out.append(f"L1: AL1Size + BL1Size{' + baseN * sizeof(Bias)' if t.isBias else ''} = "
                   f"{al1:g} + {bl1:g}{f' + {bias_l1:g}' if t.isBias else ''} = {al1 + bl1 + bias_l1:g} B "
                   f"> L1_size {ctx.l1} B")
    return out


def l1_bytes(t: TCubeTiling, ctx: TilingContext) -> tuple[float, float]:
    """AL1Size and BL1Size as TCubeTiling结构体.md table 2 computes them."""
    sa, sb = _SIZE[ctx.a], _SIZE[ctx.b]
    # 转置场景: AL1Size = CeilDiv(baseM, C0_size) * baseK * depthA1 * sizeof(A_type) -- read as the
    # fractal-padded rows, i.e. CeilDiv(baseM, C0) * C0; 非转置: AL1Size = baseM * baseK * depthA1 * sizeof(A)
    if ctx.trans_a:
        al1 = _round_up(t.baseM, _C0[ctx.a]) * t.baseK * t.depthA1 * sa
    else:
        al1 = t.baseM * t.baseK * t.depthA1 * sa
    if ctx.trans_b:
        bl1 = t.baseN * t.baseK * t.depthB1 * sb
    else:
        bl1 = _round_up(t.baseN, _C0[ctx.b]) * t.baseK * t.depthB1 * sb
    return al1, bl1


def check_tiling(t: TCubeTiling, ctx: TilingContext) -> None:
    """Raise ``TilingError`` listing every documented constraint ``t`` breaks; return if it is legal."""
    bad = tiling_violations(t, ctx)
    if bad:
        raise TilingError("TCubeTiling breaks " + ("this constraint" if len(bad) == 1 else
                                                  f"{len(bad)} constraints") + " of TCubeTiling结构体.md table 2:\n    "
                          + "\n    ".join(bad),
                          fix="let GetTiling choose (MultiCoreMatmulTiling(...).GetTiling(t)), or change the named "
                              "fields; the recommended base is (128, 256, 64) with dbL0A = dbL0B = 2")


class MatmulApiTiling:
    """``matmul_tiling::MatmulApiTiling``: single-core tiling (SetShape = the core's whole problem)."""

    multi_core = False

    def __init__(self, platform: ChipProfile | str | None = None):
        self.chip = get_chip(platform)
        self.a = _MatrixType()
        self.b = _MatrixType()
        self.c = _MatrixType(dtype=DataType.DT_FLOAT)
        self.bias_type = _MatrixType(dtype=DataType.DT_FLOAT)
        self.bias = False
        self.shape: tuple[int, int, int] | None = None
        self.org: tuple[int, int, int, int] | None = None
        self.single: tuple[int, int, int] | None = None
        self.fix_split = (-1, -1, -1)
        self.traverse = MatrixTraverse.FIRSTM
        self.dim = 1
        self.space = {"l1": self.chip.l1_bytes, "l0c": self.chip.l0c_bytes, "ub": self.chip.ub_bytes,
                      "bt": self.chip.bt_bytes}
        self.tiling: TCubeTiling | None = None

    # --- setters, C++ names and argument order ---------------------------------------------------
    def SetAType(self, pos, fmt: CubeFormat, dtype, isTrans: bool = False) -> int:
        self.a = _MatrixType(pos, CubeFormat(fmt), data_type(dtype), bool(isTrans))
        return 0

    def SetBType(self, pos, fmt: CubeFormat, dtype, isTrans: bool = False) -> int:
        self.b = _MatrixType(pos, CubeFormat(fmt), data_type(dtype), bool(isTrans))
        return 0

    def SetCType(self, pos, fmt: CubeFormat, dtype) -> int:
        self.c = _MatrixType(pos, CubeFormat(fmt), data_type(dtype))
        return 0

    def SetBiasType(self, pos, fmt: CubeFormat, dtype) -> int:
        self.bias_type = _MatrixType(pos, CubeFormat(fmt), data_type(dtype))
        return 0

    def SetShape(self, m: int, n: int, k: int) -> int:
        self.shape = (int(m), int(n), int(k))
        return 0

    def SetOrgShape(self, orgM: int, orgN: int, orgKa: int, orgKb: int | None = None) -> int:
        self.org = (int(orgM), int(orgN), int(orgKa), int(orgKa if orgKb is None else orgKb))
        return 0

    def EnableBias(self, isBiasIn: bool = False) -> int:
        self.bias = bool(isBiasIn)
        return 0

    SetBias = EnableBias

    def SetFixSplit(self, baseMIn: int = -1, baseNIn: int = -1, baseKIn: int = -1) -> int:
        self.fix_split = (int(baseMIn), int(baseNIn), int(baseKIn))
        return 0

    def SetTraverse(self, traverse: MatrixTraverse) -> int:
        self.traverse = MatrixTraverse(traverse)
        return 0

    def SetBufferSpace(self, l1Size: int = -1, l0CSize: int = -1, ubSize: int = -1, btSize: int = -1) -> int:
        chip = self.chip
        for key, v, full in (("l1", l1Size, chip.l1_bytes), ("l0c", l0CSize, chip.l0c_bytes),
                             ("ub", ubSize, chip.ub_bytes), ("bt", btSize, chip.bt_bytes)):
            if v != -1 and not 0 < v <= full:
                return -1
            self.space[key] = full if v == -1 else int(v)
        return 0

    def GetBaseM(self) -> int:
        return self.tiling.baseM if self.tiling else -1

    def GetBaseN(self) -> int:
        return self.tiling.baseN if self.tiling else -1

    def GetBaseK(self) -> int:
        return self.tiling.baseK if self.tiling else -1

    # --- the search -------------------------------------------------------------------------------
    def context(self) -> TilingContext:
        """The constraint context of this object's types and buffer space."""
        chip = self.chip
        cores = chip.aic_count
        return TilingContext(a=self.a.dtype, b=self.b.dtype, c=self.c.dtype, bias=self.bias_type.dtype,
                             trans_a=self.a.trans, trans_b=self.b.trans, a_nz=self.a.fmt is CubeFormat.NZ,
                             b_nz=self.b.fmt is CubeFormat.NZ, l1=self.space["l1"], l0a=chip.l0a_bytes,
                             l0b=chip.l0b_bytes, l0c=self.space["l0c"], bt=self.space["bt"], cores=cores)

    def GetTiling(self, tiling: TCubeTiling) -> int:
        """Fill ``tiling``; 0 on success, -1 when no legal tiling exists (as in C++). See ``explain()``."""
        try:
            found = self._solve()
        except TilingError as exc:
            self.failure = exc
            return -1
        for f in fields(found):
            setattr(tiling, f.name, getattr(found, f.name))
        self.tiling = found
        self.failure = None
        return 0

    def tiling_or_raise(self) -> TCubeTiling:
        """The tiling, or the ``TilingError`` that says why none exists (the Python-friendly GetTiling)."""
        t = TCubeTiling()
        if self.GetTiling(t) != 0:
            raise self.failure
        return t

    def _problem(self) -> tuple[int, int, int, int, int, int]:
        if self.shape is None and self.org is None:
            raise TilingError("matmul tiling: no shape set", fix="call SetShape(M, N, K) and SetOrgShape(M, N, K)")
        m, n, ka, kb = self.org if self.org else (*self.shape[:2], self.shape[2], self.shape[2])
        if ka != kb:
            raise TilingError(f"matmul tiling: Ka = {ka} and Kb = {kb} differ",
                              fix="A is [M, K] and B is [K, N]: pass one K to SetOrgShape")
        sm, sn, sk = self.single or self.shape or (m, n, ka)
        return m, n, ka, sm, sn, sk

    def _types_ok(self) -> None:
        pair = (self.a.dtype, self.b.dtype)
        legal = _A2_TYPES.get(pair)
        if legal is None:
            raise TilingError(f"matmul tiling: A {self.a.dtype.value} with B {self.b.dtype.value} is not a "
                              "supported type pair on Atlas A2",
                              fix="A and B share one type: half, bfloat16_t, float, int8_t or int4b_t")
        if self.c.dtype not in legal[1]:
            raise TilingError(f"matmul tiling: C {self.c.dtype.value} is not legal for A/B {self.a.dtype.value}",
                              fix="legal C types: " + ", ".join(sorted(t.value for t in legal[1])))
        if self.bias and self.bias_type.dtype not in legal[0]:
            raise TilingError(f"matmul tiling: Bias {self.bias_type.dtype.value} is not legal for A/B "
                              f"{self.a.dtype.value}",
                              fix="legal Bias types: " + ", ".join(sorted(t.value for t in legal[0])))

    def _split_cores(self, m: int, n: int, sm: int, sn: int) -> tuple[int, int]:
        return sm, sn

    def _solve(self) -> TCubeTiling:
        self._types_ok()
        m, n, k, sm, sn, sk = self._problem()
        sm, sn = self._split_cores(m, n, sm, sn)
        ctx = self.context()
        c0a, c0b = _C0[ctx.a], _C0[ctx.b]
        k_align = c0a if (not ctx.trans_a and ctx.trans_b) else 16
        fm, fn, fk = self.fix_split
        if fk != -1:
            raise TilingError(f"SetFixSplit: baseKIn = {fk}", fix="当前仅支持取值为-1: pass -1 for baseK")
        if fm != -1 and (fm % 16 or fm > _round_up(sm, 16)):
            raise TilingError(f"SetFixSplit: baseM = {fm} must be a multiple of 16 and <= ceil(singleM/16)*16 = "
                              f"{_round_up(sm, 16)}", fix="choose baseM from 16, 32, ... up to singleM rounded up")
        if fn != -1 and (fn % 16 or fn > _round_up(sn, max(16, _C0[ctx.b]))):
            raise TilingError(f"SetFixSplit: baseN = {fn} must be a multiple of 16 and <= singleN rounded up to "
                              f"C0 = {_round_up(sn, max(16, _C0[ctx.b]))}", fix="choose a smaller baseN")
        base_m = fm if fm != -1 else min(128, _round_up(sm, 16))
        base_n = fn if fn != -1 else min(256, _round_up(sn, 16))
        # the recommended baseK is 64 half elements: 128 bytes of K per row, for every type
        base_k = min(_round_up(int(128 / _SIZE[ctx.a]), k_align), _round_up(sk, k_align))
        db_c = 1
        # shrink until L0A/L0B/L0C hold a double-buffered base (fixed dimensions never shrink)
        for _ in range(64):
            t = self._assemble(m, n, k, sm, sn, sk, base_m, base_n, base_k, db_c, ctx)
            bad = [v for v in tiling_violations(t, ctx) if v.startswith(("L0A", "L0B", "L0C", "BiasTable"))]
            if not bad:
                break
            if any(v.startswith("L0C") or v.startswith("BiasTable") for v in bad) and (fn == -1 and base_n > 16):
                base_n -= 16
            elif any(v.startswith("L0C") for v in bad) and fm == -1 and base_m > 16:
                base_m -= 16
            elif any(v.startswith(("L0A", "L0B")) for v in bad) and base_k > k_align:
                base_k -= k_align
            else:
                raise TilingError("matmul tiling: no base block fits L0A/L0B/L0C: " + "; ".join(bad),
                                  fix="use a smaller SetFixSplit or a smaller type")
        # fill K in L1 first ("优先设置参数stepKa/stepKb，使得K方向全载"), then keep what fits
        k_steps = _ceil(sk, base_k)
        for step_k in sorted({k_steps, *[s for s in (8, 4, 2, 1) if s < k_steps]}, reverse=True):
            t = self._assemble(m, n, k, sm, sn, sk, base_m, base_n, base_k, db_c, ctx, step_k=step_k)
            if not tiling_violations(t, ctx):
                return t
        t = self._assemble(m, n, k, sm, sn, sk, base_m, base_n, base_k, db_c, ctx, step_k=1, db1=1)
        check_tiling(t, ctx)
        return t

    def _assemble(self, m, n, k, sm, sn, sk, bm, bn, bk, db_c, ctx, *, step_k=1, db1=2) -> TCubeTiling:
        used = _ceil(m, sm) * _ceil(n, sn)
        trans = max(bm * bk * _SIZE[ctx.a], bk * bn * _SIZE[ctx.b], bm * bn * _SIZE[ctx.c])
        return TCubeTiling(
            usedCoreNum=used, M=m, N=n, Ka=k, Kb=k, singleCoreM=sm, singleCoreN=sn, singleCoreK=sk,
            baseM=bm, baseN=bn, baseK=bk, depthA1=step_k * db1, depthB1=step_k * db1, stepM=1, stepN=1,
            isBias=int(self.bias), transLength=int(trans), iterateOrder=self.traverse.value,
            stepKa=step_k, stepKb=step_k, dbL0A=2, dbL0B=2, dbL0C=db_c)


class MultiCoreMatmulTiling(MatmulApiTiling):
    """``matmul_tiling::MultiCoreMatmulTiling``: splits M and N over ``SetDim`` cores (K is never split)."""

    multi_core = True

    def SetDim(self, dim: int) -> int:
        if dim < 1:
            return -1
        self.dim = int(dim)
        return 0

    def SetSingleShape(self, singleMIn: int = -1, singleNIn: int = -1, singleKIn: int = -1) -> int:
        self.single = (int(singleMIn), int(singleNIn), int(singleKIn))
        return 0

    def GetSingleShape(self) -> tuple[int, int, int]:
        t = self.tiling
        return (t.singleCoreM, t.singleCoreN, t.singleCoreK) if t else (-1, -1, -1)

    def GetCoreNum(self) -> int:
        """The numBlocks to launch: the cores the split actually uses."""
        return self.tiling.usedCoreNum if self.tiling else -1

    def _problem(self):
        m, n, k, sm, sn, sk = super()._problem()
        if self.single is None or self.single == (m, n, k):
            return m, n, k, -1, -1, k
        sm, sn, sk = self.single
        return m, n, k, sm if sm != -1 else -1, sn if sn != -1 else -1, k

    def _split_cores(self, m: int, n: int, sm: int, sn: int) -> tuple[int, int]:
        if sm != -1 and sn != -1:
            return sm, sn
        if sm == -1 and sn == -1 and is_split_mn(m, n, self.dim, self.chip.npu_arch):
            # a large problem on A2: CANN's own split (matmul_split.py: the best compute intensity)
            ctx = self.context()
            block = basic_block(self.fix_split[0], self.fix_split[1], _SIZE[ctx.a], self.space["l0c"],
                                ctx.trans_a, ctx.trans_b)
            return split_mn(m, n, self.dim, block, (_SIZE[ctx.a], _SIZE[ctx.b]), (ctx.trans_a, ctx.trans_b))
        # otherwise the split with the most cores used (<= dim) and, among those, the squarest core tile
        best = None
        for cm in range(1, self.dim + 1):
            for cn in range(1, self.dim // cm + 1):
                tm, tn = _round_up(_ceil(m, cm), 16), _round_up(_ceil(n, cn), 16)
                used = _ceil(m, tm) * _ceil(n, tn)
                if used > self.dim:
                    continue
                key = (used, -abs(math.log(tm / tn)), -cm)
                if best is None or key > best[0]:
                    best = (key, tm, tn)
        return min(best[1], m) if best[1] >= m else best[1], min(best[2], n) if best[2] >= n else best[2]
