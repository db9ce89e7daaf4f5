"""Collective results against numpy references written here, in each algorithm's own reduction order.

The references do not use the package's schedules: each one folds the ranks' vectors in the order
the algorithm is documented to use (ascend_sim/cluster/algorithms.py), in the buffers' dtype, so a
fp16 result must match bit for bit. ``test_the_data_tells_orders_apart`` shows the data is hard
enough that a different order gives different bits (so these checks can fail).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.topology import atlas_800_910, atlas_800t_a2

UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.int32]


def data(p: int, n: int, dtype, op: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        lo, hi = (-3, 4) if op == "prod" else (-100, 100)
        return [rng.integers(lo, hi, n).astype(dtype) for _ in range(p)]
    if op == "prod":
        return [rng.uniform(0.5, 2.0, n).astype(dtype) for _ in range(p)]
    # mixed magnitudes make float sums depend on their order
    return [(rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3, n)).astype(dtype) for _ in range(p)]


def fold(vectors: list[np.ndarray], f) -> np.ndarray:
    acc = vectors[0].copy()
    for v in vectors[1:]:
        acc = f(acc, v)
    return acc


def bounds(n: int, k: int) -> list[tuple[int, int]]:
    return [(i * n // k, (i + 1) * n // k) for i in range(k)]


def ref_ring(xs: list[np.ndarray], f) -> np.ndarray:
    """Chunk c: rank c+1's values, then c+2's, ..., then rank c's (mod p)."""
    p, out = len(xs), np.empty_like(xs[0])
    for c, (lo, hi) in enumerate(bounds(xs[0].size, p)):
        out[lo:hi] = fold([xs[(c + k) % p][lo:hi] for k in range(1, p + 1)], f)
    return out


def ref_mesh(xs: list[np.ndarray], f) -> np.ndarray:
    """Chunk c: rank c's own values first, then the others in ascending rank order."""
    p, out = len(xs), np.empty_like(xs[0])
    for c, (lo, hi) in enumerate(bounds(xs[0].size, p)):
        out[lo:hi] = fold([xs[c][lo:hi]] + [xs[i][lo:hi] for i in range(p) if i != c], f)
    return out


def ref_rhd(xs: list[np.ndarray], f) -> np.ndarray:
    """Fold rank q+k into rank k (q = largest power of two <= p), then pair at distance q/2, q/4, ..., 1."""
    p = len(xs)
    q = 1 << (p.bit_length() - 1)
    v = [f(xs[k], xs[q + k]) if k < p - q else xs[k].copy() for k in range(q)]
    d = q // 2
    while d >= 1:
        v = [f(v[r], v[r ^ d]) for r in range(q)]
        d //= 2
    return v[0]


def ref_hierarchical(xs: list[np.ndarray], f, domains: list[list[int]], inter) -> np.ndarray:
    """Mesh inside each domain on part l of L, then ``inter`` across the domains' partial sums of part l."""
    L, out = len(domains[0]), np.empty_like(xs[0])
    for l, (lo, hi) in enumerate(bounds(xs[0].size, L)):
        partial = [fold([xs[dom[l]][lo:hi]] + [xs[r][lo:hi] for i, r in enumerate(dom) if i != l], f)
                   for dom in domains]
        out[lo:hi] = inter(partial, f)
    return out


CASES = [  # (name, cluster, algo, reference)
    ("ring8", atlas_800t_a2(), "ring", ref_ring),
    ("ring5", atlas_800t_a2(npus_per_server=5), "ring", ref_ring),
    ("mesh8", atlas_800t_a2(), "mesh", ref_mesh),
    ("rhd8", atlas_800t_a2(), "rhd", ref_rhd),
    ("rhd6", atlas_800t_a2(npus_per_server=6), "rhd", ref_rhd),
    ("auto-a2-1server", atlas_800t_a2(), None, ref_mesh),
]
HIER = [  # hierarchical: (name, cluster, HCCL_ALGO, inter reference)
    ("a2x2-rhd", atlas_800t_a2(servers=2, npus_per_server=4), "", ref_rhd),
    ("a2x3-ring", atlas_800t_a2(servers=3, npus_per_server=4), "level0:NA;level1:ring", ref_ring),
    ("910-1server", atlas_800_910(), "", ref_rhd),
    ("910x3", atlas_800_910(servers=3), "", ref_ring),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", list(UFUNC))
@pytest.mark.parametrize("name,cluster,algo,ref", CASES, ids=[c[0] for c in CASES])
def test_allreduce_flat_matches_its_order(name, cluster, algo, ref, op, dtype):
    xs = data(cluster.world_size, 37, dtype, op)
    res = HcclComm(cluster, hccl_algo="").AllReduce(xs, op=op, algo=algo)
    want = ref(xs, UFUNC[op])
    for out in res.outputs:
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
@pytest.mark.parametrize("name,cluster,hccl_algo,inter", HIER, ids=[c[0] for c in HIER])
def test_allreduce_hierarchical_matches_its_order(name, cluster, hccl_algo, inter, dtype):
    xs = data(cluster.world_size, 53, dtype, "sum", seed=1)
    res = HcclComm(cluster, hccl_algo=hccl_algo).AllReduce(xs)
    assert res.algo.startswith("hierarchical")
    want = ref_hierarchical(xs, np.add, cluster.domains, inter)
    for out in res.outputs:
        np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))


