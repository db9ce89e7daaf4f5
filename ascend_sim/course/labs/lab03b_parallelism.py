"""Checks of lab 03b, parallelism beyond data parallelism: a 1F1B pipeline schedule, a dynamic loss scaler, a hybrid
layout for a 7B-class transformer, and gradient accumulation with ``no_sync``.

Every answer returns plain data (schedule rows, a flat array and numbers, a layout tuple, a flat gradient), and the
check runs it on the simulated cluster itself, so the grader can replay the check on the evidence. The helpers
below are public: learners use them in the notebook to try their answers.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.cluster import HcclComm, TinyMLP, atlas_800t_a2
from ascend_sim.cluster.compress import bytes_sent
from ascend_sim.cluster.ddp import DistributedDataParallel
from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.mixed_precision import MixedPrecisionMLP
from ascend_sim.cluster.pipeline_schedule import analytic_bubble
from ascend_sim.cluster.pipeline_time import PipelineRun, play
from ascend_sim.cluster.planner import GB, Transformer, llama_7b, pick, plan, plan_all
from ascend_sim.cluster.toy_data import blobs
from ascend_sim.course.grading import Context, Lab

__all__ = ["LAB", "check", "hint", "HcclComm", "TinyMLP", "atlas_800t_a2", "DistributedDataParallel", "bytes_sent",
           "analytic_bubble", "run_pipeline", "BUBBLE_SLACK", "MixedPrecisionMLP", "train_with_scaler",
           "Transformer", "llama_7b", "plan", "GB", "flat_grads", "micro_batches_for", "SLOW_TARGET"]

LAB = Lab("lab03b_parallelism")
check = LAB.check
hint = LAB.hint         # hint("exN"): the next hint for the last mistake the check diagnosed

BUBBLE_SLACK = 0.01        # ex1: at most 1 point of bubble over (p-1)/(m+p-1)
SLOW_TARGET = 1.10         # ex3: at most 10 % slower than the best layout that fits
GLOBAL_TOKENS = 2 ** 25    # ex2: the loss is a mean over 32M tokens, so fp16 needs a loss scale
F32 = np.float32


# ----------------------------------------------------------------------------- ex1: 1F1B
def _ops(rows, p: int) -> list[list[tuple[str, int, int]]]:
    arr = np.asarray(rows)
    if arr.ndim != 2 or arr.shape[1] != 3 or not np.issubdtype(arr.dtype, np.integer):
        raise PipelineError(f"a schedule is a list of integer rows (stage, kind, micro_batch); got an array of shape "
                            f"{arr.shape} and dtype {arr.dtype}", fix="return rows like (0, 0, 3): stage 0, forward, "
                            "micro-batch 3; kind 1 is a backward")
    bad = arr[(arr[:, 0] < 0) | (arr[:, 0] >= p) | ~np.isin(arr[:, 1], (0, 1))]
    if len(bad):
        raise PipelineError(f"row {tuple(int(v) for v in bad[0])}: stage must be in range({p}) and kind 0 (F) or 1 (B)",
                            fix="rows are (stage, kind, micro_batch)")
    ops: list[list[tuple[str, int, int]]] = [[] for _ in range(p)]
    for s, kind, i in arr.tolist():
        ops[s].append(("FB"[kind], i, 0))
    return ops


def run_pipeline(rows, p: int, m: int, forward_us: float = 1000.0, backward_us: float = 2000.0,
                 act_bytes: float = 0, servers: int = 1) -> PipelineRun:
    """Play schedule ``rows`` (stage, kind 0=F/1=B, micro-batch), in each stage's order, on p NPUs of A2 servers."""
    cluster = atlas_800t_a2(servers)
    return play(cluster, _ops(rows, p), m, forward_us, backward_us, act_bytes)


