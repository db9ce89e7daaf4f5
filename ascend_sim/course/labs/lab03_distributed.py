"""Checks of lab 03, distributed training on the simulated cluster: ring AllReduce, DistributedSampler, DDP buckets,
tensor parallelism, gradient compression and recovery from a failed rank.

Every answer returns plain data (a schedule, indices, bucket ids, arrays), and the check runs that data on the
simulated cluster itself (``run_schedule``, ``ddp_step_us``), so the grader can replay the check on the evidence.
The helpers below are public: learners use them in the notebook to try their answers.
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence

import numpy as np

from ascend_sim.cluster import (DistributedDataParallel, DistributedSampler, HcclComm, RankFailed, TinyMLP, Trainer,
                                atlas_800t_a2)
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.faults import kill
from ascend_sim.cluster.sampler import torch_randperm
from ascend_sim.course.grading import Context, Lab
from ascend_sim.course.grading.evidence import is_package_file

__all__ = ["LAB", "check", "hint", "HcclComm", "RankFailed", "atlas_800t_a2", "kill", "torch_randperm", "run_schedule",
           "ddp_step_us", "BUCKET_MODEL", "make_trainer", "flat_weights", "train_with_compression",
           "RING_SLACK", "OVERLAP_TARGET", "BYTES_TARGET", "ACCURACY_DROP"]

LAB = Lab("lab03_distributed")
check = LAB.check
hint = LAB.hint         # hint("exN"): the next hint for the last mistake the check diagnosed

RING_SLACK = 1.05          # ring schedule: at most 5 % over HCCL's ring (one extra allgather step of 8 is +7 %)
OVERLAP_TARGET = 0.85      # bucketed overlap: at most 85 % of the no-overlap step
BYTES_TARGET = 0.5         # compression: at most half the fp32 bytes
ACCURACY_DROP = 0.02       # ... and at most 2 points of accuracy lost


# ----------------------------------------------------------------------------- ex1: schedules
def run_schedule(schedule, sends: Sequence[np.ndarray], comm: HcclComm) -> tuple[list[np.ndarray], float]:
    """Run a point-to-point schedule on ``comm``: rows ``(step, src, dst, lo, hi, reduce)``.

    In each step every listed message is sent at once (HcclSend/HcclRecv pairs): ``src``'s elements ``[lo, hi)``
    as they were at the start of the step go to ``dst``, which adds them (``reduce`` = 1) or overwrites its own
    (``reduce`` = 0). Returns every rank's buffer afterwards and the time in microseconds.
    """
    rows = np.asarray(schedule)
    p, n = comm.rank_size, len(sends[0])
    if rows.ndim != 2 or rows.shape[1] != 6 or not np.issubdtype(rows.dtype, np.integer):
        raise ValueError(f"a schedule is a list of integer rows (step, src, dst, lo, hi, reduce); got an array of "
                         f"shape {rows.shape} and dtype {rows.dtype}")
    bad = rows[(rows[:, 1] < 0) | (rows[:, 1] >= p) | (rows[:, 2] < 0) | (rows[:, 2] >= p) | (rows[:, 1] == rows[:, 2])
               | (rows[:, 3] < 0) | (rows[:, 3] >= rows[:, 4]) | (rows[:, 4] > n)
               | ((rows[:, 5] != 0) & (rows[:, 5] != 1))]
    if len(bad):
        raise ValueError(f"row {tuple(int(v) for v in bad[0])}: src and dst must be two different ranks in "
                         f"range({p}), 0 <= lo < hi <= {n} and reduce 1 (add) or 0 (overwrite)")
    bufs = [np.array(s, copy=True) for s in sends]
    for step in sorted(set(rows[:, 0].tolist())):
        moves = rows[rows[:, 0] == step]
        before = [b.copy() for b in bufs]
        for _, src, dst, lo, hi, red in moves.tolist():
            bufs[dst][lo:hi] = bufs[dst][lo:hi] + before[src][lo:hi] if red else before[src][lo:hi]
        comm.timeline.step([(s, d, (hi - lo) * bufs[0].itemsize, bool(r)) for _, s, d, lo, hi, r in moves.tolist()],
                           f"step {step}")
    return bufs, max(comm.timeline.clock_us)


_RING_START = ("Cut the buffer into p chunks (np.linspace(0, count, p + 1).astype(int) gives the bounds, also when "
               "p does not divide count). Reduce-scatter: p - 1 steps; allgather: p - 1 more.")


@LAB.exercise("ex1", points=3, title="ring AllReduce from Send/Recv", hints={
    "ring/added-twice": (
        "Some chunk was summed more than once: which phase should overwrite instead of add?",
        "Reduce-scatter adds (reduce = 1); allgather only copies the finished sums (reduce = 0).",
        "Allgather step s: rank r sends chunk (r + 1 - s) % p to (r + 1) % p with reduce = 0."),
    "ring/missing": (
        "Some chunk misses a rank's contribution: which chunk does rank r send in step s?",
        "In reduce-scatter step s every rank r sends chunk (r - s) % p to (r + 1) % p, which adds it (reduce = 1); "
        "afterwards rank r holds the full sum of chunk (r + 1) % p.",
        "Reduce-scatter: p - 1 steps; allgather: p - 1 more, each of p messages."),
    "ring/differ": ("Every rank must end with the same bits: does the allgather phase copy each finished chunk to "
                    "every rank?",),
    "ring/schedule": ("Which rule of the schedule does the message name? Each move is (step, src, dst, lo, hi, "
                      "reduce).",),
    "budget": (
        "The sums are right but slow: how many messages travel in each step, and how big is each?",
        "All p messages of a step share one step number, so they travel at the same time; each carries 1/p of the "
        "buffer.",
        "2 (p - 1) steps of p messages of count / p elements: that is HCCL's ring."),
    "*": (_RING_START,),
})
def _ex1(ctx: Context) -> None:
    fn = ctx.answer("ring_allreduce_schedule")
    cases = [(2, 6, "int"), (4, 4096, "int"), (8, 1003, "int"), (8, 10_000, "float"), (3, 999, "float")]
    for p, count, kind in cases:
        with ctx.case(f"{p} ranks, {count} fp32 elements"):
            schedule = ctx.call(fn, p, count)
            if kind == "int":
                sends = [ctx.rng.integers(-50, 50, count).astype(np.float32) for _ in range(p)]
            else:
                sends = [ctx.rng.standard_normal(count).astype(np.float32) for _ in range(p)]
            outs, _ = _run(ctx, schedule, sends, HcclComm(atlas_800t_a2(1, npus_per_server=p)))
            golden = np.sum(np.array(sends, np.float64), axis=0)
            for r, out in enumerate(outs):
                if kind == "int" and not np.array_equal(out, golden.astype(np.float32)):
                    i = int(np.flatnonzero(out != golden)[0])
                    why, key = _why(out, golden, sends)
                    ctx.fail(f"rank {r}'s element {i} is {out[i]:g}, the sum over ranks is {golden[i]:g}: {why}", key)
                ctx.expect_close(out, golden.astype(np.float32), what=f"rank {r}'s result")
                if not np.array_equal(out, outs[0]):
                    ctx.fail(f"rank {r}'s result differs from rank 0's: every rank must end with the same bits",
                             ("ring/differ",))
    p, count = 8, 1 << 20
    comm = HcclComm(atlas_800t_a2(1))
    with ctx.case(f"time budget: {p} ranks, {count * 4 >> 20} MB"):
        schedule = ctx.call(fn, p, count)
        _, t = _run(ctx, schedule, [np.zeros(count, np.float32)] * p, comm)
        ring = comm.estimate("AllReduce", count, algo="ring").time_us
        if not ctx.measure(t, RING_SLACK * ring, "us"):
            ctx.fail(f"your schedule takes {t:,.1f} us, over the time budget of {RING_SLACK * ring:,.1f} us "
                     f"({RING_SLACK:.2f} x HCCL's ring, {ring:,.1f} us): send the p messages of a step at the same "
                     "time (one step number) and only 1/p of the buffer per message", ("budget",))
        ctx.note(f"{t:,.1f} us (HCCL's ring: {ring:,.1f} us)")


def _run(ctx: Context, schedule, sends, comm) -> tuple[list[np.ndarray], float]:
    try:
        return run_schedule(schedule, sends, comm)
    except ValueError as e:
        ctx.fail(str(e), ("ring/schedule",))


def _why(out: np.ndarray, golden: np.ndarray, sends) -> tuple[str, tuple[str, ...]]:
    if np.any(np.abs(out) > np.sum(np.abs(sends), axis=0) + 1e-3):
        return ("some chunks were added more often than once per rank (is the allgather phase adding, reduce = 1?)",
                ("ring/added-twice",))
    return ("some chunks miss the contribution of a rank (look at which chunk each rank sends in each step)",
            ("ring/missing",))


# ----------------------------------------------------------------------------- ex2: sampler
@LAB.exercise("ex2", points=2, title="DistributedSampler", hints={
    "sampler/length": (
        "Every rank must get the same number of indices: what happens to the n % R left over?",
        "num_samples = ceil(n / R) (with drop_last and n % R != 0: ceil((n - R) / R)); total = num_samples * R. "
        "Without drop_last pad the order with its own first elements up to total; with drop_last cut it to total.",),
    "sampler/epoch": (
        "Each epoch must shuffle differently: what does set_epoch change?",
        "Shuffle with torch_randperm(n, seed + epoch): the epoch is part of the seed.",),
    "sampler/seed": ("Every job may choose its seed: does your permutation use the seed it is given?",
                     "Shuffle with torch_randperm(n, seed + epoch): the seed and the epoch together.",),
    "sampler/strided": (
        "Which indices does rank r take from the order: a block, or every R-th?",
        "Rank r takes every R-th index starting at r: order[rank:total:R] (strided, not a contiguous block).",),
    "*": ("Shuffle with torch_randperm(n, seed + epoch); without shuffle the order is range(n).",),
})
def _ex2(ctx: Context) -> None:
    fn = ctx.answer("sampler_indices")
    cases = [(10, 3, False, False, 0, 0), (10, 3, True, False, 0, 0), (10, 3, True, True, 0, 0),
             (3, 5, True, False, 0, 0), (100, 8, True, False, 3, 0), (17, 4, False, True, 1, 0),
             (12, 4, False, True, 0, 0), (12, 3, True, True, 1, 0)]   # drop_last when R divides n: nothing dropped
    cases += [(int(n), int(r), bool(s), bool(d), int(e), 7) for n, r, s, d, e in zip(    # a seed other than 0
        ctx.rng.integers(20, 300, 3), ctx.rng.integers(2, 9, 3), [True] * 3, ctx.rng.integers(0, 2, 3),
        ctx.rng.integers(0, 5, 3))]
    for n, world, shuffle, drop_last, epoch, seed in cases:
        for rank in range(world):
            label = (f"n={n}, {world} replicas, rank {rank}, shuffle={shuffle}, drop_last={drop_last}, "
                     f"epoch={epoch}, seed={seed}")
            with ctx.case(label):
                got = ctx.call(fn, n, world, rank, epoch, shuffle, drop_last, seed)
                want = _sampler(n, world, rank, epoch, shuffle, drop_last, seed)
                got = [int(i) for i in np.asarray(got).ravel()]
                if got != want:
                    ctx.fail(*_sampler_diagnosis(got, want, n, world, rank, epoch, shuffle, drop_last, seed))


def _sampler(n: int, world: int, rank: int, epoch: int, shuffle: bool, drop_last: bool, seed: int = 0) -> list[int]:
    s = DistributedSampler(n, world, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
    s.set_epoch(epoch)
    return s.indices()


def _sampler_diagnosis(got, want, n, world, rank, epoch, shuffle, drop_last,
                       seed: int = 0) -> tuple[str, tuple[str, ...]]:
    head = f"got {got[:8]}{' ...' if len(got) > 8 else ''}, DistributedSampler gives {want[:8]}" \
           f"{' ...' if len(want) > 8 else ''}"
    if len(got) != len(want):
        return (f"{len(got)} indices where every rank gets {len(want)}: "
                + ("drop_last cuts the order to num_samples * R" if drop_last else
                   "without drop_last the order is padded with its first elements to num_samples * R") + f"; {head}",
                ("sampler/length",))
    if shuffle and epoch and got == _sampler(n, world, rank, 0, shuffle, drop_last, seed):
        return f"the order is epoch 0's: seed the permutation with seed + epoch (set_epoch); {head}", ("sampler/epoch",)
    if shuffle and seed and got == _sampler(n, world, rank, epoch, shuffle, drop_last, 0):
        return f"the order ignores the seed ({seed}): seed the permutation with seed + epoch; {head}", \
            ("sampler/seed",)
    per_rank = [_sampler(n, world, r, epoch, shuffle, drop_last, seed) for r in range(world)]
    order = [per_rank[k % world][k // world] for k in range(world * len(want))]
    if sorted(got) == sorted(want) or got == order[rank * len(want):(rank + 1) * len(want)]:
        return f"a contiguous block or the wrong places: rank r takes order[r::R] (strided); {head}", \
            ("sampler/strided",)
    return head, ()


# ----------------------------------------------------------------------------- ex3: buckets and overlap
#: The model of ex3: 8 layers (weight, bias), their gradient bytes, and backward time per parameter (us).
BUCKET_MODEL = {
    "nbytes": [w for mb in (2, 4, 4, 8, 8, 4, 4, 2) for w in (mb << 20, 4096)],
    "backward_us": [t for mb in (2, 4, 4, 8, 8, 4, 4, 2) for t in (60.0 * mb, 1.0)],
}


def ddp_step_us(bucket_of: Sequence[int], nbytes: Sequence[int], backward_us: Sequence[float],
                comm: HcclComm) -> float:
    """One DDP step's time: backward in reverse parameter order; bucket b's AllReduce starts when its last gradient
    is ready and the previous bucket's AllReduce is done (one communication stream). ``bucket_of[i]``: the bucket
    of parameter i, buckets numbered in launch order 0, 1, ..."""
    ids = [int(b) for b in np.asarray(bucket_of).ravel()]
    if len(ids) != len(nbytes) or sorted(set(ids)) != list(range(max(ids, default=-1) + 1)):
        raise ValueError(f"bucket_of must give each of the {len(nbytes)} parameters a bucket number, the buckets "
                         f"numbered 0, 1, ... without gaps; got {ids}")
    ready, t = {}, 0.0
    for i in reversed(range(len(nbytes))):
        t += backward_us[i]
        ready[i] = t
    comm_end = 0.0
    for b in range(max(ids) + 1):
        members = [i for i, x in enumerate(ids) if x == b]
        start = max(comm_end, max(ready[i] for i in members))
        comm_end = start + comm.estimate("AllReduce", sum(nbytes[i] for i in members) // 4).time_us
    return max(t, comm_end)


_BUCKET_WALK = "Walk i = len - 1 down to 0, add nbytes[i] to the current bucket and close it once it holds cap_bytes or more."


@LAB.exercise("ex3", points=2, title="DDP buckets that overlap backward", hints={
    "buckets/order": (
        "Backward produces gradients from the last parameter to the first: which bucket is ready first?",
        "Bucket 0 is launched first, so it must hold the last parameters: fill bucket 0 from the end of the list.",
        _BUCKET_WALK),
    "buckets/one": (
        "One bucket can only start after the whole backward: how many buckets does cap_bytes ask for?",
        _BUCKET_WALK),
    "buckets/late": ("The buckets become ready late or are too small: are they filled in gradient-ready order up to "
                     "cap_bytes?", _BUCKET_WALK),
    "buckets/format": ("bucket_of[i] is the bucket number of parameter i, numbered 0, 1, ... without gaps.",),
    "*": ("Backward produces gradients from the last parameter to the first: fill bucket 0 from the end of the list.",),
})
def _ex3(ctx: Context) -> None:
    fn = ctx.answer("assign_buckets")
    comm = HcclComm(atlas_800t_a2(2, npus_per_server=4))
    nbytes, bw = BUCKET_MODEL["nbytes"], BUCKET_MODEL["backward_us"]
    baseline = ddp_step_us([0] * len(nbytes), nbytes, bw, comm)
    for cap_mb in (8, 12):
        with ctx.case(f"cap {cap_mb} MB"):
            ids = ctx.call(fn, nbytes, cap_mb << 20)
            try:
                t = ddp_step_us(ids, nbytes, bw, comm)
            except ValueError as e:
                ctx.fail(str(e), ("buckets/format",))
            if not ctx.measure(t, OVERLAP_TARGET * baseline, "us"):
                advice, key = _bucket_advice(ids)
                ctx.fail(f"the step takes {t:,.0f} us, no faster than {OVERLAP_TARGET:.0%} of the no-overlap step "
                         f"({baseline:,.0f} us): {advice}", key)
            ctx.note(f"cap {cap_mb} MB: {t:,.0f} us against {baseline:,.0f} us without overlap")


def _bucket_advice(ids) -> tuple[str, tuple[str, ...]]:
    ids = [int(b) for b in np.asarray(ids).ravel()]
    if len(set(ids)) == 1:
        return ("one bucket can only start after the whole backward; cut the gradients into buckets of about "
                "cap_bytes", ("buckets/one",))
    if ids[-1] != 0:
        return ("bucket 0 must hold the last parameters, whose gradients backward computes first; yours waits for "
                "the first layer", ("buckets/order",))
    return ("the buckets become ready late or are too small; fill them in gradient-ready order up to cap_bytes",
            ("buckets/late",))


# ----------------------------------------------------------------------------- ex4: tensor parallel MLP
@LAB.exercise("ex4", points=2, title="column/row tensor-parallel MLP", hints={
    "tp/bias": ("The output is off by a multiple of b2: how many times is the bias added in the sum over ranks?",
                "The AllReduce sums every rank's partial output: a bias added on each rank is added t times.",
                "Add b2 once, after the AllReduce."),
    "tp/partial": ("Each rank holds only part of the output: what combines the row-parallel partial sums?",
                   "y_r = h_r @ w2_parts[r].T is a partial sum of the output (row parallel): AllReduce the partial "
                   "sums, then add b2.",),
    "tp/shape": ("Return one output per rank: an array of shape (ranks, batch, out).",),
    "*": ("Rank r computes h_r = relu(x @ w1_parts[r].T + b1_parts[r]): its own hidden features (column parallel), "
          "no communication.",
          "Then y_r = h_r @ w2_parts[r].T is a partial sum of the output (row parallel): AllReduce the partial sums.",
          "Add b2 once, after the AllReduce, and return every rank's result."),
})
def _ex4(ctx: Context) -> None:
    fn = ctx.answer("tp_mlp_forward")
    for t, (b, n_in, hid, n_out) in [(2, (4, 8, 16, 5)), (4, (8, 32, 64, 10)), (8, (3, 16, 64, 7))]:
        x = ctx.rng.standard_normal((b, n_in)).astype(np.float32)
        w1 = ctx.rng.standard_normal((hid, n_in)).astype(np.float32) / 4
        b1 = ctx.rng.standard_normal(hid).astype(np.float32)
        w2 = ctx.rng.standard_normal((n_out, hid)).astype(np.float32) / 4
        b2 = ctx.rng.standard_normal(n_out).astype(np.float32)
        golden = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
        with ctx.case(f"{t} ranks, x {b}x{n_in}, hidden {hid}, out {n_out}"):
            outs = ctx.call(fn, x, list(np.split(w1, t)), list(np.split(b1, t)), list(np.split(w2, t, axis=1)), b2)
            outs = np.asarray(outs, np.float32)
            if outs.shape != (t, b, n_out):
                ctx.fail(f"returned an array of shape {outs.shape}: return one {b} x {n_out} output per rank",
                         ("tp/shape",))
            for r, out in enumerate(outs):
                if np.allclose(out, golden + (t - 1) * b2, rtol=1e-4, atol=1e-4):
                    ctx.fail(f"rank {r}'s output is the single-device result plus {t - 1} x b2: the bias was added "
                             f"on every rank before the AllReduce; add it once, after", ("tp/bias",))
                if not np.allclose(out, golden, rtol=1e-4, atol=1e-4):
                    ctx.fail(*_tp_diagnosis(out, golden, x, w1, b1, w2, b2, t, r))
                ctx.expect_close(out, golden, what=f"rank {r}'s output")


def _tp_diagnosis(out, golden, x, w1, b1, w2, b2, t, r) -> tuple[str, tuple[str, ...]]:
    h = np.maximum(x @ np.split(w1, t)[r].T + np.split(b1, t)[r], 0)
    partial = h @ np.split(w2, t, axis=1)[r].T
    head = f"rank {r}'s output differs from the single-device result"
    if np.allclose(out, partial + b2, atol=1e-4) or np.allclose(out, partial, atol=1e-4):
        return f"{head} (it is only this rank's partial sum): AllReduce the row-parallel partial outputs", \
            ("tp/partial",)
    return f"{head} by up to {float(np.abs(out - golden).max()):.3g}", ()


# ----------------------------------------------------------------------------- ex5: compression
def _task(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((10, 16)).astype(np.float32) * 1.5
    y = rng.integers(0, 10, 640)
    return (centers[y] + rng.standard_normal((640, 16)).astype(np.float32)).astype(np.float32), y


def train_with_compression(compress: Callable | None, world: int = 4, steps: int = 40,
                           call: Callable | None = None) -> tuple[float, int, int]:
    """Train TinyMLP with DDP; each rank's bucket goes through ``compress`` before the AllReduce (None: fp32).

    Returns (accuracy on the training set, bytes the compressed buckets held, bytes in fp32).
    """
    call = call or (lambda f, *a: f(*a))
    x, y = _task()
    comm = HcclComm(atlas_800t_a2(1, npus_per_server=world))
    ddp = DistributedDataParallel([TinyMLP(seed=0) for _ in range(world)], comm)
    sent = [0, 0]

    def hook(state, bucket):
        packed = [bucket.buffers[r] if compress is None else call(compress, bucket.buffers[r]) for r in range(world)]
        packed = [np.asarray(p) for p in packed]
        if any(p.shape != bucket.buffers[0].shape for p in packed):
            raise ValueError(f"compress returned shape {packed[0].shape} for a bucket of shape "
                             f"{bucket.buffers[0].shape}: keep one value per gradient element")
        sent[0] += sum(p.nbytes for p in packed)
        sent[1] += sum(b.nbytes for b in bucket.buffers)
        out = comm.AllReduce(packed).outputs
        return [(o.astype(np.float32) / np.float32(world)).astype(np.float32) for o in out]

    ddp.register_comm_hook(None, hook)
    trainer = Trainer(ddp, x, y, batch_per_rank=16, lr=0.1)
    for _ in range(steps):
        trainer.train_step()
    return trainer.accuracy(x, y), sent[0], sent[1]


@LAB.exercise("ex5", points=2, title="a gradient compression hook", hints={
    "compress/bytes": (
        f"Send at most {BYTES_TARGET:.0%} of the fp32 bytes: how many bytes per element does your dtype take?",
        "bucket.astype(np.float16) halves the bytes; the AllReduce sums in fp16 and the hook divides in fp32.",),
    "compress/accuracy": (
        "The bytes are fine but the model stops learning: what happens to a gradient of 1e-3 in your format?",
        "Integers (int8) round small gradients to 0; a 16-bit float keeps their exponent.",
        "bucket.astype(np.float16): 2 bytes per element, small values kept."),
    "compress/shape": ("compress must return one value per gradient element, the bucket's shape.",),
    "*": (f"Send at most {BYTES_TARGET:.0%} of the fp32 bytes: a 16-bit float keeps one value per element in "
          "2 bytes.",),
})
def _ex5(ctx: Context) -> None:
    fn = ctx.answer("compress")
    base_acc, _, _ = train_with_compression(None)
    try:
        acc, sent, full = train_with_compression(fn, call=ctx.call)
    except ValueError as e:
        ctx.fail(str(e), ("compress/shape",))
    if sent > BYTES_TARGET * full:
        ctx.fail(f"the compressed buckets hold {sent:,} bytes, {sent / full:.0%} of fp32's {full:,}: over the bytes "
                 f"target of {BYTES_TARGET:.0%}", ("compress/bytes",))
    if not acc >= base_acc - ACCURACY_DROP:
        ctx.fail(f"training accuracy {acc:.1%} against {base_acc:.1%} uncompressed: more than "
                 f"{ACCURACY_DROP:.0%} lost, the accuracy target is missed (too few bits per gradient?)",
                 ("compress/accuracy",))
    ctx.note(f"{sent / full:.0%} of the bytes, accuracy {acc:.1%} (fp32: {base_acc:.1%})")


# ----------------------------------------------------------------------------- ex6: recovery
class _Reservation:
    """The cluster time ex6's job has booked, in training steps (None: unlimited). A restart that ignores the
    snapshot redoes every step from 0, which an uninterrupted run cannot tell apart by its weights; it shows as
    time, so the check books ``total_steps + checkpoint_every`` steps and a run that needs more fails."""

    left: int | None = None


def _learner_site() -> tuple[str, int] | None:
    """The innermost frame outside the package (the learner's call), for an error raised on its behalf."""
    f = sys._getframe(1)
    while f is not None and is_package_file(f.f_code.co_filename):
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else None


class _BookedTrainer(Trainer):
    def train_step(self, before_allreduce=None):
        if _Reservation.left is not None and _Reservation.left <= 0:
            raise DataParallelError(
                "the job's reservation is used up: it has trained more steps than total_steps + checkpoint_every. "
                "A restart that starts again from step 0 redoes all the work since the beginning",
                fix="after the failure, build a fresh trainer and load the last snapshot into it "
                    "(trainer.load_state_dict(snapshot)) so that only the steps since the checkpoint are redone",
                site=_learner_site(), kind="reservation")
        report = super().train_step(before_allreduce)
        if _Reservation.left is not None:
            _Reservation.left -= 1
        return report


def make_trainer() -> Trainer:
    """A fresh incarnation of ex6's job: TinyMLP DDP on 4 ranks, momentum SGD, input noise from each rank's RNG."""
    x, y = _task(2)
    comm = HcclComm(atlas_800t_a2(1, npus_per_server=4))
    ddp = DistributedDataParallel([TinyMLP(seed=0) for _ in range(4)], comm)
    return _BookedTrainer(ddp, x, y, batch_per_rank=8, lr=0.05, noise=0.1, seed=3)


def flat_weights(trainer: Trainer) -> np.ndarray:
    """Rank 0's parameters, concatenated."""
    return np.concatenate([p.ravel() for _, p in trainer.ddp.replicas[0].parameters()])


@LAB.exercise("ex6", points=2, title="recover from a failed rank", hints={
    "recovery/weights": (
        "The weights drifted from the uninterrupted run: which state do the processes carry after the failure?",
        "A failed step has already drawn its noise from every rank's RNG: the survivors cannot go on. Every rank "
        "restarts: a fresh trainer with make_trainer(), then trainer.load_state_dict(snapshot).",
        "Keep the snapshot up to date (snapshot = trainer.state_dict() after every checkpoint_every steps) and "
        "never take one of the failed processes."),
    "recovery/shape": ("Return flat_weights(trainer): rank 0's parameters as one flat array.",),
    "DataParallelError/reservation": (
        "Your restart starts again from step 0: where does the fresh trainer get the work done before the failure?",
        "A fresh trainer is step 0 with the initial weights; trainer.load_state_dict(snapshot) brings back the model, "
        "momentum, step, epoch and RNGs of the last checkpoint.",
        "Right after make_trainer(), load the last snapshot; only the steps since that checkpoint are then redone."),
    "*": ("When the step raises RankFailed, every rank restarts: build a fresh trainer with make_trainer().",),
})
def _ex6(ctx: Context) -> None:
    fn = ctx.answer("train_with_recovery")
    for total, every, fail_step, rank in [(12, 4, 6, 2), (10, 3, 9, 0)]:
        reference = make_trainer()
        for _ in range(total):
            reference.train_step()
        with ctx.case(f"{total} steps, a checkpoint every {every}, rank {rank} dies in step {fail_step}"):
            _Reservation.left = total + every                  # the redo since the last checkpoint fits, a full redo not
            try:
                got = np.asarray(ctx.call(fn, total, every, fail_step, rank), np.float32)
            finally:
                _Reservation.left = None
            want = flat_weights(reference)
            if got.shape != want.shape:
                ctx.fail(f"returned shape {got.shape}: return flat_weights(trainer), {want.shape[0]} values",
                         ("recovery/shape",))
            if not np.array_equal(got, want):
                ctx.fail(f"the final weights differ from the uninterrupted run by up to "
                         f"{float(np.abs(got - want).max()):.3g}: after the failure every rank must restart from the "
                         "last snapshot (fresh trainer + load_state_dict), so the run continues as if nothing happened",
                         ("recovery/weights",))
