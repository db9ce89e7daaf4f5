// kernel_tiling/kernel_tiling.h: the kernel-side tiling structs (AscendC::tiling::TCubeTiling), DECLARATIONS ONLY.
#ifndef ASCEND_SIM_KERNEL_TILING_H
#define ASCEND_SIM_KERNEL_TILING_H
#include "kernel_operator.h"

// The examples spell the Matmul tiling AscendC::tiling::TCubeTiling. (Only here, not in kernel_operator.h, so that
// a kernel's own namespace `tiling` stays unambiguous under `using namespace AscendC`.)
namespace AscendC {
namespace tiling {
using AscendC::TCubeTiling;
}  // namespace tiling
}  // namespace AscendC
#endif  // ASCEND_SIM_KERNEL_TILING_H
