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

from ascend_sim import launch
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
