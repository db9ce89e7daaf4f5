// Pieces the C++ cube twins of Module 2 share (the C++ side of ascend_sim/kernels/opt/cube_common.py): the
// fractal sizes and the bias load into the BT buffer.
#pragma once
#include "kernel_operator.h"

constexpr uint32_t C0 = 16;                      // halves per fractal row; a fractal is 16 x 16 (512 bytes)
constexpr uint32_t FRACTAL = C0 * C0;

// count float biases GM -> C1 (L1) -> C2 (the BT buffer), where a Mmad with a bias operand reads them. The queues
// hold one buffer each; the caller frees the returned C2 tensor after its last Mmad.
template <typename QueC1, typename QueC2>
__aicore__ inline AscendC::LocalTensor<float> LoadBiasTable(QueC1& qC1, QueC2& qC2,
                                                            const AscendC::GlobalTensor<float>& src, uint32_t count)
{
    AscendC::LocalTensor<float> c1 = qC1.template AllocTensor<float>();
    AscendC::DataCopy(c1, src, count);
    qC1.EnQue(c1);
    c1 = qC1.template DeQue<float>();
    AscendC::LocalTensor<float> c2 = qC2.template AllocTensor<float>();
    AscendC::DataCopy(c2, c1, count);
    qC1.FreeTensor(c1);
    qC2.EnQue(c2);
    return qC2.template DeQue<float>();
}
