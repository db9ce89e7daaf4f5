// kernel_tiling/kernel_tiling.h: the kernel-side tiling structs (AscendC::tiling::TCubeTiling), DECLARATIONS ONLY.
// ascend_sim declares them in kernel_operator.h; this file exists for the examples that include it by this name.
#ifndef ASCEND_SIM_KERNEL_TILING_H
#define ASCEND_SIM_KERNEL_TILING_H
#include "kernel_operator.h"
#endif  // ASCEND_SIM_KERNEL_TILING_H
