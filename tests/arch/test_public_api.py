"""``from ascend_sim import ...`` keeps every public name the API had before the layers were split.

The list is the facade's names at the commit before Architecture II (a66dfea); a name may be added, never dropped.
"""
from __future__ import annotations

import ascend_sim

PUBLIC_NAMES = (
    "ASCEND_IS_AIC", "ASCEND_IS_AIV", "Abs", "Add", "Adds", "AlignmentError", "ArgumentError", "Ascend310B",
    "Ascend910", "Ascend910B", "Axpy", "BinaryRepeatParams", "CMPMODE", "CapacityError", "Cast", "ChipProfile",
    "Compare", "CrossCoreSetFlag", "CrossCoreWaitFlag", "CubeFormatError", "DataCopy", "DataCopyExtParams",
    "DataCopyPad", "DataCopyPadExtParams", "DataCopyPadParams", "DataCopyParams", "DeadlockError", "Div",
    "DtypeError", "Duplicate", "Exp", "Fixpipe", "FixpipeParams", "FixpipeParamsV220", "GMWriteConflictError",
    "GetBlockIdx", "GetBlockNum", "GetSubBlockIdx", "GetSubBlockNum", "GlobalTensor", "GmPtr", "HardEvent",
    "Kernel", "KernelError", "LaunchError", "LaunchResult", "Ln", "LoadData", "LoadData2DParams", "LocalTensor",
    "Max", "Maxs", "Min", "Mins", "Mmad", "MmadParams", "Mul", "Muls", "OutOfBoundsError", "PIPE_ALL", "PIPE_FIX",
    "PIPE_M", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3", "PIPE_S", "PIPE_V", "PipeBarrier", "PositionError", "Profile",
    "QuantMode_t", "QuePosition", "QueueError", "RaceError", "Reciprocal", "ReduceMax", "ReduceMin", "ReduceOrder",
    "ReduceSum", "Relu", "RoundMode", "SELMODE", "Select", "SetAtomicAdd", "SetAtomicNone", "SetFlag", "Sqrt",
    "Sub", "SyncAll", "SyncError", "TBuf", "TPipe", "TPosition", "TQue", "Trace", "UnaryRepeatParams",
    "UninitializedReadError", "WaitFlag", "WholeReduceMax", "WholeReduceMin", "WholeReduceSum", "bfloat16",
    "float32", "get_chip", "half", "int16", "int32", "int4b_t", "int64", "int8", "kernel", "launch", "pipe_t",
    "uint16", "uint32", "uint8",
)


def test_every_public_name_is_still_exported():
    missing = [n for n in PUBLIC_NAMES if not hasattr(ascend_sim, n)]
    assert not missing, f"ascend_sim no longer exports {missing}"


def test_star_import_gives_the_api_and_nothing_else():
    assert set(PUBLIC_NAMES) <= set(ascend_sim.__all__)
    assert all(hasattr(ascend_sim, n) for n in ascend_sim.__all__)
    ns: dict = {}
    exec("from ascend_sim import *", ns)  # noqa: S102 - what a lab's setup cell does
    assert set(ns) - {"__builtins__"} == set(ascend_sim.__all__)
    assert not {"engine", "api", "trace", "hw", "analysis"} & set(ns), "layer packages leak into `import *`"
