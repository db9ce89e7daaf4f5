"""Instructor solutions of labs/lab04b_llm.ipynb (format: ascend_sim/course/grading/solution_file.py).

The setup cell of the lab provides the imports. Each `# %% exN wrong: ...` block is one replacement that its
check must fail.
"""

# %% ex1
@kernel
def decode_step_kernel(qkv, k_cache, v_cache, out, t):
    """Block h: append the new token's K and V rows to head h's caches, then attend its query over 0 .. pos."""
    h, D, n = GetBlockIdx(), t.D, t.pos + 1          # n keys: the cached 0 .. pos - 1 and the new one
    row = h * t.S_max * D                              # head h's first cache element
    pipe = TPipe()
    bufs = {}
    for name, nbytes, dtype in (("kh", MAX_KEYS * D * 2, half), ("vh", MAX_KEYS * D * 2, half),
                                ("kf", MAX_KEYS * D * 4, float32), ("vf", MAX_KEYS * D * 4, float32),
                                ("qh", D * 2, half), ("qf", D * 4, float32), ("s", MAX_KEYS * 4, float32),
                                ("work", MAX_KEYS * 4, float32), ("red", 32, float32),
                                ("blk", MAX_KEYS * 32, float32)):
        b = TBuf()
        pipe.InitBuffer(b, nbytes)
        bufs[name] = b.Get(dtype)
    kh, vh, kf, vf, s = bufs["kh"], bufs["vh"], bufs["kf"], bufs["vf"], bufs["s"]
    gq, gk, gv = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    gq.SetGlobalBuffer(qkv)
    gk.SetGlobalBuffer(k_cache)
    gv.SetGlobalBuffer(v_cache)
    if n > 1:                                          # the cached rows 0 .. pos - 1
        DataCopy(kh, gk[row], (n - 1) * D)
        DataCopy(vh, gv[row], (n - 1) * D)
    DataCopy(bufs["qh"], gq[h * D], D)
    # TODO 1 (append): the new K and V rows into slot n - 1 of the tiles, then to row pos of the caches.
    # --- BEGIN SOLUTION hint="TODO 1: load the new K and V rows into slot n - 1, hand off MTE2 -> MTE3, write row pos"
    DataCopy(kh[(n - 1) * D], gq[(t.N + h) * D], D)
    DataCopy(vh[(n - 1) * D], gq[(2 * t.N + h) * D], D)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gk[row + t.pos * D], kh[(n - 1) * D], D)
    DataCopy(gv[row + t.pos * D], vh[(n - 1) * D], D)
    # --- END SOLUTION
    handoff(HardEvent.MTE2_V)
    Cast(kf, kh, RoundMode.CAST_NONE, n * D)
    Cast(bufs["qf"], bufs["qh"], RoundMode.CAST_NONE, D)
    rep = D * 4 // 32
    Mul(kf, kf, bufs["qf"], D, n, BinaryRepeatParams(1, 1, 1, rep, rep, 0))     # each key row times q
    WholeReduceSum(s, kf, D, n, 1, 1, rep)                                       # s_j = k_j . q
    # TODO 2 (softmax): p_j = exp(scale * s_j - max), l = sum p_j.
    # --- BEGIN SOLUTION hint="TODO 2: scale the scores, subtract their maximum, Exp, then their sum l"
    Muls(s, s, t.scale, n)
    ReduceMax(bufs["red"], s, bufs["work"], n)
    m = read_scalar(bufs["red"])
    Adds(s, s, -m, n)
    Exp(s, s, n)
    ReduceSum(bufs["red"], s, bufs["work"], n)
    l = read_scalar(bufs["red"])
    # --- END SOLUTION
    Cast(vf, vh, RoundMode.CAST_NONE, n * D)
    Brcb(bufs["blk"], s, -(-n // 8), BrcbRepeatParams(1, 8))
    Mul(vf, vf, bufs["blk"], D, n, BinaryRepeatParams(1, 1, 0, rep, rep, 1))   # p_j V_j
    fold_rows(vf, n, D)                                                          # sum_j p_j V_j in row 0
    Muls(vf, vf, 1.0 / l if l else 0.0, D)
    handoff(HardEvent.V_MTE3)
    go = GlobalTensor(float32)
    go.SetGlobalBuffer(out)
    DataCopy(go[h * D], vf, D)

# %% ex1 wrong: forgets to write the new rows to the caches (attends correctly, but the next step has no row pos) [key: kv/append]
# replace:
#     DataCopy(gk[row + t.pos * D], kh[(n - 1) * D], D)
#     DataCopy(gv[row + t.pos * D], vh[(n - 1) * D], D)
# with:

# %% ex1 wrong: counts pos keys, not pos + 1: one cached row too few is loaded (key pos - 1 left out) [key: kv/length]
# replace:     h, D, n = GetBlockIdx(), t.D, t.pos + 1          # n keys: the cached 0 .. pos - 1 and the new one ->     h, D, n = GetBlockIdx(), t.D, max(t.pos, 1)

# %% ex1 wrong: scales the scores by 1 / D instead of 1 / sqrt(D) [key: kv/scale]
# replace:     Muls(s, s, t.scale, n) ->     Muls(s, s, 1.0 / D, n)

# %% ex2
def quantise_int4(w):
    """Symmetric round-to-nearest int4 of w [O, K], one scale per row and group of input channels:
    (codes [O, K] in -8 .. 7, scales [O, K / group]); the group size is yours to choose."""
    # --- BEGIN SOLUTION hint="choose a group; per row and group: scale = max|w| / 7, codes = clip(rint(w / scale), -8, 7)"
    group = 16
    o, k = w.shape
    g = min(group, k)
    blocks = w.reshape(o, k // g, g)
    amax = np.abs(blocks).max(axis=2)
    scales = np.where(amax > 0, amax / 7, 1.0).astype(np.float16).astype(np.float32)
    codes = np.clip(np.rint(blocks / scales[..., None]), -8, 7)
    return codes.reshape(o, k), scales
    # --- END SOLUTION

# %% ex2 wrong: one group per row (group = K): 4.25 bits a weight but the perplexity goes over the budget [key: budget/perplexity]
# replace:     group = 16 ->     group = 256

# %% ex2 wrong: scales of max|w| / 8: each group's largest weight clips at 7 [key: int4/clip]
# replace:     scales = np.where(amax > 0, amax / 7, 1.0).astype(np.float16).astype(np.float32) ->     scales = np.where(amax > 0, amax / 8, 1.0).astype(np.float16).astype(np.float32)

# %% ex2 wrong: truncates instead of rounding to nearest [key: int4/rounding]
# replace:     codes = np.clip(np.rint(blocks / scales[..., None]), -8, 7) ->     codes = np.clip(np.trunc(blocks / scales[..., None]), -8, 7)

# %% ex2 wrong: groups of 8: finer, but 6 bits a weight with the scales [key: int4/bits]
# replace:     group = 16 ->     group = 8

# %% ex2 wrong: a group of zero weights gets scale 0 (its codes are 0 / 0) [key: int4/zero]
# replace:     scales = np.where(amax > 0, amax / 7, 1.0).astype(np.float16).astype(np.float32) ->     scales = np.where(amax >= 0, amax / 7, 1.0).astype(np.float16).astype(np.float32)

# %% ex3
def score_heads(attn, length):
    """(induction, echo) scores [layers, heads] from attention maps [layers, heads, 2 * length, 2 * length] of a
    sequence repeated twice: the second copy's mean attention on the token after / at the earlier occurrence."""
    # --- BEGIN SOLUTION hint="queries t = length .. 2 * length - 1: induction on key t - length + 1, echo on key t - length"
    t = np.arange(length, 2 * length - 1)
    induction = attn[:, :, t, t - length + 1].mean(-1)
    echo = attn[:, :, np.arange(length, 2 * length), np.arange(0, length)].mean(-1)
    return induction, echo
    # --- END SOLUTION


def pick_heads(induction, echo, count):
    """The count (layer, head) pairs of the highest induction + echo score."""
    # --- BEGIN SOLUTION hint="sort the pairs by induction + echo, highest first; keep count"
    total = induction + echo
    order = np.argsort(-total, axis=None, kind="stable")[:count]
    return [divmod(int(i), total.shape[1]) for i in order]
    # --- END SOLUTION

# %% ex3 wrong: the induction score looks at the earlier occurrence itself (the echo's key) [key: heads/scores]
# replace:     induction = attn[:, :, t, t - length + 1].mean(-1) ->     induction = attn[:, :, t, t - length].mean(-1)

# %% ex3 wrong: keeps the lowest-scoring heads (ascending sort) [key: heads/choice]
# replace:     order = np.argsort(-total, axis=None, kind="stable")[:count] ->     order = np.argsort(total, axis=None, kind="stable")[:count]

# %% ex4
@kernel
def int4_gemv_kernel(x, w, scales, y, t):
    """y[O] = x[K] @ (codes * scales) for one decode row: this core's column tiles, their int4 codes streamed
    chunk by chunk and dequantised in UB (Cast int4b_t -> half), each group's sum times its scale."""
    first, count = t.core_tiles(GetBlockIdx())
    groups, chunk = t.K // t.group, t.rows * t.tile    # chunk: the codes of one copy
    pipe = TPipe()
    xs = load_scalars(pipe, x, t.K, np.float16)        # the activation row, in scalar registers
    gw, gs, gy = GlobalTensor(int8), GlobalTensor(half), GlobalTensor(float32)
    gw.SetGlobalBuffer(w)
    gs.SetGlobalBuffer(scales)
    gy.SetGlobalBuffer(y, t.O)
    qs, qo = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(qs, 1, t.tile * 2)
    pipe.InitBuffer(qo, 1, t.tile * 4)
    bufs = {}
    for name, nbytes, dtype in (("wh", chunk * 2, half), ("part", t.tile * 4, float32), ("sf", t.tile * 4, float32)):
        b = TBuf()
        pipe.InitBuffer(b, nbytes)
        bufs[name] = b.Get(dtype)
    wh, part, sf = bufs["wh"], bufs["part"], bufs["sf"]
    # TODO 0 (the codes' queue): qw, a VECIN queue of chunk // 2 bytes per buffer (two int4b_t codes a byte).
    # --- BEGIN SOLUTION hint="TODO 0: qw = TQue(TPosition.VECIN, n) and pipe.InitBuffer(qw, n, chunk // 2): how many buffers n?"
    qw = TQue(TPosition.VECIN, 2)
    pipe.InitBuffer(qw, 2, chunk // 2)                 # two buffers: the next chunk's copy overlaps these Axpys
    # --- END SOLUTION
    for i in range(first, first + count):
        acc = qo.AllocTensor(float32)
        Duplicate(acc, 0.0, t.tile)
        for g in range(groups):
            Duplicate(part, 0.0, t.tile)
            for c in range(t.group // t.rows):
                k0 = g * t.group + c * t.rows
                # TODO 1 (stream and dequantise): copy the chunk's codes in, Cast them to half, Axpy each row.
                # --- BEGIN SOLUTION hint="TODO 1: AllocTensor/DataCopy/EnQue/DeQue the chunk, Cast(wh <- int4b_t), one Axpy per row into part"
                codes = qw.AllocTensor(int8)
                DataCopy(codes, gw[(i * t.K + k0) * t.tile // 2], chunk // 2)
                qw.EnQue(codes)
                codes = qw.DeQue(int8)
                Cast(wh, codes.ReinterpretCast(int4b_t), RoundMode.CAST_NONE, chunk)     # exact: -8 .. 7
                for r in range(t.rows):
                    Axpy(part, wh[r * t.tile], xs[k0 + r], t.tile)
                qw.FreeTensor(codes)
                # --- END SOLUTION
            # TODO 2 (scale): the group's scale row of tile i, to float, times part, into acc.
            # --- BEGIN SOLUTION hint="TODO 2: copy the scales of group g of tile i, Cast to float, Mul into part, Add to acc"
            sc = qs.AllocTensor(half)
            DataCopy(sc, gs[(i * groups + g) * t.tile], t.tile)
            qs.EnQue(sc)
            sc = qs.DeQue(half)
            Cast(sf, sc, RoundMode.CAST_NONE, t.tile)
            qs.FreeTensor(sc)
            Mul(part, part, sf, t.tile)
            Add(acc, acc, part, t.tile)
            # --- END SOLUTION
        qo.EnQue(acc)
        acc = qo.DeQue(float32)
        # TODO 3 (copy out): the columns of tile i that y has.
        # --- BEGIN SOLUTION hint="TODO 3: DataCopy t.cols(i) floats of acc to y at column i * t.tile"
        DataCopy(gy[i * t.tile], acc, t.cols(i))
        # --- END SOLUTION
        qo.FreeTensor(acc)

# %% ex4 wrong: one buffer for the codes: MTE2 and the vector unit take turns (over the cycle budget) [key: budget]
# replace:
#     qw = TQue(TPosition.VECIN, 2)
#     pipe.InitBuffer(qw, 2, chunk // 2)                 # two buffers: the next chunk's copy overlaps these Axpys
# with:
#     qw = TQue(TPosition.VECIN, 1)
#     pipe.InitBuffer(qw, 1, chunk // 2)

# %% ex4 wrong: reads tile 0's scales for every tile (the scales are tile-major) [key: int4mm/scales]
# replace:             DataCopy(sc, gs[(i * groups + g) * t.tile], t.tile) ->             DataCopy(sc, gs[g * t.tile], t.tile)

# %% ex4 wrong: copies the whole last tile out, past the end of y when O is not whole tiles [key: OutOfBoundsError]
# replace:         DataCopy(gy[i * t.tile], acc, t.cols(i)) ->         DataCopy(gy[i * t.tile], acc, t.tile)

# %% ex5
@kernel(core="MIX")
def w4a16_matmul_kernel(x, codes, scales, y, t):
    """Y[M, N] = X[M, K] @ (codes * scales)^T on the 310B's AI Core: per N tile, per K step, the vector unit
    dequantises the step's int4 codes in UB, MTE3 copies them to L1, and the cube multiplies them with X."""
    xGm, wGm, sGm, yGm = GlobalTensor(half), GlobalTensor(int8), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x, t.M * t.K)
    wGm.SetGlobalBuffer(codes, t.N * t.K // 2)
    sGm.SetGlobalBuffer(scales, t.N * t.K // t.group)
    yGm.SetGlobalBuffer(y, t.M * t.N)
    groups, kB, rB = t.base_k // t.group, t.base_k // 16, t.Mp // 16      # groups, K blocks, row blocks per step
    block = t.tile_n * 16                              # one K block of a tile: tile_n rows of 16 codes
    pipe = TPipe()
    qCode, qScale, qW = TQue(TPosition.VECIN, 2), TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    qA1, qB1, qA2, qB2, qCO1 = (TQue(TPosition.A1, 1), TQue(TPosition.B1, 2), TQue(TPosition.A2, 2),
                                TQue(TPosition.B2, 2), TQue(TPosition.CO1, 1))
    for q, n, nbytes in ((qCode, 2, t.chunk // 2), (qScale, 2, groups * t.tile_n * 2), (qW, 2, t.chunk * 2),
                         (qA1, 1, t.Mp * t.K * 2), (qB1, 2, t.chunk * 2), (qA2, 2, t.Mp * t.base_k * 2),
                         (qB2, 2, t.chunk * 2), (qCO1, 1, t.Mp * t.tile_n * 4)):
        pipe.InitBuffer(q, n, nbytes)
    sb = TBuf()
    pipe.InitBuffer(sb, groups * t.tile_n * 32)
    scaleBlocks = sb.Get(half)                         # each scale spread over one 32-byte block (16 halves)
    a1 = qA1.AllocTensor(half)                         # all of X in L1 (NZ), read from GM once
    DataCopy(a1, xGm, Nd2NzParams(1, t.M, t.K, 0, t.K, t.Mp, 1, 0))
    qA1.EnQue(a1)
    a1 = qA1.DeQue(half)
    step = 0                                           # K steps so far: this step's L1 buffer is step % 2
    for tile in range(GetBlockIdx(), t.tiles, GetBlockNum()):
        co1 = qCO1.AllocTensor(float32)
        for kk in range(t.steps):
            w4, sc = qCode.AllocTensor(int8), qScale.AllocTensor(half)
            DataCopy(w4, wGm[(tile * t.K // 16 + kk * kB) * block // 2], t.chunk // 2)
            DataCopy(sc, sGm[(tile * t.K // t.group + kk * groups) * t.tile_n], groups * t.tile_n)
            qCode.EnQue(w4)
            qScale.EnQue(sc)
            w4, sc = qCode.DeQue(int8), qScale.DeQue(half)
            w = qW.AllocTensor(half)
            # TODO 1 (AntiQuant): the codes to half in w, then each K block b of w times its group's scales.
            # --- BEGIN SOLUTION hint="TODO 1: Cast(w <- int4b_t), Brcb the scales to one block each, one Mul per K block by its group's blocks"
            Cast(w, w4.ReinterpretCast(int4b_t), RoundMode.CAST_NONE, t.chunk)      # exact: -8 .. 7
            Brcb(scaleBlocks, sc, groups * t.tile_n // 8, BrcbRepeatParams(1, 8))  # scale n -> block n
            for b in range(kB):
                g = b * 16 // t.group                  # the group of K block b's 16 input channels
                Mul(w[b * block], w[b * block], scaleBlocks[g * block], block)
            # --- END SOLUTION
            qCode.FreeTensor(w4)
            qScale.FreeTensor(sc)
            qW.EnQue(w)
            w = qW.DeQue(half)
            b1 = qB1.AllocTensor(half)
            slot = step % 2
            if step >= 2:                              # LoadData of step - 2 has finished reading this buffer
                WaitFlag(HardEvent.MTE1_MTE3, slot)
            # TODO 2 (UB -> L1): copy w into b1, then make MTE1 wait for the copy (event id slot).
            # --- BEGIN SOLUTION hint="TODO 2: DataCopy(b1, w, t.chunk) on MTE3, then SetFlag/WaitFlag(HardEvent.MTE3_MTE1, slot)"
            DataCopy(b1, w, t.chunk)
            SetFlag(HardEvent.MTE3_MTE1, slot)
            WaitFlag(HardEvent.MTE3_MTE1, slot)
            # --- END SOLUTION
            qW.FreeTensor(w)
            qB1.EnQue(b1)
            b1 = qB1.DeQue(half)
            a2, b2 = qA2.AllocTensor(half), qB2.AllocTensor(half)
            for i in range(rB):                        # X's K blocks of this step, row block i
                LoadData(a2[i * kB * 256], a1[(kk * kB * rB + i) * 256], LoadData2DParams(0, kB, rB, 0, 0, False, 0))
            LoadData(b2, b1, LoadData2DParams(0, kB * t.tile_n // 16, 1, 0, 0, False, 0))
            SetFlag(HardEvent.MTE1_MTE3, slot)         # b1 may be written again
            qB1.FreeTensor(b1)
            qA2.EnQue(a2)
            qB2.EnQue(b2)
            a2, b2 = qA2.DeQue(half), qB2.DeQue(half)
            # TODO 3 (Mmad): co1 (+)= a2 @ b2, M x tile_n x base_k; the first K step starts co1 from zero.
            # --- BEGIN SOLUTION hint="TODO 3: Mmad(co1, a2, b2, MmadParams(m, n, k, 0, False, cmatrixInitVal)): which steps start from zero?"
            Mmad(co1, a2, b2, MmadParams(t.M, t.tile_n, t.base_k, 0, False, kk == 0))
            # --- END SOLUTION
            qA2.FreeTensor(a2)
            qB2.FreeTensor(b2)
            step += 1
        qCO1.EnQue(co1)
        co1 = qCO1.DeQue(float32)
        Fixpipe(yGm[tile * t.tile_n], co1, FixpipeParamsV220(t.tile_n, t.M, t.Mp, t.N, False, QuantMode_t.F322F16))
        qCO1.FreeTensor(co1)
    qA1.FreeTensor(a1)
    for s in range(max(0, step - 2), step):            # the last two steps' SetFlags have their WaitFlags
        WaitFlag(HardEvent.MTE1_MTE3, s % 2)

# %% ex5 wrong: every K block multiplied by the scales of group 0 [key: w4mm/group]
# replace:                 g = b * 16 // t.group                  # the group of K block b's 16 input channels ->                 g = 0

# %% ex5 wrong: every Mmad starts co1 from zero: only the last K step is left [key: w4mm/accumulate]
# replace:             Mmad(co1, a2, b2, MmadParams(t.M, t.tile_n, t.base_k, 0, False, kk == 0)) ->             Mmad(co1, a2, b2, MmadParams(t.M, t.tile_n, t.base_k, 0, False, True))

# %% ex5 wrong: LoadData reads L1 without waiting for the UB -> L1 copy (no MTE3 -> MTE1 flag) [key: RaceError]
# replace:
#             SetFlag(HardEvent.MTE3_MTE1, slot)
#             WaitFlag(HardEvent.MTE3_MTE1, slot)
# with:

# %% ex5 wrong: one Mul per 16-code row instead of one per K block: right values, 16x the vector instructions [key: budget]
# replace:
#                 Mul(w[b * block], w[b * block], scaleBlocks[g * block], block)
# with:
#                 for r in range(t.tile_n):
#                     Mul(w[b * block + r * 16], w[b * block + r * 16], scaleBlocks[g * block + r * 16], 16)
