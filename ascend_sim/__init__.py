"""ascend_sim: Ascend C kernels in Python on a simulated Da Vinci AI Core.

Write kernels with Ascend C's names (TPipe, TQue, DataCopy, Add, Mmad,
GetBlockIdx ...), launch them on a chip profile, and get exact results in the
kernel's dtypes, the hardware's rules enforced with clear errors, and a
per-pipe cycle trace. See docs/api_mapping.md for the C++ to Python table.
"""
from ascend_sim.hw.chips import Ascend310B, Ascend910, Ascend910B, ChipProfile, get_chip
from ascend_sim.hw.dtypes import bfloat16, float32, half, int4b_t, int8, int16, int32, int64, uint8, uint16, uint32
from ascend_sim.engine.errors import (AlignmentError, ArgumentError, CapacityError, CubeFormatError, DeadlockError,
                                      DtypeError, GMWriteConflictError, KernelError, LaunchError, OutOfBoundsError,
                                      PositionError, QueueError, RaceError, SanitizerWarning, SyncError, TilingError,
                                      UninitializedReadError)
from ascend_sim.api.tensor import GlobalTensor, LocalTensor
from ascend_sim.engine.memory import GmPtr
from ascend_sim.engine.l2 import CacheMode
from ascend_sim.api.ops.cube import (FixpipeParams, FixpipeParamsV220, LoadData, LoadData2DParams, Mmad, MmadParams,
                                     QuantMode_t)
from ascend_sim.api.ops.cube import CFG_NZ, CFG_ROW_MAJOR, CO2Layout, Fixpipe, FixpipeConfig
from ascend_sim.api.ops.nd2nz import Nd2NzParams
from ascend_sim.api.highlevel import matmul_tiling
from ascend_sim.api.highlevel.matmul_tiling import CubeFormat, MatrixTraverse, TCubeTiling
from ascend_sim.api.highlevel.matmul import (CFG_IBSHARE_NORM, CFG_MDL, CFG_NORM, MM_CFG_BB, GetMDLConfig,
                                             GetNormalConfig, GetSysWorkSpacePtr, LayoutMode, Matmul, MatmulConfig,
                                             MatmulType)
from ascend_sim.api.highlevel.matmul_kfc import REGIST_MATMUL_OBJ
from ascend_sim.api.ops import bias as _bias          # registers DataCopy L1 -> BT (C2)
from ascend_sim.api.ops.loadtrans import LoadData2dTransposeParams, LoadDataWithTranspose
from ascend_sim.api.ops.img2col import (IS_RESER_LOAD3D_DEFAULT_CONFIG, FmatrixMode, IsResetLoad3dConfig,
                                        LoadData3DParamsV2, SetFmatrix, SetLoadDataPaddingValue)
from ascend_sim.api.ops.datacopy import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams,
                                         DataCopyPadParams, DataCopyParams, SetAtomicAdd, SetAtomicNone, SetPadValue)
from ascend_sim.api.ops.cmpmask import Compare, GetCmpMask
from ascend_sim.api.ops.vector import (CMPMODE, SELMODE, Abs, Add, Adds, Axpy, BinaryRepeatParams, Cast,
                                       Div, Duplicate, Exp, GetReduceRepeatSumSpr, LeakyRelu, Ln, Max, Maxs, Min,
                                       Mins, Mul, Muls, Reciprocal, ReduceMax, ReduceMin, ReduceOrder, ReduceSum,
                                       Relu, RoundMode, Rsqrt, Select, Sqrt, Sub, UnaryRepeatParams, WholeReduceMax, WholeReduceMin,
                                       WholeReduceSum)
from ascend_sim.api.ops.atomic import DisableDmaAtomic, SetAtomicMax, SetAtomicMin
from ascend_sim.api.ops.bitwise import And, Not, Or, ShiftLeft, ShiftRight
from ascend_sim.api.ops.fill import Brcb, BrcbRepeatParams, CreateVecIndex
from ascend_sim.api.ops.compares import Compares
from ascend_sim.api.ops.gather import Gather, GatherMask, GatherMaskParams
from ascend_sim.api.ops.mask import (MASK_PLACEHOLDER, MaskMode, ResetMask, SetMaskCount, SetMaskNorm,
                                     SetVectorMask)
from ascend_sim.api.ops.reduce import (BlockReduceMax, BlockReduceMin, BlockReduceSum, PairReduceSum, ReduceDataBlock,
                                       ReducePairElem, ReduceRepeat, ReduceType)
from ascend_sim.api.ops.transpose import TransDataTo5HD, TransDataTo5HDParams, Transpose
from ascend_sim.api.ops.conversion import SetDeqScale
from ascend_sim.api.pipe import GetTPipePtr, QuePosition, TBuf, TPipe, TPosition, TQue, TQueBind
from ascend_sim.api.static import Hardware, LocalMemAllocator
from ascend_sim.api.block import (ASCEND_IS_AIC, ASCEND_IS_AIV, CrossCoreSetFlag, CrossCoreWaitFlag, GetBlockIdx,
                                  GetBlockNum, GetSubBlockIdx, GetSubBlockNum, GetSystemCycle, GetTaskRatio,
                                  SyncAll)
from ascend_sim.api.launch import Kernel, kernel, launch
from ascend_sim.api.sync import (PIPE_ALL, PIPE_FIX, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_S, PIPE_V,
                                 HardEvent, PipeBarrier, SetFlag, WaitFlag, pipe_t)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.api.template import (ASCENDC_TPL_ARGS_DECL, ASCENDC_TPL_ARGS_SEL, ASCENDC_TPL_BOOL_DECL,
                                     ASCENDC_TPL_DATATYPE_DECL, ASCENDC_TPL_SEL, ASCENDC_TPL_UINT_DECL, TemplateSpace)
from ascend_sim.analysis.profile import Profile
from ascend_sim.trace.trace import Trace

__version__ = "0.1.0"

__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "analysis", "api", "engine", "hw", "trace", "kernels", "models", "viz", "tools", "course", "cluster", "migrate")]
