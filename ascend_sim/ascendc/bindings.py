"""How C++ spellings of the Ascend C API map to the Python API: the few rules that are not "same name".

Flat tables, one entry per line; the header engineer adds entries here when a declaration needs one.
Calls to functions declared in ``namespace AscendC`` lower to the ``ascend_sim`` object of the same name, with the
call's template arguments DROPPED (the Python API deduces dtypes from tensors) unless the name is listed in
``PREPEND_TEMPLATE_ARGS`` (then they become the first positional arguments). Class templates always prepend
(``TQue<TPosition::VECIN, 2> q;`` -> ``TQue(TPosition.VECIN, 2)``).
"""
from __future__ import annotations

#: functions and methods whose template arguments become leading Python arguments
PREPEND_TEMPLATE_ARGS = {
    "AllocTensor",          # que.AllocTensor<half>()            -> que.AllocTensor(half)
    "DeQue",                # que.DeQue<half>()                  -> que.DeQue(half)
    "SetFlag",              # SetFlag<HardEvent::MTE2_V>(id)     -> SetFlag(HardEvent.MTE2_V, id)
    "WaitFlag",
    "PipeBarrier",          # PipeBarrier<PIPE_V>()              -> PipeBarrier(PIPE_V)
    "Get",                  # tbuf.Get<float>(n)                 -> tbuf.Get(float32, n)
    "GetWithOffset",        # tbuf.GetWithOffset<float>(n, off)  -> tbuf.GetWithOffset(float32, n, off)
    "ReinterpretCast",      # t.ReinterpretCast<int16_t>()       -> t.ReinterpretCast(int16)
    "Alloc",                # alloc.Alloc<float, 256>()          -> alloc.Alloc(float32, 256)
    "CrossCoreSetFlag",     # CrossCoreSetFlag<2, PIPE_FIX>(id)  -> CrossCoreSetFlag(2, PIPE_FIX, id)
    "SetAtomicAdd",         # SetAtomicAdd<float>()              -> SetAtomicAdd(float32)
    "SetAtomicMax",
    "SetAtomicMin",
    "AllocEventID",         # pipe.AllocEventID<HardEvent::V_S>() -> pipe.AllocEventID(HardEvent.V_S)
    "ReleaseEventID",       # pipe.ReleaseEventID<E>(id)         -> pipe.ReleaseEventID(E, id)
    "FetchEventID",         # pipe.FetchEventID<E>()             -> pipe.FetchEventID(E)
}

#: functions whose WRITTEN template arguments map one by one: "" prepends the argument, a name passes it by that
#: keyword, None drops it (deduced dtypes); arguments not written keep the Python default (= the C++ default)
_T_ISSETMASK = (None, "isSetMask")                     # Add<float, false>(...)  -> Add(..., isSetMask=False)
TEMPLATE_ARGS = {
    **dict.fromkeys(["Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or"], _T_ISSETMASK),
    **dict.fromkeys(["Exp", "Ln", "Abs", "Sqrt", "Rsqrt", "Reciprocal", "Relu", "Not"], _T_ISSETMASK),
    **dict.fromkeys(["Adds", "Muls", "Maxs", "Mins", "LeakyRelu", "ShiftLeft", "ShiftRight"], _T_ISSETMASK),
    "Duplicate": _T_ISSETMASK,
    **dict.fromkeys(["WholeReduceSum", "WholeReduceMax", "WholeReduceMin"], _T_ISSETMASK),
    **dict.fromkeys(["BlockReduceSum", "BlockReduceMax", "BlockReduceMin", "PairReduceSum"], _T_ISSETMASK),
    # ReduceRepeat<ReduceType::MAX>(...)  -> ReduceRepeat(ReduceType.MAX, ...)
    **dict.fromkeys(["ReduceRepeat", "ReduceDataBlock", "ReducePairElem"], ("", None, None, "isSetMask")),
    "Fixpipe": (None, None, ""),                       # Fixpipe<float, float, CFG_NZ>(...) -> Fixpipe(CFG_NZ, ...)
    "SetVectorMask": ("dtype", "mode"),                # SetVectorMask<float, MaskMode::COUNTER>(0, n)
    "SyncAll": ("isAIVOnly",),                         # SyncAll<false>()  -> SyncAll(isAIVOnly=False)
    "GetReduceRepeatSumSpr": ("dtype",),               # GetReduceRepeatSumSpr<half>() -> GetReduceRepeatSumSpr(dtype=half)
}

#: header functions that the simulator implements in ascend_sim.ascendc.cxx (not part of the public API)
CXX_FUNCTIONS = {
    "ascendc_assert": "ascendc_assert",
    "InitSocState": "InitSocState",
    "DivCeil": "DivCeil",
    "printf": "printf",
}

#: header variables that read as a call of the public API function named here
VARIABLES = {
    "block_idx": "GetBlockIdx",
    "block_num": "GetBlockNum",
}

#: what ASCEND_SIM_TODO(msg) (simulator-only: an exercise stub's placeholder) expands to; the statement lowers to
#: ``raise NotImplementedError(msg)``
TODO_FUNCTION = "__ascend_sim_todo"

#: headers whose functions are the simulated host runtime (module of ascend_sim.ascendc.host)
HOST_HEADERS = {
    "acl.h": "acl",
    "data_utils.h": "data_utils",
    "platform_ascendc.h": "platform_ascendc",
    "algorithm": "std_algorithm",
    "iterator": "std_algorithm",
}

#: the members of std::vector<T> (<vector>) the front end lowers, to host/std_vector.py; the others are diagnostics
STD_VECTOR_MEMBERS = {"data", "size", "empty", "operator[]", "operator=", "begin", "end"}

#: C++ methods spelled as Python operators
OPERATORS = {
    "operator[]": "subscript",
}

#: header functions that GET_TILING_DATA / GET_TILING_DATA_WITH_STRUCT expand to (-> cxx.tiling(Struct, ptr))
TILING_READERS = {
    "ReadTilingData",
    "__ascendc_get_tiling_data",
}

#: the header's scalar float classes (g++ has no portable 16-bit float): their canonical C++ spelling -> dtype
FLOAT_CLASSES = {
    "ascend_sim_detail::Float16Like<16>": "half",
    "ascend_sim_detail::Float16Like<-16>": "bfloat16",
}

#: functions of our libc stubs (host code) -> the Python expression that computes them
LIBC_FUNCTIONS = {
    "abs": "abs", "fabs": "abs", "sqrt": "cxx.libm.sqrt", "exp": "cxx.libm.exp", "log": "cxx.libm.log",
    "pow": "cxx.libm.pow", "floor": "cxx.libm.floor", "ceil": "cxx.libm.ceil", "strlen": "len",
    "to_string": "cxx.to_string", "__ascend_sim_assert": "cxx.c_assert",
}
