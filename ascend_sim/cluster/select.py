"""Which algorithm a collective runs: HCCL's choice, the ``HCCL_ALGO`` override, or an explicit one.

HCCL's rules as documented (hicann/hccl ``algo_intro.md``, the ``HCCL_ALGO`` page):
- inside a server (level0) the algorithm follows the topology and is not configurable: here the
  HCCS domains are full meshes, so level0 is mesh;
- between servers (level1) on Atlas training servers with the first 910: ring if the number of
  level1 peers is not a power of two, else H-D_R (recursive halving-doubling);
- on A2 (910B) HCCL decides "by product, node count and data size" without publishing the rule;
  ours [EST]: H-D_R for a power of two, else whichever of ring and H-D_R the alpha-beta model
  predicts is faster for this size (ring for large messages, H-D_R for small ones);
- AlltoAll between servers is pairwise.
``HCCL_ALGO="level0:NA;level1:ring"`` (or per op, ``"allreduce=level0:NA;level1:ring/allgather=..."``)
fixes level1 and turns the adaptive choice off, as in HCCL.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.cluster.errors import HcclError

LEVEL1 = {"ring": "ring", "H-D_R": "rhd"}
NOT_MODELLED = ("NHR", "NB", "pipeline", "pairwise", "AHC", "NHR_V1", "AHC_BROKE")
FLAT = ("ring", "rhd", "mesh")
HCCL_OP_NAMES = {"AllReduce": "allreduce", "ReduceScatter": "reducescatter", "AllGather": "allgather",
                 "Broadcast": "broadcast", "Reduce": "reduce", "AlltoAll": "alltoall"}


@dataclass(frozen=True)
class Choice:
    """``flat`` runs one algorithm over all ranks; otherwise mesh per domain and ``inter`` between them."""

    flat: str | None = None
    inter: str | None = None


def parse_hccl_algo(text: str | None) -> dict[str, str]:
    """``HCCL_ALGO`` text to {hccl op name or "*": level1 algorithm (ring or rhd)}."""
    if not text:
        return {}
    out: dict[str, str] = {}
    for part in text.split("/"):
        op, _, spec = part.rpartition("=")
        op = op.strip().lower() or "*"
        if op != "*" and op not in HCCL_OP_NAMES.values():
            raise HcclError(f"HCCL_ALGO names the operator {op!r}, which HCCL does not know",
                            fix=f"use one of {sorted(HCCL_OP_NAMES.values())}, e.g. 'allreduce=level0:NA;level1:ring'")
        levels = {}
        for item in spec.split(";"):
            level, sep, algo = item.partition(":")
            if not sep or level.strip() not in ("level0", "level1"):
                raise HcclError(f"HCCL_ALGO item {item!r} is not 'level0:<algo>' or 'level1:<algo>'",
                                fix="write it as 'level0:NA;level1:ring'")
            levels[level.strip()] = algo.strip()
        if levels.get("level0", "NA") != "NA":
            raise HcclError(f"HCCL_ALGO level0:{levels['level0']}: inside a server HCCL picks the algorithm from "
                            "the topology (mesh on a full mesh); level0 only accepts NA",
                            fix="write level0:NA and choose level1")
        algo = levels.get("level1", "NA")
        if algo in NOT_MODELLED:
            raise HcclError(f"HCCL_ALGO level1:{algo} is a real HCCL algorithm that this simulator does not model",
                            fix="use level1:ring or level1:H-D_R (recursive halving-doubling), or level1:NA")
        if algo != "NA":
            if algo not in LEVEL1:
                raise HcclError(f"HCCL_ALGO level1:{algo!r} is not an HCCL algorithm",
                                fix="use level1:ring or level1:H-D_R, or level1:NA for HCCL's own choice")
            out[op] = LEVEL1[algo]
    return out


def check_flat(algo: str, op: str, p: int) -> None:
    """Refuse an explicit algorithm that cannot run this collective on p ranks."""
    if algo not in FLAT + ("hierarchical",):
        raise HcclError(f"algo={algo!r} is not one of the modelled algorithms",
                        fix="use algo='ring', 'rhd', 'mesh', 'hierarchical' or None (HCCL's choice)")
    if algo == "rhd" and op in ("ReduceScatter", "AllGather") and p & (p - 1):
        raise HcclError(f"recursive halving-doubling {op} needs a power-of-two rank count, and there are {p}",
                        fix="use algo='ring' or 'mesh', or a power-of-two number of ranks")
    if algo == "rhd" and op == "AlltoAll":
        raise HcclError("AlltoAll has no recursive halving-doubling form in HCCL (it exchanges, it does not reduce)",
                        fix="use algo='ring' (pairwise exchange) or 'mesh'")


def inter_rule(chip_name: str, op: str, peers: int, estimate) -> str:
    """HCCL's level1 choice for ``peers`` domains; ``estimate(inter)`` gives the predicted time in us."""
    if peers & (peers - 1) == 0:
        return "rhd"
    if chip_name == "Ascend910" or op in ("ReduceScatter", "AllGather"):
        return "ring"
    return min(("ring", "rhd"), key=estimate)
