"""Interconnect links: every α-β-γ number of the cluster model lives here, with its provenance.

Hockney's model (HCCL's own, hicann/hccl ``coll_algo_intro/algo_intro.md``): one message of n bytes
over a link costs ``alpha + n * beta`` seconds, and reducing n received bytes into a local buffer
costs ``n * gamma``. ``beta`` is per direction: a link carries one message each way at once.

Tags as in chips.py: [OFF] official, [DER] arithmetic on official or published values,
[EST] third-party figure or our own estimate (a parameter to calibrate, not a measurement).
Each source is named where its number is used (HCCL's public repository https://gitcode.com/cann/hccl,
hiascend.com documentation pages, vendor data sheets).

Derive a variant with ``dataclasses.replace(HCCS_910B, gbytes_per_s=...)``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.hw.chips import ChipProfile


@dataclass(frozen=True)
class LinkSpec:
    """One kind of link: latency, bandwidth per direction, and where the numbers come from."""

    name: str
    alpha_us: float          # per-message latency (start-up), microseconds
    gbytes_per_s: float      # bandwidth per direction, 1e9 bytes per second
    shared_port: bool        # True: all of a device's messages on this kind share one port (its NIC)
    tag: str                 # OFF / DER / EST, as in chips.py
    source: str

    @property
    def alpha_s(self) -> float:
        return self.alpha_us * 1e-6

    @property
    def beta_s_per_byte(self) -> float:
        return 1.0 / (self.gbytes_per_s * 1e9)

    def message_s(self, nbytes: float) -> float:
        """Seconds for one message of ``nbytes`` alone on this link: alpha + n * beta."""
        return self.alpha_s + nbytes * self.beta_s_per_byte


HCCS_910B = LinkSpec(
    name="HCCS (910B)", alpha_us=2.0, gbytes_per_s=28.0, shared_port=False, tag="EST",
    source="Atlas 800T A2: 8 NPUs in an HCCS full mesh, 56 GB/s per NPU pair bidirectional, 392 GB/s "
           "aggregate = 7 x 56 (arthurchiao 'GPU Performance (Data Sheets) Quick Reference (2023)' 3.1), "
           "so 28 GB/s each way; alpha 2 us is our estimate")
HCCS_910 = LinkSpec(
    name="HCCS (910)", alpha_us=2.0, gbytes_per_s=30.0, shared_port=False, tag="EST",
    source="Atlas 800 (model 9000/9010): two HCCS full-mesh groups of 4 (Volcano plugin README); "
           "30 GB/s per link each way from Hot Chips 2019 summaries [unverified]; alpha is our estimate")
ROCE_200G = LinkSpec(
    name="RoCE 200GE", alpha_us=5.0, gbytes_per_s=20.0, shared_port=True, tag="EST",
    source="one 200 Gb/s RoCE port per 910B NPU [unverified] = 25 GB/s x 0.8 protocol efficiency; "
           "alpha 5 us is our estimate (distributed.md section 7)")
ROCE_100G = LinkSpec(
    name="RoCE 100GE", alpha_us=5.0, gbytes_per_s=10.0, shared_port=True, tag="EST",
    source="Atlas 800 (9000): 8 x 100GE, one per NPU [unverified] = 12.5 GB/s x 0.8; alpha as ROCE_200G. "
           "Also the path between the two HCCS groups of one server (NIC subnets pair NPU i with i+4)")

REDUCE_BYTES_PER_BYTE = 3     # [DER] reducing n bytes reads two operands and writes one: 3n bytes of HBM traffic


def reduce_gamma_s_per_byte(chip: ChipProfile) -> float:
    """gamma of a chip: seconds to reduce one received byte, bounded by HBM ([DER] from hbm_bytes_per_cycle)."""
    return REDUCE_BYTES_PER_BYTE / (chip.hbm_bytes_per_cycle * chip.clock_hz)
