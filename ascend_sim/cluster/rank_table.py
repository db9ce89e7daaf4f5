"""Multi-card set-up: an HCCL rank table (``hccl.json``) and each process's environment, generated and checked.

Without torchrun's TCP rendezvous, HCCL learns the cluster from a **rank table** (rank table 文件): version "1.0",
``server_count``, and per server its ``server_id`` (host IP) and ``device`` list of ``device_id`` (the NPU's index in
the server), ``device_ip`` (its NIC) and ``rank_id`` (its global rank), with ``status: "completed"`` (the format
MindSpore's ``hccl_tools.py`` writes). Each training process then gets ``RANK_TABLE_FILE``, ``RANK_SIZE``, ``RANK_ID``
and ``DEVICE_ID``, and optionally HCCL's timeouts. The IP addresses generated here are examples [EST]: on a real
machine ``hccn_tool -i <id> -ip -g`` reads each NIC's address. The A2's 8 NICs share one subnet; the first 910's
NPU i shares a subnet with NPU i + 4 (docs/cluster.md, "Topology").

``check_rank_table`` and ``check_env`` refuse what HCCL would refuse or time out on, naming the rule and the fix:
ranks not 0..n-1 or repeated, a device twice in one server, unequal servers, 2 or 4 cards of a first-generation 910
server spread over its two HCCS groups, a rank size or rank id that does not match the table, and timeouts outside
HCCL's ranges (``HCCL_CONNECT_TIMEOUT`` 120..7200 s; ``HCCL_EXEC_TIMEOUT`` 68..17340 s, rounded down to a multiple
of 68).
"""
from __future__ import annotations

from typing import Any

from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.topology import Cluster

CONNECT_TIMEOUT_S = (120, 7200)
EXEC_TIMEOUT_S = (68, 17340)


def rank_table(cluster: Cluster, first_host: str = "10.0.0.") -> dict[str, Any]:
    """The rank table of ``cluster``: rank r is device r, server s has host ``first_host`` + (s + 1)."""
    per_server: dict[int, list] = {}
    for d in cluster.devices:
        per_server.setdefault(d.server, []).append(d)
    first_910 = cluster.chip.name.startswith("Ascend910") and not cluster.chip.name.startswith("Ascend910B")
    servers = []
    for s, devs in sorted(per_server.items()):
        local = [d.rank - devs[0].rank for d in devs]
        devices = [{"device_id": str(i), "device_ip": f"192.168.{100 + (i % 4 if first_910 else 0)}.{s * 8 + i + 1}",
                    "rank_id": str(d.rank)} for i, d in zip(local, devs)]
        servers.append({"server_id": f"{first_host}{s + 1}", "device": devices})
    return {"version": "1.0", "server_count": str(len(servers)), "server_list": servers, "status": "completed"}


