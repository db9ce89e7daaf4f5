"""Pipeline-parallel schedules (流水线并行调度): the order of forward and backward micro-batches on each stage.

A model cut into p stages (one per device) trains a batch as m micro-batches (微批次). Each stage runs a list of
operations ``("F", i)`` (forward of micro-batch i) and ``("B", i)`` (its backward):
- **GPipe** (Huang et al. 2019): every forward, then every backward. Each stage keeps all m micro-batches'
  activations until their backward.
- **1F1B** (PipeDream-Flush, Narayanan et al. 2021; Megatron-LM's default): stage s runs p - s - 1 warm-up
  forwards, then alternates one forward and one backward, then drains the remaining backwards. At most p - s
  micro-batches are in flight on stage s, so activation memory no longer grows with m.
- **interleaved 1F1B** (Megatron-LM 2021): each device holds v model chunks (virtual stages), chunk c of device
  d is virtual stage c·p + d. Micro-batches go through in groups of p; the bubble shrinks by v, at v times as
  many point-to-point messages.

With equal stage times and free communication, GPipe and 1F1B both idle each device for a fraction
(p-1)/(m+p-1) of the step (the bubble, 气泡), interleaving for (p-1)/(v·m+p-1). ``pipeline_time.py`` plays the
schedules on the cluster's links.
"""
from __future__ import annotations

from ascend_sim.cluster.errors import PipelineError

Op = tuple[str, int, int]          # ("F" or "B", micro-batch, model chunk)
SCHEDULES = ("gpipe", "1f1b", "interleaved")


def check_sizes(stages: int, micro_batches: int, chunks: int = 1) -> None:
    """Refuse sizes no schedule can run, naming the rule and a fix."""
    for name, v in (("stages", stages), ("micro_batches", micro_batches), ("chunks", chunks)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise PipelineError(f"{name}={v!r}: a pipeline needs a positive int here",
                                fix=f"pass {name} as an int >= 1")
    if chunks > 1 and micro_batches % stages:
        raise PipelineError(f"interleaved 1F1B sends micro-batches through in groups of p = {stages}, and "
                            f"m = {micro_batches} is not a multiple of it ({micro_batches} % {stages} = "
                            f"{micro_batches % stages})", fix=f"use a multiple of {stages} micro-batches "
                            "(Megatron-LM has the same rule), or chunks=1")


def gpipe(stages: int, micro_batches: int) -> list[list[Op]]:
    """GPipe: all forwards, then all backwards (in reverse order, as autograd frees them), on every stage."""
    check_sizes(stages, micro_batches)
    return [[("F", i, 0) for i in range(micro_batches)] + [("B", i, 0) for i in reversed(range(micro_batches))]
            for _ in range(stages)]


def one_f_one_b(stages: int, micro_batches: int) -> list[list[Op]]:
    """1F1B: p - s - 1 warm-up forwards on stage s, then one forward / one backward, then the remaining backwards."""
    check_sizes(stages, micro_batches)
    out = []
    for s in range(stages):
        warm = min(stages - s - 1, micro_batches)
        ops: list[Op] = [("F", i, 0) for i in range(warm)]
        for i in range(micro_batches - warm):
            ops += [("F", warm + i, 0), ("B", i, 0)]
        ops += [("B", i, 0) for i in range(micro_batches - warm, micro_batches)]
        out.append(ops)
    return out


def interleaved(stages: int, micro_batches: int, chunks: int) -> list[list[Op]]:
    """Megatron-LM's interleaved 1F1B: v = ``chunks`` model chunks per device (virtual stage c·p + d)."""
    check_sizes(stages, micro_batches, chunks)
    p, m, v = stages, micro_batches, chunks
    total = m * v

    def forward_op(k: int) -> Op:        # the k-th forward a device runs: groups of p micro-batches per chunk
        group, within = divmod(k, p * v)
        chunk, i = divmod(within, p)
        return ("F", group * p + i, chunk)

    def backward_op(k: int) -> Op:       # backwards visit the chunks in reverse
        f = forward_op(k)
        return ("B", f[1], v - 1 - f[2])
    out = []
    for d in range(p):
        warm = min((p - d - 1) * 2 + (v - 1) * p, total) if v > 1 else min(p - d - 1, total)
        ops = [forward_op(k) for k in range(warm)]
        for k in range(total - warm):
            ops += [forward_op(warm + k), backward_op(k)]
        ops += [backward_op(k) for k in range(total - warm, total)]
        out.append(ops)
    return out


def schedule(name: str, stages: int, micro_batches: int, chunks: int = 1) -> list[list[Op]]:
    """The op list of every stage for ``name`` in SCHEDULES."""
    if name == "gpipe":
        return gpipe(stages, micro_batches)
    if name == "1f1b":
        return one_f_one_b(stages, micro_batches)
    if name == "interleaved":
        return interleaved(stages, micro_batches, chunks)
    raise PipelineError(f"schedule {name!r} is not modelled", fix=f"use one of {SCHEDULES}")


def analytic_bubble(stages: int, micro_batches: int, chunks: int = 1) -> float:
    """The idle fraction of each device with equal stage times and free links: (p-1)/(v·m + p-1)."""
    return (stages - 1) / (chunks * micro_batches + stages - 1)


def in_flight_peak(ops: list[Op]) -> int:
    """The most micro-batch chunks whose forward ran and whose backward has not (activations kept at once)."""
    live = peak = 0
    for kind, _, _ in ops:
        live += 1 if kind == "F" else -1
        peak = max(peak, live)
    return peak
