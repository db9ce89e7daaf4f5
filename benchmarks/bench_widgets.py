"""How long the what-if explorer takes to re-run the add kernel and redraw its views.

Run: ``python benchmarks/bench_widgets.py [--repeat N]``. Prints one row per
configuration: the median over N updates of the whole update (what the learner
waits for after moving a slider, without the browser's drawing) and its parts:
the simulated launch, the timeline data, the traffic view and the summary,
plus the size of the data sent to the browser. The target is under 500 ms for
a lab-sized kernel; nothing here asserts it.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Callable

from ascend_sim.viz import WhatIfExplorer, as_table, profile_html
from ascend_sim.viz.demo import launch_add
from ascend_sim.viz.timeline import timeline_payload
from ascend_sim.viz.traffic_view import TrafficData

CONFIGS = [  # (tile_length, BUFFER_NUM, blocks)
    (128, 1, 8),
    (128, 2, 8),
    (32, 2, 8),
    (512, 2, 8),
    (128, 2, 48),
]


def _median_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="updates per configuration (median)")
    ap.add_argument("--large", type=int, default=0, metavar="RECORDS",
                    help="instead: first render of both widgets on a synthetic trace of RECORDS records (viz/lod.py)")
    args = ap.parse_args()
    if args.large:
        large(args.large, args.repeat)
        return
    explorer = WhatIfExplorer(launch_add, {"tile_length": [32, 128, 512], "BUFFER_NUM": [1, 2],
                                           "blocks": (1, 48)}, traffic=True)
    head = (f"{'tile':>5} {'BUF':>3} {'blocks':>6} {'instr':>6} | {'update ms':>9} | {'launch':>7} "
            f"{'timeline':>8} {'traffic':>7} {'summary':>7} | {'payload KiB':>11}")
    print("explorer update for add_custom (median of", args.repeat, "runs, ms)")
    print(head)
    print("-" * len(head))
    for tile, buf, blocks in CONFIGS:
        def update() -> float:
            explorer.set(tile_length=tile, BUFFER_NUM=buf, blocks=blocks)
            return explorer.last_update_ms
        times = [update() for _ in range(args.repeat)]
        total = statistics.median(times)
        launch_ms, result = _median_ms(lambda: launch_add(tile, buf, blocks), args.repeat)
        tl_ms, payload = _median_ms(lambda: timeline_payload([as_table(result)]), args.repeat)
        tr_ms, _ = _median_ms(lambda: TrafficData.from_trace(result).payload(), args.repeat)
        su_ms, _ = _median_ms(lambda: profile_html(as_table(result), result), args.repeat)
        kib = len(json.dumps(payload)) / 1024
        print(f"{tile:>5} {buf:>3} {blocks:>6} {len(result.trace.records):>6} | {total:>9.1f} | "
              f"{launch_ms:>7.1f} {tl_ms:>8.1f} {tr_ms:>7.1f} {su_ms:>7.1f} | {kib:>11.1f}")


def large(records: int, repeat: int) -> None:
    """First render (widget built, payload serialised) of the timeline and traffic views of a large trace."""
    from ascend_sim.hw.chips import Ascend910B
    from ascend_sim.viz import TimelineView, TrafficView
    from ascend_sim.viz.synthetic import large_matmul_table
    t0 = time.perf_counter()
    table = large_matmul_table(records, chip=Ascend910B())
    print(f"synthetic trace: {len(table):,} records on 24 cores, built in {time.perf_counter() - t0:.1f} s")
    for name, view in (("timeline", TimelineView), ("traffic", TrafficView)):
        cpu0 = time.process_time()
        ms, size = _median_ms(lambda: len(json.dumps(view(table).data)), repeat)
        cpu = (time.process_time() - cpu0) / repeat * 1e3      # on a shared machine: what it would take alone
        print(f"{name}: first render {ms:,.0f} ms wall (median of {repeat}), {cpu:,.0f} ms CPU (mean), "
              f"{size / 1024:,.0f} KiB sent")


if __name__ == "__main__":
    main()
