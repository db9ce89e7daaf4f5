// tikicpulib.h: the CPU-twin debugging entry points older Ascend C host code includes, DECLARATIONS ONLY.
//
// Huawei's CPU twin (CPU域孪生调试; ICPU_RUN_KF in the API reference, 调试接口 > CPU孪生调试) runs a kernel on the
// host with GmAlloc'd buffers. In ascend_sim every run is a CPU twin with timing: ICPU_RUN_KF(kernel, blocks,
// args...) is `launch(kernel, blocks, args...)`.
#ifndef ASCEND_SIM_TIKICPULIB_H
#define ASCEND_SIM_TIKICPULIB_H

#include "kernel_operator.h"

namespace AscendC {
enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE };
void SetKernelMode(KernelMode mode);
}  // namespace AscendC

void* GmAlloc(uint64_t size);
void GmFree(void* ptr);

// The launch the front end makes of `k<<<blocks, l2ctrl, stream>>>(args)` (its prelude declares the same function).
int __ascendc_launch(unsigned int blocks, void* l2ctrl, void* stream);
#define ICPU_RUN_KF(kernel, blockDim, ...) (__ascendc_launch(blockDim, nullptr, nullptr), kernel)(__VA_ARGS__)
#define ICPU_SET_TILING_KEY(key) static_cast<void>(key)

#endif  // ASCEND_SIM_TIKICPULIB_H
