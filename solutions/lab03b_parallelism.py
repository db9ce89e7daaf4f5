"""Instructor solutions of labs/lab03b_parallelism.ipynb (format: ascend_sim/course/grading/solution_file.py).

Each `# %% exN` block is the answer; the notebook's stub is generated from it (`ascend-sim clean`).
Each `# %% exN wrong: ...` block is one replacement of the answer that its check must fail (`ascend-sim solve
lab03b_parallelism` proves them all). The setup cell of the lab provides the imports.
"""

# %% ex1
def one_f_one_b_rows(p, m):
    """Rows (stage, kind, micro_batch) of a 1F1B schedule: kind 0 = forward, 1 = backward, each stage in run order."""
    # --- BEGIN SOLUTION hint="warm-up forwards, then one forward / one backward, then the remaining backwards"
    rows = []
    for s in range(p):
        warm = min(p - s - 1, m)
        order = [(0, i) for i in range(warm)]
        for i in range(m - warm):
            order += [(0, warm + i), (1, i)]
        order += [(1, i) for i in range(m - warm, m)]
        rows += [(s, kind, i) for kind, i in order]
    return rows
    # --- END SOLUTION

# %% ex1 wrong: GPipe (every forward, then every backward: m micro-batches in flight) [key: gpipe]
# replace:
#         warm = min(p - s - 1, m)
# with:
#         warm = m

# %% ex1 wrong: one warm-up forward too many (p - s micro-batches before the first backward) [key: memory]
# replace: warm = min(p - s - 1, m) -> warm = min(p - s, m)

# %% ex1 wrong: no warm-up (F, B, F, B on every stage: stage 0 waits for each backward) [key: bubble]
# replace: warm = min(p - s - 1, m) -> warm = 0

# %% ex1 wrong: the steady state runs the backward before the forward (the last stage differentiates what it has not computed) [key: order]
# replace: order += [(0, warm + i), (1, i)] -> order += [(1, i), (0, warm + i)]

# %% ex2
def loss_scale_step(grads, scale, clean_steps, growth_interval):
    """One GradScaler decision: (grads / scale or None to skip, new scale, new count of clean steps)."""
    # --- BEGIN SOLUTION hint="skip and halve on inf/NaN; unscale, count, and double after growth_interval clean steps"
    if not np.isfinite(grads).all():
        return None, scale * 0.5, 0
    clean_steps += 1
    if clean_steps == growth_interval:
        return grads / np.float32(scale), scale * 2.0, 0
    return grads / np.float32(scale), scale, clean_steps
    # --- END SOLUTION

# %% ex2 wrong: halves the scale but applies the step anyway [key: no-skip]
# replace: return None, scale * 0.5, 0 -> return grads / np.float32(scale), scale * 0.5, 0

# %% ex2 wrong: skips but never backs off [key: backoff]
# replace: return None, scale * 0.5, 0 -> return None, scale, 0

# %% ex2 wrong: forgets to unscale [key: unscale]
# replace: return grads / np.float32(scale), scale, clean_steps -> return grads, scale, clean_steps

# %% ex2 wrong: keeps counting clean steps across an overflow [key: reset]
# replace: return None, scale * 0.5, 0 -> return None, scale * 0.5, clean_steps

# %% ex2 wrong: grows on every clean step [key: growth]
# replace: if clean_steps == growth_interval: -> if clean_steps >= 1:

# %% ex3
def choose_layout(model, servers, global_batch):
    """(dp, tp, pp) for `model` on `servers` A2 servers: the fastest layout that fits in memory."""
    # --- BEGIN SOLUTION hint="enumerate dp x tp x pp, keep the fastest plan that fits"
    devices = 8 * servers
    cluster = atlas_800t_a2(servers)
    best = None
    for tp in (1, 2, 4, 8):
        for pp in range(1, model.layers + 1):
            if devices % (tp * pp) or model.layers % pp:
                continue
            dp = devices // (tp * pp)
            if global_batch % dp:
                continue
            candidate = plan(model, cluster, dp, tp, pp, global_batch)
            if candidate.fits and (best is None or candidate.step_us < best.step_us):
                best = candidate
    return best.dp, best.tp, best.pp
    # --- END SOLUTION

# %% ex3 wrong: pure data parallelism (a full replica does not fit) [key: memory]
# replace: return best.dp, best.tp, best.pp -> return devices, 1, 1

# %% ex3 wrong: tensor parallelism inside the server, data parallelism across (fits, but slower) [key: slow]
# replace: return best.dp, best.tp, best.pp -> return servers, 8, 1

# %% ex3 wrong: the fastest layout, whether it fits or not [key: memory]
# replace: if candidate.fits and (best is None or candidate.step_us < best.step_us): -> if best is None or candidate.step_us < best.step_us:

# %% ex4
def accumulate_gradients(ddp, micro_batches):
    """k micro-steps (micro_batches[j] = one batch per rank) accumulated into one synchronised gradient."""
    # --- BEGIN SOLUTION hint="the first k - 1 backwards inside no_sync, each loss divided by k"
    k = len(micro_batches)
    with ddp.no_sync():
        for batches in micro_batches[:-1]:
            ddp.backward(batches, grad_scale=1 / k)
    ddp.backward(micro_batches[-1], grad_scale=1 / k)
    # --- END SOLUTION
    return flat_grads(ddp), bytes_sent(ddp.comm)

# %% ex4 wrong: no 1/k (k times the gradient) [key: scale]
# replace:
#             ddp.backward(batches, grad_scale=1 / k)
#     ddp.backward(micro_batches[-1], grad_scale=1 / k)
# with:
#             ddp.backward(batches)
#     ddp.backward(micro_batches[-1])

# %% ex4 wrong: no no_sync (each backward AllReduces and replaces the gradient) [key: no-sync]
# replace: with ddp.no_sync(): -> if True:

# %% ex4 wrong: an AllReduce per micro-step, averaged by hand (right gradient, k times the bytes) [key: bytes]
# replace:
#     with ddp.no_sync():
#         for batches in micro_batches[:-1]:
#             ddp.backward(batches, grad_scale=1 / k)
#     ddp.backward(micro_batches[-1], grad_scale=1 / k)
# with:
#     total = 0
#     for batches in micro_batches:
#         ddp.backward(batches, grad_scale=1 / k)
#         total = total + flat_grads(ddp)
#     return total, bytes_sent(ddp.comm)
