"""The vector side of the FlashAttention-style kernel: one AIV's rows of a query block, online softmax in UB.

The running max ``m``, running sum ``l`` and the output accumulator ``acc`` stay in UB for the whole query
block (they never go back to GM); each key block's scores come in from the cube's workspace, its
probabilities go out in half, and its ``P_j V_j`` comes back to be added. SoftmaxFlashV2's update
(migration_engineering.md s2, SoftmaxFlashV2.md): "x_max = max(inmax, rowmax(src)), dst = exp(src - x_max),
exp_max = exp(inmax - x_max), x_sum = exp_max * insum + sum(dst)". ``exp_max`` is kept per key block (two
slots), because ``P_j V_j`` is added one block later, after the next block's softmax (the pipeline).
"""
from __future__ import annotations

from ascend_sim import (Add, Adds, BinaryRepeatParams, Brcb, BrcbRepeatParams, Cast, DataCopy, DataCopyParams, Div,
                        Duplicate, Exp, HardEvent, Max, Mul, Muls, ReduceOrder, RoundMode, SetFlag, Sub, TBuf, TPipe, UnaryRepeatParams,
                        WaitFlag, WholeReduceMax, WholeReduceSum, float32, half)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES

NEG = -1e30             # masked score: finite, so exp(NEG - m) is 0 and no row computes inf - inf
LANES = 64              # float32 values in one 256-byte vector repeat
FLOAT_BLOCK = DATA_BLOCK_BYTES // 4


def handoff(event: HardEvent) -> None:
    """Order two pipes inside one AIV (the producer's writes land before the consumer reads)."""
    SetFlag(event, 0)
    WaitFlag(event, 0)


def copy_rows(dst, src, n: int, width: int, gm_pitch: int, to_gm: bool) -> None:
    """``n`` rows of ``width`` floats between UB (packed) and GM (row pitch ``gm_pitch`` floats)."""
    blocks, gap = width // FLOAT_BLOCK, (gm_pitch - width) // FLOAT_BLOCK
    DataCopy(dst, src, DataCopyParams(n, blocks, 0, gap) if to_gm else DataCopyParams(n, blocks, gap, 0))


