"""Module 3 (distributed): a simulated Ascend cluster with HCCL collectives, data and tensor parallelism.

- topology.py: devices, HCCS domains, servers and the link between any two ranks
  (Atlas 800T A2, Atlas 800 with the first 910, several servers over RoCE);
  the link numbers are in hw/links.py;
- algorithms.py, plans.py: collectives as schedules (ring, recursive halving-doubling, mesh,
  hierarchical); select.py: HCCL's choice and the HCCL_ALGO override;
- timeline.py: per-device send/recv/reduce/compute timelines (alpha-beta-gamma);
- hccl.py: HcclComm with HCCL's collective names, exact numerics, algbw and busbw;
- groups.py: sub-communicators and the dp x tp DeviceMesh;
- sampler.py: torch's DistributedSampler, index for index;
- ddp.py, mlp.py: DistributedDataParallel (buckets, overlap, find_unused_parameters) on a numpy TinyMLP;
- hooks.py: DDP communication hooks (allreduce, fp16 and bf16); compress.py: top-k and PowerSGD;
- tp.py, tp_conv.py: column/row-parallel linear layers, sequence parallelism, the TP MLP, conv output-channel split;
- hybrid.py: data x tensor parallelism on a 2-D mesh; shard.py: MindSpore ``shard`` strategies;
- debug.py: ddp_debug (divergent gradients, unused-parameter and bucket-order hangs);
- loop.py: a checkpointable training loop; faults.py: rank failure and restart; goodput.py: Young/Daly;
- cost.py, models_zoo.py, scaling.py, tp_scaling.py, memory.py: FLOP costs, ResNet shapes, strong/weak and
  tensor-parallel scaling, memory per card;
- sweep.py: an nccl-tests-style size sweep (python -m ascend_sim.cluster.sweep);
- chrome.py: the timeline as a Chrome / Perfetto trace;
- device.py: launch_on runs a kernel on one device (its chip profile) and times it on its timeline;
- nn_ops.py, lenet_train.py, resnet_train.py: LeNet-5 and SmallResNet with fp32 backward passes (torch's names);
  sim_timing.py: their DDP training timed by the simulator's kernels, with the gradient consistency check;
- ddp_job.py: one LeNet-5 DDP job, run on the simulated cluster; gloo.py: the same job on torch.distributed
  (gloo, spawned ranks, kill and restart), needing the ``distributed`` extra;
- pipeline_schedule.py (GPipe, 1F1B, interleaved), pipeline_time.py (a schedule on the links: timeline, bubble,
  activation memory), pipeline_train.py (DeepMLP pipelined numerics), pipeline_gloo.py (the same on gloo);
- loss_scale.py (dynamic loss scaling), mixed_precision.py (fp16/bf16 compute, fp32 masters),
  mixed_precision_gloo.py (no_sync accumulation and GradScaler on gloo); sparse24.py: a 2:4 compression hook;
- planner.py: the DP x TP x PP planner and MindSpore strategies on it;
- moe.py (top-k gating, capacity, load-balance loss), expert_parallel.py (AlltoAll dispatch and combine);
- toy_data.py: seeded cluster data for the lessons.
See docs/cluster.md for the model, its parameters and their sources.
"""
from ascend_sim.cluster.chrome import write_chrome_trace
from ascend_sim.cluster.compress import PowerSGDState, TopKState, powersgd_hook, topk_hook
from ascend_sim.cluster.ddp import DistributedDataParallel, StepReport, bucket_assignment
from ascend_sim.cluster.debug import ddp_debug, first_divergence
from ascend_sim.cluster.device import launch_on
from ascend_sim.cluster.errors import DataParallelError, HcclError, ShardError
from ascend_sim.cluster.faults import RankFailed, run_with_recovery
from ascend_sim.cluster.goodput import daly_interval, goodput, young_interval
from ascend_sim.cluster.groups import DeviceMesh, sub_comm
from ascend_sim.cluster.hccl import CollectiveResult, HcclComm
from ascend_sim.cluster.hooks import GradBucket, allreduce_hook, bf16_compress_hook, fp16_compress_hook
from ascend_sim.cluster.hybrid import HybridParallelMLP
from ascend_sim.cluster.loop import Trainer
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.cluster.sampler import DistributedSampler
from ascend_sim.cluster.shard import layout as shard_layout
from ascend_sim.cluster.timeline import Event, Timeline
from ascend_sim.cluster.topology import Cluster, Device, atlas_800_910, atlas_800t_a2
from ascend_sim.cluster.tp import ColumnParallelLinear, RowParallelLinear, TensorParallelMLP
from ascend_sim.cluster.tp_conv import OutputChannelParallelConv2d

__all__ = ["Cluster", "CollectiveResult", "ColumnParallelLinear", "DataParallelError", "Device", "DeviceMesh",
           "DistributedDataParallel", "DistributedSampler", "Event", "GradBucket", "HcclComm", "HcclError",
           "HybridParallelMLP", "OutputChannelParallelConv2d", "PowerSGDState", "RankFailed", "RowParallelLinear",
           "ShardError", "StepReport", "TensorParallelMLP", "Timeline", "TinyMLP", "TopKState", "Trainer",
           "allreduce_hook", "atlas_800_910", "atlas_800t_a2", "bf16_compress_hook", "bucket_assignment",
           "daly_interval", "ddp_debug", "first_divergence", "fp16_compress_hook", "goodput", "launch_on",
           "powersgd_hook", "run_with_recovery", "shard_layout", "sub_comm", "topk_hook", "write_chrome_trace",
           "young_interval"]
