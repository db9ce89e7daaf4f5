"""Collective algorithms as schedules: lists of steps, each a list of concurrent transfers.

One schedule gives both the numerics (the executor applies it to real buffers, so the reduction
order, and with it every fp16 rounding, is the algorithm's) and the time (each transfer costs
alpha + n * beta on its link). Builders work on a *group* of ranks ``g`` and on *chunks*: a chunk
is a tuple of (lo, hi) element ranges that sit at the same place in every rank's work buffer.

Reduction order, fixed so that results are deterministic (HCCL_DETERMINISTIC-like):
- ring: chunk c starts at g[c+1] and is added to by g[c+2], ..., ending at its owner g[c];
- rhd: partners at distance p/2 first, then p/4, ... (recursive halving); a non-power-of-two
  group first folds rank p'+k into rank k (p' the largest power of two <= p);
- mesh: the owner's own value first, then the other ranks in ascending group order.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest

Chunk = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Transfer:
    """One message: ``src`` work[lo:hi] lands at dst work[at:at+hi-lo], reduced into it or copied."""

    src: int
    dst: int
    segs: tuple[tuple[int, int, int], ...]     # (lo, hi, at)
    reduce: bool

    @property
    def elements(self) -> int:
        return sum(hi - lo for lo, hi, _ in self.segs)


Step = list[Transfer]


def send(src: int, dst: int, chunk: Chunk, reduce: bool = False) -> Transfer:
    return Transfer(src, dst, tuple((lo, hi, lo) for lo, hi in chunk), reduce)


def split(chunk: Chunk, k: int) -> list[Chunk]:
    """Cut every range of ``chunk`` into k near-equal parts; part i of each range forms sub-chunk i."""
    parts: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    for lo, hi in chunk:
        n = hi - lo
        for i in range(k):
            parts[i].append((lo + i * n // k, lo + (i + 1) * n // k))
    return [tuple(p) for p in parts]


def merge(*chunks: Chunk) -> Chunk:
    return tuple(seg for c in chunks for seg in c)


def parallel(schedules: list[list[Step]]) -> list[Step]:
    """Run schedules of disjoint groups side by side: step i of each becomes one step."""
    return [[t for s in steps if s for t in s] for steps in zip_longest(*schedules, fillvalue=None)]


def is_pow2(p: int) -> bool:
    return p > 0 and p & (p - 1) == 0


# --- ring ---------------------------------------------------------------------------------------

def ring_reduce_scatter(g: list[int], chunks: list[Chunk]) -> list[Step]:
    p = len(g)
    return [[send(g[i], g[(i + 1) % p], chunks[(i - s - 1) % p], True) for i in range(p)] for s in range(p - 1)]


def ring_allgather(g: list[int], chunks: list[Chunk]) -> list[Step]:
    p = len(g)
    return [[send(g[i], g[(i + 1) % p], chunks[(i - s) % p]) for i in range(p)] for s in range(p - 1)]


def chain_broadcast(g: list[int], root: int, region: Chunk) -> list[Step]:
    p = len(g)
    return [[send(g[(root + s) % p], g[(root + s + 1) % p], region)] for s in range(p - 1)]


def chain_reduce(g: list[int], root: int, region: Chunk) -> list[Step]:
    p = len(g)
    return [[send(g[(root + 1 + s) % p], g[(root + 2 + s) % p], region, True)] for s in range(p - 1)]


# --- recursive halving-doubling -----------------------------------------------------------------

def rhd_reduce_scatter(g: list[int], chunks: list[Chunk]) -> list[Step]:
    """Recursive halving (p a power of two): rank i ends owning chunks[i]."""
    p, steps = len(g), []
    span = {i: (0, p) for i in range(p)}           # chunk indices [a, b) rank i still reduces
    d = p // 2
    while d >= 1:
        step = []
        for i in range(p):
            a, b = span[i]
            mid = (a + b) // 2
            keep, give = ((a, mid), (mid, b)) if i & d == 0 else ((mid, b), (a, mid))
            step.append(send(g[i], g[i ^ d], merge(*chunks[give[0]:give[1]]), True))
            span[i] = keep
        steps.append(step)
        d //= 2
    return steps


def rhd_allgather(g: list[int], chunks: list[Chunk]) -> list[Step]:
    """Recursive doubling (p a power of two): rank i starts with chunks[i]."""
    p, steps, d = len(g), [], 1
    while d < p:
        steps.append([send(g[i], g[i ^ d], merge(*chunks[(i // d) * d:(i // d) * d + d])) for i in range(p)])
        d *= 2
    return steps


def rhd_allreduce(g: list[int], region: Chunk) -> list[Step]:
    p = len(g)
    q = 1 << (p.bit_length() - 1)                  # largest power of two <= p
    fold_in = [[send(g[q + k], g[k], region, True) for k in range(p - q)]] if p > q else []
    fold_out = [[send(g[k], g[q + k], region) for k in range(p - q)]] if p > q else []
    core, chunks = g[:q], split(region, q)
    return fold_in + rhd_reduce_scatter(core, chunks) + rhd_allgather(core, chunks) + fold_out


def binomial_broadcast(g: list[int], root: int, region: Chunk) -> list[Step]:
    p, steps, mask = len(g), [], 1
    while mask < p:
        steps.append([send(g[(v + root) % p], g[(v + mask + root) % p], region)
                      for v in range(mask) if v + mask < p])
        mask *= 2
    return steps


def binomial_reduce(g: list[int], root: int, region: Chunk) -> list[Step]:
    p, steps, mask = len(g), [], 1
    while mask < p:
        steps.append([send(g[(v + root) % p], g[(v - mask + root) % p], region, True)
                      for v in range(p) if v % (2 * mask) == mask])
        mask *= 2
    return steps


# --- mesh (full mesh, every peer at once) -------------------------------------------------------

def mesh_reduce_scatter(g: list[int], chunks: list[Chunk]) -> list[Step]:
    p = len(g)
    return [[send(g[i], g[c], chunks[c], True) for c in range(p) for i in range(p) if i != c]] if p > 1 else []


def mesh_allgather(g: list[int], chunks: list[Chunk]) -> list[Step]:
    p = len(g)
    return [[send(g[c], g[i], chunks[c]) for c in range(p) for i in range(p) if i != c]] if p > 1 else []


def mesh_scatter(g: list[int], root: int, chunks: list[Chunk]) -> list[Step]:
    return [[send(g[root], g[c], chunks[c]) for c in range(len(g)) if c != root]] if len(g) > 1 else []


def mesh_gather(g: list[int], root: int, chunks: list[Chunk]) -> list[Step]:
    return [[send(g[c], g[root], chunks[c]) for c in range(len(g)) if c != root]] if len(g) > 1 else []


# --- the five operations on one group, by algorithm ---------------------------------------------

def allreduce(algo: str, g: list[int], region: Chunk) -> list[Step]:
    if algo == "rhd":
        return rhd_allreduce(g, region)
    chunks = split(region, len(g))
    return reduce_scatter(algo, g, chunks) + allgather(algo, g, chunks)


def reduce_scatter(algo: str, g: list[int], chunks: list[Chunk]) -> list[Step]:
    return {"ring": ring_reduce_scatter, "rhd": rhd_reduce_scatter, "mesh": mesh_reduce_scatter}[algo](g, chunks)


def allgather(algo: str, g: list[int], chunks: list[Chunk]) -> list[Step]:
    return {"ring": ring_allgather, "rhd": rhd_allgather, "mesh": mesh_allgather}[algo](g, chunks)


def broadcast(algo: str, g: list[int], root: int, region: Chunk) -> list[Step]:
    if algo == "mesh":
        chunks = split(region, len(g))
        return mesh_scatter(g, root, chunks) + mesh_allgather(g, chunks)
    return (chain_broadcast if algo == "ring" else binomial_broadcast)(g, root, region)


def reduce(algo: str, g: list[int], root: int, region: Chunk) -> list[Step]:
    if algo == "mesh":
        chunks = split(region, len(g))
        return mesh_reduce_scatter(g, chunks) + mesh_gather(g, root, chunks)
    return (chain_reduce if algo == "ring" else binomial_reduce)(g, root, region)


def alltoall(algo: str, g: list[int], count: int) -> list[Step]:
    """Slice j of rank i's input (work[j*count:]) lands in slice i of rank j's output (work[p*count + i*count:])."""
    p = len(g)

    def t(i: int, j: int) -> Transfer:
        return Transfer(g[i], g[j], ((j * count, (j + 1) * count, (p + i) * count),), False)
    if algo == "mesh":
        return [[t(i, j) for i in range(p) for j in range(p) if i != j]] if p > 1 else []
    return [[t(i, (i + k) % p) for i in range(p)] for k in range(1, p)]     # pairwise
