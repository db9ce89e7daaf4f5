"""The last step of a decode (采样): pick the next token from the logits on the vector unit, greedy or sampled.

One AIV block reads the float32 logits ``[V]`` (V whole 32-byte blocks: 256 for the byte vocabulary) into UB.

* **Greedy** (贪心, ``top_k == 1``): one ``ReduceMax(..., calIndex=True)``, whose second result element holds the
  index of the maximum in its bits (the ReduceMax API page: the first occurrence of the maximum).
* **Temperature and top-k** (温度 / top-k): ``Muls`` by ``1 / temperature``; then ``top_k`` rounds of ReduceMax
  with the index, each read on the scalar unit, its value written to ``vals[j]`` and its logit overwritten with
  ``-inf`` (so the next round finds the next largest; ties go to the lower index); ``vals - vals[0]``, ``Exp``,
  ``ReduceSum`` gives the unnormalised probabilities and their sum; the scalar unit walks their running sum
  to the first ``j`` whose sum passes ``u * total``, ``u`` a uniform in [0, 1) drawn by the host from a seeded
  generator (the NPU has no random source the course models) and passed in the tiling.

The token id goes to GM as an int32. ``sample_reference`` is the same arithmetic in numpy (float32), so the
kernel and the numpy reference pick the same token for the same logits and ``u``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Adds, ArgumentError, DataCopy, Exp, GlobalTensor, HardEvent, LaunchResult, Muls, ReduceMax,
                        ReduceSum, SetFlag, TBuf, TPipe, WaitFlag, float32, int32, kernel, launch, uint32)

MAX_TOP_K = 64


@dataclass(frozen=True)
class SampleTiling:
    """``V`` logits; ``top_k`` 1 is greedy, else a sample of the ``top_k`` largest at ``temperature`` with ``u``."""

    V: int
    top_k: int = 1
    temperature: float = 1.0
    u: float = 0.0

    @property
    def k_pad(self) -> int:
        """``vals`` rounded up to whole 32-byte blocks of float."""
        return -(-self.top_k // 8) * 8


def _handoff(event: HardEvent) -> None:
    SetFlag(event, 0)
    WaitFlag(event, 0)


@kernel
def sample_kernel(logits, token, t: SampleTiling) -> None:
    """One block: logits GM -> UB, greedy ReduceMax or temperature + top-k + inverse-CDF sample, token -> GM."""
    pipe = TPipe()
    bufs = {}
    for name, n, dtype in (("lg", t.V, float32), ("work", t.V, float32), ("red", 8, float32),
                           ("vals", t.k_pad, float32), ("tok", 8, int32)):
        b = TBuf()
        pipe.InitBuffer(b, n * 4)
        bufs[name] = b.Get(dtype)
    lg, work, red, vals = bufs["lg"], bufs["work"], bufs["red"], bufs["vals"]
    g_in, g_out = GlobalTensor(float32), GlobalTensor(int32)
    g_in.SetGlobalBuffer(logits, t.V)
    g_out.SetGlobalBuffer(token, 8)
    DataCopy(lg, g_in, t.V)
    _handoff(HardEvent.MTE2_V)
    if t.top_k == 1:
        ReduceMax(red, lg, work, t.V, True)
        _handoff(HardEvent.V_S)
        choice = int(red.ReinterpretCast(uint32).GetValue(1))
    else:
        Muls(lg, lg, 1.0 / t.temperature, t.V)
        index = []
        for j in range(t.top_k):
            ReduceMax(red, lg, work, t.V, True)
            _handoff(HardEvent.V_S)
            i, v = int(red.ReinterpretCast(uint32).GetValue(1)), float(red.GetValue(0))
            top = v if j == 0 else top                     # the largest, kept in a scalar register
            index.append(i)
            vals.SetValue(j, v)
            lg.SetValue(i, float("-inf"))                  # the next round finds the next largest
            _handoff(HardEvent.S_V)
        Adds(vals, vals, -top, t.top_k)                    # every exponent <= 0
        Exp(vals, vals, t.top_k)
        ReduceSum(red, vals, work, t.top_k)
        _handoff(HardEvent.V_S)
        threshold = np.float32(t.u) * np.float32(red.GetValue(0))
        run, choice = np.float32(0), index[-1]
        for j in range(t.top_k):                           # inverse CDF: the first j whose running sum passes u
            run = np.float32(run + np.float32(vals.GetValue(j)))
            if run > threshold:
                choice = index[j]
                break
    bufs["tok"].SetValue(0, choice)
    _handoff(HardEvent.S_MTE3)
    DataCopy(g_out, bufs["tok"], 8)


def sample_reference(logits: np.ndarray, top_k: int = 1, temperature: float = 1.0, u: float = 0.0) -> int:
    """The kernel's choice in numpy (float32): argmax, or the inverse-CDF pick among the ``top_k`` largest."""
    z = np.asarray(logits, np.float32)
    if top_k == 1:
        return int(np.argmax(z))
    z = (z * np.float32(1.0 / temperature)).astype(np.float32)
    order = np.argsort(-z, kind="stable")[:top_k]            # ties: the lower index first, as ReduceMax
    p = np.exp(z[order] - z[order[0]]).astype(np.float32)
    threshold = np.float32(u) * np.float32(np.sum(p, dtype=np.float32))
    run = np.cumsum(p, dtype=np.float32)
    hit = np.nonzero(run > threshold)[0]
    return int(order[hit[0]] if len(hit) else order[-1])


def sample(logits: np.ndarray, *, top_k: int = 1, temperature: float = 1.0, u: float = 0.0,
           chip=None) -> tuple[int, LaunchResult]:
    """The next token from float32 ``logits [V]`` on the NPU (greedy for ``top_k`` 1) and the launch."""
    logits = np.ascontiguousarray(logits, np.float32).reshape(-1)
    site = ("<host sample>", 0)
    if logits.size % 8:
        raise ArgumentError(f"sample: {logits.size} logits; the kernel copies whole 32-byte blocks (8 floats)",
                            fix=f"pad the logits with -inf to {-(-logits.size // 8) * 8}", site=site)
    if not 1 <= top_k <= min(MAX_TOP_K, logits.size) or not temperature > 0 or not 0.0 <= u < 1.0:
        raise ArgumentError(f"sample: top_k {top_k}, temperature {temperature}, u {u}: top_k must be 1 .. "
                            f"{min(MAX_TOP_K, logits.size)}, the temperature positive, u in [0, 1)",
                            fix="top_k=1 for greedy; draw u with numpy's default_rng(seed).random()", site=site)
    token = np.zeros(8, np.int32)
    res = launch(sample_kernel, 1, logits, token, SampleTiling(logits.size, top_k, float(temperature), float(u)),
                 chip=chip, gm_names=["logits", "token"])
    return int(token[0]), res


__all__ = ["MAX_TOP_K", "SampleTiling", "sample_kernel", "sample_reference", "sample"]
