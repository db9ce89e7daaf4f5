// The tiling-key template macros (Tiling模板编程: ASCENDC_TPL_ARGS_DECL, ASCENDC_TPL_SEL ...) that an operator's
// tiling_key_*.h header includes in CANN. Declarations only: this simulator keeps them in kernel_operator.h.
#ifndef ASCEND_SIM_TEMPLATE_ARGUMENT_H
#define ASCEND_SIM_TEMPLATE_ARGUMENT_H
#include "kernel_operator.h"
#endif  // ASCEND_SIM_TEMPLATE_ARGUMENT_H
