// acl/acl.h: the subset of the ACL runtime ascend_sim simulates (declarations only; minimal front-end version,
// the host engineer's header replaces it). Calls lower to ascend_sim.ascendc.host.acl.
#ifndef ASCEND_SIM_ACL_H
#define ASCEND_SIM_ACL_H
#include <cstdint>
#include <cstddef>
typedef int aclError;
typedef void* aclrtStream;
typedef enum aclrtMemMallocPolicy { ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY }
    aclrtMemMallocPolicy;
typedef enum aclrtMemcpyKind { ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
                               ACL_MEMCPY_DEVICE_TO_DEVICE } aclrtMemcpyKind;
#define ACL_SUCCESS 0
aclError aclInit(const char* configPath);
aclError aclFinalize();
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocHost(void** hostPtr, size_t size);
aclError aclrtFree(void* devPtr);
aclError aclrtFreeHost(void* hostPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
#endif
