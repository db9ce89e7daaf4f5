"""DistributedSampler (分布式采样器) with torch.utils.data.DistributedSampler's exact index lists.

Each of ``num_replicas`` ranks gets ``num_samples`` indices, strided: rank r takes positions
r, r+W, r+2W, ... of one shared list. That list is ``range(N)`` or, with ``shuffle``, torch's
``randperm(N)`` seeded with ``seed + epoch`` (so call ``set_epoch`` every epoch, or every epoch
repeats the same order). Without ``drop_last`` the list is padded by repeating its head until
every rank has the same count; with it, the tail is cut.

``randperm`` is reproduced bit for bit: torch's CPU generator is MT19937 seeded with the low 32
bits of the seed, and ``randperm`` is a forward Fisher-Yates shuffle drawing ``random() % (n - i)``
(the form torch uses below 2**32 / 20 elements). numpy's legacy RandomState is the same MT19937.
"""
from __future__ import annotations

import math
from typing import Iterator, Sized

import numpy as np

from ascend_sim.cluster.errors import DataParallelError

_RANDPERM_SMALL = (2 ** 32 - 1) // 20        # torch switches to 64-bit draws above this n


def torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()`` without torch."""
    if n >= _RANDPERM_SMALL:
        raise DataParallelError(f"randperm of {n} elements uses torch's 64-bit path, which is not reproduced here",
                                fix=f"use fewer than {_RANDPERM_SMALL} samples")
    r = list(range(n))
    if n < 2:
        return r
    draws = np.random.RandomState(seed & 0xFFFFFFFF).randint(0, 2 ** 32, size=n - 1, dtype=np.uint32).tolist()
    for i, z in enumerate(draws):
        j = i + z % (n - i)
        r[i], r[j] = r[j], r[i]
    return r


class DistributedSampler:
    """The indices one rank reads in one epoch, exactly as torch's DistributedSampler gives them."""

    def __init__(self, dataset: Sized | int, num_replicas: int, rank: int, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False):
        n = dataset if isinstance(dataset, int) else len(dataset)
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise DataParallelError(f"num_replicas={num_replicas!r}: there must be at least one rank",
                                    fix="pass the world size, e.g. num_replicas=comm.rank_size")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise DataParallelError(f"Invalid rank {rank!r}, rank should be in the interval [0, {num_replicas - 1}]",
                                    fix=f"pass this process's rank, an int in range({num_replicas})")
        self.n, self.num_replicas, self.rank = n, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.epoch = 0
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Reseed the shuffle for this epoch (seed + epoch); without it every epoch repeats."""
        self.epoch = epoch

    def indices(self) -> list[int]:
        order = torch_randperm(self.n, self.seed + self.epoch) if self.shuffle else list(range(self.n))
        if not self.drop_last:
            pad = self.total_size - len(order)
            if pad <= len(order):
                order += order[:pad]
            else:
                order += (order * math.ceil(pad / len(order)))[:pad]
        else:
            order = order[:self.total_size]
        return order[self.rank:self.total_size:self.num_replicas]

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices())

    def __len__(self) -> int:
        return self.num_samples
