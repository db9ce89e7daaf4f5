"""Lab 04b (a language model): the solution run, each wrong answer's feedback, the budgets of exercises 2, 4 and 5."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.solution_file import parse_solutions
from ascend_sim.course.grading.solutions import solve_lab
from ascend_sim.course.labs import lab04b_llm as lab

ROOT = Path(__file__).resolve().parents[2]

EXPECTED_FEEDBACK = {
    "ex1-wrong-1": "the append is missing",
    "ex1-wrong-2": "key 36 is left out",
    "ex1-wrong-3": "scaled by 1 / D",
    "ex2-wrong-1": "over the budget of +8 %",
    "ex2-wrong-2": "past 7: it clips",
    "ex2-wrong-3": "not round-to-nearest",
    "ex2-wrong-4": "6.000 bits per weight",
    "ex2-wrong-5": "row 0 is all 0 and gets scales [0.0",
    "ex3-wrong-1": "induction scores differ",
    "ex3-wrong-2": "the planted retrieval heads are",
    "ex4-wrong-1": "the budget is 12,860",
    "ex4-wrong-2": "used the scales of tile 0",
    "ex4-wrong-3": "OutOfBoundsError",
    "ex5-wrong-1": "scales of group 0",
    "ex5-wrong-2": "restarted the accumulator",
    "ex5-wrong-3": "RaceError",
    "ex5-wrong-4": "the budget is 13,790",
}


def test_solution_full_marks_blank_zero_each_wrong_answer_fails_its_own_exercise(tmp_path):
    outcome = solve_lab(find_lab("lab04b", ROOT), limits=Limits(cell_timeout=120), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, blank, *wrong = outcome.runs
    assert solved.report.score == solved.report.max_score == full_marks(lab.LAB)
    assert {e.status for e in blank.report.exercises} == {"not_attempted"}
    assert [r.name for r in wrong] == list(EXPECTED_FEEDBACK)
    for run in wrong:
        failed = [e for e in run.report.exercises if e.status == "fail"]
        assert [e.exercise for e in failed] == [run.name.split("-")[0]], run.name
        assert EXPECTED_FEEDBACK[run.name] in " ".join(failed[0].messages), (run.name, failed[0].messages)


def test_the_int4_budgets_sit_between_groups_of_16_and_32():
    """The stated budget: groups of 16 are within +8 % perplexity at 5 bits a weight; groups of 32 are not (so the
    learner must find the finer group), and groups of 8 are over the bits budget."""
    from ascend_sim.migrate.llm_quant import dequantize_groups, rtn_groups
    weights = lab.decoder_weights()
    base = lab._perplexity(None)
    ppl = {}
    for g in (16, 32):
        ppl[g] = lab._perplexity({n: dequantize_groups(*rtn_groups(w, 4, g)) for n, w in weights.items()})
    assert ppl[16] <= base * (1 + lab.PPL_BUDGET) < ppl[32]
    assert 4 + 16 / 16 <= lab.BITS_BUDGET < 4 + 16 / 8
    assert np.isfinite(base)


def _ex_kernels(ex: str, name: str) -> dict[str, object]:
    """The solution's kernel ``name`` of exercise ``ex`` and its wrong answers' (by label), run in the lab's setup
    namespace."""
    nb = __import__("json").loads((ROOT / "labs" / "lab04b_llm.ipynb").read_text())
    setup = "".join(next(c for c in nb["cells"] if c.get("id") == "setup")["source"])
    sol = parse_solutions(ROOT / "solutions" / "lab04b_llm.py")[ex]
    kernels = {}
    for label, code in [("solution", sol.code), *sol.wrong]:
        ns: dict = {}
        exec(setup, ns)                                     # noqa: S102 - the lab's own setup and solution
        exec(code, ns)                                      # noqa: S102
        kernels[label] = ns[name]
    return kernels


def _ex4_kernels() -> dict[str, object]:
    """The solution's int4_gemv_kernel and its wrong answers' (by label)."""
    return _ex_kernels("ex4", "int4_gemv_kernel")


def _budget_cycles(kern) -> float:
    from ascend_sim import launch
    codes, scales = lab.budget_weight()
    t = lab.int4_gemv_tiling(*codes.shape, lab.EX4_BUDGET_GROUP)
    x = np.random.default_rng(0).standard_normal(t.K).astype(np.float16)
    y = np.zeros(t.O, np.float32)
    res = launch(kern, t.block_dim, x, *lab.pack_int4(codes, scales, t), y, t, gm_names=["x", "w", "scales", "y"])
    np.testing.assert_allclose(y, lab.int4_reference(x, codes, scales, lab.EX4_BUDGET_GROUP), rtol=1e-4, atol=1e-4)
    return res.cycles


def test_the_int4_gemv_budget_is_the_solution_plus_15_percent_and_one_buffer_misses_it():
    """The double-buffered solution sets the budget (+15 %); the same kernel with one buffer for the codes misses
    it, and every kernel computes the right y (so the budget, not the values, fails the naive one)."""
    kernels = _ex4_kernels()
    solution = _budget_cycles(kernels["solution"])
    assert lab.EX4_BUDGET == round(solution * 1.15, -1), solution
    single = _budget_cycles(next(k for label, k in kernels.items() if "one buffer" in label))
    assert single > lab.EX4_BUDGET, (single, lab.EX4_BUDGET)


def _ex5_cycles(kern) -> float:
    from ascend_sim import launch
    x, codes, scales = lab.prefill_case(np.random.default_rng(5))
    (M, K), N = x.shape, codes.shape[0]
    t = lab.w4a16_tiling(M, N, K, K // scales.shape[1], chip=lab.EX5_CHIP)
    y = np.zeros((M, N), np.float16)
    res = launch(kern, t.block_dim, x, *lab.pack_w4a16(codes, scales, t), y, t, chip=lab.EX5_CHIP,
                 gm_names=["x", "codes", "scales", "y"])
    np.testing.assert_allclose(y.astype(np.float32), lab.w4a16_reference(x, codes, scales).astype(np.float32),
                               rtol=2e-3, atol=2e-3)
    return res.cycles


def test_the_w4a16_prefill_budget_excludes_fp16_weights_and_dequantising_to_gm_first():
    """The fused solution sets the budget (+15 %). On the same product the fp16-weights Matmul (the weights read
    at 16 bits) and the unfused route (AntiQuant writes fp16 weights to GM, then the fp16 Matmul reads them)
    both miss it, measured with the library's kernels; so does the per-row Mul wrong answer."""
    from ascend_sim.kernels.m4.antiquant import antiquant
    from ascend_sim.kernels.m4.gemm import gemm_bt
    kernels = _ex_kernels("ex5", "w4a16_matmul_kernel")
    solution = _ex5_cycles(kernels["solution"])
    assert lab.EX5_BUDGET == round(solution * 1.15, -1), solution
    assert _ex5_cycles(next(k for label, k in kernels.items() if "per 16-code row" in label)) > lab.EX5_BUDGET
    x, codes, scales = lab.prefill_case(np.random.default_rng(5))
    group = codes.shape[1] // scales.shape[1]
    w = (codes.astype(np.float32) * np.repeat(scales.astype(np.float32), group, axis=1)).astype(np.float16)
    _, fp16 = gemm_bt(x, w, out_dtype=np.float16, chip=lab.EX5_CHIP)
    ct = np.ascontiguousarray(codes.T)                                   # antiquant's [K, N], two codes a byte
    packed = ((ct[:, 0::2] & 0xF) | ((ct[:, 1::2] & 0xF) << 4)).astype(np.uint8)
    w_gm, aq = antiquant(packed, np.ascontiguousarray(scales.T), chip=lab.EX5_CHIP)
    np.testing.assert_array_equal(w_gm.T, w)
    _, mm = gemm_bt(x, np.ascontiguousarray(w_gm.T), out_dtype=np.float16, chip=lab.EX5_CHIP)
    assert fp16.cycles > lab.EX5_BUDGET, fp16.cycles
    assert aq.cycles + mm.cycles > lab.EX5_BUDGET, (aq.cycles, mm.cycles)