@LAB.exercise("ex1", points=3, title="a 1F1B schedule within the bubble and memory budgets", hints={
    "gpipe": ("Your stages run every forward before any backward: how many micro-batches does stage 0 keep alive?",
              "1F1B starts backwards as soon as it can: after its warm-up forwards a stage alternates one forward and "
              "one backward, so stage s never holds more than p - s micro-batches.",
              "Stage s: min(p - s - 1, m) warm-up forwards; then for each remaining micro-batch a forward followed by "
              "the backward of the oldest one; then the backwards that are left."),
    "memory": ("Count the forwards stage s runs before its first backward.",
               "The last stage can run the backward of a micro-batch right after its forward; each earlier stage needs "
               "one more forward in flight to keep the pipeline full: p - s - 1 warm-up forwards.",),
    "bubble": ("Where do your stages wait? Draw the timeline with run_pipeline(...).timeline.",
               "A stage that runs a backward before its warm-up forwards are done waits for the whole pipeline; one "
               "with too few warm-up forwards leaves the next stages idle.",
               "Warm-up: min(p - s - 1, m) forwards on stage s; steady state: F then B; cool-down: the remaining B."),
    "deadlock": ("Which stage waits for what? The error names the stage and the op.",
                 "A forward needs the previous stage's forward of the same micro-batch, a backward the next stage's "
                 "backward: the orders of neighbouring stages must be compatible."),
    "order": ("Every stage must run F and B of every micro-batch exactly once, each B after its F.",),
    "*": ("Return rows (stage, kind, micro_batch) with kind 0 for a forward and 1 for a backward, each stage's rows "
          "in the order it runs them.",),
})
def _ex1(ctx: Context) -> None:
    fn = ctx.answer("one_f_one_b_rows")
    for p, m in [(2, 4), (4, 8), (4, 4), (3, 7), (8, 16), (4, 2)]:
        with ctx.case(f"{p} stages, {m} micro-batches"):
            rows = ctx.call(fn, p, m)
            try:
                run = run_pipeline(rows, p, m)
            except PipelineError as e:
                if "deadlock" in e.rule_message:
                    ctx.fail(f"{e.rule_message}. Fix: {e.fix}", diagnosis=("deadlock",))
                ctx.fail(f"{e.rule_message}. Fix: {e.fix}", diagnosis=("order",))
            want = analytic_bubble(p, m)
            limit = [min(p - s, m) for s in range(p)]
            if run.peak_in_flight == [m] * p and m > 1 and p > 1 and limit != [m] * p:
                ctx.fail(f"every stage keeps all {m} micro-batches in flight ({run.peak_in_flight}): that is GPipe, "
                         f"1F1B keeps at most {limit}", diagnosis=("gpipe",))
            over = [s for s in range(p) if run.peak_in_flight[s] > limit[s]]
            if over:
                ctx.fail(f"stage {over[0]} keeps {run.peak_in_flight[over[0]]} micro-batches in flight; 1F1B keeps at "
                         f"most min(p - s, m) = {limit[over[0]]} (all stages: {run.peak_in_flight} against {limit})",
                         diagnosis=("memory",))
            if run.mean_bubble > want + BUBBLE_SLACK:
                ctx.fail(f"bubble {run.mean_bubble:.3f} against (p-1)/(m+p-1) = {want:.3f} (budget +{BUBBLE_SLACK}): "
                         "some stage waits longer than the pipeline's fill and drain", diagnosis=("bubble",))
    ctx.note(f"8 stages, 16 micro-batches: bubble {run.mean_bubble:.3f} (analytic {analytic_bubble(p, m):.3f}), "
             f"peak in flight {run.peak_in_flight}")


# ----------------------------------------------------------------------------- ex2: loss scaler
def train_with_scaler(step_fn, steps: int = 30, overflow_steps: tuple[int, ...] = (4, 5), growth_interval: int = 5,
                      init_scale: float = 2.0 ** 16, call=None) -> dict:
    """Train an fp16 TinyMLP whose loss is a mean over 2^25 tokens, with ``step_fn`` deciding every step.

    ``step_fn(grads, scale, clean_steps, growth_interval)`` gets the flat fp32 gradients of ``loss x scale`` (an inf
    injected in ``overflow_steps``) and returns ``(unscaled or None, new_scale, new_clean_steps)``. Returns the
    accuracy, the scales used, the steps skipped and whether a skipped step left the weights untouched.
    """
    call = call or (lambda f, *a: f(*a))
    x, y = blobs(4096, seed=0)
    xt, yt = blobs(1000, seed=7)
    model = MixedPrecisionMLP(seed=0, compute="fp16")
    model.global_tokens = GLOBAL_TOKENS
    lr = F32(0.5 * GLOBAL_TOKENS / 256)
    names = [k for k in model.params]
    scale, clean = float(init_scale), 0
    log = {"scales": [], "skipped": [], "untouched": True, "finite": True}
    for s in range(steps):
        i = (s * 256) % (len(x) - 255)
        model.loss_scale = scale
        _, g = model.loss_and_grads(x[i:i + 256], y[i:i + 256])
        flat = np.concatenate([g[k].ravel() for k in names]).astype(F32)
        if s in overflow_steps:
            flat[0] = np.inf
        before = np.concatenate([model.params[k].ravel() for k in names])
        out = call(step_fn, flat, scale, clean, growth_interval)
        log["scales"].append(scale)
        unscaled, scale, clean = out[0], float(out[1]), int(out[2])
        if unscaled is None:
            log["skipped"].append(s)
        else:
            at = 0
            for k in names:
                n = model.params[k].size
                model.params[k] -= lr * np.asarray(unscaled, F32)[at:at + n].reshape(model.params[k].shape)
                at += n
        after = np.concatenate([model.params[k].ravel() for k in names])
        if unscaled is None and not np.array_equal(before, after):
            log["untouched"] = False
        log["finite"] = log["finite"] and bool(np.isfinite(after).all())
    log["accuracy"] = float(np.mean(model.predict(xt) == yt)) if log["finite"] else 0.0
    return log


