"""The kernel-side ``Matmul`` high-level API (Matmul高阶API), built on the cube instructions.

``Matmul<aType, bType, cType, biasType, MM_CFG>``, ``MatmulConfig`` (``CFG_NORM``, ``CFG_MDL``),
``REGIST_MATMUL_OBJ``, ``SetTensorA/B``, ``SetBias``, ``SetTail``, ``Iterate``, ``GetTensorC``, ``IterateAll``
and ``End``, as the docs describe them
(cannmirror/asc-devkit, docs/zh/api/SIMD-API/高阶API/矩阵计算/Matmul-Kernel侧接口/). Every call expands into the
basic instructions a learner could write by hand, on their own pipes and with queue handshakes between them:

    GM (ND) --DataCopy(Nd2NzParams), MTE2--> A1/B1 (NZ, stepM x stepKa base blocks, L1 double buffer)
            --LoadData(LoadData3DParamsV2: A, A^T, B; LoadData2DParams with repeats: B^T), MTE1--> A2 (ZZ) / B2 (ZN)
              (one load per operand and base block, as the official loaders on Atlas A2; dbL0A / dbL0B buffers)
            --Mmad(MmadParams), M--> CO1 (NZ, fp32/int32; bias from the BT buffer on the first K step)
            --Fixpipe(FixpipeParamsV220, NZ2ND + quant), FIX--> GM (ND)

so its profile, timeline and sanitizer findings are those of the instructions, at the learner's call.

Modelled as in the docs: the Norm and MDL templates (MatmulConfig.md table 1: Norm, the default, moves one
base block per GM -> L1 copy, each when first needed, so MTE1 can start on the first; MDL moves a whole
stepM x stepKa (stepN x stepKb) L1 tile in one "big packet") on the cube core ("纯Cube模式", a kernel launched with
``core="AIC"``); A and B in GM, ND, with ``isTrans``; Bias in GM; C to GM (ND), ``enSequentialWrite``,
``enAtomic`` (C added to, or maxed/minned with, what GM holds: split-K); ``iterateOrder``; the L1 reuse
of a tile across C blocks when its rows and all of K stay in L1; ``enableKdimReorderLoad`` (MDL: core i starts its
K loop at L1 tile i mod the tiles and wraps round, so cores sharing A or B read different GM addresses at once);
``doMTE2Preload`` (MDL, 1: M, 2: N; the official scheduler_mdl_base.h DoPreloadLoad: right after a C block's L1
tiles, before its L0 loads, the next A (M) or B (N) tile is copied into the other L1 buffer, so the copy is issued
ahead of the MTE1/M instructions whose full 32-deep queues would otherwise hold the scalar back: engine/core.py).
MIX mode (the default in Ascend C: the AIV calls, the AIC's KFC server executes) and the IBShare template are
``matmul_kfc.py``: there ``REGIST_MATMUL_OBJ`` makes this object a ``MatmulClient`` on the AIV and a
``MatmulServerImpl`` on the AIC, which runs the methods below.
A or B already NZ in GM (``MatmulType(TPosition.GM, CubeFormat.NZ, ...)``, untransposed) is copied to L1 with
plain DataCopy bursts instead of Nd2Nz (the AIV ND2NZ case, ``benchmarks/matmul_features.py``).
Not modelled (each raises ``ArgumentError`` naming it): transposed NZ or UB/L1 inputs, C to a LocalTensor,
``enPartialSum``, the BasicBlock and SpecialMDL templates, ``doMTE2Preload`` = 3 (K) and GetMDLConfig's other
switches, batch matmul.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum

import numpy as np

from ascend_sim.api.highlevel.matmul_tiling import (CubeFormat, TCubeTiling, TilingContext, check_tiling,
                                                    data_type)
from ascend_sim.api.ops.cube import (Fixpipe, FixpipeParamsV220, LoadData, LoadData2DParams, Mmad, MmadParams,
                                     QuantMode_t)
from ascend_sim.api.ops.datacopy import DataCopy, DataCopyParams
from ascend_sim.api.ops.img2col import LoadData3DParamsV2
from ascend_sim.api.ops.nd2nz import Nd2NzParams
from ascend_sim.api.pipe import TBuf, TPipe, TPosition, TQue
from ascend_sim.api.sync import HardEvent, SetFlag, WaitFlag
from ascend_sim.api.tensor import GlobalTensor
from ascend_sim.engine import layout
from ascend_sim.engine.context import current_core
from ascend_sim.engine.instr import PIPE_INDEX
from ascend_sim.engine.errors import ArgumentError, DtypeError, PositionError, TilingError
from ascend_sim.hw.dtypes import bfloat16, float32, half, int8, int32

_PIPE_S = PIPE_INDEX["S"]

FRACTAL_BYTES = 512


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _up(a: int, b: int) -> int:
    return _ceil(a, b) * b


def _matrix_load3d(rows: int, cols: int, row0: int, col0: int, n_rows: int, n_cols: int, c0: int,
                   transpose: bool) -> LoadData3DParamsV2:
    """LoadData3D (v2) parameters that move the ``n_rows`` x ``n_cols`` block at (``row0``, ``col0``) of an NZ matrix
    in L1 (``rows`` high, ``cols`` wide: a 1 x ``rows`` feature map of ``cols`` channels, a 1 x 1 filter) into L0:
    rows rounded to 16 and columns to C0, as the official loaders' extConfig (mStartPt = row0, kStartPt = col0,
    mExtension, kExtension); ``transpose``: enTranspose (A^T into L0A)."""
    return LoadData3DParamsV2([0, 0, 0, 0], 1, rows, cols, _up(n_cols, 16 if transpose else c0), _up(n_rows, 16),
                              col0, row0, enTranspose=transpose)


class LayoutMode(Enum):
    """``LayoutMode``: the batch layout of a MatmulType (only NONE, no batch, is modelled)."""

    NONE = "NONE"
    NORMAL = "NORMAL"
    BSNGD = "BSNGD"
    SBNGD = "SBNGD"
    BNGS1S2 = "BNGS1S2"


@dataclass(frozen=True)
class MatmulType:
    """``MatmulType<POSITION, FORMAT, TYPE, ISTRANS, LAYOUT, IBSHARE>``: where a matrix lives, its format, element
    type, transposability, batch layout and whether the two AIV of a MIX kernel share it in L1 (IBShare)."""

    pos: TPosition
    format: CubeFormat
    dtype: object
    isTrans: bool = False
    layout: LayoutMode = LayoutMode.NONE
    ibShare: bool = False


def GetSysWorkSpacePtr():
    """The system workspace pointer ``REGIST_MATMUL_OBJ`` takes; the simulated Matmul needs none (returns None)."""
    return None


_TEMPLATE_SWITCHES = ("doNorm", "doBasicBlock", "doMultiDataLoad", "doIBShareNorm", "doSpecialMDL",
                      "doSpecialBasicBlock")


@dataclass(frozen=True)
class MatmulConfig:
    """``MatmulConfig``: the Matmul template (MatmulConfig.md table 2's switches) and ``enUnitFlag`` (the Mmad ->
    Fixpipe hand-over per 512 B of L0C, api/ops/unitflag.py; the C++ struct's default is true, GetMDLConfig's false);
    the other fields are not modelled."""

    doNorm: bool = False
    doBasicBlock: bool = False
    doMultiDataLoad: bool = False
    doIBShareNorm: bool = False
    doSpecialMDL: bool = False
    doSpecialBasicBlock: bool = False
    enUnitFlag: bool = True         # [OFF] include/adv_api/matmul/matmul_config.h: "bool enUnitFlag = true"
    enableKdimReorderLoad: bool = False     # MDL: each core starts its K loop at its own L1 tile (K轴错峰加载)
    doMTE2Preload: int = 0                  # MDL: 0 off, 1 preload the next M tile of A, 2 the next N tile of B

    @property
    def template(self) -> str:
        """The template, Norm or MDL; any other switch (or none, or two) raises ArgumentError naming those two."""
        on = [name for name in _TEMPLATE_SWITCHES if getattr(self, name)]
        if self.enableKdimReorderLoad and on == ["doNorm"]:
            raise ArgumentError("Matmul: enableKdimReorderLoad works with the MDL template only (MatmulConfig.md)",
                                fix="build the config on CFG_MDL: «MatmulConfig(doMultiDataLoad=True, "
                                    "enableKdimReorderLoad=True)|auto CFG = CFG_MDL; CFG.enableKdimReorderLoad = "
                                    "true;»")
        if self.doMTE2Preload not in (0, 1, 2):
            raise ArgumentError(f"Matmul: doMTE2Preload = {self.doMTE2Preload!r} is not modelled: 0 (off), 1 (M) "
                                "and 2 (N) are (MatmulConfig.md)", fix="«doMTE2Preload=1|doMTE2Preload = 1» or 2")
        if self.doMTE2Preload and on != ["doMultiDataLoad"]:
            raise ArgumentError("Matmul: doMTE2Preload works with the MDL template only (MatmulConfig.md: "
                                "预加载功能仅在MDL模板有效)",
                                fix="«GetMDLConfig(doMTE2Preload=2)|GetMDLConfig(false, false, 2)»")
        if on == ["doNorm"]:
            return "Norm"
        if on == ["doMultiDataLoad"]:
            return "MDL"
        if on == ["doIBShareNorm"]:
            return "IBShareNorm"        # loads as Norm; the sharing is matmul_kfc.py's (MIX mode only)
        raise ArgumentError(f"Matmul: MatmulConfig with {' + '.join(on) or 'no template switch'} is not modelled; "
                            "only the Norm (doNorm), MDL (doMultiDataLoad) and IBShare (doIBShareNorm) templates are",
                            fix="Matmul(aType, bType, cType, biasType, CFG_NORM) (the default), CFG_MDL or "
                                "CFG_IBSHARE_NORM")


def GetNormalConfig(*, enUnitFlag: bool = True) -> MatmulConfig:
    """``GetNormalConfig()``: the Norm template with its default switches (CFG_NORM; UnitFlag on, as the
    MatmulConfig page says: "Norm, IBShare下默认开启")."""
    return MatmulConfig(doNorm=True, enUnitFlag=bool(enUnitFlag))


def GetMDLConfig(intrinsicsLimit: bool = False, batchLoop: bool = False, doMTE2Preload: int = 0,
                 isVecND2NZ: bool = False, isPerTensor: bool = False, hasAntiQuantOffset: bool = False,
                 enUnitFlag: bool = False, isMsgReuse: bool = True, enableUBReuse: bool = True,
                 enableL1CacheUB: bool = False, enableMixDualMaster: bool = False,
                 enableKdimReorderLoad: bool = False) -> MatmulConfig:
    """``GetMDLConfig(...)``: the MDL template (CFG_MDL with the defaults; UnitFlag off: "MDL下默认不开启"); of its
    switches ``enUnitFlag`` (``GetMDLConfig(enUnitFlag=True)`` is the UnitFlag case's ``CUSTOM_CFG_MDL``),
    ``doMTE2Preload`` (1: M, 2: N) and ``enableKdimReorderLoad`` are modelled, any other one set away from its
    default raises ArgumentError."""
    others = {"intrinsicsLimit": (intrinsicsLimit, False), "batchLoop": (batchLoop, False),
              "isVecND2NZ": (isVecND2NZ, False),
              "isPerTensor": (isPerTensor, False), "hasAntiQuantOffset": (hasAntiQuantOffset, False),
              "isMsgReuse": (isMsgReuse, True),
              "enableUBReuse": (enableUBReuse, True), "enableL1CacheUB": (enableL1CacheUB, False),
              "enableMixDualMaster": (enableMixDualMaster, False)}
    off = [f"{k}={v!r}" for k, (v, default) in others.items() if v != default]
    if doMTE2Preload not in (0, 1, 2):
        off.append(f"doMTE2Preload={doMTE2Preload!r}")
    if off:
        raise ArgumentError(f"GetMDLConfig({', '.join(off)}): not modelled; of GetMDLConfig's switches only "
                            "enUnitFlag, doMTE2Preload and enableKdimReorderLoad are",
                            fix="call «GetMDLConfig()» with its defaults (or build on CFG_MDL with "
                                "«enableKdimReorderLoad=True|CFG.enableKdimReorderLoad = true»)")
    return MatmulConfig(doMultiDataLoad=True, enUnitFlag=bool(enUnitFlag),
                        enableKdimReorderLoad=bool(enableKdimReorderLoad), doMTE2Preload=doMTE2Preload)


CFG_NORM = GetNormalConfig()
CFG_MDL = GetMDLConfig()
CFG_IBSHARE_NORM = MatmulConfig(doIBShareNorm=True)
MM_CFG_BB = MatmulConfig(doBasicBlock=True, enUnitFlag=False)     # tiling.h GetBasicConfig: ".enUnitFlag = false"

_ACC = {half: float32, bfloat16: float32, float32: float32, int8: int32}
ATOMIC_MODES = {0: None, 1: "add", 2: "max", 3: "min"}     # GetTensorC / IterateAll enAtomic


class Matmul:
    """``AscendC::Matmul<aType, bType, cType, biasType, MM_CFG>`` (Norm or MDL template, on the cube core)."""

    def __init__(self, aType: MatmulType, bType: MatmulType, cType: MatmulType, biasType: MatmulType | None = None,
                 MM_CFG: MatmulConfig = CFG_NORM):
        if not isinstance(MM_CFG, MatmulConfig):
            raise ArgumentError(f"Matmul: MM_CFG must be a MatmulConfig, got {type(MM_CFG).__name__}",
                                fix="pass CFG_NORM (the default) or CFG_MDL")
        self.template = MM_CFG.template
        self.MM_CFG = MM_CFG
        self.unit_flag = bool(MM_CFG.enUnitFlag)
        for role, t in (("A", aType), ("B", bType), ("C", cType)):
            if not isinstance(t, MatmulType):
                raise ArgumentError(f"Matmul: the {role} type must be a MatmulType, got {type(t).__name__}",
                                    fix="«MatmulType(TPosition.GM, CubeFormat.ND, half)»")
            nz_ok = role != "C" and t.format is CubeFormat.NZ and not t.isTrans
            if t.pos is not TPosition.GM or not (t.format is CubeFormat.ND or nz_ok):
                raise ArgumentError(f"Matmul: {role} at {t.pos.name}/{t.format.name}"
                                    f"{' (transposable)' if t.isTrans else ''} is not modelled; only GM, ND (and "
                                    "NZ for an untransposed A or B)",
                                    fix="keep A, B, C (and Bias) in GM in ND format, or A / B in NZ with isTrans false")
        self.aType, self.bType, self.cType, self.biasType = aType, bType, cType, biasType
        self.a_dt, self.b_dt, self.c_dt = np.dtype(aType.dtype), np.dtype(bType.dtype), np.dtype(cType.dtype)
        if self.a_dt != self.b_dt or self.a_dt not in _ACC:
            raise DtypeError(f"Matmul: A {self.a_dt} with B {self.b_dt}",
                             fix="A and B share one type: half, bfloat16_t, float or int8_t")
        self.acc = _ACC[self.a_dt]
        self.tiling: TCubeTiling | None = None
        self._a = self._b = self._bias = None
        self._quant_word = 0

    # --- setup -----------------------------------------------------------------------------------
    def Init(self, cubeTiling: TCubeTiling, tpipe: TPipe | None = None) -> None:
        """Check the tiling against the documented constraints and reserve L1, L0A, L0B, L0C and BT buffers."""
        core = current_core()
        if core.core_type not in ("AIC", "CORE"):
            mix = core.launch.kernel.core == "MIX"
            raise PositionError(
                f"Matmul.Init on an AIV core of a {'MIX' if mix else 'vector'} kernel: on the AIV the Matmul object "
                "is a client of the KFC server on the AIC of its AI Core (MIX mode), "
                + ("which only REGIST_MATMUL_OBJ connects it to" if mix else
                   "and a kernel launched with core='AIV' has no AIC to serve it"),
                fix="«REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, tiling)|REGIST_MATMUL_OBJ(&pipe, "
                    "GetSysWorkSpacePtr(), mm, &tiling)»" + ("" if mix else " in a MIX kernel («@kernel(core='MIX')|"
                    "__global__ __mix__(1, 2)»), or a cube kernel («@kernel(core='AIC')|__global__ __cube__») for "
                    "a pure-Cube Matmul (ASCENDC_CUBE_ONLY)"))
        t = self.checked_tiling(cubeTiling)
        if any(self.shares()) and not (core.core_type == "AIC" and core.launch.kernel.core == "MIX"):
            raise ArgumentError(
                "Matmul with IBShare in a kernel without two AIV: IBShare lets the two AIV of a MIX kernel share one "
                "copy of A or B in their AIC's L1 (IBShare适用场景: MIX场景下，多个AIV的A矩阵或B矩阵GM地址相同); this "
                f"kernel runs on {'the AIC alone (纯Cube模式)' if core.core_type == 'AIC' else 'one coupled AI Core'}",
                fix="launch a MIX kernel («@kernel(core='MIX')|__global__ __mix__(1, 2)») on a separated chip (Atlas "
                    "A2), or drop IBShare: CFG_NORM and a MatmulType without IBShare")
        chip = core.chip
        # the kernel head: the TCubeTiling copied from the host, then Init's scalar set-up (before the first MTE2)
        core.issue(_PIPE_S, "Matmul.Init", chip.matmul_tiling_copy_cycles + chip.matmul_init_cycles, klass="scalar")
        self.tiling = t
        self.pipe = tpipe if tpipe is not None else TPipe()
        isz = self.a_dt.itemsize
        self.c0 = 32 // isz
        self.db_a1 = t.depthA1 // (t.stepM * t.stepKa)
        self.db_b1 = t.depthB1 // (t.stepN * t.stepKb)
        self.preload = self._preload_mode(t)
        rows_a, cols_a = _up(t.stepM * t.baseM, 16), _up(t.stepKa * t.baseK, max(16, self.c0))
        rows_b, cols_b = _up(t.stepKb * t.baseK, max(16, self.c0)), _up(t.stepN * t.baseN, 16)
        self.qA1, self.qB1 = TQue(TPosition.A1, self.db_a1), TQue(TPosition.B1, self.db_b1)
        self.qA2, self.qB2 = TQue(TPosition.A2, t.dbL0A), TQue(TPosition.B2, t.dbL0B)
        # CO1: with UnitFlag one buffer and no queue handshake, the unit flags synchronise Mmad and Fixpipe
        # (cube_out_buffer_unit_flag.h: EnQue/DeQue/FreeTensor do nothing); without, a queue of dbL0C buffers
        self.qCO1 = TBuf(TPosition.CO1) if self.unit_flag else TQue(TPosition.CO1, t.dbL0C)
        self.pipe.InitBuffer(self.qA1, self.db_a1, rows_a * cols_a * isz)
        self.pipe.InitBuffer(self.qB1, self.db_b1, rows_b * cols_b * isz)
        self.pipe.InitBuffer(self.qA2, t.dbL0A, _up(t.baseM, 16) * _up(t.baseK, self.c0) * isz)
        self.pipe.InitBuffer(self.qB2, t.dbL0B, _up(t.baseK, max(16, self.c0)) * _up(t.baseN, 16) * isz)
        co1_bytes = _up(t.baseM, 16) * _up(t.baseN, 16) * 4
        if self.unit_flag:
            self.pipe.InitBuffer(self.qCO1, co1_bytes)
        else:
            self.pipe.InitBuffer(self.qCO1, t.dbL0C, co1_bytes)
        if t.isBias and self.biasType is not None:
            self.qC1, self.qC2 = TQue(TPosition.C1, 1), TQue(TPosition.C2, 1)
            self.pipe.InitBuffer(self.qC1, 1, _up(t.baseN, 16) * np.dtype(self.biasType.dtype).itemsize)
            self.pipe.InitBuffer(self.qC2, 1, _up(t.baseN, 16) * 4)
        self.org = (t.M, t.N, t.Ka)
        self.single = [t.singleCoreM, t.singleCoreN, t.singleCoreK]
        self._reset()

    def shares(self) -> tuple[bool, bool]:
        """(A, B): whether the two AIV of a MIX kernel share it in L1: the IBShare template and the MatmulType's flag."""
        on = self.template == "IBShareNorm"
        return on and self.aType.ibShare, on and self.bType.ibShare

    def checked_tiling(self, cubeTiling) -> TCubeTiling:
        """``cubeTiling`` once it meets the documented constraints for this object's types on this chip."""
        if not isinstance(cubeTiling, TCubeTiling):
            raise ArgumentError(f"Matmul.Init takes a TCubeTiling, got {type(cubeTiling).__name__}",
                                fix="fill one with MultiCoreMatmulTiling(...).GetTiling(tiling) on the host")
        chip = current_core().chip
        ctx = TilingContext(a=data_type(self.a_dt), b=data_type(self.b_dt), c=data_type(self.c_dt),
                            bias=data_type(self.biasType.dtype) if self.biasType else data_type(float32),
                            trans_a=self.aType.isTrans, trans_b=self.bType.isTrans, l1=chip.l1_bytes,
                            l0a=chip.l0a_bytes, l0b=chip.l0b_bytes, l0c=chip.l0c_bytes, bt=chip.bt_bytes)
        check_tiling(cubeTiling, ctx)
        return cubeTiling

    def _need_init(self, what: str) -> TCubeTiling:
        if self.tiling is None:
            raise ArgumentError(f"Matmul.{what} before Init", fix="call REGIST_MATMUL_OBJ(pipe, workspace, mm, tiling) "
                                                                  "(or mm.Init(tiling, pipe)) first")
        return self.tiling

    def SetOrgShape(self, orgM: int, orgN: int, orgKa: int, orgKb: int | None = None, orgKc: int | None = None) -> None:
        """The whole problem's M, N, K (row pitches of A, B and C) when they differ from the tiling's."""
        self._need_init("SetOrgShape")
        self.org = (int(orgM), int(orgN), int(orgKa))

    def SetSingleShape(self, singleM: int, singleN: int, singleK: int) -> None:
        self._need_init("SetSingleShape")
        self.single = [int(singleM), int(singleN), int(singleK)]
        self._reset()

    def SetTail(self, tailM: int = -1, tailN: int = -1, tailK: int = -1) -> None:
        """This core's singleCoreM/N/K when it is a tail core (-1 keeps the tiling's)."""
        t = self._need_init("SetTail")
        for i, (v, full) in enumerate(((tailM, t.singleCoreM), (tailN, t.singleCoreN), (tailK, t.singleCoreK))):
            if v != -1:
                if not 0 < v <= full:
                    raise ArgumentError(f"SetTail: {'MNK'[i]} = {v} must be in 1..{full} (the tiling's singleCore"
                                        f"{'MNK'[i]})", fix="pass the tail core's remaining rows/columns, or -1")
                self.single[i] = int(v)
        self._reset()

    def SetTensorA(self, gm: GlobalTensor, isTransposeA: bool = False) -> None:
        self._need_init("SetTensorA")
        self._a = self._operand("SetTensorA", gm, self.a_dt, isTransposeA, self.aType)
        self._reset()

    def SetTensorB(self, gm: GlobalTensor, isTransposeB: bool = False) -> None:
        self._need_init("SetTensorB")
        self._b = self._operand("SetTensorB", gm, self.b_dt, isTransposeB, self.bType)
        if self.b_dt.itemsize != 2 and not isTransposeB:
            raise ArgumentError(f"SetTensorB: a {self.b_dt} B as K x N needs a transposing load that LoadData 2D only "
                                "does for 2-byte types (LoadDataWithTranspose is not modelled)",
                                fix="store B transposed (N x K) in GM and call «SetTensorB(gm, True)» with "
                                    "«MatmulType(..., isTrans=True)|MatmulType<pos, format, T, true>»")
        self._reset()

    def _operand(self, op: str, gm, dtype, trans: bool, mtype: MatmulType):
        if not isinstance(gm, GlobalTensor):
            raise ArgumentError(f"{op}: only a GlobalTensor input is modelled, got {type(gm).__name__}",
                                fix="pass the GM tensor (offset to this core's part with gm[offset])")
        if np.dtype(gm.dtype) != dtype:
            raise DtypeError(f"{op}: the tensor is {np.dtype(gm.dtype)} but the MatmulType says {dtype}",
                             fix="make the MatmulType and the GlobalTensor agree")
        if trans and not mtype.isTrans:
            raise ArgumentError(f"{op}(..., True) but the MatmulType was declared with isTrans=False",
                                fix="declare «MatmulType(..., isTrans=True)|MatmulType<pos, format, T, true>» to allow the "
                                    "transposed form")
        if trans and op == "SetTensorA" and dtype.itemsize != 2:
            raise ArgumentError(f"SetTensorA transposed with {dtype}: the transposing LoadData is for 2-byte types",
                                fix="store A as M x K for float and int8 inputs")
        return gm, bool(trans)

    def SetBias(self, biasGlobal: GlobalTensor) -> None:
        t = self._need_init("SetBias")
        if not t.isBias:
            raise TilingError("SetBias but the tiling has isBias = 0: no BT buffer was reserved",
                              fix="EnableBias(true) on the host tiling before GetTiling")
        if self.biasType is None:
            raise ArgumentError("SetBias on a Matmul declared without a bias type",
                                fix="«Matmul(aType, bType, cType, MatmulType(TPosition.GM, CubeFormat.ND, float32))»")
        if not isinstance(biasGlobal, GlobalTensor):
            raise ArgumentError("SetBias: only a GlobalTensor bias is modelled", fix="pass the bias in GM")
        need = _up(self.single[1], 16)
        if biasGlobal.GetSize() < need:
            raise ArgumentError(f"SetBias: the bias holds {biasGlobal.GetSize()} values; this core's N = "
                                f"{self.single[1]} is read in whole 16-value fractal rows ({need} values), as the BT "
                                "copy needs 32-byte multiples", fix=f"pad the bias in GM with zeros to {need} values")
        self._bias = biasGlobal
        self._reset()

    def DisableBias(self) -> None:
        self._bias = None

    ClearBias = DisableBias

    def SetQuantScalar(self, quantScalar: float) -> None:
        """The scale of the int32 -> half dequantisation on the way out (DEQF16), for int8 inputs."""
        bits = int(np.array([quantScalar], np.float32).view(np.uint32)[0])
        self._quant_word = bits & 0xFFFFE000

    # --- the iteration -----------------------------------------------------------------------------
    def _reset(self) -> None:
        t = self.tiling
        if t is None:
            return
        sm, sn, _ = self.single
        mi, ni = _ceil(sm, t.baseM), _ceil(sn, t.baseN)
        if t.iterateOrder == 0:           # "先往M轴方向偏移再往N轴方向偏移": M is the inner loop
            self._blocks = [(m, n) for n in range(ni) for m in range(mi)]
        else:
            self._blocks = [(m, n) for m in range(mi) for n in range(ni)]
        self._next = 0
        self._done = 0
        self._l1a = self._l1b = None      # (key, tensor) kept in L1 across C blocks
        self._pre = {}                    # doMTE2Preload: slot -> the next tile, copied and EnQue'd, not yet DeQue'd
        self._pending = None

    def check_iterate(self, enPartialSum: bool) -> TCubeTiling:
        """The tiling, once an Iterate may go ahead: inputs set, the last block fetched."""
        t = self._need_init("Iterate")
        if enPartialSum:
            raise ArgumentError("Iterate(enPartialSum=True) is not modelled", fix="accumulate over K inside one Iterate")
        if self._a is None or self._b is None:
            raise ArgumentError("Iterate before SetTensorA and SetTensorB", fix="set both inputs first")
        if self._pending is not None:
            raise ArgumentError("Iterate twice without GetTensorC: the previous C block is still in L0C",
                                fix="call GetTensorC(gm) after each Iterate (or use IterateAll)")
        return t

    def Iterate(self, enPartialSum: bool = False) -> bool:
        """Compute the next baseM x baseN block of C into L0C; False when the core's C is complete."""
        t = self.check_iterate(enPartialSum)
        if self._next >= len(self._blocks):
            self._release_l1()
            return False
        mi, ni = self._blocks[self._next]
        self._next += 1
        sm, sn, sk = self.single
        bm, bn = min(t.baseM, sm - mi * t.baseM), min(t.baseN, sn - ni * t.baseN)
        co1 = self.qCO1.Get(self.acc) if self.unit_flag else self.qCO1.AllocTensor(self.acc)
        steps = _ceil(sk, t.baseK)
        first = self._k_start(steps)
        for i in range(steps):
            kk = (first + i) % steps
            k0 = kk * t.baseK
            bk = min(t.baseK, sk - k0)
            a1, a_rows, a_row0, a_k0 = self._tile_a(mi, kk)
            b1, b_rows, b_col0, b_k0 = self._tile_b(ni, kk)
            if i == 0 and self.preload:
                self._preload_next(mi, ni)
            self._load_a(a1, a_rows, (mi * t.baseM - a_row0) // 16, (k0 - a_k0), bm, bk)
            self._load_b(b1, b_rows, (ni * t.baseN - b_col0) // 16, (k0 - b_k0), bn, bk)
            a2 = self.qA2.DeQue(self.a_dt)
            b2 = self.qB2.DeQue(self.b_dt)
            flag = (3 if i == steps - 1 else 2) if self.unit_flag else 0     # matmul_unit_flag.h GetUnitFlag
            if i == 0 and self._bias is not None:
                bt = self._load_bias(ni * t.baseN, bn)
                Mmad(co1, a2, b2, bt, MmadParams(bm, bn, bk, flag, True, False))
                self.qC2.FreeTensor(bt)
            else:
                Mmad(co1, a2, b2, MmadParams(bm, bn, bk, flag, False, i == 0))
            self.qA2.FreeTensor(a2)
            self.qB2.FreeTensor(b2)
        if not self.unit_flag:
            self.qCO1.EnQue(co1)
        self._pending = (mi, ni, bm, bn)
        return True

    def _preload_mode(self, t: TCubeTiling) -> int:
        """``doMTE2Preload`` once the tiling allows it: 1 (M) or 2 (N), with K whole in L1 (the official Init
        asserts it); 0 when the preloaded operand has one L1 buffer (the official cacheFactor: no preload)."""
        mode = self.MM_CFG.doMTE2Preload
        if not mode:
            return 0
        steps_k = _ceil(t.singleCoreK, t.baseK)
        step_k, name, db = (t.stepKa, "A", self.db_a1) if mode == 1 else (t.stepKb, "B", self.db_b1)
        step_name = "stepKa" if mode == 1 else "stepKb"
        if steps_k > step_k:
            raise TilingError(f"doMTE2Preload = {mode} ({'M' if mode == 1 else 'N'}) needs all of K of {name} in one "
                              f"L1 tile: singleCoreK {t.singleCoreK} / baseK {t.baseK} = {steps_k} K steps, but "
                              f"{step_name} = {step_k} (MatmulConfig.md: 开启M/N方向的预加载功能时需保证K全载)",
                              fix=f"set {step_name} >= {steps_k} (and depth{name}1 to twice the tile) on the host "
                                  "tiling, or doMTE2Preload = 0")
        return mode if db == 2 else 0

    def _preload_next(self, mi: int, ni: int) -> None:
        """doMTE2Preload (the official DoPreloadLoad): copy the next M tile of A (1) or N tile of B (2) into the
        other L1 buffer now, before this block's L0 loads; its DeQue waits until the tile is used (AwaitLoadData)."""
        t = self.tiling
        sm, sn, _ = self.single
        if self.preload == 1:
            total = _ceil(sm, t.baseM)
            if ni % t.stepN or mi + t.stepM >= total:
                return
            slot, key = "_l1a", ((mi + t.stepM) // t.stepM, 0)
            queue, dtype, operand, k_inner = self.qA1, self.a_dt, self._a, not self._a[1]
            org_outer, tile_steps, single_outer = self.org[0], (t.stepM * t.baseM, t.stepKa * t.baseK), sm
        else:
            total = _ceil(sn, t.baseN)
            if mi % t.stepM or ni + t.stepN >= total:
                return
            slot, key = "_l1b", ((ni + t.stepN) // t.stepN, 0)
            queue, dtype, operand, k_inner = self.qB1, self.b_dt, self._b, self._b[1]
            org_outer, tile_steps, single_outer = self.org[1], (t.stepN * t.baseN, t.stepKb * t.baseK), sn
        held, pre = getattr(self, slot), self._pre.get(slot)
        if (held is not None and held[0] == key) or (pre is not None and pre[0] == key):
            return                      # already in L1 (the official Hit)
        new = self._alloc_l1_tile(queue, dtype, k_inner, key, tile_steps, single_outer)
        _, (l1, pitch, outer0, k0), copied, whole = new
        self._copy_to_l1(l1, pitch, operand[0], k_inner, org_outer, (outer0, k0), whole)
        queue.EnQue(l1)
        copied.add(whole)
        self._pre[slot] = new

    def _k_start(self, steps: int) -> int:
        """The base K step this core's K loop starts at: 0, or with ``enableKdimReorderLoad`` (MDL) the first step
        of L1 tile ``GetBlockIdx() % tiles`` (the official KLoop: k_loop_mdl_reorder.h in cannmirror/asc-devkit,
        ``InitMinStepKStartIdx``, over the operand whose L1 tile holds more K steps, counted in the smaller
        stepK); the loop then wraps round, so cores that share A or B read different K tiles at the same time."""
        if not self.MM_CFG.enableKdimReorderLoad:
            return 0
        t = self.tiling
        min_step = min(t.stepKa, t.stepKb)
        step = max(t.stepKa, t.stepKb)          # stepKa > stepKb: A's tiles, else B's (equal: either)
        tiles = _ceil(steps, step)
        return (current_core().block_idx % tiles) * (step // min_step) * min_step

    def _tile_a(self, mi: int, kk: int):
        """The L1 tile of A holding C row block ``mi`` at K step ``kk``, with that base block in it."""
        t = self.tiling
        return self._l1_tile("_l1a", self.qA1, self.db_a1, self.a_dt, self._a, not self._a[1], self.org[0],
                             (mi // t.stepM, kk // t.stepKa), (t.stepM * t.baseM, t.stepKa * t.baseK),
                             (mi * t.baseM, kk * t.baseK, t.baseM, t.baseK), self.single[0])

    def _tile_b(self, ni: int, kk: int):
        """The L1 tile of B holding C column block ``ni`` at K step ``kk``, with that base block in it."""
        t = self.tiling
        return self._l1_tile("_l1b", self.qB1, self.db_b1, self.b_dt, self._b, self._b[1], self.org[1],
                             (ni // t.stepN, kk // t.stepKb), (t.stepN * t.baseN, t.stepKb * t.baseK),
                             (ni * t.baseN, kk * t.baseK, t.baseN, t.baseK), self.single[1])

    def _l1_tile(self, slot: str, queue: TQue, db: int, dtype, operand, k_inner: bool, org_outer: int, key,
                 tile_steps, block, single_outer: int):
        """(tensor, row pitch, outer start, K start) of one operand's L1 tile; ``outer`` is M for A, N for B.

        ``tile_steps``: the tile's (outer, K) extent; ``block``: (outer start, K start, outer size, K size) of
        the base block the caller needs. MDL copies the whole tile when it arrives; Norm copies this block
        into it unless an earlier Iterate did (the tile keeps the blocks already copied).
        """
        held = getattr(self, slot)
        old = None
        if held is None or held[0] != key:
            old = held
            pre = self._pre.pop(slot, None)
            if pre is not None and pre[0] == key:       # preloaded: MTE1 waits for its copy (AwaitLoadData)
                queue.DeQue(dtype)
                setattr(self, slot, pre)
                self._drop(old, queue)
                return pre[1]
            if pre is not None:         # preloaded a tile this block does not use: give its buffer back
                queue.DeQue(dtype)
                self._drop(pre, queue)
            if db == 1:                 # one L1 buffer: the old tile goes before the new one comes
                self._drop(old, queue)
                old = None
            held = self._new_l1_tile(slot, queue, dtype, k_inner, key, tile_steps, single_outer)
        _, tile, copied, whole = held
        l1, pitch, outer0, k0 = tile
        if self.template == "MDL":
            extent = whole
        else:
            extent = (block[0], block[1], min(block[2], single_outer - block[0]),
                      min(block[3], self.single[2] - block[1]))
        if extent not in copied:
            nz = (self.aType if slot == "_l1a" else self.bType).format is CubeFormat.NZ
            copy = self._copy_nz_to_l1 if nz else self._copy_to_l1
            copy(l1, pitch, operand[0], k_inner, org_outer, (outer0, k0), extent)
            self._hand_to_mte1(queue, dtype, l1, first=not copied)
            copied.add(extent)
        self._drop(old, queue)          # two buffers: the new tile was copied to while the old one was read
        return tile

    def _new_l1_tile(self, slot: str, queue: TQue, dtype, k_inner: bool, key, tile_steps, single_outer: int):
        """Take an L1 buffer for the tile ``key``, nothing copied yet, and hold it in ``slot``."""
        new = self._alloc_l1_tile(queue, dtype, k_inner, key, tile_steps, single_outer)
        setattr(self, slot, new)
        return new

    def _alloc_l1_tile(self, queue: TQue, dtype, k_inner: bool, key, tile_steps, single_outer: int):
        """An L1 buffer for the tile ``key``: (key, (tensor, row pitch, outer start, K start), the extents copied,
        the whole tile's extent)."""
        outer0, k0 = key[0] * tile_steps[0], key[1] * tile_steps[1]
        n_outer, n_k = min(tile_steps[0], single_outer - outer0), min(tile_steps[1], self.single[2] - k0)
        pitch = _up(n_outer, 16) if k_inner else _up(n_k, 16)
        return (key, (queue.AllocTensor(dtype), pitch, outer0, k0), set(), (outer0, k0, n_outer, n_k))

    def _copy_to_l1(self, l1, pitch: int, gm, k_inner: bool, org_outer: int, tile0, extent) -> None:
        """One DataCopy (Nd2Nz, MTE2) of the ``extent`` = (outer start, K start, outer rows, K rows) of the operand
        into its place in the NZ tile that starts at ``tile0`` = (outer start, K start)."""
        o0, kk0, n_outer, n_k = extent
        c0 = self.c0
        if k_inner:                     # outer x K in GM: fractals of 16 outer rows x C0 of K
            ld = self.org[2]
            dst = ((kk0 - tile0[1]) // c0 * pitch + (o0 - tile0[0])) * c0
            src, params = gm[o0 * ld + kk0], Nd2NzParams(1, n_outer, n_k, 0, ld, pitch, 1, 0)
        else:                           # K x outer in GM: fractals of 16 K rows x C0 of outer
            ld = org_outer
            dst = ((o0 - tile0[0]) // c0 * pitch + (kk0 - tile0[1])) * c0
            src, params = gm[kk0 * ld + o0], Nd2NzParams(1, n_k, n_outer, 0, ld, pitch, 1, 0)
        DataCopy(l1[dst] if dst else l1, src, params)

    def _copy_nz_to_l1(self, l1, pitch: int, gm, k_inner: bool, org_outer: int, tile0, extent) -> None:
        """An operand already NZ in GM (``CubeFormat.NZ``): one plain DataCopy of its fractal columns, no Nd2Nz.

        In GM an NZ matrix is columns of C0 elements (of K for A, of N for B), each column ``rows`` high (M for A,
        K for B, rounded up to 16) and contiguous; the extent's columns are ``blockCount`` bursts of one 32 B
        block per row (asc-devkit impl/adv_api/detail/matmul/stage/copy_cube_in/copy_tile_to_cube/
        data_copy_wrapper_nz.h, CopyNZ2NZ: a DataCopy with DataCopyParams).
        """
        o0, kk0, n_outer, n_k = extent
        c0 = self.c0
        if k_inner:                     # A (M x K): columns of C0 K values, M rows high
            rows, row0, n_rows, col0, n_cols = _up(self.org[0], 16), o0, n_outer, kk0, n_k
            dst = ((kk0 - tile0[1]) // c0 * pitch + (o0 - tile0[0])) * c0
        else:                           # B (K x N): columns of C0 N values, K rows high
            rows, row0, n_rows, col0, n_cols = _up(self.org[2], 16), kk0, n_k, o0, n_outer
            dst = ((o0 - tile0[0]) // c0 * pitch + (kk0 - tile0[1])) * c0
        n_rows = min(_up(n_rows, 16), rows - row0)     # a tail's rows up to 16: the zeros the NZ matrix holds
        src, dst_t = gm[(col0 // c0 * rows + row0) * c0], l1[dst] if dst else l1
        count = _ceil(n_cols, c0)
        DataCopy(dst_t, src, DataCopyParams(count, n_rows, rows - n_rows, pitch - n_rows))
        # the bursts are NZ columns, not ND rows: the MatmulType's CubeFormat.NZ says what the GM bytes are, which
        # the copy's own check (a strided L1 copy of rows over 32 B is ND) cannot see
        layout.mark(dst_t.tier, dst_t.addr, dst_t.addr + ((count - 1) * pitch + n_rows) * 32, 0)

    def _hand_to_mte1(self, queue: TQue, dtype, l1, first: bool) -> None:
        """MTE1 waits for the copy just issued: the queue handshake for a tile's first copy, then (Norm) a
        SetFlag/WaitFlag MTE2_MTE1 per further block, so MTE1 starts on each block as soon as it is in L1."""
        if first:
            queue.EnQue(l1)
            queue.DeQue(dtype)
            return
        eid = self.pipe.FetchEventID(HardEvent.MTE2_MTE1)
        SetFlag(HardEvent.MTE2_MTE1, eid)
        WaitFlag(HardEvent.MTE2_MTE1, eid)

    def _drop(self, held, queue: TQue) -> None:
        if held is not None:
            queue.FreeTensor(held[1][0])

    def _release_l1(self) -> None:
        self._drop(self._l1a, self.qA1)
        self._drop(self._l1b, self.qB1)
        self._l1a = self._l1b = None
        for slot, pre in self._pre.items():     # a preloaded tile never used: DeQue'd and given back
            queue = self.qA1 if slot == "_l1a" else self.qB1
            queue.DeQue(self.a_dt if slot == "_l1a" else self.b_dt)
            self._drop(pre, queue)
        self._pre = {}

    def _load_a(self, a1, pitch: int, rb0: int, k_off: int, bm: int, bk: int) -> None:
        """L1 (NZ) -> L0A (ZZ): one LoadData3D (v2) per base block, as the official Matmul on Atlas A2/A3
        (https://github.com/cannmirror/asc-devkit, impl/adv_api/detail/matmul/stage/split/load_to_l0a/
        load_to_l0a_loadInstr.h, chosen for arch 2201 by feature_trait/matmul_chip_cap.h: ifSupportLoad3dV2;
        the guide's NPU架构版本2201 hardware-constraints page: LoadData 2D "需要发射32条指令", LoadData3D "只需要一条指令"),
        LoadToL0A::LoadDataToL0 / TransLoadDataToL0: the L1 tile is a feature map one pixel high and ``pitch``
        wide, FMATRIX w = its rows rounded to 16; A^T with enTranspose)."""
        a2 = self.qA2.AllocTensor(self.a_dt)
        _, trans = self._a
        cols = self._l1_cols(a1, pitch)
        if trans:       # A^T in L1: K rows, M columns
            LoadData(a2, a1, _matrix_load3d(pitch, cols, k_off, rb0 * 16, bk, bm, self.c0, True))
        else:           # A: M rows, K columns
            LoadData(a2, a1, _matrix_load3d(pitch, cols, rb0 * 16, k_off, bm, bk, self.c0, False))
        self.qA2.EnQue(a2)

    def _load_b(self, b1, pitch: int, nb0: int, k_off: int, bn: int, bk: int) -> None:
        """L1 (NZ) -> L0B (ZN), as the official Matmul on Atlas A2/A3 (cannmirror/asc-devkit
        impl/adv_api/detail/matmul/stage/split/load_to_l0b/load_to_l0b_loadInstr.h, LoadToL0B): B (K x N) with one
        LoadData3D (v2), which transposes into L0B (LoadDataToL0); B^T (N x K, already ZN in L1) with LoadData 2D
        and repeats (TransLoadDataToL0): one load when the block spans the tile's rows, else one per K block
        (repeat over N) or per N block (repeat over K, srcStride the tile's fractal rows), whichever loops less."""
        b2 = self.qB2.AllocTensor(self.b_dt)
        _, trans = self._b
        c0 = self.c0
        if not trans:
            LoadData(b2, b1, _matrix_load3d(pitch, self._l1_cols(b1, pitch), k_off, nb0 * 16, bk, bn, c0, False))
            self.qB2.EnQue(b2)
            return
        fr = FRACTAL_BYTES // self.b_dt.itemsize
        rows = pitch // 16                          # fractal rows of a K column of the tile
        kC0, nB = _ceil(bk, c0), _ceil(bn, 16)
        src0 = (k_off // c0) * rows + nb0           # the block's first fractal
        if nB == rows:                              # the block spans the tile's N: its fractals are contiguous
            LoadData(b2, b1[src0 * fr], LoadData2DParams(0, kC0 * nB, 1, 0, 0, False, 0))
        elif nB >= kC0:                             # loop over K, repeat over N
            for j in range(kC0):
                LoadData(b2[j * nB * fr], b1[(src0 + j * rows) * fr], LoadData2DParams(0, nB, 1, 0, 0, False, 0))
        else:                                       # loop over N, repeat over K
            for j in range(nB):
                LoadData(b2[j * fr], b1[(src0 + j) * fr], LoadData2DParams(0, kC0, rows, 0, nB - 1, False, 0))
        self.qB2.EnQue(b2)

    def _l1_cols(self, l1, pitch: int) -> int:
        """The columns (whole C0 groups) the L1 buffer ``l1`` holds at ``pitch`` rows: the feature map's channels."""
        return l1.size // (pitch * self.c0) * self.c0

    def _load_bias(self, n0: int, bn: int):
        """Bias GM -> C1 (L1, MTE2) -> C2 (BT, MTE1) for this block's columns."""
        bias_dt = np.dtype(self.biasType.dtype)
        c1 = self.qC1.AllocTensor(bias_dt)
        DataCopy(c1, self._bias[n0], _up(bn, 16))
        self.qC1.EnQue(c1)
        c1 = self.qC1.DeQue(bias_dt)
        bt = self.qC2.AllocTensor(self.acc)
        DataCopy(bt, c1, _up(bn, 16))
        self.qC1.FreeTensor(c1)
        self.qC2.EnQue(bt)
        return self.qC2.DeQue(self.acc)

    def _quant_mode(self) -> QuantMode_t:
        c, acc = self.c_dt, self.acc
        if c == acc:
            return QuantMode_t.NoQuant
        if acc == float32 and c == half:
            return QuantMode_t.F322F16
        if acc == float32 and c == bfloat16:
            return QuantMode_t.F322BF16
        if acc == int32 and c == half:
            if not self._quant_word:
                raise ArgumentError("int8 Matmul with a half C needs the dequantisation scale",
                                    fix="call mm.SetQuantScalar(scale) before GetTensorC / IterateAll")
            return QuantMode_t.DEQF16
        raise DtypeError(f"Matmul: C {c} from a {acc} accumulator is not a supported output",
                         fix="C float/half/bfloat16_t for half inputs; int32_t or half (SetQuantScalar) for int8")

    def check_get_c(self, gm, enAtomic: int) -> TCubeTiling:
        """The tiling, once a GetTensorC may go ahead: C in GM, a known atomic mode, a block computed."""
        t = self._need_init("GetTensorC")
        if not isinstance(gm, GlobalTensor):
            raise ArgumentError("GetTensorC to a LocalTensor (VECIN) is not modelled", fix="write C to GM")
        if enAtomic not in ATOMIC_MODES:
            raise ArgumentError(f"GetTensorC enAtomic {enAtomic!r} is not 0, 1, 2 or 3",
                                fix="0: overwrite C; 1: AtomicAdd (split-K partial sums); 2: AtomicMax; 3: AtomicMin")
        if self._pending is None:
            raise ArgumentError("GetTensorC without a computed block", fix="call Iterate() first")
        return t

    def GetTensorC(self, gm: GlobalTensor, enAtomic: int = 0, enSequentialWrite: bool = False) -> None:
        """Write the block the last Iterate computed from L0C to GM (Fixpipe NZ2ND, with the C type's quant mode)."""
        t = self.check_get_c(gm, enAtomic)
        mi, ni, bm, bn = self._pending
        self._pending = None
        co1 = self.qCO1.Get(self.acc) if self.unit_flag else self.qCO1.DeQue(self.acc)
        if enSequentialWrite:
            dst, pitch = gm[self._done * t.baseM * t.baseN], bn
        else:
            pitch = self.org[1]
            dst = gm[mi * t.baseM * pitch + ni * t.baseN]
        core = current_core()
        if enAtomic:            # as the API does (scheduler_base.h): SetAtomicAdd/Max/Min<DstT>, the copy, SetAtomicNone
            core.atomic = (ATOMIC_MODES[enAtomic], self.c_dt)
        # {nSize, mSize, srcStride (C0 blocks: M rounded up to 16), dstStride, reluEn, quantPre, deqScalar}
        params = FixpipeParamsV220(bn, bm, _up(bm, 16), pitch, False, self._quant_mode(), self._quant_word)
        if self.unit_flag:
            params.unitFlag = 3         # copy_cube_out_utils.h: FIX_PIPE_UNIT_FLAG
        Fixpipe(dst, co1, params)
        if enAtomic:
            core.atomic = None
        if not self.unit_flag:
            self.qCO1.FreeTensor(co1)
        self._done += 1

    def IterateAll(self, gm: GlobalTensor, enAtomic: int = 0, enSequentialWrite: bool = False,
                   waitIterateAll: bool = False, fakeMsg: bool = False) -> None:
        """Every block of this core's C: Iterate and GetTensorC until done."""
        while self.Iterate():
            self.GetTensorC(gm, enAtomic, enSequentialWrite)

    def End(self) -> None:
        """Release what the object holds (its L1 tiles); with UnitFlag, wait for the last Fixpipe (FIX_M), as
        cube_out_buffer_unit_flag.h's Destroy does."""
        if self.tiling is not None:
            self._release_l1()
            if self.unit_flag:
                eid = self.pipe.FetchEventID(HardEvent.FIX_M)
                SetFlag(HardEvent.FIX_M, eid)
                WaitFlag(HardEvent.FIX_M, eid)
