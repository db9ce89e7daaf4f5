"""Instructor solutions of labs/lab03_distributed.ipynb (format: ascend_sim/course/grading/solution_file.py).

Each `# %% exN` block is the answer; the notebook's stub is generated from it (`ascend-sim clean`).
Each `# %% exN wrong: ...` block is one replacement of the answer that its check must fail (`ascend-sim solve
lab03` proves them all). The setup cell of the lab provides the imports.
"""

# %% ex1
def ring_allreduce_schedule(p, count):
    """Rows (step, src, dst, lo, hi, reduce) of a ring AllReduce of `count` elements over `p` ranks."""
    # --- BEGIN SOLUTION hint="build the reduce-scatter and allgather steps of the ring"
    bounds = np.linspace(0, count, p + 1).astype(int)          # chunk c is [bounds[c], bounds[c + 1])

    def step_of(s, r):
        return s                                                # the p messages of a ring step travel at once

    rows = []
    for s in range(p - 1):                                      # reduce-scatter: add what arrives
        for r in range(p):
            c = (r - s) % p
            rows.append((step_of(s, r), r, (r + 1) % p, bounds[c], bounds[c + 1], 1))
    for s in range(p - 1):                                      # allgather: pass the finished chunks on
        for r in range(p):
            c = (r + 1 - s) % p
            rows.append((step_of(p - 1 + s, r), r, (r + 1) % p, bounds[c], bounds[c + 1], 0))
    return rows
    # --- END SOLUTION

# %% ex1 wrong: the allgather phase adds what it receives instead of copying it [key: ring/added-twice]
# replace: rows.append((step_of(p - 1 + s, r), r, (r + 1) % p, bounds[c], bounds[c + 1], 0)) -> rows.append((step_of(p - 1 + s, r), r, (r + 1) % p, bounds[c], bounds[c + 1], 1))

# %% ex1 wrong: one message per step (correct sums, but p times as many steps: over the time budget) [key: budget]
# replace: return s                                                # the p messages of a ring step travel at once -> return s * p + p - 1 - r

# %% ex1 wrong: one allgather step too many (correct sums, 7 % over HCCL's ring) [key: budget]
# replace:     for s in range(p - 1):                                      # allgather: pass the finished chunks on ->     for s in range(p):                                          # allgather: pass the finished chunks on

# %% ex1 wrong: reduce = 2 in the reduce-scatter rows: the flag is 1 (add) or 0 (overwrite) [key: ring/schedule]
# replace:             rows.append((step_of(s, r), r, (r + 1) % p, bounds[c], bounds[c + 1], 1)) ->             rows.append((step_of(s, r), r, (r + 1) % p, bounds[c], bounds[c + 1], 2))

# %% ex2
def sampler_indices(n, num_replicas, rank, epoch, shuffle=True, drop_last=False, seed=0):
    """The indices rank `rank` reads in epoch `epoch`, as torch's DistributedSampler gives them."""
    # --- BEGIN SOLUTION hint="shuffle, pad or cut, then take this rank's strided share"
    order = torch_randperm(n, seed + epoch) if shuffle else list(range(n))
    if drop_last and n % num_replicas:
        num_samples = math.ceil((n - num_replicas) / num_replicas)
    else:
        num_samples = math.ceil(n / num_replicas)
    total = num_samples * num_replicas
    if drop_last:
        order = order[:total]
    else:
        order = (order * math.ceil(total / n))[:total]         # pad with the first elements, repeated if need be
    return order[rank:total:num_replicas]
    # --- END SOLUTION

# %% ex2 wrong: a contiguous block per rank instead of every R-th index [key: sampler/strided]
# replace: return order[rank:total:num_replicas] -> return order[rank * num_samples:(rank + 1) * num_samples]

# %% ex2 wrong: the same shuffle every epoch (seed without the epoch) [key: sampler/epoch]
# replace: order = torch_randperm(n, seed + epoch) if shuffle else list(range(n)) -> order = torch_randperm(n, seed) if shuffle else list(range(n))

# %% ex2 wrong: no padding (ranks get different numbers of samples) [key: sampler/length]
# replace: order = (order * math.ceil(total / n))[:total]         # pad with the first elements, repeated if need be -> order = order[:total]

# %% ex2 wrong: drop_last drops a sample even when the replicas divide n [key: sampler/length]
# replace: if drop_last and n % num_replicas: -> if drop_last:

# %% ex2 wrong: the permutation ignores the seed (seeded with the epoch alone) [key: sampler/seed]
# replace: order = torch_randperm(n, seed + epoch) if shuffle else list(range(n)) -> order = torch_randperm(n, epoch) if shuffle else list(range(n))

