"""add_custom as a template over dtypes and buffering, for any length: templates, tiling keys, dynamic shape.

The kernel body is written once with its template arguments as keywords (``D_T_X``, ``D_T_Y``, ``D_T_Z``,
``BUFFER_NUM``, ``HAS_TAIL``), as Ascend C's ``template <typename D_T_X, ...>`` kernel with ``if constexpr``
branches. The host tiling function reads the runtime shape and dtype, splits the work
(kernels/tiling.py: former and tail cores, 32-byte aligned) and picks the tiling key. Only the combinations
``ASCENDC_TPL_SEL`` selects exist: x, y and z of one dtype (as in Huawei's add_custom_template sample); any
other mix raises a TilingError that lists what is compiled.

``bfloat16`` has no vector Add on this chip model, so its branch adds in float and rounds back (Cast);
``HAS_TAIL`` is 1 only when some tile ends off a 32-byte boundary, so aligned shapes run without the
DataCopyPad branch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (ASCENDC_TPL_ARGS_DECL, ASCENDC_TPL_ARGS_SEL, ASCENDC_TPL_BOOL_DECL, ASCENDC_TPL_DATATYPE_DECL,
                        ASCENDC_TPL_SEL, ASCENDC_TPL_UINT_DECL, Add, Cast, DataCopy, DataCopyExtParams, DataCopyPad,
                        DataCopyPadExtParams, GetBlockIdx, GlobalTensor, LaunchResult, RoundMode, TBuf, TPipe,
                        TPosition, TQue, bfloat16, float32, half, int16, int32, launch)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.kernels.tiling import MultiCoreTiling, split_even

DTYPES = (half, float32, bfloat16, int16, int32)

# --- SHOW tpl-decl: course/04_migration.ipynb cell mig-05
ADD_TEMPLATE = ASCENDC_TPL_ARGS_DECL(
    "AddCustomTemplate",
    ASCENDC_TPL_DATATYPE_DECL("D_T_X", *DTYPES),
    ASCENDC_TPL_DATATYPE_DECL("D_T_Y", *DTYPES),
    ASCENDC_TPL_DATATYPE_DECL("D_T_Z", *DTYPES),
    ASCENDC_TPL_UINT_DECL("BUFFER_NUM", 1, 2),
    ASCENDC_TPL_BOOL_DECL("HAS_TAIL", 0, 1),
)
ASCENDC_TPL_SEL(ADD_TEMPLATE, *(ASCENDC_TPL_ARGS_SEL(D_T_X=d, D_T_Y=d, D_T_Z=d, BUFFER_NUM=[1, 2], HAS_TAIL=[0, 1])
                                for d in DTYPES))
# --- END SHOW

#: Below this many elements one buffer per queue is enough (Huawei's sample switches at 2,048).
DOUBLE_BUFFER_FROM = 2048


@dataclass(frozen=True)
class AddTemplateTilingData:
    """What the host passes the kernel: the split (any length) and nothing the template fixes."""

    split: MultiCoreTiling


@ADD_TEMPLATE.kernel
def add_custom_template(x, y, z, tiling: AddTemplateTilingData, *, D_T_X, D_T_Y, D_T_Z, BUFFER_NUM, HAS_TAIL):
    T = D_T_X
    s = tiling.split
    start, length = s.core_range(GetBlockIdx())
    xGm, yGm, zGm = GlobalTensor(T), GlobalTensor(T), GlobalTensor(T)
    xGm.SetGlobalBuffer(x + start, length)
    yGm.SetGlobalBuffer(y + start, length)
    zGm.SetGlobalBuffer(z + start, length)
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, BUFFER_NUM), TQue(TPosition.VECIN, BUFFER_NUM), TQue(TPosition.VECOUT, BUFFER_NUM)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, BUFFER_NUM, s.tile_length * T.itemsize)
    if T == bfloat16:                       # if constexpr: no bf16 vector Add, so add in float
        work = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(work, 3 * s.tile_length * 4)
        wide = work.Get(float32)
    for offset, count in s.tiles(length):
        aligned = (count * T.itemsize) % DATA_BLOCK_BYTES == 0
        xl, yl = qx.AllocTensor(T), qy.AllocTensor(T)
        if not HAS_TAIL or aligned:
            DataCopy(xl, xGm[offset], count)
            DataCopy(yl, yGm[offset], count)
        else:                               # the last data block is partial: copy exactly its bytes
            p = DataCopyExtParams(1, count * T.itemsize, 0, 0, 0)
            DataCopyPad(xl, xGm[offset], p, DataCopyPadExtParams(False, 0, 0, 0))
            DataCopyPad(yl, yGm[offset], p, DataCopyPadExtParams(False, 0, 0, 0))
        qx.EnQue(xl)
        qy.EnQue(yl)
        xl, yl, zl = qx.DeQue(T), qy.DeQue(T), qz.AllocTensor(T)
        if T == bfloat16:
            n = s.tile_length
            Cast(wide, xl, RoundMode.CAST_NONE, count)
            Cast(wide[n], yl, RoundMode.CAST_NONE, count)
            Add(wide[2 * n], wide, wide[n], count)
            Cast(zl, wide[2 * n], RoundMode.CAST_RINT, count)
        else:
            Add(zl, xl, yl, count)
        qz.EnQue(zl)
        qx.FreeTensor(xl)
        qy.FreeTensor(yl)
        zl = qz.DeQue(T)
        if not HAS_TAIL or aligned:
            DataCopy(zGm[offset], zl, count)
        else:
            DataCopyPad(zGm[offset], zl, DataCopyExtParams(1, count * T.itemsize, 0, 0, 0))
        qz.FreeTensor(zl)


# --- SHOW tpl-tiling: course/04_migration.ipynb cell mig-09
def add_template_tiling(x: np.ndarray, y: np.ndarray, z: np.ndarray, *, cores: int | None = None,
                        chip=None, buffers: int | None = None) -> tuple[AddTemplateTilingData, int, int]:
    """The host TilingFunc: (tiling data, block_dim, tiling key) from the runtime shapes and dtypes."""
    if not (x.shape == y.shape == z.shape):
        from ascend_sim import TilingError
        raise TilingError(f"add: shapes {x.shape}, {y.shape} and {z.shape} differ",
                          fix="broadcast on the host first; this kernel adds arrays of one shape", site=("<tiling>", 0))
    n = int(x.size)
    buffers = buffers or (1 if n < DOUBLE_BUFFER_FROM else 2)
    split = split_even(n, x.dtype, cores=cores, chip=chip, tensors=3, buffers=buffers,
                       max_tile_bytes=8 * 1024 if x.dtype == bfloat16 else 16 * 1024)
    key = ADD_TEMPLATE.tiling_key(D_T_X=x.dtype, D_T_Y=y.dtype, D_T_Z=z.dtype, BUFFER_NUM=buffers,
                                  HAS_TAIL=split.has_tail)
    return AddTemplateTilingData(split), split.block_dim, key
# --- END SHOW


def add(x: np.ndarray, y: np.ndarray, *, cores: int | None = None, chip=None,
        buffers: int | None = None) -> tuple[np.ndarray, LaunchResult]:
    """z = x + y for arrays of any shape and a selected dtype, through the templated kernel."""
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    z = np.zeros_like(x)
    tiling, block_dim, key = add_template_tiling(x, y, z, cores=cores, chip=chip, buffers=buffers)
    result = launch(ADD_TEMPLATE.instance(key), block_dim, x, y, z, tiling, chip=chip, gm_names=["x", "y", "z"])
    return z, result


__all__ = ["ADD_TEMPLATE", "AddTemplateTilingData", "add_custom_template", "add_template_tiling", "add", "DTYPES"]
