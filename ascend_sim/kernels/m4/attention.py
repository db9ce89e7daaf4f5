"""Scaled dot-product attention (注意力机制): a naive three-kernel version and a FlashAttention-style MIX kernel.

``out = softmax(scale * Q K^T + mask) V`` per (batch, head), layouts BSH (``[B, S, N*D]``) and BNSD
(``[B, N, S, D]``), half inputs, float32 output; masks: causal (key j > query i hidden) and padding (keys
at or beyond ``kv_len[b]`` hidden).

naive (``attention_naive``)
    1. AIC: ``S = Q K^T`` for every head to GM (float32, B*N*S*S values), 2. AIV: row softmax with the scale
    and masks, P to GM in half, 3. AIC: ``O = P V``. GM traffic and memory grow with S^2.

flash (``attention_flash``, one MIX launch; the FA-2 schedule of the real kernels)
    Work items are (batch, head, block of ``br`` query rows, 64 or 128, picked by ``pick_rows``), dealt round
    robin over the core groups (one AIC and its two AIVs). Per item the AIC loads ``Q_i`` once (GM -> L1 ->
    L0A, kept there) and walks the key blocks of ``BC`` = 128 columns with its own cube instructions (Nd2Nz
    DataCopy, LoadData, Mmad, Fixpipe): ``S_j = Q_i K_j^T`` into a double-buffered GM workspace (flag to both
    AIVs), ``O_j = P_j V_j`` into another once both AIVs have flagged ``P_j``. The schedule is
    software-pipelined: S_{j+2} is computed as soon as both AIVs have read S_j into UB (a "slot free" flag),
    V_{j+1} is prefetched, and P_j V_j runs while the AIVs work on block j+1. Each AIV owns half of the rows;
    its running max, running sum and output accumulator stay in UB for the whole item, it prefetches S_{j+1}
    into a second UB slot, and it writes P_j in the cube's NZ layout so the AIC reads P in one contiguous copy
    (attention_softmax.py). Workspaces are fixed per group (two ``br x BC`` float and half tiles, two
    ``br x D`` float tiles), so memory grows with S, not S^2. Causal: key blocks right of the diagonal are
    skipped, blocks that cross it add a band of a host mask table; padding: the last valid key block adds a
    row that hides the columns past ``kv_len``. Split-KV: when the last round of query blocks would leave
    groups idle, each of those blocks is cut into ``parts`` key ranges run on all the groups, and a second
    (AIV) launch merges the parts' accumulators, maxima and sums (attention_merge.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (ASCEND_IS_AIC, PIPE_FIX, PIPE_MTE2, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy,
                        Fixpipe, FixpipeParamsV220, GetBlockIdx, GetBlockNum, GetSubBlockIdx, GetSubBlockNum,
                        GlobalTensor, LaunchResult, LoadData, LoadData2DParams, Mmad, MmadParams, Nd2NzParams,
                        QuantMode_t, TPipe, TPosition, TQue, float32, half, kernel, launch)
from ascend_sim.kernels.m4.attention_merge import MergeTiling, merge_parts_kernel
from ascend_sim.kernels.m4.attention_softmax import NEG, OnlineSoftmaxRows

BC = 128                # key columns per block: a 128 x 128 cube block (the FA tuning case's best shape)
BR_CHOICES = (128, 64)  # query rows per block (split between the two AIVs); the host picks per shape
SPLIT_MIN_BLOCKS = 4    # split-KV parts keep at least this many key blocks (the merge costs about one block a part)
FLAG_S, FLAG_O = 1, 2
FLAG_P, FLAG_FREE = 3, 5    # both AIVs report (mode 2): the AIC's counter rises once both halves are done
LAYOUTS = ("BSH", "BNSD")
FRACTAL = 256           # half values in one 512-byte fractal (16 x 16)


# ----------------------------------------------------------------------------- host side
@dataclass(frozen=True)
class AttentionTiling:
    """Shapes, layout strides, the masks, the block sizes and the per-group workspace layout."""

    B: int
    N: int
    S: int
    D: int
    layout: str
    scale: float
    causal: bool
    kv_len: tuple[int, ...]
    blocks: int
    br: int = 128
    parts: int = 1          # key-sequence parts of each query block of the last, partial round (split-KV)

    @property
    def pitch(self) -> int:
        """GM row pitch of Q, K, V and O in elements."""
        return self.N * self.D if self.layout == "BSH" else self.D

    def head_offset(self, bh: int) -> int:
        b, n = divmod(bh, self.N)
        return b * self.S * self.N * self.D + n * self.D if self.layout == "BSH" else bh * self.S * self.D

    @property
    def workspace_bytes(self) -> int:
        """GM the kernel needs beyond Q, K, V and O: per group two S_j (float), two P_j (half), two O_j (float)."""
        return (self.blocks * 2 * (self.br * BC * 4 + self.br * BC * 2 + self.br * self.D * 4)
                + self.tail * self.parts * self.partial_floats * 4)

    @property
    def tail(self) -> int:
        """Query blocks of the last round when it would leave groups idle and they are split (else 0)."""
        return self.items % self.blocks if self.parts > 1 else 0

    @property
    def partial_floats(self) -> int:
        """One part's state for the merge: the br x D accumulator, then br maxima and br sums."""
        return self.br * self.D + 2 * self.br

    @property
    def q_blocks(self) -> int:
        return -(-self.S // self.br)

    @property
    def items(self) -> int:
        return self.B * self.N * self.q_blocks

    def kv_blocks(self, b: int, i: int) -> int:
        """Key blocks query block ``i`` of batch ``b`` visits (causal: up to the diagonal; padding: to kv_len)."""
        last = self.kv_len[b]
        if self.causal:
            last = min(last, (i + 1) * self.br)
        return -(-last // BC)

    def band_shift(self, i: int, j: int) -> int | None:
        """Column of the causal band table where block (i, j) starts, or None when no key of it is hidden."""
        d = i * self.br - j * BC            # key c of the block is hidden from row r when c > r + d
        if not self.causal or d >= BC - 1:
            return None
        return BC - d


def block_cost(br: int) -> int:
    """GM packages the AIC reads per key block: BC rows of K, BC rows of V and br rows of P (each row one
    Nd2Nz burst, priced as one 512-byte package), plus the three copies' startups (210 cycles = ~26 packages
    at 8 cycles each, chips.py aic_gm_read_startup). The AIC's MTE2 is the kernel's bound (RESULTS 12)."""
    return 2 * BC + br + 3 * 26


def pick_rows(items_of, groups: int) -> int:
    """The query block (128 or 64 rows) with the least AIC read time on the busiest group: rounds x block_cost.

    Larger blocks read K and V once for more rows; smaller ones give more work items to spread over the groups.
    """
    return min(BR_CHOICES, key=lambda br: (-(-items_of(br) // groups) * block_cost(br), -br))


def split_parts(tail: int, groups: int, nkv: int) -> int:
    """Split-KV parts for the ``tail`` query blocks of the last round: the fewest key blocks on the busiest
    group, rounds of pieces x blocks per piece, plus about one block per part for the merge; each part
    keeps at least SPLIT_MIN_BLOCKS key blocks (1: no split)."""
    best = max(1, min(8, nkv // SPLIT_MIN_BLOCKS))
    return min(range(1, best + 1), key=lambda p: -(-tail * p // groups) * -(-nkv // p) + (p - 1))


def attention_tiling(q: np.ndarray, layout: str, num_heads: int, *, causal: bool = False,
                     kv_len=None, chip=None, br: int | None = None, parts: int | None = None) -> AttentionTiling:
    """The host tiling from the runtime shapes: B, N, S, D from ``q`` and ``layout``, the masks checked."""
    from ascend_sim.hw.chips import get_chip
    if layout not in LAYOUTS:
        raise ValueError(f"attention layout {layout!r}: use one of {LAYOUTS}")
    if layout == "BSH":
        B, S, H = q.shape
        if H % num_heads:
            raise ValueError(f"BSH: hidden size {H} is not a multiple of num_heads = {num_heads}")
        N, D = num_heads, H // num_heads
    else:
        B, N, S, D = q.shape
    if D % 16 or not 16 <= D <= 128:
        raise ValueError(f"attention head size D = {D}: this kernel takes a multiple of 16 up to 128")
    lens = tuple([S] * B if kv_len is None else (int(v) for v in kv_len))
    if len(lens) != B or not all(1 <= v <= S for v in lens):
        raise ValueError(f"kv_len must give 1..{S} valid keys for each of the {B} batches, got {kv_len}")
    groups = get_chip(chip).aic_count
    if br is None:
        br = pick_rows(lambda r: B * N * -(-S // r), groups)
    elif br not in BR_CHOICES:
        raise ValueError(f"attention query block br = {br}: use one of {BR_CHOICES}")
    items = B * N * -(-S // br)
    blocks = max(1, min(items, groups))
    tail = items % blocks if items > blocks else 0
    if parts is None:
        parts = split_parts(tail, blocks, -(-S // BC)) if tail else 1
    elif parts < 1 or (parts > 1 and not tail):
        raise ValueError(f"attention split-KV parts = {parts}: the last round has {tail} query blocks for "
                         f"{blocks} groups; use 1" + (" or more" if tail else ""))
    return AttentionTiling(B, N, S, D, layout, 1.0 / float(np.sqrt(D)), bool(causal), lens, blocks, br, parts)


def mask_tables(br: int) -> tuple[np.ndarray, np.ndarray]:
    """(causal band ``[br, 2*BC + br]``: entry (r, x) is NEG when x > r + BC; column rows ``[BC + 1, BC]``:
    row c hides columns >= c). Block (i, j) reads the band's columns from ``band_shift(i, j)``."""
    width = 2 * BC + br
    band = np.where(np.arange(width)[None, :] > np.arange(br)[:, None] + BC, NEG, 0.0).astype(np.float32)
    cols = np.where(np.arange(BC)[None, :] >= np.arange(BC + 1)[:, None], NEG, 0.0).astype(np.float32)
    return band, cols


def _gm(ptr, dtype, size=None) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr, size)
    return g


def _up16(n: int) -> int:
    return -(-n // 16) * 16


# ----------------------------------------------------------------------------- cube side
class CubeStages:
    """The AIC's buffers (L1 double-buffered for K, V and P; Q held in L0A) and its three matmul steps."""

    def __init__(self, pipe: TPipe, br: int, d: int):
        self.br, self.d = br, d
        tile = br * BC * 2
        self.q1, self.q2 = TQue(TPosition.A1, 1), TQue(TPosition.A2, 1)
        self.p1, self.p2 = TQue(TPosition.A1, 2), TQue(TPosition.A2, 1)
        self.k1, self.k2 = TQue(TPosition.B1, 2), TQue(TPosition.B2, 1)
        self.v1, self.v2 = TQue(TPosition.B1, 2), TQue(TPosition.B2, 1)
        self.cs, self.co = TQue(TPosition.CO1, 1), TQue(TPosition.CO1, 1)
        for que, num, nbytes in ((self.q1, 1, br * d * 2), (self.q2, 1, br * d * 2), (self.p1, 2, tile),
                                 (self.p2, 1, tile), (self.k1, 2, BC * d * 2), (self.k2, 1, BC * d * 2),
                                 (self.v1, 2, BC * d * 2), (self.v2, 1, BC * d * 2), (self.cs, 1, br * BC * 4),
                                 (self.co, 1, br * d * 4)):
            pipe.InitBuffer(que, num, nbytes)
        self.q = None

    @staticmethod
    def _to_l1(que: TQue, gm, rows: int, cols: int, ld: int):
        """``rows x cols`` of a row-major GM matrix (row pitch ``ld``) into NZ fractals in L1 (Nd2Nz)."""
        l1 = que.AllocTensor(half)
        DataCopy(l1, gm, Nd2NzParams(1, rows, cols, 0, ld, _up16(rows), 1, 0))
        que.EnQue(l1)
        return que.DeQue(half)

    @staticmethod
    def _a_to_l0(que: TQue, a1, rows: int, cols: int, pitch_rows: int | None = None):
        """An NZ left matrix (rows x cols, groups ``pitch_rows`` rows apart) from L1 into L0A (ZZ): one LoadData
        per 16-row block."""
        a2 = que.AllocTensor(half)
        kb, pitch = _up16(cols) // 16, _up16(pitch_rows or rows) // 16
        for i in range(_up16(rows) // 16):
            LoadData(a2[i * kb * FRACTAL], a1[i * FRACTAL], LoadData2DParams(0, kb, pitch, 0, 0, False, 0))
        que.EnQue(a2)
        return que.DeQue(half)

    def load_q(self, gm, m: int, ld: int) -> None:
        """Q_i: GM -> L1 -> L0A once per work item; it stays in L0A for every key block."""
        q1 = self._to_l1(self.q1, gm, m, self.d, ld)
        self.q = self._a_to_l0(self.q2, q1, m, self.d)
        self.q1.FreeTensor(q1)

    def free_q(self) -> None:
        self.q2.FreeTensor(self.q)
        self.q = None

    def load_k(self, gm, n: int, ld: int):
        """K_j (n keys x D, row-major) into L1: the transposed right matrix of S = Q K^T."""
        return self._to_l1(self.k1, gm, n, self.d, ld)

    def load_v(self, gm, n: int, ld: int):
        """V_j (n keys x D, row-major) into L1: the right matrix of O = P V."""
        return self._to_l1(self.v1, gm, n, self.d, ld)

    def scores(self, k1, m: int, n: int, dst) -> None:
        """S_j = Q_i K_j^T: K's NZ fractals are already ZN for L0B; Mmad; Fixpipe rows of BC floats to GM."""
        b2 = self.k2.AllocTensor(half)
        nb, pitch = _up16(n) // 16, _up16(n) // 16
        for kb in range(self.d // 16):
            LoadData(b2[kb * nb * FRACTAL], k1[kb * pitch * FRACTAL], LoadData2DParams(0, nb, 1, 0, 0, False, 0))
        self.k1.FreeTensor(k1)
        self.k2.EnQue(b2)
        self._mmad_out(self.cs, self.q, self.k2, m, n, self.d, dst, BC)

    def output(self, p_gm, v1, m: int, n: int, dst) -> None:
        """O_j = P_j V_j: P (the AIVs wrote it in NZ, ``br`` rows per group) GM -> L1 in one contiguous copy
        -> L0A, V's fractals transposed into L0B."""
        p1 = self.p1.AllocTensor(half)
        DataCopy(p1, p_gm, self.br * BC)
        self.p1.EnQue(p1)
        p1 = self.p1.DeQue(half)
        a2 = self._a_to_l0(self.p2, p1, m, n, self.br)
        self.p1.FreeTensor(p1)
        b2 = self.v2.AllocTensor(half)
        nb, kb = self.d // 16, _up16(n) // 16
        for i in range(kb):
            LoadData(b2[i * nb * FRACTAL], v1[i * FRACTAL], LoadData2DParams(0, nb, kb, 0, 0, True, 0))
        self.v1.FreeTensor(v1)
        self.v2.EnQue(b2)
        self._mmad_out(self.co, a2, self.v2, m, self.d, n, dst, self.d)
        self.p2.FreeTensor(a2)

    @staticmethod
    def _mmad_out(co: TQue, a2, b_que: TQue, m: int, n: int, k: int, dst, ld: int) -> None:
        b2 = b_que.DeQue(half)
        c = co.AllocTensor(float32)
        Mmad(c, a2, b2, MmadParams(m, n, k, 0, False, True))
        b_que.FreeTensor(b2)
        co.EnQue(c)
        c = co.DeQue(float32)
        Fixpipe(dst, c, FixpipeParamsV220(n, m, _up16(m), ld, False, QuantMode_t.NoQuant, 0))
        co.FreeTensor(c)


# ----------------------------------------------------------------------------- the MIX kernel
@dataclass(frozen=True)
class _Item:
    """One work item's addresses and sizes (shared by the AIC and AIV code paths)."""

    base: int       # GM offset of the head's row 0 in Q, K, V, O
    i: int          # query block
    b: int          # batch
    m: int          # query rows in this block
    j0: int         # key blocks j0 .. j1 - 1 visited
    j1: int
    piece: int      # -1: the whole key sequence (normalise and write O); else the part's slot for the merge


def work_items(t: AttentionTiling) -> list[_Item]:
    """Whole query blocks (a multiple of the groups), then the tail's blocks cut into ``parts`` key ranges."""
    whole = t.items - t.tail
    out = []
    for item in range(t.items):
        bh, i = divmod(item, t.q_blocks)
        b = bh // t.N
        nkv, m = t.kv_blocks(b, i), min(t.br, t.S - i * t.br)
        if item < whole:
            out.append(_Item(t.head_offset(bh), i, b, m, 0, nkv, -1))
            continue
        for p in range(t.parts):
            piece = (item - whole) * t.parts + p
            out.append(_Item(t.head_offset(bh), i, b, m, p * nkv // t.parts, (p + 1) * nkv // t.parts, piece))
    return out


def _cols(t: AttentionTiling, it: _Item, j: int) -> int:
    """Valid keys in key block ``j`` (the sequence end, or kv_len for the padding mask)."""
    return min(BC, t.S - j * BC, t.kv_len[it.b] - j * BC)


def _cube_item(cube: CubeStages, t: AttentionTiling, it: _Item, q, k, v, s_ws, p_ws, o_ws) -> None:
    """AIC: S_0 and S_1 ahead; then per block j: S_{j+2} once S_j is read, V_{j+1} prefetched, O_j = P_j V_j."""
    pitch = ld = t.pitch            # GM row pitch of Q, K, V (elements)
    kg, vg = _gm(k, half), _gm(v, half)
    if it.j0 == it.j1:
        return
    cube.load_q(_gm(q, half)[it.base + it.i * t.br * pitch], it.m, ld)

    def s_block(j: int) -> None:
        k1 = cube.load_k(kg[it.base + j * BC * pitch], _cols(t, it, j), ld)
        cube.scores(k1, it.m, _cols(t, it, j), s_ws[(j % 2) * t.br * BC])
        CrossCoreSetFlag(2, PIPE_FIX, FLAG_S)

    s_block(it.j0)
    v_next = cube.load_v(vg[it.base + it.j0 * BC * pitch], _cols(t, it, it.j0), ld)
    if it.j0 + 1 < it.j1:
        s_block(it.j0 + 1)
    for j in range(it.j0, it.j1):
        if j + 2 < it.j1:      # slot j % 2 is free as soon as both AIVs have read S_j into UB
            CrossCoreWaitFlag(FLAG_FREE)
            s_block(j + 2)
        v1 = v_next
        if j + 1 < it.j1:
            v_next = cube.load_v(vg[it.base + (j + 1) * BC * pitch], _cols(t, it, j + 1), ld)
        CrossCoreWaitFlag(FLAG_P)
        cube.output(p_ws[(j % 2) * t.br * BC], v1, it.m, _cols(t, it, j), o_ws[(j % 2) * t.br * t.D])
        CrossCoreSetFlag(2, PIPE_FIX, FLAG_O)
    for j in range(max(it.j0, it.j1 - 2), it.j1):   # the frees nobody waited for (no S_{j+2} to compute)
        CrossCoreWaitFlag(FLAG_FREE)
    cube.free_q()


def _vector_item(rows: OnlineSoftmaxRows, t: AttentionTiling, it: _Item, out, s_ws, p_ws, o_ws, band, cols,
                 parts_ws) -> None:
    """AIV: per block j: softmax of S_j, P_j out (flag), S_{j+1} in, then add O_{j-1} (one block behind the cube)."""
    half_rows = t.br // 2
    r0 = GetSubBlockIdx() * half_rows
    n = max(0, min(half_rows, it.m - r0))
    if n:
        rows.start(n)
    width = 2 * BC + t.br

    def load(j: int) -> None:
        CrossCoreWaitFlag(FLAG_S)
        if n:
            rows.load_scores(s_ws[(j % 2) * t.br * BC + r0 * BC], n, j % 2)
        CrossCoreSetFlag(2, PIPE_MTE2, FLAG_FREE)     # the cube may overwrite the slot

    def add_o(j: int) -> None:
        CrossCoreWaitFlag(FLAG_O)
        if n:
            rows.accumulate(o_ws[(j % 2) * t.br * t.D + r0 * t.D], n, j % 2)

    for j in range(it.j0, it.j1):
        slot = j % 2
        if j == it.j0:
            load(j)
        if n:
            rows.scale(n, slot, t.scale)
            shift = t.band_shift(it.i, j)
            if shift is not None:
                rows.add_tile_mask(_gm(band, float32)[r0 * width + shift], n, width, slot)
            n_j = _cols(t, it, j)
            if n_j < BC:
                rows.add_row_mask(_gm(cols, float32)[n_j * BC], n, slot)
            rows.softmax_flash_v2(n, slot)
            rows.store_p(p_ws[slot * t.br * BC + r0 * 16], n, slot, t.br)
        CrossCoreSetFlag(2, PIPE_MTE3, FLAG_P)
        if j + 1 < it.j1:
            load(j + 1)             # S_{j+1} streams in while the vector pipe still works on block j
        if j > it.j0:
            add_o(j - 1)            # P_{j-1} V_{j-1}, computed by the cube while this AIV ran block j
    if it.j1 > it.j0:
        add_o(it.j1 - 1)
    if n and it.piece < 0:
        rows.finish(_gm(out, float32)[it.base + (it.i * t.br + r0) * t.pitch], n, t.pitch)
    elif n:
        rows.store_partial(_gm(parts_ws, float32)[it.piece * t.partial_floats], n, t.br, r0)


@kernel(core="MIX")
def flash_attention_kernel(q, k, v, out, ws_s, ws_p, ws_o, band, cols, parts_ws, t: AttentionTiling) -> None:
    """One group (AIC + 2 AIV) per work item (query block, or a key range of one), items dealt round robin."""
    is_aic = ASCEND_IS_AIC()
    group = GetBlockIdx() if is_aic else GetBlockIdx() // GetSubBlockNum()
    groups = GetBlockNum()      # numBlocks on both sides of a MIX kernel (GetBlockNum.md); AIVs count GetSubBlockNum per group
    pipe = TPipe()
    s_ws = _gm(ws_s, float32)[group * 2 * t.br * BC]
    p_ws = _gm(ws_p, half)[group * 2 * t.br * BC]
    o_ws = _gm(ws_o, float32)[group * 2 * t.br * t.D]
    if is_aic:
        cube = CubeStages(pipe, t.br, t.D)
        for it in work_items(t)[group::groups]:
            _cube_item(cube, t, it, q, k, v, s_ws, p_ws, o_ws)
    else:
        rows = OnlineSoftmaxRows(pipe, t.br // 2, BC, t.D)
        for it in work_items(t)[group::groups]:
            _vector_item(rows, t, it, out, s_ws, p_ws, o_ws, band, cols, parts_ws)


def _workspaces(t: AttentionTiling) -> tuple[np.ndarray, ...]:
    g = t.blocks * 2 * t.br                                         # workspace_bytes
    return (np.zeros(g * BC, np.float32), np.zeros(g * BC, np.float16), np.zeros(g * t.D, np.float32),
            np.zeros(max(1, t.tail * t.parts) * t.partial_floats, np.float32))


def merge_tiling(t: AttentionTiling) -> MergeTiling:
    """The merge launch's blocks: the tail's query blocks, in the order of their pieces."""
    blocks = tuple((it.base + it.i * t.br * t.pitch, it.m) for it in work_items(t) if it.piece >= 0
                   and it.piece % t.parts == 0)
    return MergeTiling(blocks, t.parts, t.br, BC, t.D, t.pitch, t.partial_floats)


def attention_flash(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, layout: str = "BNSD", num_heads: int = 1,
                    causal: bool = False, kv_len=None, chip=None, numerics: bool = True,
                    br: int | None = None, parts: int | None = None) -> tuple[np.ndarray, list[LaunchResult]]:
    """FlashAttention-style MIX kernel: half Q, K, V (same shape) -> float32 output of that shape, and the
    LaunchResults (the MIX kernel, then the split-KV merge when the last round was split).

    ``numerics=False``: the timing-only launches (same cycles and trace; the output stays zero).
    """
    q, k, v = (np.ascontiguousarray(a, np.float16) for a in (q, k, v))
    if not q.shape == k.shape == v.shape:
        raise ValueError(f"attention: Q {q.shape}, K {k.shape} and V {v.shape} must have one shape here "
                         "(self-attention, Sq = Skv)")
    t = attention_tiling(q, layout, num_heads, causal=causal, kv_len=kv_len, chip=chip, br=br, parts=parts)
    out = np.zeros(q.shape, np.float32)
    band, cols = mask_tables(t.br)
    ws = _workspaces(t)
    res = [launch(flash_attention_kernel, t.blocks, q, k, v, out, *ws[:3], band, cols, ws[3], t, chip=chip,
                  gm_names=["q", "k", "v", "out", "ws_s", "ws_p", "ws_o", "band", "cols", "parts"],
                  numerics=numerics)]
    if t.tail:
        mt = merge_tiling(t)
        res.append(launch(merge_parts_kernel, 2 * len(mt.blocks), ws[3], out, mt, chip=chip,
                          gm_names=["parts", "out"], numerics=numerics))
    return out, res


def attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, layout: str = "BNSD", num_heads: int = 1,
                  causal: bool = False, kv_len=None) -> np.ndarray:
    """numpy reference in float64 on the half inputs, returned as float32 in the input layout."""
    def to_bnsd(a):
        a = a.astype(np.float64)
        if layout == "BSH":
            B, S, H = a.shape
            return a.reshape(B, S, num_heads, H // num_heads).transpose(0, 2, 1, 3)
        return a
    qq, kk, vv = (to_bnsd(np.asarray(a, np.float16)) for a in (q, k, v))
    B, N, S, D = qq.shape
    s = qq @ kk.transpose(0, 1, 3, 2) / np.sqrt(D)
    mask = np.zeros((B, 1, S, S), bool)
    if causal:
        mask |= np.triu(np.ones((S, S), bool), 1)[None, None]
    if kv_len is not None:
        mask |= (np.arange(S)[None, :] >= np.asarray(kv_len)[:, None])[:, None, None, :]
    s = np.where(mask, -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    o = (p / p.sum(axis=-1, keepdims=True)) @ vv
    if layout == "BSH":
        o = o.transpose(0, 2, 1, 3).reshape(B, S, N * D)
    return o.astype(np.float32)


__all__ = ["BC", "BR_CHOICES", "NEG", "LAYOUTS", "AttentionTiling", "attention_tiling", "block_cost", "pick_rows", "split_parts", "mask_tables",
           "CubeStages", "work_items", "merge_tiling", "flash_attention_kernel", "attention_flash", "attention_ref"]
