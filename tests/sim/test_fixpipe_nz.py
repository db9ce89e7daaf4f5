"""Fixpipe with CFG_NZ (NZ2NZ): column blocks of 16 leave L0C as contiguous m x 16 runs, dstStride 32 B apart."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (CFG_NZ, CFG_ROW_MAJOR, ArgumentError, Fixpipe, FixpipeConfig, CO2Layout, FixpipeParams,
                        HardEvent, Mmad, MmadParams, QuantMode_t)
from kernels_util import assert_same, handoff, raises_rule, round_to
from test_cube import run_stage

A = (np.arange(1024) % 7 - 3).astype(np.float16)
FULL = A.reshape(32, 32).astype(np.float32) @ A.reshape(32, 32).astype(np.float32)


def mmad_then(t, fixpipe_args) -> None:
    Mmad(t.l0c, t.l0a, t.l0b, MmadParams(32, 32, 32))
    handoff(HardEvent.M_FIX)
    Fixpipe(*fixpipe_args(t))


def nz_of(c: np.ndarray, gap_rows: int = 0) -> np.ndarray:
    """The NZ image of ``c`` (m x n): column block k = rows of 16, then ``gap_rows`` rows of -1."""
    m, n = c.shape
    out = np.full((n // 16, m + gap_rows, 16), -1, c.dtype)
    out[:, :m] = c.reshape(m, n // 16, 16).transpose(1, 0, 2)
    return out.ravel()


@pytest.mark.parametrize("gap", [0, 8], ids=["packed", "strided"])
def test_cfg_nz_writes_each_column_block_contiguous_dststride_blocks_apart(gap):
    out = np.full(2 * (32 + gap) * 16, -1, np.float32)
    stride = (32 + gap) * 16 * 4 // 32                       # 32-byte blocks between column blocks
    run_stage(lambda t: mmad_then(t, lambda t: (CFG_NZ, t.out, t.l0c, FixpipeParams(32, 32, 32, stride))), out, A)
    assert_same(out, nz_of(FULL, gap))


def test_cfg_nz_converts_and_relus_like_nd_and_is_not_nd():
    out, nd = np.zeros(1024, np.float16), np.zeros(1024, np.float16)
    p = FixpipeParams(32, 32, 32, 32, True, QuantMode_t.F322F16)   # 32 rows x 16 half = 32 blocks of 32 B
    run_stage(lambda t: mmad_then(t, lambda t: (CFG_NZ, t.out_half, t.l0c, p)), out, A)
    run_stage(lambda t: mmad_then(t, lambda t: (CFG_ROW_MAJOR, t.out_half, t.l0c,
                                                FixpipeParams(32, 32, 32, 32, True, QuantMode_t.F322F16))), nd, A)
    expected = round_to(np.maximum(FULL, 0), np.float16, "rint")
    assert_same(out, nz_of(expected))
    assert_same(nd, expected.ravel())
    assert not np.array_equal(out, nd)


def test_cfg_nz_writes_fewer_gm_bursts_than_nd():
    def fix(cfg):
        res = run_stage(lambda t: mmad_then(t, lambda t: (cfg, t.out_half, t.l0c,
                                                          FixpipeParams(32, 32, 32, 32, False, QuantMode_t.F322F16))),
                        np.zeros(1024, np.float16), A)
        return [r for r in res.trace if r.op == "Fixpipe"][0]
    nd, nz = fix(CFG_ROW_MAJOR), fix(CFG_NZ)
    assert nd.nbytes == nz.nbytes == 2048
    assert nz.cycles < nd.cycles                 # 2 runs of 1 KiB against 32 rows of 64 B


NZ_ERRORS = [
    pytest.param(lambda t: (CFG_NZ, t.out, t.l0c, FixpipeParams(24, 32, 32, 64)), ArgumentError,
                 ["CFG_NZ: nSize 24 is not a multiple of 16", "round nSize up to 32"], id="nsize"),
    pytest.param(lambda t: (CFG_NZ, t.out, t.l0c, FixpipeParams(32, 32, 32, 32)), ArgumentError,
                 ["CFG_NZ dstStride 32", "one block of 32 rows x 16 takes 64", "dstStride >= 64"], id="overlap"),
    pytest.param(lambda t: (CFG_NZ, t.out[4], t.l0c, FixpipeParams(32, 32, 32, 64)), ArgumentError,
                 ["not 32-byte aligned", "32字节对齐"], id="align"),
    pytest.param(lambda t: (FixpipeConfig(CO2Layout.NZ, True), t.out, t.l0c, FixpipeParams(32, 32, 32, 64)),
                 ArgumentError, ["only CFG_ROW_MAJOR and CFG_NZ to GM"], id="to-ub"),
]


@pytest.mark.parametrize("args, error, words", NZ_ERRORS)
def test_cfg_nz_rules_name_the_rule(args, error, words):
    with raises_rule(error, *words):
        run_stage(lambda t: mmad_then(t, args), np.zeros(4096, np.float32), A)