def check_rank_table(table: dict[str, Any], first_910: bool = False) -> list[str]:
    """Check a rank table (``first_910``: Atlas 800 servers with two HCCS groups); raises HcclError on a broken rule."""
    servers = table.get("server_list", [])
    if table.get("status") != "completed" or str(table.get("server_count")) != str(len(servers)):
        raise HcclError(f"rank table: status {table.get('status')!r}, server_count {table.get('server_count')!r} "
                        f"for {len(servers)} servers in server_list", fix='set "status": "completed" and '
                        '"server_count" to the number of entries of server_list, as a string')
    ranks, sizes = [], set()
    for srv in servers:
        ids = [int(d["device_id"]) for d in srv["device"]]
        if len(set(ids)) != len(ids) or not all(0 <= i < 8 for i in ids):
            raise HcclError(f"server {srv['server_id']}: device_ids {ids} repeat or leave 0..7",
                            fix="list each NPU of a server once, device_id 0..7")
        if first_910 and len(ids) in (2, 4) and len({i // 4 for i in ids}) > 1:
            raise HcclError(f"server {srv['server_id']}: {len(ids)} cards {ids} span both HCCS groups of an Atlas 800 "
                            "(910); 2 or 4 cards must sit in one group (0-3 or 4-7)",
                            fix="use device_ids 0..3 (or 4..7), or all 8")
        sizes.add(len(ids))
        ranks += [int(d["rank_id"]) for d in srv["device"]]
    if len(sizes) > 1:
        raise HcclError(f"servers hold {sorted(sizes)} devices; HCCL needs the same number on every server",
                        fix="give every server the same number of NPUs")
    if sorted(ranks) != list(range(len(ranks))):
        raise HcclError(f"rank_ids {sorted(ranks)} are not 0..{len(ranks) - 1}, each once",
                        fix="number the ranks 0..n-1 across the servers, each once")
    return [f"{len(servers)} server(s) x {sizes.pop() if sizes else 0} NPUs, ranks 0..{len(ranks) - 1}"]


def hccl_env(table: dict[str, Any], rank: int, table_path: str = "/path/to/hccl.json",
             connect_timeout_s: int = 120, exec_timeout_s: int = 1800) -> dict[str, str]:
    """The environment of rank ``rank``'s process (its DEVICE_ID read from the table)."""
    dev = next((d for s in table["server_list"] for d in s["device"] if int(d["rank_id"]) == rank), None)
    if dev is None:
        raise HcclError(f"rank {rank} is not in the rank table", fix="pass a rank_id the table lists")
    n = sum(len(s["device"]) for s in table["server_list"])
    return {"RANK_TABLE_FILE": table_path, "RANK_SIZE": str(n), "RANK_ID": str(rank), "DEVICE_ID": dev["device_id"],
            "HCCL_CONNECT_TIMEOUT": str(connect_timeout_s), "HCCL_EXEC_TIMEOUT": str(exec_timeout_s)}


def check_env(env: dict[str, str], table: dict[str, Any]) -> list[str]:
    """Check one process's environment against the table and HCCL's ranges; returns notes, raises on a broken rule."""
    notes = []
    n = sum(len(s["device"]) for s in table["server_list"])
    if env.get("RANK_SIZE") != str(n):
        raise HcclError(f"RANK_SIZE={env.get('RANK_SIZE')!r} but the rank table lists {n} devices: the ranks would wait "
                        f"for {env.get('RANK_SIZE')} members until HCCL_CONNECT_TIMEOUT", fix=f"set RANK_SIZE={n}")
    rank = int(env.get("RANK_ID", -1))
    dev = next((d for s in table["server_list"] for d in s["device"] if int(d["rank_id"]) == rank), None)
    if dev is None:
        raise HcclError(f"RANK_ID={env.get('RANK_ID')!r} is not a rank_id of the table (0..{n - 1})",
                        fix="give each process its own rank_id from the table")
    if env.get("DEVICE_ID") != dev["device_id"]:
        raise HcclError(f"RANK_ID {rank} is device {dev['device_id']} in the table but DEVICE_ID={env.get('DEVICE_ID')!r}",
                        fix=f"set DEVICE_ID={dev['device_id']} for rank {rank}")
    lo, hi = CONNECT_TIMEOUT_S
    t = int(env.get("HCCL_CONNECT_TIMEOUT", 120))
    if not lo <= t <= hi:
        raise HcclError(f"HCCL_CONNECT_TIMEOUT={t} s is outside HCCL's range [{lo}, {hi}]",
                        fix=f"use {lo}..{hi} seconds (default 120)")
    lo, hi = EXEC_TIMEOUT_S
    t = int(env.get("HCCL_EXEC_TIMEOUT", 1800))
    if not lo <= t <= hi:
        raise HcclError(f"HCCL_EXEC_TIMEOUT={t} s is outside HCCL's range [{lo}, {hi}]",
                        fix=f"use {lo}..{hi} seconds (default 1800)")
    if t % 68:
        notes.append(f"HCCL_EXEC_TIMEOUT={t} s is used as {t // 68 * 68} s (a multiple of 68)")
    return notes + [f"rank {rank}: device {dev['device_id']}, {n} ranks"]
