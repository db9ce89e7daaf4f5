"""DistributedSampler: hand-derived cases always; torch's own class, index for index, when torch is importable."""
from __future__ import annotations

import itertools

import pytest

from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.sampler import DistributedSampler, torch_randperm


def lists(n, world, **kw):
    return [DistributedSampler(n, world, r, **kw).indices() for r in range(world)]


def test_strided_split_pads_by_repeating_the_head():
    # N=10, W=3: num_samples = ceil(10/3) = 4, total 12, list 0..9 then 0, 1
    assert lists(10, 3, shuffle=False) == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    # padding longer than the list wraps as many times as needed: [0, 1, 0, 1, 0]
    assert lists(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]


def test_drop_last_cuts_the_tail():
    # ceil((10 - 3) / 3) = 3 per rank, total 9: index 9 is dropped
    assert lists(10, 3, shuffle=False, drop_last=True) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert lists(9, 3, shuffle=False, drop_last=True) == lists(9, 3, shuffle=False)
    assert len(DistributedSampler(10, 3, 0, drop_last=True)) == 3


def test_randperm_matches_mt19937_by_hand():
    # MT19937 seeded with 0 draws 2357136044, 2546248239, ... (the reference generator's published outputs).
    # Fisher-Yates forward: i=0: 2357136044 % 3 = 2 -> swap 0,2 -> [2,1,0]; i=1: 2546248239 % 2 = 1 -> [2,0,1]
    assert torch_randperm(3, 0) == [2, 0, 1]
    assert sorted(torch_randperm(1000, 7)) == list(range(1000))


def test_shuffle_depends_on_seed_plus_epoch_and_set_epoch():
    s = DistributedSampler(100, 4, 1, seed=5)
    first = s.indices()
    assert s.indices() == first                         # no set_epoch: the same order again
    s.set_epoch(1)
    second = s.indices()
    assert second != first
    assert DistributedSampler(100, 4, 1, seed=6).indices() == second     # seed 5 + epoch 1 == seed 6 + epoch 0
    # the ranks' lists cover the dataset exactly once when N divides evenly
    assert sorted(sum(lists(100, 4, seed=5), [])) == list(range(100))


def test_bad_arguments():
    with pytest.raises(DataParallelError, match=r"interval \[0, 3\]") as e:
        DistributedSampler(10, 4, 4)
    assert e.value.fix
    with pytest.raises(DataParallelError, match="at least one rank"):
        DistributedSampler(10, 0, 0)


def test_same_index_lists_as_torch():
    torch = pytest.importorskip("torch", reason="torch is optional; the hand-derived cases above always run")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    checked = 0
    for n, world, shuffle, drop_last, epoch, seed in itertools.product(
            (0, 1, 2, 7, 10, 33, 64, 1001), (1, 2, 3, 4, 8), (False, True), (False, True), (0, 1, 5), (0, 42)):
        if not shuffle and (epoch or seed):
            continue
        for rank in range(world):
            ours = DistributedSampler(n, world, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
            theirs = TorchSampler(range(n), num_replicas=world, rank=rank, shuffle=shuffle, seed=seed,
                                  drop_last=drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert ours.indices() == list(theirs), (n, world, rank, shuffle, drop_last, epoch, seed)
            assert len(ours) == len(theirs)
            checked += 1
    assert checked > 500
    g = torch.Generator()
    g.manual_seed(2 ** 32 + 3)                          # only the low 32 bits of the seed count
    assert torch.randperm(50, generator=g).tolist() == torch_randperm(50, 2 ** 32 + 3)
