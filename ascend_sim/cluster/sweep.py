"""An nccl-tests-style sweep: time, algbw and busbw of one collective over message sizes.

    python -m ascend_sim.cluster.sweep --cluster atlas_800t_a2 --servers 2 --op AllReduce
"""
from __future__ import annotations

import argparse

from ascend_sim.cluster.hccl import CollectiveResult, HcclComm, dtype_of
from ascend_sim.cluster.topology import CLUSTERS


def sweep(comm: HcclComm, op: str, sizes_bytes: list[int], dtype="fp32",
          algo: str | None = None) -> list[CollectiveResult]:
    """One estimate per size; for ReduceScatter, AllGather and AlltoAll the size is nccl-tests' S (all ranks)."""
    item = dtype_of(dtype).itemsize
    p = comm.rank_size
    per = item * p if op in ("ReduceScatter", "AllGather", "AlltoAll") else item
    return [comm.estimate(op, max(1, s // per), dtype, algo) for s in sizes_bytes]


def table(results: list[CollectiveResult]) -> str:
    head = ("size (B)", "count", "type", "time (us)", "algbw GB/s", "busbw GB/s")
    lines = [f"{head[0]:>12} {head[1]:>11} {head[2]:>8} {head[3]:>11} {head[4]:>11} {head[5]:>11}  algo"]
    for r in results:
        lines.append(f"{r.size_bytes:>12} {r.count:>11} {r.dtype.name:>8} {r.time_us:>11.2f} "
                     f"{r.algbw_GBps:>11.2f} {r.busbw_GBps:>11.2f}  {r.algo}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cluster", choices=sorted(CLUSTERS), default="atlas_800t_a2")
    ap.add_argument("--servers", type=int, default=1)
    ap.add_argument("--npus", type=int, default=8, help="NPUs per server")
    ap.add_argument("--op", default="AllReduce")
    ap.add_argument("--dtype", default="fp32")
    ap.add_argument("--algo", default=None, help="ring, rhd, mesh or hierarchical (default: HCCL's choice)")
    ap.add_argument("--hccl-algo", default=None, help="HCCL_ALGO text, e.g. 'level0:NA;level1:ring'")
    ap.add_argument("--min-bytes", type=int, default=8)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    args = ap.parse_args(argv)
    comm = HcclComm(CLUSTERS[args.cluster](args.servers, args.npus), hccl_algo=args.hccl_algo)
    sizes, s = [], args.min_bytes
    while s <= args.max_bytes:
        sizes.append(s)
        s *= 4
    print(comm.cluster.describe())
    print(table(sweep(comm, args.op, sizes, args.dtype, args.algo)))


if __name__ == "__main__":
    main()
