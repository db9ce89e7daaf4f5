// lib/matmul_intf.h: the high-level Matmul API (AscendC::Matmul, MatmulType, REGIST_MATMUL_OBJ), DECLARATIONS ONLY.
// ascend_sim declares it in kernel_operator.h; this file exists for the kernels that include it by this name.
#ifndef ASCEND_SIM_LIB_MATMUL_INTF_H
#define ASCEND_SIM_LIB_MATMUL_INTF_H
#include "kernel_operator.h"
#endif  // ASCEND_SIM_LIB_MATMUL_INTF_H
