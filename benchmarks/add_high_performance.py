"""The Add tuning sample's Cases 3-6 (Atlas A2, 48 AIV, 8192 x 8192 half): the kernels the guide's Add case study
measures after case 2, static UB tensors and hand-set flags, as the sample writes them.

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/00_vector_compute/
add_high_performance/`` (``add.asc``: ``KernelAdd::Process``, ``ProcessDoubleBuffer``, ``ProcessDoubleBufferL2Bypass``,
``ProcessDoubleBufferBankConflict``; README.md, Atlas A2 table) and the guide's pages on it
(``docs/zh/guide/算子实践参考/典型算子实践案例/SIMD算子实现/Add矢量算子实践/中级性能优化.md``, ``高阶性能打磨.md``).
Each of the 48 cores takes 170 or 171 rows (the first 8192 % 48 cores one more) and walks them in copies of
``dataCopyLen`` halves: x and y in (two DataCopy), Add, z out. Case 3 has one buffer per tensor and waits for each
stage (V_MTE2 / MTE2_V / MTE3_V / V_MTE3); Case 4 the same with ping-pong buffers and two event ids; Case 5 is Case 4
with ``SetL2CacheHint(CACHE_MODE_DISABLE)`` on x and y; Case 6 is Case 5 with 16256-half copies and y's and z's
buffers 256 B further (off x's UB bank groups).

    python benchmarks/add_high_performance.py [CASE ...]     # default: cases 3-6, timing only
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

import numpy as np

from ascend_sim import (Add, Ascend910B, CacheMode, DataCopy, GetBlockIdx, GlobalTensor, HardEvent, LocalTensor, SetFlag,
                        TPosition, WaitFlag, half, kernel, launch)

SIDE = 8192
CORES = 48
MAX_LEN = 16384             # MAX_DATA_COPY_LEN (A2): 32 KB, UB / 6
BANK_LEN = 16256            # BANK_CONFLICT_DATA_COPY_LEN: 256 B less
#: the README's Atlas A2 figures (us): Task Duration, aiv_mte2_time
MEASURED = {3: (268.5, 184.369), 4: (264.02, 250.528), 5: (187.68, 175.997), 6: (184.52, 171.611)}


@dataclass(frozen=True)
class Case:
    """One case of the sample: copy length (halves), ping-pong buffers, L2 bypass of x and y, UB offsets; ``side``:
    the matrix's side (8192; smaller in tests)."""

    number: int
    copy_len: int
    double: bool
    bypass: bool
    bank_offsets: bool = False
    side: int = SIDE


#: what each case changes (the README's 优化策略)
CASE_TEXT = {3: "32 KB copies, one buffer", 4: "double buffer", 5: "x, y CACHE_MODE_DISABLE",
             6: "y, z 256 B further in UB"}
CASES = {3: Case(3, MAX_LEN, False, False), 4: Case(4, MAX_LEN, True, False), 5: Case(5, MAX_LEN, True, True),
         6: Case(6, BANK_LEN, True, True, True)}


def _rows(block: int, side: int) -> tuple[int, int]:
    """(first row, rows) of core ``block``: Init()'s even split, the remainder to the first cores."""
    base, extra = divmod(side, CORES)
    if block < extra:
        return block * (base + 1), base + 1
    return extra * (base + 1) + (block - extra) * base, base


def _buffers(c: Case) -> list[tuple[LocalTensor, LocalTensor, LocalTensor]]:
    """The (x, y, z) UB tensors of each buffer: Process()'s three, or the ping and pong triples."""
    b = 2                   # sizeof(half)
    if c.bank_offsets:      # xAddrPingBC .. zAddrPongBC
        addrs = [(0, BANK_LEN * b, MAX_LEN * b * 4), (MAX_LEN * b * 2, MAX_LEN * b * 2 + BANK_LEN * b,
                                                     MAX_LEN * b * 4 + BANK_LEN * b)]
    else:                   # xAddrPing .. zAddrPong (Process() uses the ping triple)
        addrs = [(0, MAX_LEN * b, MAX_LEN * b * 2), (MAX_LEN * b * 3, MAX_LEN * b * 4, MAX_LEN * b * 5)]
    return [tuple(LocalTensor[half](TPosition.VECCALC, a, MAX_LEN) for a in triple)
            for triple in addrs[:2 if c.double else 1]]


