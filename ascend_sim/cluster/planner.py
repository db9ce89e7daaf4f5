"""Hybrid-parallel planner (混合并行规划): DP x TP x PP layouts of a transformer on A2 servers, their memory and time.

For a GPT-style transformer (``Transformer``) and a cluster of Atlas 800T A2 servers the planner enumerates every
layout dp x tp x pp = devices (tp inside one server, pp dividing the layers), and for each:
- **memory per device** [EST, Megatron's accounting]: 16 bytes per parameter it holds (fp16 weight and gradient,
  fp32 master, Adam's two moments) for 1/(tp pp) of the parameters; activations of the first stage, which keeps
  min(pp, m) micro-batches of L/pp layers under 1F1B: s b h (10 + 24/tp) bytes per layer and micro-batch
  (Korthikanti et al. 2022, "Reducing Activation Recomputation", eq. 2 with flash attention, no s^2 term), plus a
  reserve for the framework, workspace and HCCL buffers. It fits when the total is at most the chip's HBM
  (``chips.py`` gm_bytes);
- **step time** from the simulator's costs: compute at an MFU of the peak cube rate (``cost.py``; 6 N + 6 L s h
  FLOPs per token, Kaplan et al. 2020), Megatron's four AllReduces of s b h fp16 values per layer and micro-batch
  on the TP group (``HcclComm.estimate``, HCCS), the 1F1B schedule played on the devices of one pipeline
  (``pipeline_time.play``: bubble and p2p over HCCS or RoCE), then the data-parallel AllReduce of each device's
  fp16 gradients over its DP group, after the pipeline flush (not overlapped: an upper bound);
- the **pick**: the fastest layout that fits.
Rank order is Megatron's: tp fastest, then dp, then pp, so a TP group is tp neighbours in one server.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ascend_sim.cluster.cost import flops_us
from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.groups import sub_cluster
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.pipeline_schedule import one_f_one_b
from ascend_sim.cluster.pipeline_time import play
from ascend_sim.cluster.topology import Cluster, atlas_800t_a2

GB = 1024 ** 3
BYTES_PER_PARAM = 16            # fp16 weight 2 + fp16 grad 2 + fp32 master 4 + Adam m, v 8 (ZeRO paper's K = 12 + 4)
RESERVE_BYTES = 4 * GB          # [EST] framework, workspace, HCCL buffers (HCCL_BUFFSIZE 200 MB x groups)


@dataclass(frozen=True)
class Transformer:
    """A decoder-only transformer: layers, hidden size, heads, sequence length, vocabulary."""

    name: str
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int

    @property
    def params(self) -> float:
        """12 L h^2 (attention 4 h^2, MLP 8 h^2) plus the input and output embeddings."""
        return 12 * self.layers * self.hidden ** 2 + 2 * self.vocab * self.hidden

    def train_flops_per_token(self) -> float:
        return 6 * self.params + 6 * self.layers * self.seq * self.hidden


def llama_7b() -> Transformer:
    """LLaMA-7B's shape (Touvron et al. 2023): 32 layers, h 4096, 32 heads, 4096 tokens (LLaMA-2), vocab 32000."""
    return Transformer("7B", 32, 4096, 32, 4096, 32000)


@dataclass(frozen=True)
class Plan:
    """One layout and its predicted memory (bytes per device) and step time (microseconds)."""

    dp: int
    tp: int
    pp: int
    micro_batches: int
    state_bytes: float
    activation_bytes: float
    compute_us: float
    pipeline_us: float
    tp_comm_us: float
    dp_comm_us: float
    hbm_bytes: float

    @property
    def memory_bytes(self) -> float:
        return self.state_bytes + self.activation_bytes + RESERVE_BYTES

    @property
    def fits(self) -> bool:
        return self.memory_bytes <= self.hbm_bytes

    @property
    def step_us(self) -> float:
        return self.pipeline_us + self.dp_comm_us

    @property
    def bubble(self) -> float:
        return (self.pp - 1) / (self.micro_batches + self.pp - 1)

    def row(self) -> str:
        return (f"| {self.dp} | {self.tp} | {self.pp} | {self.micro_batches} | {self.memory_bytes / GB:.1f} | "
                f"{'yes' if self.fits else 'no'} | {self.compute_us / 1e3:.0f} | {self.tp_comm_us / 1e3:.0f} | "
                f"{self.bubble:.2f} | {self.dp_comm_us / 1e3:.0f} | {self.step_us / 1e3:.0f} |")


def rank_of(dp: int, tp: int, pp: int, d: int, s: int, t: int) -> int:
    """Megatron's order: tp fastest, then dp, then pp."""
    return (s * dp + d) * tp + t


_AR_CACHE: dict[tuple[str, tuple[int, ...], int], float] = {}


def allreduce_us(cluster: Cluster, ranks: tuple[int, ...], count: int) -> float:
    """An fp16 AllReduce of ``count`` elements over ``ranks`` of ``cluster`` (HCCL's algorithm), memoised."""
    if len(ranks) == 1:
        return 0.0
    key = (cluster.name, ranks, count)
    if key not in _AR_CACHE:
        _AR_CACHE[key] = HcclComm(sub_cluster(cluster, list(ranks))).estimate("AllReduce", count, "fp16").time_us
    return _AR_CACHE[key]


def _pipeline_devices(cluster: Cluster, ranks: list[int]) -> Cluster:
    """The devices of one pipeline as a cluster of their own (stage s = device s), links as placed."""
    return replace(cluster, devices=tuple(replace(cluster.devices[r], rank=i) for i, r in enumerate(ranks)))


