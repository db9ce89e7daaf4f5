// kernel_operator.h: declarations of the Ascend C kernel API that ascend_sim simulates.
// Declarations only, written from the public API pages (docs/zh/api/ of asc-devkit); the bodies are the
// simulator's Python functions of the same names (ascend_sim.ascendc lowers each call to them).
// The qualifiers are defined empty, as Huawei's CPU twin debugging does, so that g++ and clang both accept
// the kernel as ordinary C++. (Minimal front-end version: the header engineer's full header replaces it.)
#ifndef ASCEND_SIM_KERNEL_OPERATOR_H
#define ASCEND_SIM_KERNEL_OPERATOR_H
#include <cstdint>

#define __aicore__
#define __global__
#define __gm__
#define __vector__
#define __cube__
#define __host__
#define __mix__(cube, vec)
#define GM_ADDR __gm__ uint8_t*

typedef _Float16 half;
#if defined(__clang__)
typedef __bf16 bfloat16_t;
#else
struct bfloat16_t { uint16_t bits; };
#endif

// the tiling macros: REGISTER_TILING_DEFAULT names the struct GET_TILING_DATA fills from the GM tiling bytes
template <typename T> __aicore__ T __ascendc_get_tiling_data(__gm__ uint8_t* tiling);
#define REGISTER_TILING_DEFAULT(T) using __ascendc_tiling_t = T
#define GET_TILING_DATA(name, ptr) __ascendc_tiling_t name = __ascendc_get_tiling_data<__ascendc_tiling_t>(ptr)
#define GET_TILING_DATA_WITH_STRUCT(T, name, ptr) T name = __ascendc_get_tiling_data<T>(ptr)

enum KernelTaskType { KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
                      KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2 };
void __ascendc_kernel_task_type(KernelTaskType t);
#define KERNEL_TASK_TYPE_DEFAULT(t) __ascendc_kernel_task_type(t)

__aicore__ void ascendc_assert(bool cond, const char* msg = "");

extern int64_t block_idx;
extern int64_t block_num;

enum event_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX };

namespace AscendC {
enum class TPosition { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM, TSCM,
                       C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;
enum class HardEvent { MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1,
                       MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S,
                       S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MAX };
enum class Hardware { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };
using TEventID = int8_t;

struct DataCopyParams {
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

template <typename T> class LocalTensor {
public:
    __aicore__ LocalTensor() {}
    __aicore__ LocalTensor<T> operator[](uint32_t offset) const;
    __aicore__ T GetValue(uint32_t index) const;
    __aicore__ void SetValue(uint32_t index, T value) const;
    __aicore__ uint32_t GetSize() const;
    template <typename U> __aicore__ LocalTensor<U> ReinterpretCast() const;
};

template <typename T> class GlobalTensor {
public:
    __aicore__ GlobalTensor() {}
    __aicore__ void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize);
    __aicore__ void SetGlobalBuffer(__gm__ T* buffer);
    __aicore__ GlobalTensor<T> operator[](uint64_t offset) const;
    __aicore__ T GetValue(uint64_t offset) const;
    __aicore__ void SetValue(uint64_t offset, T value);
    __aicore__ __gm__ T* GetPhyAddr() const;
};

template <TPosition pos, int32_t depth> class TQue {
public:
    __aicore__ TQue() {}
    template <typename T> __aicore__ LocalTensor<T> AllocTensor();
    template <typename T> __aicore__ bool EnQue(const LocalTensor<T>& tensor);
    template <typename T> __aicore__ LocalTensor<T> DeQue();
    template <typename T> __aicore__ void FreeTensor(LocalTensor<T>& tensor);
};

template <TPosition pos> class TBuf {
public:
    __aicore__ TBuf() {}
    template <typename T> __aicore__ LocalTensor<T> Get();
    template <typename T> __aicore__ LocalTensor<T> Get(uint32_t len);
};

class TPipe {
public:
    __aicore__ TPipe() {}
    template <class Q> __aicore__ bool InitBuffer(Q& que, uint8_t num, uint32_t len);
    template <TPosition pos> __aicore__ bool InitBuffer(TBuf<pos>& buf, uint32_t len);
};

template <Hardware hard = Hardware::UB> class LocalMemAllocator {
public:
    __aicore__ LocalMemAllocator() {}
    template <typename T, uint32_t tileSize> __aicore__ LocalTensor<T> Alloc();
    template <TPosition pos, typename T, uint32_t tileSize> __aicore__ LocalTensor<T> Alloc();
    template <typename T> __aicore__ LocalTensor<T> Alloc(uint32_t tileSize);
    __aicore__ uint32_t GetCurAddr() const;
};

__aicore__ void InitSocState();
__aicore__ int64_t GetBlockIdx();
__aicore__ int64_t GetBlockNum();
__aicore__ void SyncAll();

template <HardEvent event> __aicore__ void SetFlag(int32_t eventID);
template <HardEvent event> __aicore__ void WaitFlag(int32_t eventID);
template <pipe_t pipe = PIPE_ALL> __aicore__ void PipeBarrier();

template <typename T> __aicore__ void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count);
template <typename T> __aicore__ void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count);
template <typename T> __aicore__ void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count);
template <typename T>
__aicore__ void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& params);
template <typename T>
__aicore__ void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params);

#define ASCEND_SIM_BINARY(Name) \
    template <typename T> __aicore__ void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, \
                                               const LocalTensor<T>& src1, const int32_t& count);
ASCEND_SIM_BINARY(Add) ASCEND_SIM_BINARY(Sub) ASCEND_SIM_BINARY(Mul) ASCEND_SIM_BINARY(Div)
ASCEND_SIM_BINARY(Max) ASCEND_SIM_BINARY(Min)
#undef ASCEND_SIM_BINARY
#define ASCEND_SIM_SCALAR(Name) \
    template <typename T, typename U> __aicore__ void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, \
                                                           const U& scalar, const int32_t& count);
ASCEND_SIM_SCALAR(Adds) ASCEND_SIM_SCALAR(Muls) ASCEND_SIM_SCALAR(Maxs) ASCEND_SIM_SCALAR(Mins)
ASCEND_SIM_SCALAR(LeakyRelu)
#undef ASCEND_SIM_SCALAR
#define ASCEND_SIM_UNARY(Name) \
    template <typename T> __aicore__ void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, \
                                               const int32_t& count);
ASCEND_SIM_UNARY(Exp) ASCEND_SIM_UNARY(Abs) ASCEND_SIM_UNARY(Relu) ASCEND_SIM_UNARY(Sqrt) ASCEND_SIM_UNARY(Ln)
#undef ASCEND_SIM_UNARY
template <typename T, typename U>
__aicore__ void Duplicate(const LocalTensor<T>& dst, const U& scalar, const int32_t& count);
}  // namespace AscendC
#endif
