"""Sub-communicators and the 2-D device mesh (设备网格) of hybrid data x tensor parallelism.

``sub_comm(cluster, ranks)`` is HCCL's ``HcclCreateSubCommConfig`` (MindSpore ``create_group``):
a communicator over some devices, group rank i = device ``ranks[i]``, keeping their HCCS domains so
the collectives pick the same algorithms as on the real links. Each group has its own timeline:
groups on disjoint devices run side by side (NIC sharing between groups is not modelled).

``DeviceMesh(cluster, dp, tp)`` lays ``dp * tp`` devices out as a dp x tp grid, rank = d * tp + t:
the tensor-parallel groups are runs of tp neighbours (inside one HCCS domain when tp fits one,
as Megatron places them), the data-parallel groups are strided by tp.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Sequence

from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.topology import Cluster, Device


def sub_cluster(cluster: Cluster, ranks: Sequence[int]) -> Cluster:
    """The devices ``ranks`` of ``cluster`` as a cluster of their own (ranks renumbered 0..k-1)."""
    ranks = list(ranks)
    n = cluster.world_size
    bad = [r for r in ranks if not isinstance(r, int) or not 0 <= r < n]
    if not ranks or bad or len(set(ranks)) != len(ranks):
        raise HcclError(f"group ranks {ranks} must be distinct ranks of this {n}-device cluster (bad: {bad})",
                        fix=f"pass a non-empty list of distinct ints in range({n})")
    doms: dict[int, int] = {}
    devices = []
    for i, r in enumerate(ranks):
        d = cluster.devices[r]
        dom = doms.setdefault(d.domain, len(doms))
        local = sum(1 for x in ranks[:i] if cluster.devices[x].domain == d.domain)
        devices.append(Device(i, d.server, dom, local, d.chip))
    sizes = {sum(1 for d in devices if d.domain == k) for k in doms.values()}
    if len(sizes) > 1:
        raise HcclError(f"group {ranks} has {sorted(sizes)} devices in its HCCS domains; HCCL's hierarchical "
                        "algorithms need the same number in each",
                        fix="take the same number of devices from every server (or HCCS group)")
    return replace(cluster, name=f"{cluster.name} group {ranks}", devices=tuple(devices))


def sub_comm(cluster: Cluster, ranks: Sequence[int], hccl_algo: str | None = None) -> HcclComm:
    """A communicator over ``ranks`` (group rank i is device ``ranks[i]``)."""
    return HcclComm(sub_cluster(cluster, ranks), hccl_algo)


@dataclass(frozen=True)
class DeviceMesh:
    """dp x tp devices: rank d*tp + t is data-parallel index d and tensor-parallel index t."""

    cluster: Cluster
    dp: int
    tp: int

    def __post_init__(self):
        n = self.cluster.world_size
        if not all(isinstance(v, int) and v >= 1 for v in (self.dp, self.tp)) or self.dp * self.tp != n:
            raise HcclError(f"a {self.dp} x {self.tp} mesh needs {self.dp}*{self.tp} devices, and the cluster "
                            f"has {n}", fix=f"choose dp and tp with dp * tp == {n}")

    def rank(self, d: int, t: int) -> int:
        return d * self.tp + t

    @property
    def tp_groups(self) -> list[list[int]]:
        return [[self.rank(d, t) for t in range(self.tp)] for d in range(self.dp)]

    @property
    def dp_groups(self) -> list[list[int]]:
        return [[self.rank(d, t) for d in range(self.dp)] for t in range(self.tp)]

    @cached_property
    def tp_comms(self) -> list[HcclComm]:
        return [sub_comm(self.cluster, g) for g in self.tp_groups]

    @cached_property
    def dp_comms(self) -> list[HcclComm]:
        return [sub_comm(self.cluster, g) for g in self.dp_groups]
