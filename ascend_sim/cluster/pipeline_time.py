"""A pipeline schedule played on the cluster: per-device timeline, bubble fraction, peak activation memory.

Each device runs its op list in order. An op starts when the device is free and its input has arrived:
- forward of micro-batch i on virtual stage k needs stage k-1's activation of i, sent point to point;
- backward of i on stage k needs stage k+1's gradient of i, and its own forward of i;
- a message costs the link's ``alpha + bytes x beta`` (HCCS inside a server, RoCE between servers) and does not
  block the sender's compute (a separate stream, as HCCL's send/recv on its own stream).
A schedule that waits for something its stages never send (a deadlock) raises ``PipelineError``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.pipeline_schedule import Op, in_flight_peak
from ascend_sim.cluster.timeline import Event, Timeline
from ascend_sim.cluster.topology import Cluster


@dataclass
class PipelineRun:
    """The result of one pipelined step: the timeline and its figures."""

    timeline: Timeline
    step_us: float
    busy_us: list[float]
    peak_in_flight: list[int]
    peak_activation_bytes: list[float]
    messages: int
    finish: dict[tuple[str, int, int], float] = field(repr=False, default_factory=dict)

    @property
    def bubble(self) -> list[float]:
        """Each device's idle share of the step."""
        return [1 - b / self.step_us for b in self.busy_us]

    @property
    def mean_bubble(self) -> float:
        return sum(self.bubble) / len(self.bubble)


def validate(ops: Sequence[Sequence[Op]], micro_batches: int, chunks: int = 1) -> None:
    """Every device runs F and B of every (micro-batch, chunk) once, each B after its F."""
    want = {(k, i, c) for k in "FB" for i in range(micro_batches) for c in range(chunks)}
    for d, dev_ops in enumerate(ops):
        seen: set = set()
        for pos, op in enumerate(dev_ops):
            if not (isinstance(op, tuple) and len(op) == 3 and op in want):
                raise PipelineError(f"stage {d}, op {pos}: {op!r} is not ('F' or 'B', micro-batch < "
                                    f"{micro_batches}, chunk < {chunks})", fix="write ops as ('F', i, 0) / ('B', i, 0)")
            if op in seen:
                raise PipelineError(f"stage {d} runs {op} twice", fix="each micro-batch goes forward and back once")
            if op[0] == "B" and ("F", op[1], op[2]) not in seen:
                raise PipelineError(f"stage {d} runs the backward of micro-batch {op[1]} before its forward "
                                    f"(op {pos})", fix="a stage can only differentiate what it computed: F before B")
            seen.add(op)
        if seen != want:
            missing = sorted(want - seen)[:4]
            raise PipelineError(f"stage {d} never runs {missing}{' ...' if len(want - seen) > 4 else ''}",
                                fix=f"every stage runs F and B of all {micro_batches} micro-batches")


def play(cluster: Cluster, ops: Sequence[Sequence[Op]], micro_batches: int, forward_us: Sequence[float] | float,
         backward_us: Sequence[float] | float, act_bytes: float, chunks: int = 1,
         stored_bytes: Sequence[float] | float | None = None) -> PipelineRun:
    """Play ``ops`` (one list per device, ``cluster``'s ranks 0..p-1) and time it.

    ``forward_us``/``backward_us``: per virtual stage (or one value); ``act_bytes``: one micro-batch's activation
    (and gradient) message between stages; ``stored_bytes``: what a stage keeps per micro-batch in flight
    (default: ``act_bytes``).
    """
    p = len(ops)
    if p > cluster.world_size:
        raise PipelineError(f"{p} stages on a cluster of {cluster.world_size} devices",
                            fix="use at most one stage per device")
    validate(ops, micro_batches, chunks)
    stages = p * chunks
    fwd = [forward_us] * stages if isinstance(forward_us, (int, float)) else list(forward_us)
    bwd = [backward_us] * stages if isinstance(backward_us, (int, float)) else list(backward_us)
    stored = act_bytes if stored_bytes is None else stored_bytes
    stored = [stored] * p if isinstance(stored, (int, float)) else list(stored)
    tl = Timeline(cluster)
    done: dict[tuple[str, int, int], float] = {}      # (kind, micro-batch, virtual stage) -> end time
    arrive: dict[tuple[str, int, int], float] = {}    # input of (kind, i, virtual stage) arrives at
    free = [0.0] * p
    busy = [0.0] * p
    nxt = [0] * p
    messages = 0

    def send(src: int, dst: int, t: float, key: tuple[str, int, int], label: str) -> None:
        nonlocal messages
        if src == dst:                                    # interleaving: chunk c -> c+1 on the same device
            arrive[key] = t
            return
        link = cluster.link(src, dst)
        end = t + link.alpha_us + act_bytes * link.beta_s_per_byte * 1e6
        tl.record(Event(src, "send", t, end, dst, int(act_bytes), label))
        tl.record(Event(dst, "recv", t, end, src, int(act_bytes), label))
        arrive[key] = end
        messages += 1

    progressed = True
    while progressed:
        progressed = False
        for d in range(p):
            while nxt[d] < len(ops[d]):
                kind, i, c = ops[d][nxt[d]]
                k = c * p + d                                          # virtual stage
                if kind == "F":
                    ready = 0.0 if k == 0 else arrive.get(("F", i, k))
                else:
                    ready = done[("F", i, k)] if k == stages - 1 else arrive.get(("B", i, k))
                if ready is None:
                    break
                start = max(free[d], ready)
                dur = fwd[k] if kind == "F" else bwd[k]
                end = start + dur
                tl.record(Event(d, "compute", start, end, None, 0, f"{kind}{i}" + (f".{c}" if chunks > 1 else "")))
                free[d], busy[d] = end, busy[d] + dur
                done[(kind, i, k)] = end
                if kind == "F" and k < stages - 1:
                    send(d, (k + 1) % p, end, ("F", i, k + 1), f"act {i}")
                if kind == "B" and k > 0:
                    send(d, (k - 1) % p, end, ("B", i, k - 1), f"grad {i}")
                nxt[d] += 1
                progressed = True
    stuck = [(d, ops[d][nxt[d]]) for d in range(p) if nxt[d] < len(ops[d])]
    if stuck:
        d, op = stuck[0]
        raise PipelineError(f"deadlock: stage {d} waits in {op} for an input no stage will send first "
                            f"({len(stuck)} stages stuck)", fix="a stage's forward of micro-batch i must come after "
                            "the previous stage's; its backward after the next stage's backward of i")
    tl.clock_us = list(free)
    step = max(free)
    peaks = [in_flight_peak(list(o)) for o in ops]
    return PipelineRun(tl, step, busy, peaks, [n * s for n, s in zip(peaks, stored)], messages, done)
