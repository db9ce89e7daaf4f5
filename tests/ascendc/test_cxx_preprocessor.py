"""The preprocessor and constants: #define, #ifdef/#else with defines passed to load(), constexpr, enums."""
from cxx_util import run_scalars

PRELUDE = """
#define TILE 16
#define SQUARE(v) ((v) * (v))
constexpr int32_t BUFFER_NUM = 2;
enum Mode { MODE_A = 3, MODE_B = 7 };
#ifdef USE_BIG
constexpr int32_t PICK = 1000;
#else
constexpr int32_t PICK = 1;
#endif
"""
BODY = """
    out.SetValue(0, TILE * BUFFER_NUM);
    out.SetValue(1, SQUARE(TILE + 1));
    out.SetValue(2, MODE_B - MODE_A);
    out.SetValue(3, PICK);
"""


def test_macros_constexpr_and_enums():
    assert run_scalars(BODY, 4, prelude=PRELUDE, name="pp").tolist() == [32, 289, 4, 1]


def test_defines_given_to_load_reach_ifdef():
    from ascend_sim import launch
    import numpy as np
    from cxx_util import HEADER
    from ascend_sim.ascendc import load
    src = HEADER + PRELUDE + ("__global__ __vector__ void run(__gm__ int64_t* o) { GlobalTensor<int64_t> out; "
                              "out.SetGlobalBuffer(o, 4);" + BODY + "}")
    out = np.zeros(4, np.int64)
    launch(load(src, name="pp2", defines={"USE_BIG": None}).run, 1, out)
    assert out[3] == 1000
