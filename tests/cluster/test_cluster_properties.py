"""Property-based tests (hypothesis): every collective, algorithm and topology gives numpy's exact integer answer."""
from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.topology import atlas_800_910, atlas_800t_a2

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPS = {"sum": lambda s: np.sum(s, axis=0, dtype=np.int32), "prod": lambda s: np.prod(s, axis=0, dtype=np.int32),
       "max": lambda s: np.max(s, axis=0), "min": lambda s: np.min(s, axis=0)}


@st.composite
def setups(draw):
    kind = draw(st.sampled_from(["a2", "910"]))
    servers = draw(st.integers(1, 5))
    if kind == "a2":
        cluster = atlas_800t_a2(servers, draw(st.integers(1, 8)))
    else:
        cluster = atlas_800_910(servers, draw(st.sampled_from([1, 2, 4, 8])))
    p = cluster.world_size
    algo = draw(st.sampled_from([None, "ring", "mesh", "hierarchical"]
                                + (["rhd"] if p & (p - 1) == 0 else [])))
    d = len(cluster.domains)
    rhd = ["level0:NA;level1:H-D_R"] if d & (d - 1) == 0 else []
    level1 = draw(st.sampled_from(["", "level0:NA;level1:ring"] + rhd))
    count = draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2 ** 16))
    return cluster, algo, level1, count, seed


@PROPERTY
@given(setups(), st.sampled_from(list(OPS)), st.integers(0, 63))
def test_collectives_are_exact_on_any_topology(setup, op, root_pick):
    cluster, algo, level1, count, seed = setup
    p = cluster.world_size
    root = root_pick % p
    rng = np.random.default_rng(seed)
    lo, hi = (-2, 3) if op == "prod" else (-1000, 1000)
    xs = [rng.integers(lo, hi, p * count).astype(np.int32) for _ in range(p)]
    comm = HcclComm(cluster, hccl_algo=level1)
    want = OPS[op](np.stack(xs))
    for out in comm.AllReduce(xs, op=op, algo=algo).outputs:
        np.testing.assert_array_equal(out, want)
    for r, out in enumerate(comm.ReduceScatter(xs, op=op, algo=algo).outputs):
        np.testing.assert_array_equal(out, want[r * count:(r + 1) * count])
    np.testing.assert_array_equal(comm.Reduce(xs, op=op, root=root, algo=algo).outputs[root], want)
    for out in comm.Broadcast(xs, root=root, algo=algo).outputs:
        np.testing.assert_array_equal(out, xs[root])
    for out in comm.AllGather([x[:count] for x in xs], algo=algo).outputs:
        np.testing.assert_array_equal(out, np.concatenate([x[:count] for x in xs]))
    if algo != "rhd":
        for j, out in enumerate(comm.AlltoAll(xs, algo=algo).outputs):
            np.testing.assert_array_equal(out, np.concatenate([x[j * count:(j + 1) * count] for x in xs]))
    # every device's clock only moves forward, and a collective never takes less than one message
    alpha = min(cluster.intra.alpha_us, cluster.inter.alpha_us)
    assert p == 1 or max(comm.timeline.clock_us) >= 6 * alpha


def test_a_derived_link_changes_only_the_time():
    cl = atlas_800t_a2(servers=2)
    slow = dataclasses.replace(cl, inter=dataclasses.replace(cl.inter, gbytes_per_s=cl.inter.gbytes_per_s / 2))
    xs = [np.arange(1 << 14, dtype=np.float32) * r for r in range(16)]
    a, b = HcclComm(cl).AllReduce(xs), HcclComm(slow).AllReduce(xs)
    assert all(np.array_equal(x, y) for x, y in zip(a.outputs, b.outputs))
    assert b.time_us > a.time_us