def _unit_cases(rng) -> list[tuple[str, np.ndarray, float, int, int, bool, float, int]]:
    """(label, grads, scale, clean, interval, skip, new scale, new clean)."""
    g = rng.standard_normal(12).astype(F32) * F32(1024)
    inf, nan = g.copy(), g.copy()
    inf[3], nan[7] = np.inf, np.nan
    return [("clean step", g, 1024.0, 0, 3, False, 1024.0, 1),
            ("the growth_interval-th clean step", g, 1024.0, 2, 3, False, 2048.0, 0),
            ("an inf gradient", inf, 1024.0, 2, 3, True, 512.0, 0),
            ("a NaN gradient", nan, 4096.0, 1, 3, True, 2048.0, 0)]


@LAB.exercise("ex2", points=3, title="a dynamic loss scaler that survives an overflow", hints={
    "no-skip": ("What happens to the weights if an update contains inf?",
                "An overflow step must change nothing: return None for the gradients, so the optimizer skips it.",),
    "backoff": ("After an overflow the scale was too large. By how much does torch's GradScaler change it?",
                "backoff_factor = 0.5: the new scale is half the old one.",),
    "growth": ("When does GradScaler grow the scale, and by how much?",
               "After growth_interval clean steps in a row: multiply by 2 and start counting again from 0.",),
    "reset": ("What happens to the count of clean steps after an overflow?",
              "An overflow resets it to 0: growth needs growth_interval clean steps in a row.",),
    "unscale": ("The gradients you get are those of loss x scale. What does the optimizer need?",
                "Divide them by the scale (in fp32) before returning them.",),
    "accuracy": ("Your scaler runs, but training does not reach fp32's accuracy: look at the scales it used.",),
    "*": ("Return (grads / scale, scale, clean + 1) on a clean step, (None, scale / 2, 0) on an overflow, and grow "
          "the scale x2 after growth_interval clean steps.",),
})
def _ex2(ctx: Context) -> None:
    fn = ctx.answer("loss_scale_step")
    for label, g, scale, clean, interval, skip, new_scale, new_clean in _unit_cases(ctx.rng):
        with ctx.case(f"{label} (scale {scale:g}, {clean} clean steps, growth_interval {interval})"):
            out = ctx.call(fn, g.copy(), scale, clean, interval)
            if not (isinstance(out, tuple) and len(out) == 3):
                ctx.fail(f"returned {type(out).__name__}; return a tuple (grads or None, new_scale, new_clean_steps)")
            got, s, c = out
            if skip and got is not None:
                ctx.fail("an inf/NaN gradient must skip the step: return None for the gradients", diagnosis=("no-skip",))
            if not skip and got is None:
                ctx.fail("a finite gradient was skipped: only inf or NaN skips a step", diagnosis=("no-skip",))
            if got is not None:
                arr = np.asarray(got, F32)
                if arr.shape != g.shape or not np.allclose(arr, g / F32(scale), rtol=1e-6):
                    msg = (f"the returned gradients are not grads / scale (first: {arr.ravel()[:2]} against "
                           f"{(g / F32(scale))[:2]})")
                    if arr.shape == g.shape and np.allclose(arr, g):
                        ctx.fail(msg, diagnosis=("unscale",))
                    ctx.fail(msg, diagnosis=("values",))
            if float(s) != new_scale:
                msg = f"new scale {s} where GradScaler gives {new_scale:g}"
                if skip:
                    ctx.fail(msg, diagnosis=("backoff",))
                ctx.fail(msg, diagnosis=("growth",))
            if int(c) != new_clean:
                msg = f"new clean-step count {c} where GradScaler gives {new_clean}"
                if skip:
                    ctx.fail(msg, diagnosis=("reset",))
                ctx.fail(msg, diagnosis=("growth",))
    with ctx.case("30 steps of an fp16 run with overflows injected in steps 4 and 5"):
        log = train_with_scaler(fn, call=ctx.call)
        if not log["finite"] or not log["untouched"]:
            ctx.fail("the weights changed in a skipped step or became inf/NaN", diagnosis=("no-skip",))
        if log["skipped"][:2] != [4, 5]:
            ctx.fail(f"skipped steps {log['skipped']}; the injected overflows are in steps 4 and 5",
                     diagnosis=("no-skip",))
        if log["accuracy"] < 0.85:
            ctx.fail(f"held-out accuracy {log['accuracy']:.3f} (fp32 reaches about 0.93)", diagnosis=("accuracy",))
    ctx.note(f"skipped {log['skipped']}, scales {log['scales'][3:8]}, accuracy {log['accuracy']:.3f}")


