"""``LoadData(dst A2/B2, src A1/B1, LoadData3DParamsV2)``: img2col of an NC1HWC0 feature map from L1 into L0A (ZZ)
or L0B (ZN).

Documented behaviour implemented (DK 基础API/矩阵计算 "LoadData_3D" and its pseudo-code load3d.py): "将NC1HWC0格式的
Feature Map完成Image to Column展开，然后再从展开后的二维矩阵中选取指定数据块搬入对应内存位置". The L1 source is
[C1, l1H, l1W, C0] (C1 = channelSize / C0). The unfolded matrix has one row per output position (oh * Wo + ow,
Ho = (l1H + padTop + padBottom - dilationFilterH * (filterH - 1) - 1) // strideH + 1, Wo likewise) and one column
per (c1, kh, kw, c0), in that order: column ((c1 * filterH + kh) * filterW + kw) * C0 + c0. Rows
[mStartPt, mStartPt + mExtension) and columns [kStartPt, kStartPt + kExtension) are written to L0A as ZZ
fractals; padded pixels take ``padValue``. The FMATRIX parameters (l1H, l1W, padList) are taken from the struct
(the default IsResetLoad3dConfig: "isSetFMatrix配置为true，表示在接口内部设置FeatureMap的属性描述"); with
isSetFMatrix / isSetPadding false they come from the registers SetFmatrix / SetLoadDataPaddingValue set ("该接口传入的
FeatureMap的属性描述不生效，开发者需要通过SetFmatrix进行设置").
Into L0B the selected block is transposed on the way ("L1 Buffer->L0B Buffer通路下会自动进行转置", enTranspose
has no effect there): fractals in (row block, column block) order, each stored column-major (ZN). Into L0A,
``enTranspose`` (b16) transposes the whole selected block ("对整个目标矩阵进行转置": each fractal and its place),
then lays it out ZZ. With a 1 x 1 filter on a feature map one pixel high, the "image" is an NZ matrix in L1
(l1W rows, channelSize columns) and one LoadData3D moves any block of it into L0: the official Matmul's L0
loaders on Atlas A2/A3 (api/highlevel/matmul.py).
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field

import numpy as np

from ascend_sim.engine import context, layout, timing
from ascend_sim.engine.context import current_core
from ascend_sim.engine.core import regions_of, region
from ascend_sim.engine.shadow import runs
from ascend_sim.engine.errors import ArgumentError, DtypeError, OutOfBoundsError, kernel_point
from ascend_sim.hw.dtypes import ascend_name
from ascend_sim.api.checks import integer
from ascend_sim.api.tensor import writable_view
from ascend_sim.api.ops.cube import LOADERS, CubePlan, check_l0_address, issue_load, tier_of
from ascend_sim.api.ops.fractal import C0_BYTES, ROWS, byte_runs

_INTS = ("l1H", "l1W", "channelSize", "kExtension", "mExtension", "kStartPt", "mStartPt", "strideW", "strideH",
         "filterW", "filterH", "dilationFilterW", "dilationFilterH")


@dataclass
class LoadData3DParamsV2:
    """``LoadData3DParamsV2<T>{padList, l1H, l1W, channelSize, kExtension, mExtension, kStartPt, mStartPt, strideW,
    strideH, filterW, filterH, dilationFilterW, dilationFilterH, enTranspose, enSmallK, padValue, filterSizeW,
    filterSizeH, fMatrixCtrl}`` (C++ order); ``padList`` is [left, right, top, bottom]."""

    padList: list = field(default_factory=lambda: [0, 0, 0, 0])
    l1H: int = 0
    l1W: int = 0
    channelSize: int = 0
    kExtension: int = 0
    mExtension: int = 0
    kStartPt: int = 0
    mStartPt: int = 0
    strideW: int = 1
    strideH: int = 1
    filterW: int = 1
    filterH: int = 1
    dilationFilterW: int = 1
    dilationFilterH: int = 1
    enTranspose: bool = False
    enSmallK: bool = False
    padValue: float = 0
    filterSizeW: bool = False
    filterSizeH: bool = False
    fMatrixCtrl: bool = False


class FmatrixMode(enum.Enum):
    """Which FMATRIX register LoadData3D reads (only FMATRIX_LEFT: "当前只支持FMATRIX_LEFT")."""

    __hash__ = object.__hash__

    FMATRIX_LEFT = 0
    FMATRIX_RIGHT = 1


@dataclass(frozen=True)
class IsResetLoad3dConfig:
    """LoadData3D's template argument: take l1H/l1W/padList (isSetFMatrix) and padValue (isSetPadding) from the
    struct (True) or from the registers SetFmatrix / SetLoadDataPaddingValue set (False)."""

    isSetFMatrix: bool = True
    isSetPadding: bool = True


IS_RESER_LOAD3D_DEFAULT_CONFIG = IsResetLoad3dConfig(True, True)


def _l1_regs(op: str, site) -> dict:
    core = context.current or current_core()
    tier = core.tiers.get("L1")
    if tier is None:
        raise ArgumentError(f"{op} on an {core.core_type} core: the LoadData3D registers belong to the cube core",
                            fix="call it in the AIC part of the kernel", site=site)
    core.scalar_tick()
    return tier.regs


def SetFmatrix(l1H: int, l1W: int, padList, fmatrixMode: FmatrixMode = FmatrixMode.FMATRIX_LEFT) -> None:
    """``SetFmatrix(l1H, l1W, padList, fmatrixMode)``: the feature map's height, width and padding for the next
    LoadData3D calls made with ``IsResetLoad3dConfig(isSetFMatrix=False)``."""
    site = kernel_point()
    integer("SetFmatrix", "l1H", l1H, site, 1, 32767)
    integer("SetFmatrix", "l1W", l1W, site, 1, 32767)
    pads = list(padList)
    if len(pads) != 4:
        raise ArgumentError(f"SetFmatrix padList has {len(pads)} values", fix="[left, right, top, bottom]", site=site)
    for v in pads:
        integer("SetFmatrix", "padList", v, site, 0, 255)
    if fmatrixMode is not FmatrixMode.FMATRIX_LEFT:
        raise ArgumentError(f"SetFmatrix {fmatrixMode}: only FMATRIX_LEFT is supported (\"当前只支持FMATRIX_LEFT\")",
                            fix="pass FmatrixMode.FMATRIX_LEFT", site=site)
    _l1_regs("SetFmatrix", site).update(l1H=l1H, l1W=l1W, padList=pads)


def SetLoadDataPaddingValue(padValue) -> None:
    """``SetLoadDataPaddingValue(padValue)``: the value padded pixels take in LoadData3D calls made with
    ``IsResetLoad3dConfig(isSetPadding=False)``."""
    site = kernel_point()
    _l1_regs("SetLoadDataPaddingValue", site)["padValue"] = padValue


def _effective(p: LoadData3DParamsV2, config, site) -> LoadData3DParamsV2:
    """The parameters LoadData3D runs with: the struct's, or the registers' where the config says so."""
    if config is None or config == IS_RESER_LOAD3D_DEFAULT_CONFIG:
        return p
    if not isinstance(config, IsResetLoad3dConfig):
        raise ArgumentError(f"LoadData3D config must be an IsResetLoad3dConfig, got {type(config).__name__}",
                            fix="IsResetLoad3dConfig(isSetFMatrix, isSetPadding)", site=site)
    regs = (context.current or current_core()).tiers["L1"].regs
    new = {}
    if not config.isSetFMatrix:
        if "l1H" not in regs:
            raise ArgumentError("LoadData3D with isSetFMatrix false before any SetFmatrix: the FMATRIX register "
                                "is not set", fix="call SetFmatrix(l1H, l1W, padList, FmatrixMode.FMATRIX_LEFT) "
                                                  "first", site=site)
        new.update(l1H=regs["l1H"], l1W=regs["l1W"], padList=list(regs["padList"]))
    if not config.isSetPadding:
        if "padValue" not in regs:
            raise ArgumentError("LoadData3D with isSetPadding false before any SetLoadDataPaddingValue",
                                fix="call SetLoadDataPaddingValue(value) first", site=site)
        new["padValue"] = regs["padValue"]
    return dataclasses.replace(p, **new)


def img2col_index(p: LoadData3DParamsV2, c0: int, to_l0b: bool = False) -> np.ndarray:
    """For each element of the (mExtension rounded to 16) x kExtension L0 tile, in its L0 order (module
    docstring), the index of its source element in the [C1, l1H, l1W, C0] feature map, or -1 for padding (host
    side, pure numpy)."""
    left, right, top, bottom = (int(v) for v in p.padList)
    fh, fw = p.filterH + 256 * bool(p.filterSizeH), p.filterW + 256 * bool(p.filterSizeW)
    ho = (p.l1H + top + bottom - p.dilationFilterH * (fh - 1) - 1) // p.strideH + 1
    wo = (p.l1W + left + right - p.dilationFilterW * (fw - 1) - 1) // p.strideW + 1
    mp = -(-p.mExtension // ROWS) * ROWS
    m = p.mStartPt + np.arange(mp)                              # output positions
    k = p.kStartPt + np.arange(p.kExtension)                    # columns: (c1, kh, kw, c0)
    c1, rest = np.divmod(k // c0, fh * fw)
    kh, kw = np.divmod(rest, fw)
    oh, ow = np.divmod(m, max(wo, 1))
    ih = oh[:, None] * p.strideH - top + kh[None, :] * p.dilationFilterH
    iw = ow[:, None] * p.strideW - left + kw[None, :] * p.dilationFilterW
    src = ((c1[None, :] * p.l1H + ih) * p.l1W + iw) * c0 + (k % c0)[None, :]
    inside = (ih >= 0) & (ih < p.l1H) & (iw >= 0) & (iw < p.l1W) & (m < ho * wo)[:, None]
    idx = np.where(inside, src, -1)                             # (mp, kExtension), row-major
    kb = p.kExtension // c0
    if to_l0b:                  # ZN: fractals row-block major, each column-major
        return idx.reshape(mp // ROWS, ROWS, kb, c0).transpose(0, 2, 3, 1).ravel()
    if p.enTranspose:           # b16 (c0 = 16): the whole block transposed, then ZZ
        return idx.T.reshape(kb, c0, mp // ROWS, ROWS).transpose(0, 2, 1, 3).ravel()
    return idx.reshape(mp // ROWS, ROWS, kb, c0).transpose(0, 2, 1, 3).ravel()     # ZZ order


def load3d(dst, src, params: LoadData3DParamsV2, site, config=None) -> None:
    """One LoadData3D (img2col) from L1 into L0A."""
    core = context.current or current_core()
    if config is not None:
        params = _effective(params, config, site)
    try:
        p = params
        key = ("LoadData3D", tuple(p.padList), p.padValue, p.enTranspose) + tuple(getattr(p, f) for f in _INTS) + (
            dst.tier, dst.addr, dst.size, dst.dtype, src.tier, src.addr, src.size, src.dtype)
    except (AttributeError, TypeError):
        key = None
    plan = issue_load(core, "LoadData3D", key, _plan, dst, src, params, site)
    if plan is None:                # a NOP, or launch(..., numerics=False): nothing to compute
        return
    tier = dst.tier
    if tier.layout is not None:     # the L0 tile now holds fractals (clears a mark an earlier ND copy left)
        layout.mark(tier, dst.addr, dst.addr + plan.nbytes, 0)
    if not plan.views:              # a matrix load's views, made on its first computing call (_plan)
        plan.views = plan.extra()
    d, s, idx, pad, value = plan.views
    d[...] = s.take(idx)
    d[pad] = value


def _plan(core, dst, src, p, site) -> CubePlan:
    op = "LoadData3D"
    to_l0b = tier_of(dst, ("L0A", "L0B"), op, "dst", site).tier.name == "L0B"
    tier_of(src, ("L1",), op, "src (the NC1HWC0 feature map)", site)
    if dst.dtype != src.dtype:
        raise DtypeError(f"{op} from {ascend_name(src.dtype)} to {ascend_name(dst.dtype)}",
                         fix="LoadData does not convert dtypes", site=site)
    transposed = to_l0b or p.enTranspose       # into L0B always ("会自动进行转置"; enTranspose has no effect)
    if transposed and dst.dtype.itemsize != 2:
        raise DtypeError(f"{op} {'into L0B' if to_l0b else 'with enTranspose'} with {ascend_name(dst.dtype)}: "
                         "only b16 (half, bfloat16_t) is modelled for the transposing forms (the b32 form pairs "
                         "16 x 8 fractals, the b8 one is not supported on Atlas A2/A3)",
                         fix="use half or bfloat16_t, or LoadData with LoadData2DParams", site=site)
    v = {f: integer(op, f, getattr(p, f), site, 0) for f in _INTS}
    if len(p.padList) != 4:
        raise ArgumentError(f"{op} padList has {len(p.padList)} values", fix="[left, right, top, bottom]", site=site)
    for x in p.padList:
        integer(op, "padList", x, site, 0, 255)
    if not (v["l1H"] and v["l1W"] and v["channelSize"] and v["kExtension"] and v["mExtension"]):
        return CubePlan(0, [], [], 0, 0, None)                   # documented: 0 is a NOP
    if p.enSmallK or p.fMatrixCtrl:
        raise ArgumentError(f"{op}: enSmallK (\"该特性已不再支持\") and fMatrixCtrl (\"当前只支持设置为false\") "
                            "are not supported", fix="leave enSmallK and fMatrixCtrl false", site=site)
    isz = dst.dtype.itemsize
    c0 = C0_BYTES // isz
    if v["channelSize"] % c0 or v["kStartPt"] % c0 or v["kExtension"] % c0:
        raise ArgumentError(f"{op}: channelSize {v['channelSize']}, kStartPt {v['kStartPt']} and kExtension "
                            f"{v['kExtension']} must be multiples of C0 = {c0} here (the small-channel forms are "
                            "not modelled)", fix=f"pad the channels to a multiple of {c0}", site=site)
    for f in ("strideW", "strideH", "filterW", "filterH", "dilationFilterW", "dilationFilterH"):
        if v[f] < 1:
            raise ArgumentError(f"{op} {f} is 0", fix="strides, filter sizes and dilations start at 1", site=site)
    check_l0_address(op, dst, site)
    fh, fw = p.filterH + 256 * bool(p.filterSizeH), p.filterW + 256 * bool(p.filterSizeW)
    c1 = v["channelSize"] // c0
    if v["kStartPt"] + v["kExtension"] > c1 * fh * fw * c0:
        raise OutOfBoundsError(f"{op}: columns {v['kStartPt']}..{v['kStartPt'] + v['kExtension'] - 1} beyond the "
                               f"unfolded width C1 * filterH * filterW * C0 = {c1 * fh * fw * c0}",
                               fix="kStartPt + kExtension <= channelSize * filterH * filterW", site=site)
    fmap = c1 * v["l1H"] * v["l1W"] * c0
    if fmap > src.size:
        raise OutOfBoundsError(f"{op}: the feature map [C1={c1}, {v['l1H']}, {v['l1W']}, C0={c0}] is {fmap} elements, "
                               f"but the L1 tensor holds {src.size}", fix="check l1H, l1W and channelSize", site=site)
    if p.enTranspose and not to_l0b and v["mExtension"] % ROWS:
        raise ArgumentError(f"{op} with enTranspose: mExtension {v['mExtension']} becomes the L0A tile's width "
                            "and must be a multiple of 16", fix="round mExtension up to 16", site=site)
    size = -(-v["mExtension"] // ROWS) * ROWS * v["kExtension"]
    if size * isz > dst.nbytes:
        raise OutOfBoundsError(f"{op} writes {size * isz} bytes (mExtension rounded up to 16 x kExtension) into "
                               f"an {dst.tier.name} tensor of {dst.nbytes}", fix="allocate the whole tile", site=site)
    nbytes = size * isz
    chip = core.chip
    rate = chip.l1_to_l0b_bytes_per_cycle if to_l0b else chip.l1_to_l0a_bytes_per_cycle
    cost = timing.local_transfer(core, nbytes, rate, chip.mte1_startup)

    def views() -> tuple:
        idx = img2col_index(p, c0, to_l0b)
        pad = idx < 0
        return (writable_view(dst, size), src.view(fmap), np.where(pad, 0, idx), pad, np.array(p.padValue, dst.dtype))

    wr = regions_of((region(dst, nbytes),))
    if _is_matrix(p):               # a block of an NZ matrix: its reads follow from the parameters, views when needed
        return CubePlan(cost, regions_of((_matrix_reads(src, v, c0),)), wr, nbytes, 0, (), views)
    made = views()
    return CubePlan(cost, regions_of((_read_runs(src, made[2], made[3], c0),)), wr, nbytes, 0, made)


def _is_matrix(p: LoadData3DParamsV2) -> bool:
    """A feature map one pixel high under a 1 x 1 filter, stride 1, no padding: an NZ matrix in L1."""
    return (p.l1H == 1 and p.filterH == p.filterW == p.strideH == p.strideW == p.dilationFilterH
            == p.dilationFilterW == 1 and not (p.filterSizeH or p.filterSizeW or any(p.padList)))


def _matrix_reads(src, v: dict, c0: int) -> tuple:
    """(tier, granule runs) a matrix load reads: in each of its C0 columns, rows mStartPt.. (16-rounded, within
    l1W) of that column."""
    w, m0 = v["l1W"], v["mStartPt"]
    m1 = min(m0 + -(-v["mExtension"] // ROWS) * ROWS, w)
    base = src.addr
    return byte_runs(src.tier, [(base + (c * w + m0) * C0_BYTES, base + (c * w + m1) * C0_BYTES)
                                for c in range(v["kStartPt"] // c0, (v["kStartPt"] + v["kExtension"]) // c0)])


def _read_runs(src, idx: np.ndarray, pad: np.ndarray, c0: int) -> tuple:
    """(tier, granule runs) of the C0 groups of the feature map the load reads (each group is one 32 B granule)."""
    read = np.zeros(-(-(int(idx.max()) + 1) // c0), bool)
    read[idx[~pad] // c0] = True
    base = src.addr
    return byte_runs(src.tier, [(base + lo * C0_BYTES, base + hi * C0_BYTES) for lo, hi in runs(np.flatnonzero(read))])


LOADERS[LoadData3DParamsV2] = load3d
