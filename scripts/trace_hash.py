"""Hash every trace record (all fields, reads and writes included), the outputs, the cycles, each core's
times and busy cycles and the buffer layout of a set of launches, to show that a change to the simulator's
hot path changed no behaviour.

    python scripts/trace_hash.py > before.json      # on the old code
    python scripts/trace_hash.py | diff before.json -   # on the new code: no output means identical

``--sites text`` hashes each record's kernel line as (file basename, source text of the line) instead of its
line number, for changes that only move lines (comments, SHOW markers): run it on the commit before and after.
``--sites none`` leaves the kernel line out altogether (number and text), for renames inside kernel lines: every
other field, the outputs, cycles and buffers still enter the hash.
``--order core`` hashes each core's records in that core's order (the blocks' records interleave in the launch's
order as the scheduler runs them in time order); ``--no-times`` leaves every cycle out. A timing change that keeps
``--order core --no-times`` changed no instruction, operand, output or layout, only when things happen.

The launches: the add_custom example in fp16, the bench add (fp32, 8 blocks, 1 and 2 buffers), two cube
matmuls, the 48-core case study on a 1024 x 1024 add, and LeNet-5 on 8 images in fp16 and fp32 (every
operator kernel).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import linecache
import os
import sys

import numpy as np

from ascend_sim import launch
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom, run_add_custom
from ascend_sim.kernels.matmul import run_matmul
from ascend_sim.models.lenet import LeNetRuntime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import add_case_study  # noqa: E402


SITES = "number"        # how a record's kernel line enters the hash: "number", "text" or "none" (--sites)
ORDER = "launch"        # records in the launch's order, or "core": each core's in its own order (--order)
TIMES = True            # False: leave every cycle out (--no-times): what the instructions are, not when


def site_key(site: tuple) -> list:
    """A record's site as [file basename, line number], [file basename, line text] (text) or [] (none)."""
    fn, ln = site
    if SITES == "none":
        return []
    if SITES == "text":
        return [os.path.basename(fn), linecache.getline(fn, ln).strip()]
    return [os.path.basename(fn), ln]


def digest(results, outputs=()) -> str:
    h = hashlib.sha256()
    for res in results:
        records = res.trace.records
        if ORDER == "core":     # each core's records in its own order; wait_on as a position in that order
            records = sorted(records, key=lambda r: (r.core, r.core_type, r.index))
            position = {r.index: i for i, r in enumerate(records)}
        for r in records:
            d = r.as_dict()
            if ORDER == "core":
                d["index"] = position[r.index]
                d["wait_on"] = position.get(r.wait_on, -1)
            if not TIMES:
                for key in ("ready", "start", "end"):
                    del d[key]
            d["site"] = site_key(r.site)
            if SITES != "number":
                del d["line"]           # "file.py:LINE": the number is what these modes leave out
            if SITES == "none":
                del d["source"]         # the line's text too
            h.update(json.dumps(d, sort_keys=True, default=str).encode())
        if TIMES:
            h.update(repr((res.cycles, res.core_times, res.buffers)).encode())     # busy cycles per pipe included
        else:
            h.update(repr(res.buffers).encode())
    for o in outputs:
        h.update(np.ascontiguousarray(o).tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    global SITES, ORDER, TIMES
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sites", choices=("number", "text", "none"), default="number",
                    help="hash each record's kernel line by its number (default), by its source text, or not at all")
    ap.add_argument("--order", choices=("launch", "core"), default="launch",
                    help="hash the records in the launch's order (default) or each core's in its own order (a "
                         "scheduler change that only interleaves the blocks differently keeps the 'core' hash)")
    ap.add_argument("--no-times", action="store_true",
                    help="leave out every cycle (ready, start, end, core times): a timing change keeps this hash")
    args = ap.parse_args()
    SITES, ORDER, TIMES = args.sites, args.order, not args.no_times
    out = {}
    _, _, z, r = run_add_custom()
    out["add_fp16"] = digest([r], [z])
    rng = np.random.default_rng(0)
    n = 1 << 20
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    for buffers in (2, 1):
        z = np.zeros_like(x)
        r = launch(add_custom, 8, x, y, z, AddCustomTilingData(n, n // 8 // 4096 // buffers, buffers,
                                                                np.dtype(np.float32)))
        out[f"add_fp32_buffers{buffers}"] = digest([r], [z])
    for size, base in ((256, 64), (128, 32)):
        _, _, c, r = run_matmul(size, size, size, base)
        out[f"matmul{size}_base{base}"] = digest([r], [c])
    out["case_study_48"] = digest([add_case_study.run_case(48, side=1024)[0]])
    images = np.random.default_rng(1).standard_normal((8, 1, 28, 28)).astype(np.float32)
    for dtype in ("float16", "float32"):
        rt = LeNetRuntime(dtype=dtype)
        probs = rt.forward(images)
        results = [res for _, v in sorted(rt.last_results.items()) for res in (v if isinstance(v, list) else [v])]
        out[f"lenet_{dtype}"] = digest(results, [probs])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