# ----------------------------------------------------------------------------- ex3: hybrid layout
def _baseline(model: Transformer, servers: int, batch: int):
    """Megatron's habit: TP over the 8 NPUs of a server, DP across servers, no pipeline."""
    return plan(model, atlas_800t_a2(servers), servers, 8, 1, batch)


EX3_CASES = [(llama_7b(), 2, 64), (llama_7b(), 8, 256), (Transformer("13B", 40, 5120, 40, 4096, 32000), 4, 128),
             (Transformer("1.3B", 24, 2048, 16, 2048, 50257), 1, 32)]


@LAB.exercise("ex3", points=2, title="a hybrid layout that fits and beats TP-inside-the-server", hints={
    "memory": ("Your layout does not fit in 64 GB. Which part of plan(...) is too large, state or activations?",
               "State shrinks with tp x pp; stage 0's activations shrink with tp (and stay about L layers' worth "
               "under 1F1B). Check plan(...).fits for every candidate before comparing times.",),
    "slow": ("Your layout fits but is slower than the best one. Did you compare every candidate?",
             "Enumerate tp in 1, 2, 4, 8 and every pp dividing the layers, dp = devices / (tp pp) dividing the batch; "
             "keep the fastest plan that fits.",),
    "layout": ("dp x tp x pp must equal the number of NPUs (8 per server), pp must divide the layers and dp the "
               "global batch.",),
    "*": ("Return a tuple (dp, tp, pp).",),
})
def _ex3(ctx: Context) -> None:
    fn = ctx.answer("choose_layout")
    for model, servers, batch in EX3_CASES:
        with ctx.case(f"{model.name} on {servers} A2 server(s), batch {batch}"):
            got = ctx.call(fn, model, servers, batch)
            try:
                dp, tp, pp = (int(v) for v in got)
                mine = plan(model, atlas_800t_a2(servers), dp, tp, pp, batch)
            except PipelineError as e:
                ctx.fail(f"{e.rule_message}. Fix: {e.fix}", diagnosis=("layout",))
            except (TypeError, ValueError):
                ctx.fail(f"returned {got!r}; return (dp, tp, pp)", diagnosis=("layout",))
            if not mine.fits:
                ctx.fail(f"dp={dp} tp={tp} pp={pp} needs {mine.memory_bytes / GB:.1f} GB per NPU, more than "
                         f"{mine.hbm_bytes / GB:.0f} GB", diagnosis=("memory",))
            best, base = pick(plan_all(model, servers, batch)), _baseline(model, servers, batch)
            within = ctx.measure(mine.step_us, SLOW_TARGET * best.step_us, "us")
            if not within or (base.fits and mine.step_us >= base.step_us):
                ctx.fail(f"step {mine.step_us / 1e3:.0f} ms; TP inside the server gives {base.step_us / 1e3:.0f} ms "
                         f"and the best layout {best.step_us / 1e3:.0f} ms (target: faster than the first, within "
                         f"{SLOW_TARGET - 1:.0%} of the second)", diagnosis=("slow",))
    ctx.note(f"{model.name}: dp={dp} tp={tp} pp={pp}, {mine.memory_bytes / GB:.1f} GB, {mine.step_us / 1e3:.0f} ms")