class OnlineSoftmaxRows:
    """Up to ``rows`` query rows of ``bc``-column key blocks and a ``d``-wide accumulator, all in UB."""

    def __init__(self, pipe: TPipe, rows: int, bc: int, d: int):
        self.rows, self.bc, self.d = rows, bc, d
        small = max(rows, LANES) * 4
        # two score slots (block j+1 loads while block j is in the vector pipe); the mask rows and the fold of
        # the row reductions share one buffer (a mask load waits for the vector pipe anyway)
        names = {"s0": rows * bc * 4, "s1": rows * bc * 4, "p": rows * bc * 2, "o": rows * d * 4,
                 "acc": rows * d * 4, "tmp": rows * bc * 4, "m": small, "m_new": small, "l": small,
                 "red": small, "e0": small, "e1": small, "blk": rows * 8 * 4}
        self.buf = {}
        self.pending = [False, False]           # a V_MTE2 flag set on the score slot and not yet waited for
        for name, nbytes in names.items():
            b = TBuf()
            pipe.InitBuffer(b, nbytes)
            self.buf[name] = b.Get(half if name == "p" else float32)

    def start(self, n: int) -> None:
        b = self.buf
        handoff(HardEvent.V_MTE2)                  # the last item's vector reads of the score slots are done
        Duplicate(b["m"], NEG, self.rows)       # all rows: a split-KV part writes whole blocks of them
        Duplicate(b["l"], 0.0, self.rows)
        Duplicate(b["acc"], 0.0, n * self.d)

    def _row_broadcast(self, op, dst, src, per_row, n: int, width: int) -> None:
        """``dst[r, :] = op(src[r, :], per_row[r])`` for ``n`` rows of ``width`` floats (Brcb, then stride 0)."""
        blk = self.buf["blk"]
        Brcb(blk, per_row, -(-n // 8), BrcbRepeatParams(1, 8))
        rep = width // FLOAT_BLOCK
        for c0 in range(0, width, LANES):
            op(dst[c0], src[c0], blk, min(LANES, width - c0), n, BinaryRepeatParams(1, 1, 0, rep, rep, 1))

    def _row_reduce(self, s, fold, reduce, n: int) -> None:
        """``red[r] = reduce over the row`` of the scores: fold the 64-column chunks, then one WholeReduce."""
        b, rep = self.buf, self.bc // FLOAT_BLOCK
        src, src_rep = s, rep
        if self.bc > LANES:
            fold(b["tmp"], s, s[LANES], LANES, n, BinaryRepeatParams(1, 1, 1, 8, rep, rep))
            for c0 in range(2 * LANES, self.bc, LANES):
                fold(b["tmp"], b["tmp"], s[c0], LANES, n, BinaryRepeatParams(1, 1, 1, 8, 8, rep))
            src, src_rep = b["tmp"], 8
        reduce(src, src_rep)

    def load_scores(self, s_gm, n: int, slot: int) -> None:
        """Start loading ``n`` score rows (packed, ``bc`` wide) into score slot ``slot``: it waits only for the
        slot's last reader (block j-2, event id ``1 + slot``), not for the block the vector pipe works on now."""
        if self.pending[slot]:
            WaitFlag(HardEvent.V_MTE2, 1 + slot)
            self.pending[slot] = False
        DataCopy(self.buf[f"s{slot}"], s_gm, n * self.bc)

    def scale(self, n: int, slot: int, factor: float) -> None:
        """Wait for the loads, then scale the slot's scores."""
        s = self.buf[f"s{slot}"]
        handoff(HardEvent.MTE2_V)
        Muls(s, s, factor, n * self.bc)

    def add_tile_mask(self, mask_gm, n: int, pitch: int, slot: int) -> None:
        """Add ``n`` mask rows of ``bc`` floats read with a GM row pitch (the causal band)."""
        b, s = self.buf, self.buf[f"s{slot}"]
        handoff(HardEvent.V_MTE2)
        copy_rows(b["tmp"], mask_gm, n, self.bc, pitch, to_gm=False)
        handoff(HardEvent.MTE2_V)
        Add(s, s, b["tmp"], n * self.bc)

    def add_row_mask(self, row_gm, n: int, slot: int) -> None:
        """Add one mask row to every loaded score row (the padding columns past ``kv_len``)."""
        b, s, rep = self.buf, self.buf[f"s{slot}"], self.bc // FLOAT_BLOCK
        handoff(HardEvent.V_MTE2)
        DataCopy(b["tmp"], row_gm, self.bc)
        handoff(HardEvent.MTE2_V)
        for c0 in range(0, self.bc, LANES):
            Add(s[c0], s[c0], b["tmp"][c0], LANES, n, BinaryRepeatParams(1, 1, 1, rep, rep, 0))

    def softmax_flash_v2(self, n: int, slot: int) -> None:
        """SoftmaxFlashV2 on the slot's rows: new max, exp(src - max), exp_max (kept in slot ``slot``), the sum."""
        b, e, s = self.buf, self.buf[f"e{slot}"], self.buf[f"s{slot}"]
        self._row_reduce(s, Max, lambda src, r: WholeReduceMax(b["red"], src, LANES, n, 1, 1, r,
                                                               ReduceOrder.ORDER_ONLY_VALUE), n)
        Max(b["m_new"], b["m"], b["red"], n)                        # x_max = max(inmax, rowmax(src))
        self._row_broadcast(Sub, s, s, b["m_new"], n, self.bc)
        Exp(s, s, n * self.bc)                                      # dst = exp(src - x_max)
        Sub(e, b["m"], b["m_new"], n)
        Exp(e, e, n)                                                # exp_max = exp(inmax - x_max)
        self._row_reduce(s, Add, lambda src, r: WholeReduceSum(b["red"], src, LANES, n, 1, 1, r), n)
        Mul(b["l"], b["l"], e, n)
        Add(b["l"], b["l"], b["red"], n)                            # x_sum = exp_max * insum + sum(dst)
        Adds(b["m"], b["m_new"], 0.0, n)                            # inmax for the next block

    def store_p(self, p_gm, n: int, slot: int, tile_rows: int) -> None:
        """P_j in half to the workspace in the cube's NZ layout (zN: 16-column groups of ``tile_rows`` rows x 16).

        The Cast writes each 16-value block of a row straight to its group (dstBlkStride = ``n`` blocks), so P
        leaves UB already fractal-ordered and the cube reads the whole tile in one contiguous copy; this AIV's
        rows go to row ``r0`` of each group (``p_gm`` points there), ``tile_rows - n`` blocks apart."""
        b, s, rep = self.buf, self.buf[f"s{slot}"], self.bc // FLOAT_BLOCK
        handoff(HardEvent.MTE3_V)                   # the last P is read out before this Cast overwrites it
        for c0 in range(0, self.bc, LANES):         # 64 floats in, 4 blocks of 16 halves out, one row a repeat
            Cast(b["p"][c0 // 16 * n * 16], s[c0], RoundMode.CAST_RINT, LANES, n, UnaryRepeatParams(n, 1, 1, rep))
        SetFlag(HardEvent.V_MTE2, 1 + slot)         # the slot is free for block j+2's scores
        self.pending[slot] = True
        handoff(HardEvent.V_MTE3)
        DataCopy(p_gm, b["p"], DataCopyParams(self.bc // 16, n, 0, tile_rows - n))

    def accumulate(self, o_gm, n: int, slot: int) -> None:
        """acc = acc * exp_max + P_j V_j (``n`` packed rows of ``d`` from the workspace)."""
        b, d = self.buf, self.d
        handoff(HardEvent.V_MTE2)
        DataCopy(b["o"], o_gm, n * d)
        handoff(HardEvent.MTE2_V)
        self._row_broadcast(Mul, b["acc"], b["acc"], b[f"e{slot}"], n, d)
        Add(b["acc"], b["acc"], b["o"], n * d)

    def store_partial(self, ws_gm, n: int, tile_rows: int, r0: int) -> None:
        """A key-sequence part's unnormalised state to GM for the merge: acc rows at ``r0``, then the running
        max and sum of all ``rows`` (whole 32-byte blocks) at ``tile_rows * d + r0`` and one ``tile_rows`` later."""
        b, d = self.buf, self.d
        self.drain()
        handoff(HardEvent.V_MTE3)
        DataCopy(ws_gm[r0 * d], b["acc"], n * d)
        DataCopy(ws_gm[tile_rows * d + r0], b["m"], self.rows)
        DataCopy(ws_gm[tile_rows * d + tile_rows + r0], b["l"], self.rows)
        handoff(HardEvent.MTE3_V)

    def merge_partial(self, ws_gm, n: int, tile_rows: int, r0: int, first: bool) -> None:
        """Fold one part's (acc, max, sum) into this AIV's rows: the same rescaling as SoftmaxFlashV2 with a
        whole part in place of a key block (exp of the old max and of the part's max against the new one)."""
        b, d = self.buf, self.d
        acc, m, l = (b["acc"], b["m"], b["l"]) if first else (b["o"], b["red"], b["tmp"])
        handoff(HardEvent.V_MTE2)
        DataCopy(acc, ws_gm[r0 * d], n * d)
        DataCopy(m, ws_gm[tile_rows * d + r0], self.rows)
        DataCopy(l, ws_gm[tile_rows * d + tile_rows + r0], self.rows)
        handoff(HardEvent.MTE2_V)
        if first:
            return
        Max(b["m_new"], b["m"], m, n)
        for e, old in ((b["e0"], b["m"]), (b["e1"], m)):
            Sub(e, old, b["m_new"], n)
            Exp(e, e, n)
        Mul(b["l"], b["l"], b["e0"], n)
        Mul(l, l, b["e1"], n)
        Add(b["l"], b["l"], l, n)
        self._row_broadcast(Mul, b["acc"], b["acc"], b["e0"], n, d)
        self._row_broadcast(Mul, acc, acc, b["e1"], n, d)
        Add(b["acc"], b["acc"], acc, n * d)
        Adds(b["m"], b["m_new"], 0.0, n)

    def drain(self) -> None:
        """Wait for every score-slot flag still set (the sync checker's rule: each SetFlag has its WaitFlag)."""
        for slot in (0, 1):
            if self.pending[slot]:
                WaitFlag(HardEvent.V_MTE2, 1 + slot)
                self.pending[slot] = False

    def finish(self, out_gm, n: int, pitch: int) -> None:
        """out rows = acc / x_sum, written with the layout's GM row pitch."""
        b = self.buf
        self.drain()
        self._row_broadcast(Div, b["acc"], b["acc"], b["l"], n, self.d)
        handoff(HardEvent.V_MTE3)
        copy_rows(out_gm, b["acc"], n, self.d, pitch, to_gm=True)
        handoff(HardEvent.MTE3_V)


__all__ = ["NEG", "OnlineSoftmaxRows", "handoff", "copy_rows"]
