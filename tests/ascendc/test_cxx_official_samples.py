"""The official asc-devkit kernels run unchanged and exact against numpy.

Their text is CANN-licensed and never stored in this repository: set ASCEND_SIM_ASC_DEVKIT to a checkout of
https://github.com/cannmirror/asc-devkit (or a bare clone of it); each file is copied to a temporary folder and
loaded from there. Without the variable these tests are skipped.
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ascend_sim import ArgumentError, RaceError, SanitizerWarning, launch
from ascend_sim.ascendc import load

DEVKIT = os.environ.get("ASCEND_SIM_ASC_DEVKIT", "")
pytestmark = pytest.mark.skipif(not DEVKIT, reason="set ASCEND_SIM_ASC_DEVKIT to an asc-devkit checkout")
EX = "examples/01_simd_cpp_api"
LEGACY = f"{EX}/02_features/99_acl_based/00_acl_compilation/custom_op/op_kernel"


def fetch(rel_paths, dest: Path) -> Path:
    """Copy files of the asc-devkit (a checkout or a bare repository) into ``dest``; return the first."""
    for rel in rel_paths:
        src = Path(DEVKIT) / rel
        if src.is_file():
            text = src.read_bytes()
        else:
            text = subprocess.run(["git", "-C", DEVKIT, "show", f"HEAD:{rel}"], check=True,
                                  capture_output=True).stdout
        (dest / Path(rel).name).write_bytes(text)
    return dest / Path(rel_paths[0]).name


def test_add_tpipe_tque_asc(tmp_path):
    mod = load(fetch([f"{EX}/00_introduction/01_add/add_tpipe_tque/add_tpipe_tque.asc"], tmp_path))
    n = 8 * 2048
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 1, (2, n)).astype(np.float32)
    z = np.zeros_like(x)
    launch(mod.add_custom, 8, x, y, z, n)
    np.testing.assert_array_equal(z, x + y)


def test_legacy_add_custom_with_get_tiling_data(tmp_path):
    path = fetch([f"{LEGACY}/add_custom/add_custom_kernel.cpp", f"{LEGACY}/add_custom/add_custom_tiling.h"], tmp_path)
    mod = load(path, defines={"DTYPE_X": "half", "DTYPE_Y": "half", "DTYPE_Z": "half"})
    n = 8 * 2048
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, (2, n)).astype(np.float16)
    z = np.zeros_like(x)
    tiling = mod.structs.AddCustomTilingData(totalLength=n, tileNum=8)
    r = launch(mod.add_custom, 8, x, y, z, None, tiling.to_bytes())
    np.testing.assert_array_equal(z, x + y)
    assert r.trace.records[0].line.startswith("add_custom_kernel.cpp:")


def test_legacy_leaky_relu(tmp_path):
    path = fetch([f"{LEGACY}/leaky_relu_custom/leaky_relu_custom_kernel.cpp",
                  f"{LEGACY}/leaky_relu_custom/leaky_relu_custom_tiling.h"], tmp_path)
    mod = load(path)
    n = 8 * 1024
    x = np.random.default_rng(2).uniform(-1, 1, n).astype(np.float32)
    y = np.zeros_like(x)
    slope = np.float32(0.1)
    tiling = mod.structs.LeakyReluCustomTilingData(totalLength=n, tileNum=8, negativeSlope=slope)
    launch(mod.leaky_relu_custom, 8, x, y, None, tiling)
    np.testing.assert_array_equal(y, np.maximum(x, 0) + slope * np.minimum(x, 0))


def test_matmul_basic_api_cube(tmp_path):
    mod = load(fetch([f"{EX}/00_introduction/02_matrix/matmul_basic_api/matmul_basic_api.asc"], tmp_path))
    M, K, N = 256, 64, 256
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    launch(mod.mmad_custom.template(M, K, N, 128, 128, 64, 256), 2, a, b, c)     # the sample's own arguments
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))


def test_matmul_leakyrelu_basic_api_mix(tmp_path):
    mod = load(fetch([f"{EX}/00_introduction/03_fusion_operation/matmul_leakyrelu_basic_api/"
                      "matmul_leakyrelu_basic_api.asc"], tmp_path))
    M, K, N = 512, 128, 128
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    r = launch(mod.mmad_vec_custom.template(M, K, N, 256, 128, 128, 256, 128, 128), 2, a, b, c)
    assert mod.mmad_vec_custom.core == "MIX" and {rec.core_type for rec in r.trace.records} == {"AIC", "AIV"}
    mm = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c, np.where(mm >= 0, mm, mm * np.float16(0.001)))


def test_sync_all(tmp_path):
    mod = load(fetch([f"{EX}/03_basic_api/05_sync_control/sync_all/sync_all.asc"], tmp_path))
    blocks, tile = 8, 32
    x = np.random.default_rng(5).uniform(-1, 1, blocks * tile).astype(np.float32)
    z, work, sync = np.zeros_like(x), np.zeros_like(x), np.zeros(blocks * 8, np.int32)
    launch(mod.sync_all_custom, blocks, x, z, work, sync)
    doubled = x.reshape(blocks, tile) * np.float32(2)
    for b in range(blocks):                 # each block: its own 2x, then the others' in block order
        acc = doubled[b].copy()
        for i in range(blocks):
            if i != b:
                acc = acc + doubled[i]
        np.testing.assert_array_equal(z[b * tile:(b + 1) * tile], acc)


def test_add_custom_template_by_tiling_key(tmp_path):
    """The tiling-key template sample: its tiling_key_*.h tables give the space (TILE_NUM's ASCENDC_TPL_UI_MIX
    decoded), and the key the sample's host rule picks (>= 2,048 elements: TILE_NUM 8, IS_SPLIT 1) runs exact."""
    from ascend_sim import float32, half
    names = ["add_custom_template.cpp", "add_custom_template_tiling.h", "tiling_key_add_custom_template.h"]
    mod = load(fetch([f"{LEGACY}/add_custom_template/{n}" for n in names], tmp_path))
    space = mod.tiling_space
    assert space.op == "AddCustomTemplate" and mod.add_custom_template.tiling_space is space
    assert space.params[3].options == (0, 1, 2, 3, 4, 5, 10, 12, 13, 9, 8) and len(space.legal_keys) == 8
    n = 8 * 2048
    for dt in (half, float32):
        x, y = np.random.default_rng(6).uniform(-1, 1, (2, n)).astype(dt)
        z = np.zeros(n, dt)
        key = space.tiling_key(D_T_X=dt, D_T_Y=dt, D_T_Z=dt, TILE_NUM=8, IS_SPLIT=1)
        launch(space.instance(key), 8, x, y, z, np.zeros(32, np.uint8),
               mod.structs.TilingDataTemplate(totalLength=n))
        np.testing.assert_array_equal(z, (x + y).astype(dt))


