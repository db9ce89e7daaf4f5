"""Collective times against the alpha-beta(-gamma) formulas of distributed.md section 1, computed by hand here.

Sizes sweep from 1 KB-ish to 256 MB per rank. Counts are multiples of p*p so every chunk is equal and
the formulas hold exactly; the simulator gets no hint of them (it only times its schedules).
"""
from __future__ import annotations

import math

import pytest

from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.topology import atlas_800_910, atlas_800t_a2
from ascend_sim.hw.links import HCCS_910, HCCS_910B, ROCE_100G, ROCE_200G, reduce_gamma_s_per_byte

COUNTS = [64 * 4 ** k for k in range(0, 12, 2)] + [64 * 1024 * 1024]     # fp32: 256 B .. 256 MB per rank


def ab(link):
    """(alpha, beta) of a link in microseconds and microseconds per byte."""
    return link.alpha_us, 1e6 / (link.gbytes_per_s * 1e9)


def gamma_us(cluster):
    return reduce_gamma_s_per_byte(cluster.chip) * 1e6


A2 = atlas_800t_a2()
P = 8
a, b = ab(HCCS_910B)
g = gamma_us(A2)

FLAT = {  # (op, algo): time in us for n bytes per rank (S = p*n for ReduceScatter, AllGather, AlltoAll)
    ("AllReduce", "ring"): lambda n: 2 * (P - 1) * a + 2 * (P - 1) / P * n * b + (P - 1) / P * n * g,
    ("AllReduce", "rhd"): lambda n: 2 * math.log2(P) * a + 2 * (P - 1) / P * n * b + (P - 1) / P * n * g,
    ("AllReduce", "mesh"): lambda n: 2 * a + 2 * n / P * b + (P - 1) / P * n * g,
    ("ReduceScatter", "ring"): lambda n: (P - 1) * a + (P - 1) * n * b + (P - 1) * n * g,
    ("ReduceScatter", "rhd"): lambda n: math.log2(P) * a + (P - 1) * n * b + (P - 1) * n * g,
    ("ReduceScatter", "mesh"): lambda n: a + n * b + (P - 1) * n * g,
    ("AllGather", "ring"): lambda n: (P - 1) * a + (P - 1) * n * b,
    ("AllGather", "rhd"): lambda n: math.log2(P) * a + (P - 1) * n * b,
    ("AllGather", "mesh"): lambda n: a + n * b,
    ("Broadcast", "ring"): lambda n: (P - 1) * (a + n * b),
    ("Broadcast", "rhd"): lambda n: math.ceil(math.log2(P)) * (a + n * b),
    ("Broadcast", "mesh"): lambda n: 2 * a + 2 * n / P * b,
    ("Reduce", "ring"): lambda n: (P - 1) * (a + n * b + n * g),
    ("Reduce", "rhd"): lambda n: math.ceil(math.log2(P)) * (a + n * b + n * g),
    ("Reduce", "mesh"): lambda n: 2 * a + 2 * n / P * b + (P - 1) / P * n * g,
    ("AlltoAll", "ring"): lambda n: (P - 1) * (a + n * b),             # pairwise; n = bytes per peer
    ("AlltoAll", "mesh"): lambda n: a + n * b,
}


@pytest.mark.parametrize("op,algo", list(FLAT), ids=[f"{o}-{x}" for o, x in FLAT])
def test_flat_algorithms_follow_their_formula(op, algo):
    comm = HcclComm(A2, hccl_algo="")
    for count in COUNTS:
        res = comm.estimate(op, count, "fp32", algo=algo)
        assert res.time_us == pytest.approx(FLAT[op, algo](count * 4), rel=1e-9), (op, algo, count)


