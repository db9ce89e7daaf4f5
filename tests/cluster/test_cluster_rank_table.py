"""The rank table and the per-process HCCL environment: generated for a cluster, checked against HCCL's rules."""
from __future__ import annotations

import copy

import pytest

from ascend_sim.cluster import atlas_800_910, atlas_800t_a2
from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.rank_table import check_env, check_rank_table, hccl_env, rank_table


def test_two_a2_servers_table_and_env():
    t = rank_table(atlas_800t_a2(2))
    assert t["version"] == "1.0" and t["server_count"] == "2" and t["status"] == "completed"
    assert [d["rank_id"] for s in t["server_list"] for d in s["device"]] == [str(r) for r in range(16)]
    assert [d["device_id"] for d in t["server_list"][1]["device"]] == [str(i) for i in range(8)]
    assert len({d["device_ip"].rsplit(".", 1)[0] for d in t["server_list"][0]["device"]}) == 1   # one subnet
    assert check_rank_table(t) == ["2 server(s) x 8 NPUs, ranks 0..15"]
    env = hccl_env(t, 11)
    assert (env["RANK_SIZE"], env["RANK_ID"], env["DEVICE_ID"]) == ("16", "11", "3")
    assert check_env(env, t)[-1] == "rank 11: device 3, 16 ranks"


def test_first_910_pairs_npu_i_with_i_plus_4():
    t = rank_table(atlas_800_910(1))
    subnet = [d["device_ip"].split(".")[2] for d in t["server_list"][0]["device"]]
    assert subnet[:4] == subnet[4:] and len(set(subnet)) == 4


@pytest.mark.parametrize("edit,match", [
    (lambda t: t["server_list"][0]["device"][1].update(rank_id="0"), "each once"),
    (lambda t: t["server_list"][0]["device"][1].update(device_id="0"), "repeat"),
    (lambda t: t["server_list"][1]["device"].pop(), "same number"),
    (lambda t: t.update(server_count="3"), "server_count"),
])
def test_broken_tables_are_refused(edit, match):
    t = rank_table(atlas_800t_a2(2))
    edit(t)
    with pytest.raises(HcclError, match=match):
        check_rank_table(t)


def test_four_cards_across_the_910_groups_are_refused():
    t = rank_table(atlas_800_910(1, npus_per_server=4))
    check_rank_table(t, first_910=True)
    bad = copy.deepcopy(t)
    bad["server_list"][0]["device"][3]["device_id"] = "4"
    with pytest.raises(HcclError, match="span both HCCS groups"):
        check_rank_table(bad, first_910=True)


@pytest.mark.parametrize("change,match", [
    ({"RANK_SIZE": "8"}, "RANK_SIZE"), ({"RANK_ID": "16"}, "not a rank_id"), ({"DEVICE_ID": "0"}, "DEVICE_ID"),
    ({"HCCL_CONNECT_TIMEOUT": "60"}, "HCCL_CONNECT_TIMEOUT"), ({"HCCL_EXEC_TIMEOUT": "20000"}, "HCCL_EXEC_TIMEOUT"),
])
def test_broken_environments_are_refused(change, match):
    t = rank_table(atlas_800t_a2(2))
    env = {**hccl_env(t, 11), **change}
    with pytest.raises(HcclError, match=match):
        check_env(env, t)


def test_exec_timeout_is_rounded_down_to_68():
    t = rank_table(atlas_800t_a2(1))
    assert "used as 1768 s" in check_env(hccl_env(t, 0, exec_timeout_s=1800), t)[0]
