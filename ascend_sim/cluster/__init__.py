"""Module 3 (distributed): a simulated Ascend cluster with HCCL collectives and data parallelism.

- topology.py: devices, HCCS domains, servers and the link between any two ranks
  (Atlas 800T A2, Atlas 800 with the first 910, several servers over RoCE);
  the link numbers are in hw/links.py;
- algorithms.py, plans.py: collectives as schedules (ring, recursive halving-doubling, mesh,
  hierarchical); select.py: HCCL's choice and the HCCL_ALGO override;
- timeline.py: per-device send/recv/reduce/compute timelines (alpha-beta-gamma);
- hccl.py: HcclComm with HCCL's collective names, exact numerics, algbw and busbw;
- sampler.py: torch's DistributedSampler, index for index;
- ddp.py, mlp.py: DistributedDataParallel (buckets, overlap) on a numpy TinyMLP;
- hooks.py: DDP communication hooks (allreduce, fp16 and bf16 compression);
- sweep.py: an nccl-tests-style size sweep (python -m ascend_sim.cluster.sweep);
- chrome.py: the timeline as a Chrome / Perfetto trace;
- device.py: launch_on runs a kernel on one device (its chip profile) and times it on its timeline.
See docs/cluster.md for the model, its parameters and their sources.
"""
from ascend_sim.cluster.chrome import write_chrome_trace
from ascend_sim.cluster.ddp import DistributedDataParallel, StepReport, bucket_assignment
from ascend_sim.cluster.device import launch_on
from ascend_sim.cluster.errors import DataParallelError, HcclError
from ascend_sim.cluster.hccl import CollectiveResult, HcclComm
from ascend_sim.cluster.hooks import GradBucket, allreduce_hook, bf16_compress_hook, fp16_compress_hook
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.cluster.sampler import DistributedSampler
from ascend_sim.cluster.timeline import Event, Timeline
from ascend_sim.cluster.topology import Cluster, Device, atlas_800_910, atlas_800t_a2

__all__ = ["Cluster", "CollectiveResult", "DataParallelError", "Device", "DistributedDataParallel",
           "DistributedSampler", "Event", "GradBucket", "HcclComm", "HcclError", "StepReport", "Timeline", "TinyMLP",
           "allreduce_hook", "atlas_800_910", "atlas_800t_a2", "bf16_compress_hook", "bucket_assignment",
           "fp16_compress_hook", "launch_on", "write_chrome_trace"]