def test_rhd_on_a_non_power_of_two_folds_first():
    p, q = 6, 4
    comm = HcclComm(atlas_800t_a2(npus_per_server=p))
    for count in COUNTS:
        n = count * 4
        want = ((2 * math.log2(q) + 2) * a + (2 * (q - 1) / q + 2) * n * b + ((q - 1) / q + 1) * n * g)
        assert comm.estimate("AllReduce", count, algo="rhd").time_us == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("cluster,intra,inter,inter_algo", [
    (atlas_800t_a2(servers=2), HCCS_910B, ROCE_200G, "rhd"),
    (atlas_800t_a2(servers=4), HCCS_910B, ROCE_200G, "rhd"),
    (atlas_800t_a2(servers=3), HCCS_910B, ROCE_200G, "ring"),
    (atlas_800_910(), HCCS_910, ROCE_100G, "rhd"),
    (atlas_800_910(servers=2), HCCS_910, ROCE_100G, "rhd"),
], ids=["a2x2", "a2x4", "a2x3-ring", "910", "910x2"])
def test_hierarchical_allreduce_is_intra_rs_plus_inter_ar_plus_intra_ag(cluster, intra, inter, inter_algo):
    L, D = len(cluster.domains[0]), len(cluster.domains)
    ai, bi = ab(intra)
    ao, bo = ab(inter)
    gm = gamma_us(cluster)
    algo = "level0:NA;level1:" + {"rhd": "H-D_R", "ring": "ring"}[inter_algo]
    comm = HcclComm(cluster, hccl_algo=algo)
    for count in [192 * 4 ** k for k in range(0, 12, 2)]:     # every chunk equal: multiples of 8 * 24
        n = count * 4
        m = n / L                                               # what crosses the inter-domain links
        intra_rs = ai + n / L * bi + (L - 1) / L * n * gm
        intra_ag = ai + n / L * bi
        steps = 2 * math.log2(D) if inter_algo == "rhd" else 2 * (D - 1)
        inter_ar = steps * ao + 2 * (D - 1) / D * m * bo + (D - 1) / D * m * gm
        res = comm.estimate("AllReduce", count)
        assert res.algo == f"hierarchical(level0=mesh, level1={inter_algo})"
        assert res.time_us == pytest.approx(intra_rs + inter_ar + intra_ag, rel=1e-9), count


def test_a_shared_nic_divides_its_bandwidth():
    """Flat mesh over two servers: 8 of each device's 15 messages share its one RoCE NIC."""
    cl = atlas_800t_a2(servers=2)
    ao, bo = ab(ROCE_200G)
    gm = gamma_us(cl)
    count = 16 * 4096
    n = count * 4
    want = (ao + 8 * n / 16 * bo + 15 * n / 16 * gm) + (ao + 8 * n / 16 * bo)
    assert HcclComm(cl).estimate("AllReduce", count, algo="mesh").time_us == pytest.approx(want, rel=1e-9)


