"""What case (f)'s Mmad step costs at the least in CPython: the real kernel against a stub API (issue 14, item 5).

Issue 14 asks the timing-only launch of case (f) to be 5x faster than the launch with numerics on. The numerics
cost N us a Mmad step, so 5x needs the whole timing-only step, front ends, sanitizer, cycle model and record
included, at N / 4 us. This script measures how much of that budget the Python of the calls alone takes: it runs
``catlass_matmul`` (the case (f) kernel, unchanged: its code object with other globals) against stubs of the
Ascend C names it uses, each doing only what no simulator of this API can skip:

- the parameter structs and sub-tensors the kernel builds (plain objects with the same fields);
- for each instruction (DataCopy, LoadData, Mmad, Fixpipe): the kernel's line (``sys._getframe``), a plan
  key of the fields that decide the instruction, one dict look-up, and a record tuple appended to a list;
- for each queue call: the buffer's state check and the FIFO.

No sanitizer, no vector clocks, no cycle model, no numerics, no L2. A second stub run has the four instructions
return at once: what the kernel's own Python (its loops, structs, sub-tensors and queue calls) costs. Side by side
in one process, alternating rounds, CPU time per Mmad step: the two stub runs, the simulator's
``launch(..., numerics=False)`` and ``launch(..., numerics=True)`` on the same problem.

    python benchmarks/step_floor.py [--size 2048] [--rounds 3]
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import sys
import time
import types
from collections import deque

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from ascend_sim import launch  # noqa: E402
from ascend_sim.hw.chips import Ascend910B  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catlass_matmul as cm  # noqa: E402

_getframe = sys._getframe
_new = object.__new__


class Tensor:
    """GlobalTensor and LocalTensor alike: a window (tier, byte address, elements, dtype); ``t[off]`` a sub-tensor."""

    __slots__ = ("tier", "addr", "size", "dtype")

    def __getitem__(self, off):
        v = _new(Tensor)
        v.tier, v.addr, v.size, v.dtype = self.tier, self.addr + off * 2, self.size - off, self.dtype
        return v


class GlobalTensor(Tensor):
    __slots__ = ()

    def __init__(self, dtype):
        self.tier, self.addr, self.size, self.dtype = "GM", 0, 0, dtype

    def SetGlobalBuffer(self, buf, n):
        self.size = n


class TQue:
    """Buffers in turn, each checked free before it is handed out; a FIFO between EnQue and DeQue."""

    def __init__(self, pos, depth):
        self.pos, self.fifo, self.slots, self.next = pos, deque(), [], 0

    def AllocTensor(self, dtype):
        slot = self.slots[self.next]
        self.next = (self.next + 1) % len(self.slots)
        if slot[0] != "free":
            raise RuntimeError("AllocTensor: no free buffer")
        slot[0] = "alloc"
        slot[2] = _getframe(1).f_lineno        # where it was allocated (the leak and deadlock messages)
        return slot[1]

    def EnQue(self, t):
        self.fifo.append(t)

    def DeQue(self, dtype):
        return self.fifo.popleft()

    def FreeTensor(self, t):
        for slot in self.slots:
            if slot[1] is t:
                slot[0] = "free"


class TPipe:
    def InitBuffer(self, q, num, nbytes):
        for k in range(num):
            t = _new(Tensor)
            t.tier, t.addr, t.size, t.dtype = q.pos.name, k * nbytes, nbytes // 2, None   # a str: hashed in C
            q.slots.append(["free", t, None])


def instructions(block_idx: int, records: list) -> dict:
    """DataCopy, LoadData, Mmad and Fixpipe that each make a plan key, look it up and append a record."""
    plans: dict = {}

    def issue(key, dst, src):
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = (key[0], [], [])
        f = _getframe(2)
        records.append((block_idx, "AIC", plan[0], plan[0], 0.0, 0.0, 1.0, -1, 512, src.tier, dst.tier, 0,
                        (f.f_code, f.f_lineno), "copy", plan[1], plan[2]))

    def DataCopy(dst, src, p):
        issue(("DataCopy", p.nValue, p.dValue, p.srcDValue, dst.tier, dst.addr, dst.size, src.tier, src.addr,
               src.size), dst, src)

    def LoadData(dst, src, p):      # issue() written out: nine of the step's 10.5 instructions are LoadData
        key = ("LoadData", p.startIndex, p.repeatTimes, p.srcStride, p.dstGap, p.ifTranspose, dst.tier, dst.addr,
               dst.size, src.tier, src.addr, src.size)
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = ("LoadData", [], [])
        f = _getframe(1)
        records.append((block_idx, "AIC", "MTE1", "LoadData", 0.0, 0.0, 1.0, -1, 512, "L1", dst.tier, 0,
                        (f.f_code, f.f_lineno), "copy", plan[1], plan[2]))

    def Mmad(c, a, b, p):
        issue(("Mmad", p.m, p.n, p.k, p.cmatrixInitVal, c.tier, c.addr, c.size, a.tier, a.addr, a.size, b.tier,
               b.addr, b.size), c, a)

    def Fixpipe(dst, src, p):
        issue(("Fixpipe", p.nSize, p.mSize, dst.tier, dst.addr, dst.size, src.tier, src.addr, src.size), dst, src)

    return dict(DataCopy=DataCopy, LoadData=LoadData, Mmad=Mmad, Fixpipe=Fixpipe, GetBlockIdx=lambda: block_idx)


def _struct(fields: str) -> type:
    """A parameter struct with these fields, set one by one in ``__init__`` (as the real structs do)."""
    names = fields.split()
    body = "\n".join(f"    self.{n} = {n}" for n in names) or "    pass"
    ns: dict = {}
    exec(f"def __init__(self, {', '.join(n + '=0' for n in names)}):\n{body}", ns)
    return type("Params", (), {"__init__": ns["__init__"]})


STRUCTS = dict(Nd2NzParams=_struct("ndNum nValue dValue srcNdMatrixStride srcDValue dstNzC0Stride dstNzNStride "
                                   "dstNzMatrixStride"),
               LoadData2DParams=_struct("startIndex repeatTimes srcStride sid dstGap ifTranspose addrMode"),
               MmadParams=_struct("m n k unitFlag cmatrixSource cmatrixInitVal"),
               FixpipeParamsV220=_struct("nSize mSize srcStride dstStride reluEn quantPre"))


def empty_instructions(block_idx: int, records: list) -> dict:
    """The four instructions as calls that return at once (what the kernel's own Python costs)."""
    def nothing(*args):
        return None
    return dict(DataCopy=nothing, LoadData=nothing, Mmad=nothing, Fixpipe=nothing, GetBlockIdx=lambda: block_idx)


def stub_run(t: cm.Tiling, blocks: int, make=instructions) -> int:
    """Run the case (f) kernel's code on every block against the stub API; returns the records made."""
    fn = cm.catlass_matmul.__wrapped__
    records: list = []
    gc.disable()        # as launch does (engine/scheduler.py): the records would otherwise be traversed again and again
    try:
        for b in range(blocks):
            g = dict(fn.__globals__, GlobalTensor=GlobalTensor, TQue=TQue, TPipe=TPipe, **STRUCTS, **make(b, records))
            types.FunctionType(fn.__code__, g)(None, None, None, t)
    finally:
        gc.enable()
    return len(records)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    size, blocks = args.size, 24
    t = cm.Tiling(128, 256, 256, 64, size, size, size, blocks)
    chip = dataclasses.replace(Ascend910B(), aic_count=blocks)
    a = np.full(size * size, 0.5, np.float16)
    b = np.full(size * size, 0.25, np.float16)
    c = np.zeros(size * size, np.float16)
    steps = (size // 128) * (size // 256) * (size // 64)
    runs = {
        "the kernel's own Python (instructions return at once; structs, sub-tensors, queues as below)":
            lambda: stub_run(t, blocks, empty_instructions),
        "stub API (site, plan look-up, record; no sanitizer, timing or numerics)": lambda: stub_run(t, blocks),
        "simulator, numerics=False": lambda: len(launch(cm.catlass_matmul, blocks, a, b, c, t, chip=chip,
                                                        numerics=False).trace),
        "simulator, numerics on": lambda: len(launch(cm.catlass_matmul, blocks, a, b, c, t, chip=chip).trace),
    }
    cpu: dict = {name: [] for name in runs}
    records = {}
    for _ in range(args.rounds):
        for name, run in runs.items():
            c0 = time.process_time()
            records[name] = run()
            cpu[name].append(time.process_time() - c0)
    print(f"case (f)'s kernel at {size}^3, {blocks} blocks, {steps:,} Mmad steps; CPU us per step, "
          f"best of {args.rounds} alternating rounds\n")
    print("| run | us per step | records |")
    print("|---|---|---|")
    best = {name: min(v) / steps * 1e6 for name, v in cpu.items()}
    for name in runs:
        print(f"| {name} | {best[name]:.1f} | {records[name]:,} |")
    own, stub, off, on = (best[name] for name in runs)
    budget = (on - off) / 4
    print(f"\nnumerics: {on - off:.1f} us a step, so 5x needs the timing-only step at {budget:.1f} us; the kernel's "
          f"own Python takes {own:.1f} us of it ({own / budget:.0%}), the stub API {stub:.1f} us ({stub / budget:.0%}); "
          f"the simulator's sanitizer, cycle model and records add {off - stub:.1f} us to the stub")
    return 0


if __name__ == "__main__":
    sys.exit(main())