@kernel(core="AIV")
def add_custom(x, y, z, c: Case) -> None:
    """KernelAdd: Process() (case 3) or ProcessDoubleBuffer() (4-6), with CACHE_MODE_DISABLE on x, y for 5-6."""
    start, rows = _rows(GetBlockIdx(), c.side)
    total = rows * c.side
    xg, yg, zg = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x + start * c.side, total)
    yg.SetGlobalBuffer(y + start * c.side, total)
    zg.SetGlobalBuffer(z + start * c.side, total)
    if c.bypass:
        xg.SetL2CacheHint(CacheMode.CACHE_MODE_DISABLE)
        yg.SetL2CacheHint(CacheMode.CACHE_MODE_DISABLE)
    bufs = _buffers(c)
    loops = -(-total // c.copy_len)
    if c.double:
        for eid in (0, 1):
            SetFlag(HardEvent.V_MTE2, eid)
            SetFlag(HardEvent.MTE3_V, eid)
    for i in range(loops):
        first = i * c.copy_len
        n = min(c.copy_len, total - first)
        eid = i & 1 if c.double else 0
        xl, yl, zl = bufs[eid]
        last = i == loops - 1
        if c.double or i:
            WaitFlag(HardEvent.V_MTE2, eid)
        DataCopy(xl, xg[first], n)
        DataCopy(yl, yg[first], n)
        SetFlag(HardEvent.MTE2_V, eid)
        WaitFlag(HardEvent.MTE2_V, eid)
        if c.double or i:
            WaitFlag(HardEvent.MTE3_V, eid)
        Add(zl, xl, yl, n)
        if c.double or not last:
            SetFlag(HardEvent.V_MTE2, eid)
        SetFlag(HardEvent.V_MTE3, eid)
        WaitFlag(HardEvent.V_MTE3, eid)
        DataCopy(zg[first], zl, n)
        if c.double or not last:
            SetFlag(HardEvent.MTE3_V, eid)
    if c.double:
        for eid in (0, 1):
            WaitFlag(HardEvent.V_MTE2, eid)
            WaitFlag(HardEvent.MTE3_V, eid)


def run(number: int, chip=None, numerics: bool = False, **changes):
    """Launch case ``number`` on 48 AIV (timing only unless ``numerics``; ``changes``: Case fields, e.g. a smaller
    ``side`` and ``copy_len``); returns (LaunchResult, z == x + y or None)."""
    case = dataclasses.replace(CASES[number], **changes)
    rng = np.random.default_rng(0)
    shape = case.side * case.side
    if numerics:
        x = rng.standard_normal(shape, np.float32).astype(np.float16)
        y = rng.standard_normal(shape, np.float32).astype(np.float16)
    else:
        x = y = np.zeros(shape, np.float16)
    z = np.zeros(shape, np.float16)
    res = launch(add_custom, CORES, x, y, z, case, chip=chip or Ascend910B(), gm_names=["x", "y", "z"], numerics=numerics)
    return res, bool(np.array_equal(z, x + y)) if numerics else None


def mte2_time(res) -> float:
    """The mean MTE2 busy time of the cores, us (aiv_mte2_time)."""
    return res.chip.cycles_to_us(float(np.mean([busy[4] for *_, busy in res.core_times])))


def main(argv: list[str]) -> int:
    numbers = [int(a) for a in argv] or sorted(CASES)
    print("| case | measured (us) | simulated (us) | error | MTE2 measured (us) | MTE2 simulated (us) |")
    print("|---|---|---|---|---|---|")
    for k in numbers:
        res, _ = run(k)
        us, mte2_us = MEASURED[k]
        print(f"| {k} | {us:.2f} | {res.us:.2f} | {res.us / us - 1:+.1%} | {mte2_us:.1f} | {mte2_time(res):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