def test_algbw_and_busbw_are_nccl_tests_definitions():
    comm = HcclComm(A2)
    count = 64 * 1024 * 1024
    S = count * 4
    ar = comm.estimate("AllReduce", count, algo="ring")
    t = FLAT["AllReduce", "ring"](S) * 1e-6
    assert ar.size_bytes == S
    assert ar.algbw_GBps == pytest.approx(S / t / 1e9, rel=1e-9)
    assert ar.busbw_GBps == pytest.approx(S / t / 1e9 * 2 * 7 / 8, rel=1e-9)
    # at 256 MB the ring's bus bandwidth is the link's, less the reduction's share
    assert 0.9 * HCCS_910B.gbytes_per_s < ar.busbw_GBps < HCCS_910B.gbytes_per_s
    ag = comm.estimate("AllGather", count // 8, algo="ring")
    assert ag.size_bytes == S
    assert ag.busbw_GBps == pytest.approx(ag.algbw_GBps * 7 / 8, rel=1e-12)
    assert comm.estimate("Broadcast", count, algo="ring").busbw_GBps == pytest.approx(
        comm.estimate("Broadcast", count, algo="ring").algbw_GBps)


def test_hccl_choice_follows_topology_servers_and_size():
    assert HcclComm(A2, hccl_algo="").estimate("AllReduce", 1024).algo == "mesh"
    assert HcclComm(atlas_800t_a2(servers=4), hccl_algo="").estimate("AllReduce", 1024).algo.endswith("rhd)")
    # 910 with a non-power-of-two number of peers: ring, whatever the size
    c910 = HcclComm(atlas_800_910(servers=3), hccl_algo="")
    assert all(c910.estimate("AllReduce", n).algo.endswith("ring)") for n in (16, 1 << 24))
    # A2 with 5 servers: the faster of ring (8 alphas) and H-D_R (6 alphas, 3.5 n beta) changes with size
    c3 = HcclComm(atlas_800t_a2(servers=5), hccl_algo="")
    small, large = c3.estimate("AllReduce", 64), c3.estimate("AllReduce", 1 << 24)
    assert small.algo.endswith("rhd)") and large.algo.endswith("ring)")
    for n in (64, 1 << 24):
        times = {x: HcclComm(atlas_800t_a2(servers=5), hccl_algo=f"level0:NA;level1:{y}").estimate(
            "AllReduce", n).time_us for x, y in (("ring", "ring"), ("rhd", "H-D_R"))}
        assert c3.estimate("AllReduce", n).time_us == min(times.values())
    # the override wins, per operator
    c4 = HcclComm(atlas_800t_a2(servers=4), hccl_algo="allreduce=level0:NA;level1:ring")
    assert c4.estimate("AllReduce", 1024).algo.endswith("ring)")
    assert c4.estimate("AllGather", 1024).algo.endswith("rhd)")
    assert HcclComm(atlas_800t_a2(servers=2)).estimate("AlltoAll", 1024).algo == "pairwise"


def test_timeline_holds_every_send_receive_and_reduction():
    comm = HcclComm(atlas_800t_a2(npus_per_server=4))
    import numpy as np
    res = comm.AllReduce([np.ones(400, np.float32)] * 4, algo="ring")
    for d in range(4):
        ev = comm.timeline.of(d)
        assert [e.kind for e in ev].count("send") == 6 and [e.kind for e in ev].count("recv") == 6
        assert [e.kind for e in ev].count("reduce") == 3
        assert max(e.end_us for e in ev) == pytest.approx(res.time_us)
    t = comm.Send(np.ones(1000, np.float32), 0, 3)
    assert t.sum() == 1000
    assert comm.timeline.clock_us[3] == pytest.approx(res.time_us + a + 4000 * b)
    cross = HcclComm(atlas_800t_a2(servers=2))
    cross.Send(np.ones(1000, np.float32), 0, 8)
    ao, bo = ab(ROCE_200G)
    assert cross.timeline.clock_us[8] == pytest.approx(ao + 4000 * bo)
    end = cross.Barrier()
    assert cross.timeline.clock_us == [end] * 16 and end > ao + 4000 * bo


def test_sweep_prints_an_nccl_tests_table(capsys):
    from ascend_sim.cluster.sweep import main, sweep
    main(["--servers", "2", "--min-bytes", "1024", "--max-bytes", "65536", "--op", "AllGather"])
    out = capsys.readouterr().out.splitlines()
    assert "16 x Ascend910B" in out[0] and "busbw GB/s" in out[1]
    assert [int(line.split()[0]) for line in out[2:]] == [1024, 4096, 16384, 65536]
    rows = sweep(HcclComm(A2), "ReduceScatter", [8 * 4 * 1024])
    assert rows[0].count == 1024 and rows[0].size_bytes == 8 * 4 * 1024


def test_chrome_trace_has_one_process_per_npu(tmp_path):
    import json

    import numpy as np

    from ascend_sim.cluster.chrome import write_chrome_trace
    comm = HcclComm(atlas_800t_a2(servers=2, npus_per_server=2))
    comm.AllReduce([np.ones(64, np.float32)] * 4)
    write_chrome_trace(comm.timeline, tmp_path / "t.json")
    ev = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    names = [e["args"]["name"] for e in ev if e["name"] == "process_name"]
    assert names[2] == "NPU 2 (server 1, HCCS domain 1)"
    spans = [e for e in ev if e["ph"] == "X"]
    assert len(spans) == len(comm.timeline.events)
    assert max(e["ts"] + e["dur"] for e in spans) == pytest.approx(max(comm.timeline.clock_us))
    assert {e["cat"] for e in spans} == {"send", "recv", "reduce"}


def test_a_flat_ring_is_paced_by_its_slowest_hop():
    """Ring over two servers: hops 7->8 and 15->0 are RoCE, and every step waits for them."""
    cl = atlas_800t_a2(servers=2)
    ao, bo = ab(ROCE_200G)
    gm, p = gamma_us(cl), 16
    for count in (16 * 1024, 16 * 1024 * 256):
        n = count * 4
        want = 2 * (p - 1) * (ao + n / p * bo) + (p - 1) * n / p * gm
        assert HcclComm(cl).estimate("AllReduce", count, algo="ring").time_us == pytest.approx(want, rel=1e-9)