# ---------------------------------------------------------------- CrossCoreSetFlag / CrossCoreWaitFlag, all three modes
CROSS = f"{EX}/03_basic_api/05_sync_control/cross_core_set_wait_flag"
CROSS_FILES = [f"{CROSS}/cross_core_set_wait_flag.asc", f"{CROSS}/cross_core_set_wait_flag.h"]
CROSS_BLOCKS = 8            # the sample's NUM_BLOCKS: 8 AI Cores of __mix__(1, 2), 8 AICs and 16 AIVs


def cross_core_sample(tmp_path, scenario: int):
    return load(fetch(CROSS_FILES, tmp_path), defines={"SCENARIO_NUM": str(scenario)})


def cross_core_vector(tmp_path, scenario: int, x: np.ndarray) -> np.ndarray:
    mod = cross_core_sample(tmp_path, scenario)
    z = np.zeros_like(x)
    launch(mod.cross_core_set_wait_flag_custom, CROSS_BLOCKS, x, z, x.size)
    return z


def cross_core_inputs(seed: int) -> list:
    """gen_data.py's x (32 ones) and 32 integers of either sign (exact sums, and a wrong lane shows)."""
    return [np.ones(32, np.float32), np.random.default_rng(seed).integers(-100, 100, 32).astype(np.float32)]