# ----------------------------------------------------------------------------- ex4: accumulation
def flat_grads(ddp: DistributedDataParallel) -> np.ndarray:
    """Rank 0's averaged gradients after the last backward, in ``parameters()`` order, concatenated."""
    return np.concatenate([ddp.grads[0][n].ravel() for n, _ in ddp.replicas[0].parameters()])


def micro_batches_for(x: np.ndarray, y: np.ndarray, world: int, k: int) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """``k`` micro-steps of one batch per rank each: rank r's micro-batch j is rows (r k + j) b .. (r k + j + 1) b."""
    b = len(x) // (world * k)
    return [[(x[(r * k + j) * b:(r * k + j + 1) * b], y[(r * k + j) * b:(r * k + j + 1) * b]) for r in range(world)]
            for j in range(k)]


@LAB.exercise("ex4", points=2, title="gradient accumulation equal to the big batch", hints={
    "scale": ("Your gradient is k times too large.",
              "Each micro-batch's loss is a mean over its own rows; the big batch's mean needs each divided by k: "
              "ddp.backward(batches, grad_scale=1 / k).",),
    "no-sync": ("Your gradient is only the last micro-batch's: every backward outside no_sync AllReduces and replaces.",
                "Run the first k - 1 backwards inside `with ddp.no_sync():` so they add up locally; the k-th, outside, "
                "adds its own and AllReduces the sum once.",),
    "bytes": ("Your gradient is right but you AllReduced more than once.",
              "Only the last micro-step may synchronise: the others go inside ddp.no_sync().",),
    "values": ("Compare your gradient with the big batch's on a small case: which micro-batches are in it?",
               "The answer is the mean over all k x world micro-batches: no_sync for the first k - 1 backwards, "
               "grad_scale=1/k for all of them.",),
    "*": ("Return (flat_grads(ddp), bytes_sent(ddp.comm)) after the k micro-steps.",),
})
def _ex4(ctx: Context) -> None:
    fn = ctx.answer("accumulate_gradients")
    for world, k, b in [(2, 4, 8), (4, 2, 16), (4, 3, 8)]:
        x, y = blobs(world * k * b, seed=int(ctx.rng.integers(1 << 30)))
        parts = micro_batches_for(x, y, world, k)
        ddp = DistributedDataParallel([TinyMLP(seed=1) for _ in range(world)], HcclComm(atlas_800t_a2(1, world)))
        before = bytes_sent(ddp.comm)                     # the constructor's parameter broadcast
        with ctx.case(f"{world} ranks, {k} micro-steps of {b} rows"):
            out = ctx.call(fn, ddp, parts)
            if not (isinstance(out, tuple) and len(out) == 2):
                ctx.fail("return a tuple (flat_grads(ddp), bytes_sent(ddp.comm))")
            got, sent = np.asarray(out[0], F32), float(out[1])
            big = TinyMLP(seed=1)
            _, ref = big.loss_and_grads(x, y)
            want = np.concatenate([ref[n].ravel() for n, _ in big.parameters()])
            _, last = big.loss_and_grads(np.concatenate([p[0] for p in parts[-1]]),
                                         np.concatenate([p[1] for p in parts[-1]]))
            last_flat = np.concatenate([last[n].ravel() for n, _ in big.parameters()])
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-7):
                if got.shape == want.shape and np.allclose(got, k * want, rtol=1e-5, atol=1e-7):
                    ctx.fail("the gradient is k times the big batch's", diagnosis=("scale",))
                if got.shape == want.shape and (np.allclose(got, last_flat, rtol=1e-4, atol=1e-6)
                                                or np.allclose(got * k, last_flat, rtol=1e-4, atol=1e-6)):
                    ctx.fail("the gradient is the last micro-batch's only", diagnosis=("no-sync",))
                ctx.fail("the gradient differs from the big batch's by up to "
                         f"{float(np.abs(got - want).max()) if got.shape == want.shape else 'shape'}",
                         diagnosis=("values",))
            one = HcclComm(atlas_800t_a2(1, world))
            one.AllReduce([np.zeros(want.size, F32)] * world)
            if sent - before > 1.01 * bytes_sent(one):
                ctx.fail(f"{sent - before:.0f} bytes sent where one AllReduce of the gradients sends {bytes_sent(one)}",
                         diagnosis=("bytes",))
    ctx.note(f"{world} ranks x {k} micro-steps: equal to the big batch, {sent - before:.0f} bytes (one AllReduce)")