# %% ex3
def assign_buckets(nbytes, cap_bytes):
    """The bucket of every parameter: bucket 0 takes the last parameters (their gradients are ready first)."""
    # --- BEGIN SOLUTION hint="fill buckets from the last parameter backwards, closing each at cap_bytes"
    bucket_of = [0] * len(nbytes)
    bucket, size = 0, 0
    for i in reversed(range(len(nbytes))):
        if size >= cap_bytes:
            bucket, size = bucket + 1, 0
        bucket_of[i] = bucket
        size += nbytes[i]
    return bucket_of
    # --- END SOLUTION

# %% ex3 wrong: fills buckets in forward order (bucket 0 waits for the first layer, computed last) [key: buckets/order]
# replace: for i in reversed(range(len(nbytes))): -> for i in range(len(nbytes)):

# %% ex3 wrong: one bucket for everything (its AllReduce starts after backward) [key: buckets/one]
# replace: bucket, size = bucket + 1, 0 -> size = 0

# %% ex4
def tp_mlp_forward(x, w1_parts, b1_parts, w2_parts, b2):
    """relu(x @ W1.T + b1) @ W2.T + b2 over len(w1_parts) ranks; returns every rank's output."""
    # --- BEGIN SOLUTION hint="column-parallel fc1, row-parallel fc2, AllReduce the partial sums, then the bias"
    t = len(w1_parts)
    comm = HcclComm(atlas_800t_a2(1, npus_per_server=t))
    partial = []
    for r in range(t):
        h = np.maximum(x @ w1_parts[r].T + b1_parts[r], 0)    # column parallel: this rank's hidden features
        partial.append(h @ w2_parts[r].T)                     # row parallel: a partial sum of the output
    summed = comm.AllReduce(partial).outputs
    return [y + b2 for y in summed]
    # --- END SOLUTION

# %% ex4 wrong: adds the bias on every rank before the AllReduce [key: tp/bias]
# replace:
#         partial.append(h @ w2_parts[r].T)                     # row parallel: a partial sum of the output
#     summed = comm.AllReduce(partial).outputs
#     return [y + b2 for y in summed]
# with:
#         partial.append(h @ w2_parts[r].T + b2)
#     summed = comm.AllReduce(partial).outputs
#     return [y for y in summed]

# %% ex4 wrong: no AllReduce (each rank keeps its partial sum) [key: tp/partial]
# replace: summed = comm.AllReduce(partial).outputs -> summed = partial

# %% ex5
def compress(bucket):
    """What one rank sends for its fp32 gradient bucket (the AllReduce sums it; the hook divides in fp32)."""
    # --- BEGIN SOLUTION hint="return the bucket in fewer bytes"
    return bucket.astype(np.float16)
    # --- END SOLUTION

# %% ex5 wrong: sends fp32 (no compression: over the bytes target) [key: compress/bytes]
# replace: return bucket.astype(np.float16) -> return bucket.astype(np.float32)

# %% ex5 wrong: int8 (small gradients round to 0: the accuracy target is missed) [key: compress/accuracy]
# replace: return bucket.astype(np.float16) -> return bucket.astype(np.int8)

# %% ex6
def train_with_recovery(total_steps, checkpoint_every, fail_step, fail_rank):
    """Train make_trainer()'s job for total_steps; rank fail_rank dies once in step fail_step. Returns the weights."""
    trainer = make_trainer()
    snapshot = trainer.state_dict()
    failed = False
    while trainer.step < total_steps:
        if trainer.step == fail_step and not failed:
            failed = True
            try:
                trainer.train_step(before_allreduce=lambda: kill(fail_rank, fail_step, 4))
            except RankFailed:
                # --- BEGIN SOLUTION hint="restart every rank from the last snapshot"
                trainer = make_trainer()
                trainer.load_state_dict(snapshot)
                # --- END SOLUTION
            continue
        trainer.train_step()
        if trainer.step % checkpoint_every == 0:
            # --- BEGIN SOLUTION hint="take a snapshot"
            snapshot = trainer.state_dict()
            # --- END SOLUTION
    return flat_weights(trainer)

# %% ex6 wrong: goes on with the failed processes (their RNGs already drew the failed step's noise) [key: recovery/weights]
# replace:
#                 trainer = make_trainer()
#                 trainer.load_state_dict(snapshot)
# with:
#                 pass

# %% ex6 wrong: snapshots the failed processes before restarting (their RNGs already drew the failed step's noise) [key: recovery/weights]
# replace:
#                 trainer = make_trainer()
# with:
#                 snapshot = trainer.state_dict()
#                 trainer = make_trainer()

# %% ex6 wrong: restarts from scratch, ignoring the snapshot (the same weights, but every step redone) [key: DataParallelError/reservation]
# replace:
#                 trainer = make_trainer()
#                 trainer.load_state_dict(snapshot)
# with:
#                 trainer = make_trainer()