def plan(model: Transformer, cluster: Cluster, dp: int, tp: int, pp: int, global_batch: int,
         micro_batch: int = 1, mfu: float = 0.5) -> Plan:
    """Memory and step time of one layout (``global_batch`` sequences per step, ``micro_batch`` per micro-batch)."""
    n = cluster.world_size
    if dp * tp * pp != n or model.layers % pp or global_batch % (dp * micro_batch):
        raise PipelineError(f"layout dp={dp} x tp={tp} x pp={pp} does not fit {n} devices, {model.layers} layers "
                            f"and a batch of {global_batch} (micro-batch {micro_batch})",
                            fix="dp*tp*pp == devices, pp divides the layers, dp*micro_batch divides the batch")
    m = global_batch // (dp * micro_batch)
    s, b, h, L = model.seq, micro_batch, model.hidden, model.layers
    state = BYTES_PER_PARAM * model.params / (tp * pp)
    act = min(pp, m) * (L // pp) * s * b * h * (10 + 24 / tp)
    chip = cluster.chip
    tokens_mb = s * b
    fwd_mb = flops_us(chip, model.train_flops_per_token() * tokens_mb / 3 / (tp * pp), mfu)
    tp_ranks = tuple(rank_of(dp, tp, pp, 0, 0, t) for t in range(tp))
    ar = allreduce_us(cluster, tp_ranks, s * b * h)
    tp_fwd = 2 * (L // pp) * ar
    pipe_ranks = [rank_of(dp, tp, pp, 0, st, 0) for st in range(pp)]
    if pp > 1:
        run = play(_pipeline_devices(cluster, pipe_ranks), one_f_one_b(pp, m), m, fwd_mb + tp_fwd, 2 * fwd_mb + tp_fwd, s * b * h * 2)
        pipeline = run.step_us
    else:
        pipeline = m * (3 * fwd_mb + 2 * tp_fwd)
    dp_ranks = tuple(rank_of(dp, tp, pp, d, 0, 0) for d in range(dp))
    dp_comm = allreduce_us(cluster, dp_ranks, int(model.params / (tp * pp)))
    return Plan(dp, tp, pp, m, state, act, 3 * m * fwd_mb, pipeline, 2 * m * tp_fwd, dp_comm, float(chip.gm_bytes))


def layouts(model: Transformer, devices: int, global_batch: int, micro_batch: int = 1,
            max_tp: int = 8) -> list[tuple[int, int, int]]:
    """Every (dp, tp, pp) with tp a power of two up to one server, pp dividing the layers and dp the batch."""
    out = []
    tp = 1
    while tp <= min(max_tp, devices):
        for pp in range(1, model.layers + 1):
            if devices % (tp * pp) == 0 and model.layers % pp == 0:
                dp = devices // (tp * pp)
                if global_batch % (dp * micro_batch) == 0:
                    out.append((dp, tp, pp))
        tp *= 2
    return out


def plan_all(model: Transformer, servers: int, global_batch: int, micro_batch: int = 1,
             mfu: float = 0.5) -> list[Plan]:
    """Every layout on ``servers`` A2 servers, fastest first (those that do not fit last)."""
    cluster = atlas_800t_a2(servers)
    plans = [plan(model, cluster, dp, tp, pp, global_batch, micro_batch, mfu)
             for dp, tp, pp in layouts(model, cluster.world_size, global_batch, micro_batch)]
    return sorted(plans, key=lambda p: (not p.fits, p.step_us))


def pick(plans: list[Plan]) -> Plan:
    """The fastest layout that fits in memory."""
    fitting = [p for p in plans if p.fits]
    if not fitting:
        need = min(p.memory_bytes for p in plans) / GB
        raise PipelineError(f"no layout fits: the smallest needs {need:.1f} GB per device",
                            fix="use more devices, a smaller micro-batch, or activation recomputation")
    return min(fitting, key=lambda p: p.step_us)


def from_shard(strategy: tuple, devices: int, op: str = "MatMul") -> tuple[int, int, int]:
    """The (dp, tp, pp) of a MindSpore ``shard`` strategy on ``devices`` (operator-level parallelism has no pp).

    The batch cut is dp; the weight cut (column x row) is tp; MindSpore's repeated calculation (devices that compute
    the same slice) counts as further data parallelism, since those devices hold the same weights. Example 2 of
    the source, ``fc.shard(((4, 1), (1, 1)))`` on 4 devices, gives (4, 1, 1): data parallelism, the weight whole on
    every device; ``((1, 1), (4, 1))`` gives (1, 4, 1), a real split of the weight's output dimension. Source: MindSpore,
    "Operator-level Parallelism", section "Basic Principle" (a strategy gives the number of slices of each dimension
    of each input; the first input of a MatMul is the activation, whose first dimension is the batch),
    https://mindspore.cn/tutorials/experts/en/r2.0/parallel/operator_parallel.html
    """
    from ascend_sim.cluster.shard import layout
    lay = layout(op, strategy, devices)
    return lay.data * lay.repeat, lay.column * lay.row, 1


HEADER = ("| dp | tp | pp | micro-batches | memory (GB) | fits | compute (ms) | TP comm (ms) | bubble | "
          "DP AllReduce (ms) | step (ms) |\n|---|---|---|---|---|---|---|---|---|---|---|")


def table(plans: list[Plan], top: int | None = None) -> str:
    rows = plans if top is None else plans[:top]
    return "\n".join([HEADER] + [p.row() for p in rows])
