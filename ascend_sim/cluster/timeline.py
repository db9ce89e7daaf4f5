"""Per-device timelines: when each NPU sends, receives, reduces and computes (microseconds).

Cost of one step of concurrent transfers (Hockney's alpha-beta-gamma, as HCCL models it):
- a transfer starts when both its ends are free, and takes ``alpha + bytes * beta`` of its link;
- messages that share a port (a device's one RoCE NIC) share its bandwidth: each is charged the
  larger of the bytes its sender puts on that port and the bytes its receiver takes from it;
  HCCS links are point to point, so a full-mesh step costs one message, not p-1;
- a receiver then reduces everything it received in the step, ``gamma`` per byte, in sequence.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.cluster.topology import Cluster

Move = tuple[int, int, int, bool]        # (src, dst, bytes, reduce)


@dataclass(frozen=True)
class Event:
    """One interval of one device's timeline."""

    device: int
    kind: str            # "send", "recv", "reduce" or "compute"
    start_us: float
    end_us: float
    peer: int | None
    nbytes: int
    label: str


class Timeline:
    """The clocks of every device of a cluster and the events that moved them."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.clock_us = [0.0] * cluster.world_size
        self.events: list[Event] = []

    def step(self, moves: list[Move], label: str) -> None:
        """Run one step of concurrent transfers and the reductions that follow them."""
        c = self.cluster
        links = [c.link(s, d) for s, d, _, _ in moves]
        egress: dict[tuple[int, str], int] = {}
        ingress: dict[tuple[int, str], int] = {}
        for (s, d, n, _), link in zip(moves, links):
            if link.shared_port:
                egress[s, link.name] = egress.get((s, link.name), 0) + n
                ingress[d, link.name] = ingress.get((d, link.name), 0) + n
        new = list(self.clock_us)
        recv_end: dict[int, float] = {}
        reduce_bytes: dict[int, int] = {}
        for (s, d, n, red), link in zip(moves, links):
            load = max(egress[s, link.name], ingress[d, link.name]) if link.shared_port else n
            start = max(self.clock_us[s], self.clock_us[d])
            end = start + link.alpha_us + load * link.beta_s_per_byte * 1e6
            self.events.append(Event(s, "send", start, end, d, n, label))
            self.events.append(Event(d, "recv", start, end, s, n, label))
            new[s] = max(new[s], end)
            new[d] = max(new[d], end)
            recv_end[d] = max(recv_end.get(d, 0.0), end)
            if red:
                reduce_bytes[d] = reduce_bytes.get(d, 0) + n
        gamma_us = c.gamma_s_per_byte * 1e6
        for d, n in sorted(reduce_bytes.items()):
            end = recv_end[d] + n * gamma_us
            self.events.append(Event(d, "reduce", recv_end[d], end, None, n, label))
            new[d] = max(new[d], end)
        self.clock_us = new

    def compute(self, device: int, duration_us: float, label: str) -> None:
        """Advance one device by a stretch of computation (a kernel, a backward layer)."""
        start = self.clock_us[device]
        self.clock_us[device] = start + duration_us
        self.events.append(Event(device, "compute", start, start + duration_us, None, 0, label))

    def wait_until(self, device: int, t_us: float) -> None:
        """The device's next transfer starts no earlier than ``t_us`` (its data is ready then)."""
        self.clock_us[device] = max(self.clock_us[device], t_us)

    def record(self, event: Event) -> None:
        """Add an event from another stream of the device (it does not move this clock)."""
        self.events.append(event)

    def sync(self) -> float:
        """Bring every device to the latest clock (the end of a blocking collective); return it."""
        t = max(self.clock_us)
        self.clock_us = [t] * len(self.clock_us)
        return t

    def of(self, device: int) -> list[Event]:
        return [e for e in self.events if e.device == device]