def test_cross_core_mode0_barrier_of_the_16_aivs(tmp_path):
    """Each AIV atomically adds x * its block index, a mode-0 flag joins all 16 AIVs, then AIV 0 reads the sum."""
    for x in cross_core_inputs(7):
        np.testing.assert_array_equal(cross_core_vector(tmp_path, 0, x), x * np.float32(sum(range(2 * CROSS_BLOCKS))))


def test_cross_core_mode1_joins_the_two_aivs_of_ai_core_1(tmp_path):
    """Only AIVs 2 and 3 (AI Core 1) take part: a mode-1 flag between them, then AIV 2 reads x * (2 + 3)."""
    for x in cross_core_inputs(8):
        np.testing.assert_array_equal(cross_core_vector(tmp_path, 1, x), x * np.float32(2 + 3))


def cross_core_mix(tmp_path, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Scenario 2's launch with gen_data.py's layout: A as 8 blocks of its K columns, A/B's half copies zeroed."""
    M, K = a.shape
    N = b.shape[1]
    mod = cross_core_sample(tmp_path, 2)
    a_blocks = np.ascontiguousarray(a.reshape(M, CROSS_BLOCKS, K // CROSS_BLOCKS).transpose(1, 0, 2))
    c = np.zeros((M, N), np.float32)            # the host's aclrtMemset: the AICs add their parts into it
    r = launch(mod.mmad_custom, CROSS_BLOCKS, a_blocks, b, np.zeros((M, K), np.float16), np.zeros((K, N), np.float16), c)
    assert {rec.core_type for rec in r.trace.records} == {"AIC", "AIV"}
    return c


def leaky_relu_golden(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """gen_data.py's golden: LeakyRelu(alpha 0.001) of the uint8 matrices' product in float32."""
    mm = a.astype(np.float32) @ b.astype(np.float32)
    return np.maximum(np.float32(0.001) * mm, mm).astype(np.float32)


def gen_data_inputs() -> tuple[np.ndarray, np.ndarray]:
    """gen_data.py's x1/x2: uniform(0, 1) cast to uint8, which makes every input 0 (and the golden 0)."""
    rng = np.random.default_rng(0)
    return (rng.uniform(0, 1, (32, 32)).astype(np.uint8), rng.uniform(0, 1, (32, 64)).astype(np.uint8))


def test_cross_core_mix_modes_2_0_2_runs_with_gen_data_inputs_and_names_its_overlaps(tmp_path):
    """AIVs cast A and B to half (mode 2 -> the AIC, flag 12), each AIC adds its K-slice's product into C atomically
    (mode 0 among the 8 AICs, flag 11), then the AIVs apply LeakyRelu to their rows (mode 2 -> the AIVs, flag 13).

    With the sample's own inputs (all zeros) it runs and matches the golden, and the sanitizer names the sample's
    three overlaps as warnings, since zeros hide them: each AIV's Cast uint8_t -> half writes over its own source
    (castALocal at UB 0 over aLocal, castBLocal at UB 128 over bLocal: the Cast page forbids any overlap of a wider
    dst), and the AIC's L1 B tile at byte 512 (b1LocalAddr = A_SIZE_ALIGN_L1, an element count used as bytes) lies
    inside the A tile's 1,024 bytes, so B's copy overwrites A's NZ rows 16..19 before SplitA reads them."""
    a, b = gen_data_inputs()
    assert not a.any() and not b.any()
    with pytest.warns(SanitizerWarning) as caught:
        c = cross_core_mix(tmp_path, a, b)
    np.testing.assert_array_equal(c, leaky_relu_golden(a, b))
    found = {str(w.message): str(w.message) for w in caught if isinstance(w.message, SanitizerWarning)}
    casts = [m for m in found.values() if "Cast from uint8_t to half" in m]
    assert any("src (UB bytes 0..127) and dst (UB bytes 0..255)" in m for m in casts)
    assert any("src (UB bytes 128..383) and dst (UB bytes 128..639)" in m for m in casts)
    assert {m.split("[memcheck] ")[1].split()[0] for m in casts} == {"cross_core_set_wait_flag.h:129",
                                                                     "cross_core_set_wait_flag.h:137"}
    (l1,) = [m for m in found.values() if "LoadData reads L1 data" in m]
    assert "DataCopy(a1Local" in l1 and "DataCopy(b1Local" in l1 and "(L1 bytes 0..1023)" in l1
    assert "wrote L1 bytes 512..2559 over L1 bytes 512..1023" in l1 and "address 1024 or later" in l1


def test_cross_core_mix_with_other_inputs_stops_at_the_in_place_cast(tmp_path):
    """Any input that is not all zeros changes the bytes the AIVs' in-place Casts still read: the chip's answer is
    not defined (the Cast page), so the launch stops there, at the sample's line, naming both ranges and the fix."""
    rng = np.random.default_rng(10)
    a = rng.integers(0, 256, (32, 32)).astype(np.uint8)
    b = rng.integers(0, 256, (32, 64)).astype(np.uint8)
    with pytest.raises(ArgumentError) as info:
        cross_core_mix(tmp_path, a, b)
    msg = str(info.value)
    assert msg.split("\n")[0].split()[1] in ("cross_core_set_wait_flag.h:129", "cross_core_set_wait_flag.h:137")
    assert "Cast from uint8_t to half" in msg and "converting to a wider type" in msg and "separate buffer" in msg


def test_cross_core_sample_whole_program(tmp_path):
    """`ascend-sim run`'s path: the sample's main() unchanged (std::vector<float> x(32), ReadFile into x.data(),
    kernel_cross_core_set_wait_flag(x) returning std::vector<float> z(first, last), WriteFile of z.data())."""
    from ascend_sim.ascendc.host.run import run_file
    path = fetch(CROSS_FILES, tmp_path)
    (tmp_path / "input").mkdir()
    (tmp_path / "output").mkdir()
    x = np.random.default_rng(11).integers(-100, 100, 32).astype(np.float32)
    x.tofile(tmp_path / "input" / "input_x.bin")
    outcome = run_file(path, defines={"SCENARIO_NUM": "1"})
    assert outcome.returncode == 0 and not outcome.leaks
    assert [(name, blocks) for name, blocks, _ in outcome.launches] == [("cross_core_set_wait_flag_custom", 8)]
    np.testing.assert_array_equal(np.fromfile(tmp_path / "output" / "output.bin", np.float32), x * np.float32(5))


BANK = f"{EX}/05_best_practices/04_memory_access/bank_conflict_ub"


@pytest.mark.parametrize("scenario", [1, 7])
def test_bank_conflict_ub_whole_program_passes_its_own_scripts(tmp_path, scenario):
    """The sample's main() unchanged: ``std::vector<ArgInfo>`` (a struct with a std::string) from braced structs,
    ``std::vector<uint8_t*>`` filled by ``aclrtMallocHost((void**)(&v[i]), n)``, a kernel called through a
    function pointer, std::vector reached through data_utils.h. Scenario 7's z is y plus 1000 Adds of the
    re-read src0 pattern (float32, so exact only if every Add ran on the right addresses)."""
    from ascend_sim.ascendc.host.run import run_file
    files = [f"{BANK}/bank_conflict_ub.asc", f"{BANK}/config.h", f"{BANK}/scripts/gen_data.py",
             f"{BANK}/scripts/verify_result.py"]
    path = fetch(files, tmp_path)
    for d in ("input", "output"):
        (tmp_path / d).mkdir()
    subprocess.run(["python", "gen_data.py", "--scenario", str(scenario)], cwd=tmp_path, check=True,
                   capture_output=True)
    outcome = run_file(path, defines={"SCENARIO_NUM": str(scenario)})
    assert outcome.returncode == 0 and not outcome.leaks
    assert [(name, blocks) for name, blocks, _ in outcome.launches] == [("add_custom", 1)]
    z = np.fromfile(tmp_path / "output" / "output_z.bin", np.float32)
    np.testing.assert_array_equal(z, np.fromfile(tmp_path / "output" / "golden.bin", np.float32))
    verify = subprocess.run(["python", "verify_result.py", "output/output_z.bin", "output/golden.bin"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout


def test_add_asc_whole_program_checks_itself(tmp_path, capfd):
    """add.asc's main() unchanged: its host check is a lambda printing the first 20 elements with std::copy into
    an std::ostream_iterator<float> (std::min of the size and 20), then std::equal of golden and output."""
    from ascend_sim.ascendc.host.run import run_file
    path = fetch([f"{EX}/00_introduction/01_add/add/add.asc"], tmp_path)
    outcome = run_file(path)
    assert outcome.returncode == 0 and not outcome.leaks
    assert [(name, blocks) for name, blocks, _ in outcome.launches] == [("add_custom", 8)]
    i = np.arange(20, dtype=np.float32)
    first20 = " ".join("%g" % v for v in i * np.float32(0.1) + i * np.float32(0.2)) + " ..."
    out = capfd.readouterr().out
    assert f"Output: {first20}\nGolden: {first20}\ntest pass!\n" in out, out


# ---------------------------------------------------------------- reduce: ReduceRepeat / ReduceDataBlock in Counter mode
REDUCE = f"{EX}/03_basic_api/01_memory_vector_compute/reduce"


def tree_sums(x: np.ndarray, width: int) -> np.ndarray:
    """The documented order of ReduceRepeat<SUM> (width 64 floats) and ReduceDataBlock<SUM> (width 8): each repeat or
    block summed as a binary tree of neighbour pairs in float32, a short last one padded with zeros."""
    x = np.concatenate([x, np.zeros(-x.size % width, x.dtype)]).reshape(-1, width)
    while x.shape[1] > 1:
        x = x[:, 0::2] + x[:, 1::2]
    return x[:, 0]


def reduce_sample_model(x: np.ndarray, out_len: int) -> np.ndarray:
    """What the sample's five Compute paths leave in z (its tiling picks one by the length)."""
    n, z = x.size, np.zeros(out_len, np.float32)
    if n <= 64:                                     # Compute1: one ReduceRepeat, Normal mask 64
        z[0] = tree_sums(x, 64)[0]
    elif n <= 512:                                  # Compute2: ReduceDataBlock, then ReduceRepeat, both Counter mode
        z[0] = tree_sums(tree_sums(x, 8), 64)[0]
    elif n <= 4096:                                 # Compute3: two ReduceRepeat in Counter mode
        z[0] = tree_sums(tree_sums(x, 64), 64)[0]
    elif n == 10000:                                # Compute4: ReduceRepeat in place until one value is left
        level = x
        while level.size > 1:
            level = tree_sums(level, 64)
            z[:level.size] = level
    else:                                           # Compute5: Counter-mode Adds of the two halves, then ReduceRepeat
        total, z[:] = n, 0
        src = x.copy()
        while total > 64:
            half = -(-total // 16) * 8
            z[:total - half] = src[:total - half] + src[half:total]
            total, src = half, z.copy()
        z[0] = tree_sums(src[:total], 64)[0]
    return z


@pytest.mark.parametrize("n, out_len", [(64, 32), (296, 32), (4096, 32), (10000, 160), (20000, 10000)])
def test_reduce_asc_counter_mode_sums_in_the_documented_order(tmp_path, n, out_len):
    """reduce.asc's kernel at each of its five tilings (its main() runs 4096: Compute3), exact against the
    documented order: SetMaskCount + SetVectorMask<T>(0, count) + ReduceRepeat/ReduceDataBlock<SUM, T, T, false>."""
    mod = load(fetch([f"{REDUCE}/reduce.asc", f"{REDUCE}/data_utils.h"], tmp_path))
    rng = np.random.default_rng(n)
    x = (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-6, 6, n)).astype(np.float32)
    z = np.zeros(out_len, np.float32)
    launch(mod.reduce_custom, 1, x, z, mod.structs.ReduceCustomTilingData(totalLength=n, outLength=out_len))
    np.testing.assert_array_equal(z, reduce_sample_model(x, out_len))


def test_reduce_asc_whole_program_passes_its_own_check(tmp_path, capfd):
    """The sample's main() unchanged on its own gen_data.py input: CompareResult against golden.bin, 'test pass!'."""
    from ascend_sim.ascendc.host.run import run_file
    path = fetch([f"{REDUCE}/reduce.asc", f"{REDUCE}/data_utils.h", f"{REDUCE}/scripts/gen_data.py"], tmp_path)
    subprocess.run(["python", "gen_data.py"], cwd=tmp_path, check=True, capture_output=True)
    outcome = run_file(path)
    assert outcome.returncode == 0 and not outcome.leaks
    assert [(name, blocks) for name, blocks, _ in outcome.launches] == [("reduce_custom", 1)]
    assert "CompareResult golden.bin success!\ntest pass!\n" in capfd.readouterr().out
    np.testing.assert_array_equal(np.fromfile(tmp_path / "output" / "output.bin", np.float32),
                                  np.fromfile(tmp_path / "output" / "golden.bin", np.float32))


# ---------------------------------------------------------------- reduce_repeat, reduce_pair_elem, reduce_computation
VEC = f"{EX}/03_basic_api/01_memory_vector_compute"


def run_sample_with_its_scripts(tmp_path, name: str, scenario: int | None, launches):
    """The sample's main() unchanged, between its own gen_data.py and verify_result.py (as its README runs them):
    returns verify_result.py's completed process after checking the run and its launches."""
    from ascend_sim.ascendc.host.run import run_file
    folder = f"{VEC}/{name}"
    path = fetch([f"{folder}/{name}.asc", f"{folder}/data_utils.h", f"{folder}/scripts/gen_data.py",
                  f"{folder}/scripts/verify_result.py"], tmp_path)
    flag = [] if scenario is None else [f"-scenarioNum={scenario}"]
    subprocess.run(["python", "gen_data.py", *flag], cwd=tmp_path, check=True, capture_output=True)
    outcome = run_file(path, defines={} if scenario is None else {"SCENARIO_NUM": str(scenario)})
    assert outcome.returncode == 0 and not outcome.leaks
    assert [(n, blocks) for n, blocks, _ in outcome.launches] == launches
    return subprocess.run(["python", "verify_result.py", *flag, "output/output.bin", "output/golden.bin"],
                          cwd=tmp_path, capture_output=True, text=True)


def pair_tree(x: np.ndarray, width: int) -> np.ndarray:
    """Each ``width`` values (zero-padded) summed as a binary tree of neighbour pairs, rounding in x's dtype."""
    x = np.concatenate([x, np.zeros(-x.size % width, x.dtype)]).reshape(-1, width)
    while x.shape[1] > 1:
        x = (x[:, 0::2] + x[:, 1::2]).astype(x.dtype)
    return x[:, 0]


def test_reduce_pair_elem_whole_program_passes_its_own_scripts(tmp_path):
    """``uint64_t mask[2] = {UINT64_MAX, UINT64_MAX}`` (the <stdint.h> limit macro) and ReducePairElem<SUM, half>."""
    verify = run_sample_with_its_scripts(tmp_path, "reduce_pair_elem", None, [("reduce_pair_elem_custom", 1)])
    assert verify.returncode == 0 and "test pass!" in verify.stdout, verify.stdout
    np.testing.assert_array_equal(np.fromfile(tmp_path / "output" / "output.bin", np.float16),
                                  np.fromfile(tmp_path / "output" / "golden.bin", np.float16))


def test_reduce_pair_elem_kernel_sums_every_pair_of_the_128_lanes(tmp_path):
    mod = load(fetch([f"{VEC}/reduce_pair_elem/reduce_pair_elem.asc", f"{VEC}/reduce_pair_elem/data_utils.h"],
                     tmp_path))
    x = np.random.default_rng(11).uniform(-1000, 1000, 128).astype(np.float16)
    z = np.full(64, 7, np.float16)
    launch(mod.reduce_pair_elem_custom, 1, x, z)
    np.testing.assert_array_equal(z, x[0::2] + x[1::2])        # every lane: the mask is all 128 bits


@pytest.mark.parametrize("scenario", [1, 2, 3, 4])
def test_reduce_repeat_whole_program_passes_its_own_scripts(tmp_path, scenario):
    """``using T = typename AscendC::Conditional<isFloat, float, half>::type`` picks the dtype per scenario;
    scenario 4 reads 13 rows of 57 floats padded to 64 by DataCopyPad (isPad false) with mask 57."""
    verify = run_sample_with_its_scripts(tmp_path, "reduce_repeat", scenario, [("reduce_repeat_custom", 1)])
    assert verify.returncode == 0 and "test pass!" in verify.stdout, verify.stdout


@pytest.mark.parametrize("scenario, dtype, rows, cols, out", [(1, np.float16, 1, 1024, 8), (2, np.float16, 1, 1024, 16),
                                                              (3, np.float32, 1, 2048, 32), (4, np.float32, 13, 57, 13)])
def test_reduce_repeat_kernel_exact(tmp_path, scenario, dtype, rows, cols, out):
    """Each scenario's kernel exact against numpy: MAX values per repeat, MIN (value, index) pairs, SUM as the
    documented binary tree per repeat (ReduceRepeat.md), per row of 57 for scenario 4."""
    mod = load(fetch([f"{VEC}/reduce_repeat/reduce_repeat.asc", f"{VEC}/reduce_repeat/data_utils.h"], tmp_path),
               defines={"SCENARIO_NUM": str(scenario)})
    rng = np.random.default_rng(scenario)
    x = (rng.uniform(-1, 1, rows * cols) * 2.0 ** rng.integers(-6, 6, rows * cols)).astype(dtype)
    z = np.zeros(out, dtype)
    launch(mod.reduce_repeat_custom.template(rows * cols, rows, cols, out), 1, x, z)
    lanes = 256 // np.dtype(dtype).itemsize
    if scenario == 1:
        expected = x.reshape(-1, lanes).max(axis=1)
    elif scenario == 2:
        reps = x.reshape(-1, lanes)
        index = reps.argmin(axis=1).astype(np.uint16).view(np.float16)
        expected = np.stack([reps.min(axis=1), index], axis=1).reshape(-1)
    elif scenario == 3:
        expected = pair_tree(x, lanes)
    else:
        expected = np.concatenate([pair_tree(row, lanes) for row in x.reshape(rows, cols)])
        assert not np.array_equal(expected, x.reshape(rows, cols).sum(axis=1, dtype=np.float64).astype(dtype))
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("scenario", [1, 2, 3, 4, 6])
def test_reduce_computation_whole_program_passes_its_own_scripts(tmp_path, scenario):
    """ReduceMax/ReduceMin with calIndex in the count form (1, 3) and the mask/repeat form (2, 4: the overload with
    mask, repeatTime, srcRepStride), ReduceSum's mask/repeat form over 65 repeats (6)."""
    verify = run_sample_with_its_scripts(tmp_path, "reduce_computation", scenario,
                                         [("reduce_computation_custom", 1)])
    assert verify.returncode == 0 and "test pass!" in verify.stdout, verify.stdout
    np.testing.assert_array_equal(np.fromfile(tmp_path / "output" / "output.bin", np.float16),
                                  np.fromfile(tmp_path / "output" / "golden.bin", np.float16))


def test_reduce_computation_scenario_5_get_reduce_repeat_sum_spr(tmp_path):
    """Scenario 5 writes dst[1] with SetValue (PIPE_S), then EnQue/DeQue and DataCopy on MTE3 with no S_MTE3 flag:
    the compiler's auto-sync (on by default, Scalar读写数据.md "Scalar读写数据时的同步") inserts it."""
    verify = run_sample_with_its_scripts(tmp_path, "reduce_computation", 5, [("reduce_computation_custom", 1)])
    assert verify.returncode == 0 and "test pass!" in verify.stdout, verify.stdout


def test_reduce_computation_scenario_5_races_with_auto_sync_off(tmp_path):
    """The same kernel built with --cce-auto-sync=off: the missing S_MTE3 flag is a RaceError at its copy-out."""
    mod = load(fetch([f"{VEC}/reduce_computation/reduce_computation.asc", f"{VEC}/reduce_computation/data_utils.h"],
                     tmp_path), defines={"SCENARIO_NUM": "5"})
    x = np.ones(288, np.float16)           # gen_data.py: 288 ones; dst[0] and dst[1] are their sum
    with pytest.raises(RaceError, match=r"(?s)DataCopy on pipe MTE3 reads UB.*pipe S wrote.*auto_sync=False"):
        launch(mod.reduce_computation_custom, 1, x, np.zeros(16, np.float16), auto_sync=False)
    z = np.zeros(16, np.float16)
    launch(mod.reduce_computation_custom, 1, x, z)
    assert z[0] == z[1] == 288


def test_reduce_computation_scenario_5_program_with_cce_auto_sync_off(tmp_path):
    """``ascend-sim run --cce-auto-sync=off``: the whole program (its main() and <<<>>> launch) built without
    auto-sync stops on the RaceError at the sample's copy-out; with the default it passes its own check."""
    folder = f"{VEC}/reduce_computation"
    path = fetch([f"{folder}/reduce_computation.asc", f"{folder}/data_utils.h", f"{folder}/scripts/gen_data.py"],
                 tmp_path)
    subprocess.run(["python", "gen_data.py", "-scenarioNum=5"], cwd=tmp_path, check=True, capture_output=True)
    cli = [os.sys.executable, "-m", "ascend_sim", "run", str(path), "-D", "SCENARIO_NUM=5"]
    off = subprocess.run([*cli, "--cce-auto-sync=off"], capture_output=True, text=True)
    assert off.returncode == 1 and "RaceError" not in off.stdout, off.stdout
    assert "DataCopy on pipe MTE3 reads UB" in off.stderr and "pipe S wrote" in off.stderr, off.stderr
    on = subprocess.run(cli, capture_output=True, text=True)
    assert on.returncode == 0 and "reduce_computation_custom<<<1>>>" in on.stdout, on.stderr


@pytest.mark.parametrize("scenario, n, dtype", [(1, 288, np.float16), (2, 512, np.float16), (3, 288, np.float16),
                                                (4, 512, np.float16), (6, 8320, np.float16)])
def test_reduce_computation_kernel_exact(tmp_path, scenario, n, dtype):
    """The kernel on data where the order shows: Max/Min with the extreme twice (the smaller index wins), ReduceSum's
    mask/repeat form as a tree of the 65 repeat trees (ReduceSum.md 方式二), not their sum in order (方式一)."""
    mod = load(fetch([f"{VEC}/reduce_computation/reduce_computation.asc", f"{VEC}/reduce_computation/data_utils.h"],
                     tmp_path), defines={"SCENARIO_NUM": str(scenario)})
    rng = np.random.default_rng(scenario)
    x = (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-6, 6, n)).astype(dtype)
    z = np.full(16, 3, dtype)
    extreme = 99 if scenario in (1, 2) else -99
    if scenario != 6:
        x[[n - 20, 140]] = extreme
    launch(mod.reduce_computation_custom, 1, x, z)
    if scenario == 6:
        per_repeat = pair_tree(x, 128)
        in_order = per_repeat[0]
        for v in per_repeat[1:]:
            in_order = np.float16(in_order + v)
        expected = pair_tree(per_repeat, 128)[0]
        assert expected != in_order
        assert z[0] == expected
    else:
        assert z[0] == extreme and int(z[1:2].view(np.uint16)[0]) == 140
