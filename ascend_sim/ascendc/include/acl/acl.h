// acl/acl.h: the subset of the ACL runtime (AscendCL, "acl") that ascend_sim simulates, DECLARATIONS ONLY.
//
// Written for ascend_sim from the public AscendCL API reference (CANN "AscendCL API参考": 初始化与去初始化,
// Device管理, Stream管理, 内存管理). The front end lowers each call named here to the function of the same name in
// ascend_sim.ascendc.host.acl (the simulated runtime); a call to any other acl* function is not supported.
#ifndef ASCEND_SIM_ACL_ACL_H
#define ASCEND_SIM_ACL_ACL_H

#include <cstdint>

typedef decltype(sizeof(0)) size_t;  // the type <cstddef> declares, without needing the compiler's own headers

typedef int aclError;
typedef void* aclrtStream;
typedef void* aclrtContext;
typedef uint16_t aclFloat16;

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_BAD_ALLOC 200000

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
} aclrtMemMallocPolicy;

// 初始化与去初始化
aclError aclInit(const char* configPath);
aclError aclFinalize();

// Device and context management
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);

// Stream management
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);

// Memory management
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocHost(void** hostPtr, size_t size);
aclError aclrtFree(void* devPtr);
aclError aclrtFreeHost(void* hostPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);

// float16 helpers (数据类型转换)
float aclFloat16ToFloat(aclFloat16 value);
aclFloat16 aclFloatToFloat16(float value);

#endif  // ASCEND_SIM_ACL_ACL_H