def test_the_data_tells_orders_apart():
    """The fp16 data above gives different bits in different orders, so the order checks can fail."""
    xs = data(8, 37, np.float16, "sum")
    results = [ref(xs, np.add) for ref in (ref_ring, ref_mesh, ref_rhd)]
    naive = np.sum(np.stack(xs).astype(np.float32), axis=0).astype(np.float16)
    for i, a in enumerate(results):
        assert not np.array_equal(a, naive)
        for b in results[i + 1:]:
            assert not np.array_equal(a, b)


def test_float_sums_are_close_to_the_exact_sum():
    xs = data(16, 1000, np.float32, "sum")
    exact = np.sum(np.stack(xs).astype(np.float64), axis=0)
    out = HcclComm(atlas_800t_a2(servers=2)).AllReduce(xs).outputs[0]
    np.testing.assert_allclose(out, exact, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("algo", ["ring", "mesh", "rhd", None])
@pytest.mark.parametrize("cluster", [atlas_800t_a2(), atlas_800t_a2(servers=2, npus_per_server=2),
                                     atlas_800_910(servers=2)], ids=["a2", "a2x2", "910x2"])
def test_every_collective_moves_the_right_slices(cluster, algo):
    p, c = cluster.world_size, 6
    comm = HcclComm(cluster, hccl_algo="")
    xs = data(p, p * c, np.int32, "sum", seed=2)
    total = np.sum(xs, axis=0, dtype=np.int32)
    rs = comm.ReduceScatter(xs, algo=algo)
    ag = comm.AllGather([x[:c] for x in xs], algo=algo)
    for r in range(p):
        np.testing.assert_array_equal(rs.outputs[r], total[r * c:(r + 1) * c])
        np.testing.assert_array_equal(ag.outputs[r], np.concatenate([x[:c] for x in xs]))
    for root in (0, p - 1, p // 2 + 1):
        bc = comm.Broadcast(xs, root=root, algo=algo)
        red = comm.Reduce(xs, root=root, algo=algo)
        assert all(np.array_equal(o, xs[root]) for o in bc.outputs)
        np.testing.assert_array_equal(red.outputs[root], total)
        assert all(o is None for r, o in enumerate(red.outputs) if r != root)
    if algo != "rhd":
        a2a = comm.AlltoAll(xs, algo=algo)
        for j in range(p):
            np.testing.assert_array_equal(a2a.outputs[j], np.concatenate([x[j * c:(j + 1) * c] for x in xs]))


@pytest.mark.parametrize("dtype", [np.int8, np.int32])
def test_integer_sums_wrap_like_the_hardware(dtype):
    xs = [np.full(16, np.iinfo(dtype).max // 2 + 1, dtype) for _ in range(4)]
    out = HcclComm(atlas_800t_a2(npus_per_server=4)).AllReduce(xs).outputs[0]
    np.testing.assert_array_equal(out, np.sum(xs, axis=0, dtype=dtype))


def test_rhd_and_reduce_trees_fold_in_their_order_for_fp16():
    """Reduce and ReduceScatter share the AllReduce orders: ring Reduce is a chain ending at the root."""
    cl = atlas_800t_a2(npus_per_server=5)
    xs = data(5, 40, np.float16, "sum", seed=3)
    root = 2
    red = HcclComm(cl).Reduce(xs, root=root, algo="ring").outputs[root]
    want = fold([xs[(root + k) % 5] for k in range(1, 6)], np.add)
    np.testing.assert_array_equal(red.view(np.uint16), want.view(np.uint16))
    rs = HcclComm(cl).ReduceScatter(xs, algo="ring").outputs
    np.testing.assert_array_equal(np.concatenate(rs).view(np.uint16),
                                  ref_ring(xs, np.add).view(np.uint16))


@pytest.mark.parametrize("name,cluster,hccl_algo,inter", HIER, ids=[c[0] for c in HIER])
def test_reduce_scatter_hierarchical_matches_its_order(name, cluster, hccl_algo, inter):
    """Mesh by column inside each domain, then ``inter`` across domains over the column's slices."""
    doms, c = cluster.domains, 5
    xs = data(cluster.world_size, cluster.world_size * c, np.float16, "sum", seed=4)
    out = HcclComm(cluster, hccl_algo=hccl_algo).ReduceScatter(xs).outputs

    def blk(x, rank):
        return x[rank * c:(rank + 1) * c]
    for l in range(len(doms[0])):
        col = [dom[l] for dom in doms]                                         # owners of column l
        partial = [np.concatenate([fold([blk(xs[dom[l]], o)] + [blk(xs[r], o) for i, r in enumerate(dom) if i != l],
                                        np.add) for o in col]) for dom in doms]
        want = inter(partial, np.add)
        for d, owner in enumerate(col):
            np.testing.assert_array_equal(out[owner].view(np.uint16), blk(want, d).view(np.uint16))
