"""Helpers of the C++ front-end tests: load a source string, run a one-block kernel that stores scalars to GM."""
from __future__ import annotations

import numpy as np

from ascend_sim import launch
from ascend_sim.ascendc import load

HEADER = '#include "kernel_operator.h"\nusing namespace AscendC;\n'


def load_src(src: str, name: str = "test", **kw):
    """Load C++ source text (the kernel_operator.h include and `using namespace AscendC` prepended)."""
    return load(HEADER + src, name=name, **kw)


def run_scalars(body: str, n: int, dtype=np.int64, prelude: str = "", name: str = "scalars", args=()) -> np.ndarray:
    """Run ``body`` in a one-block kernel with ``GlobalTensor<T> out`` (T from ``dtype``) and return out[:n].

    The body stores its results with ``out.SetValue(i, value)``.
    """
    ctype = {np.int64: "int64_t", np.int32: "int32_t", np.uint32: "uint32_t", np.float32: "float",
             np.float16: "half", np.uint64: "uint64_t"}[dtype]
    src = (prelude + f"\n__global__ __vector__ void run(__gm__ {ctype}* o)\n{{\n"
           f"    GlobalTensor<{ctype}> out;\n    out.SetGlobalBuffer(o, {n});\n{body}\n}}\n")
    mod = load_src(src, name=name)
    out = np.zeros(n, dtype)
    launch(mod.run, 1, out, *args)
    return out
