"""Devices, servers and links: which link joins two NPUs of a simulated Ascend cluster.

A cluster is a list of devices grouped into HCCS *domains* (full meshes): a whole Atlas 800T A2
server (8 x 910B), or one of the two groups of 4 of an Atlas 800 with the first-generation 910,
which has no HCCS between its groups. Devices in different domains talk over RoCE, one NIC each.
HCCL calls the two levels level0 (inside a domain) and level1 (between domains).
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.cluster.errors import HcclError
from ascend_sim.hw.chips import Ascend910, Ascend910B, ChipProfile
from ascend_sim.hw.links import HCCS_910, HCCS_910B, ROCE_100G, ROCE_200G, LinkSpec, reduce_gamma_s_per_byte


@dataclass(frozen=True)
class Device:
    """One NPU: its global rank, where it sits, and its chip profile."""

    rank: int
    server: int
    domain: int      # HCCS full-mesh group (level0 domain), numbered across the cluster
    local: int       # index inside its domain
    chip: ChipProfile


@dataclass(frozen=True)
class Cluster:
    """Devices in equal-sized HCCS domains; ``intra`` joins a domain, ``inter`` joins domains."""

    name: str
    devices: tuple[Device, ...]
    intra: LinkSpec
    inter: LinkSpec

    @property
    def world_size(self) -> int:
        return len(self.devices)

    @property
    def domains(self) -> list[list[int]]:
        """Ranks of each HCCS domain, in domain order."""
        out: dict[int, list[int]] = {}
        for d in self.devices:
            out.setdefault(d.domain, []).append(d.rank)
        return [out[k] for k in sorted(out)]

    @property
    def servers(self) -> int:
        return len({d.server for d in self.devices})

    @property
    def chip(self) -> ChipProfile:
        return self.devices[0].chip

    @property
    def gamma_s_per_byte(self) -> float:
        return reduce_gamma_s_per_byte(self.chip)

    def link(self, a: int, b: int) -> LinkSpec:
        """The link a message from rank ``a`` to rank ``b`` travels on."""
        for r in (a, b):
            if not 0 <= r < self.world_size:
                raise HcclError(f"rank {r} does not exist: this {self.name} has ranks 0..{self.world_size - 1}",
                                fix=f"use a rank in range({self.world_size})")
        if a == b:
            raise HcclError(f"rank {a} sends to itself; a message needs two different ranks",
                            fix="send to another rank, or copy the buffer locally")
        return self.intra if self.devices[a].domain == self.devices[b].domain else self.inter

    def describe(self) -> str:
        doms = self.domains
        return (f"{self.name}: {self.world_size} x {self.chip.name} in {self.servers} server(s), "
                f"{len(doms)} HCCS domain(s) of {len(doms[0])} ({self.intra.name}); "
                f"between domains {self.inter.name}")


def _build(name: str, chip: ChipProfile, servers: int, per_server: int, domain_size: int,
           intra: LinkSpec, inter: LinkSpec) -> Cluster:
    devices, rank = [], 0
    for s in range(servers):
        for i in range(per_server):
            domain = s * ((per_server + domain_size - 1) // domain_size) + i // domain_size
            devices.append(Device(rank, s, domain, i % domain_size, chip))
            rank += 1
    return Cluster(name, tuple(devices), intra, inter)


def _check_servers(servers: int) -> None:
    if not isinstance(servers, int) or servers < 1:
        raise HcclError(f"servers={servers!r}: a cluster needs at least one server",
                        fix="pass servers as a positive int, e.g. servers=2")


def atlas_800t_a2(servers: int = 1, npus_per_server: int = 8) -> Cluster:
    """Atlas 800T A2: 8 x 910B per server in one HCCS full mesh; servers joined by 200GE RoCE."""
    _check_servers(servers)
    if npus_per_server not in range(1, 9):
        raise HcclError(f"npus_per_server={npus_per_server!r}: an Atlas 800T A2 holds 1 to 8 NPUs",
                        fix="use 1..8 NPUs per server (8, or a power of 2, is best)")
    return _build("Atlas 800T A2", Ascend910B(), servers, npus_per_server, npus_per_server,
                  HCCS_910B, ROCE_200G)


def atlas_800_910(servers: int = 1, npus_per_server: int = 8) -> Cluster:
    """Atlas 800 (model 9000) with the first 910: HCCS groups of 4 (NPUs 0-3, 4-7), no HCCS between them."""
    _check_servers(servers)
    if npus_per_server not in (1, 2, 4, 8):
        raise HcclError(f"npus_per_server={npus_per_server!r}: an Atlas 800 with 910 runs 1, 2, 4 or 8 NPUs "
                        "per server, and 2 or 4 of them must sit in one HCCS group",
                        fix="use npus_per_server in (1, 2, 4, 8)")
    return _build("Atlas 800 (910)", Ascend910(), servers, npus_per_server, min(npus_per_server, 4),
                  HCCS_910, ROCE_100G)


CLUSTERS = {"atlas_800t_a2": atlas_800t_a2, "atlas_800_910": atlas_800_910}
