"""Hints chosen by the diagnosed mistake, graded from a nudge to an explanation.

Each exercise of a lab declares a small table, *diagnosis key -> hint levels* (one to three strings: a
nudge, a more concrete pointer, the explanation), with ``"*"`` as the exercise's generic fallback::

    @LAB.exercise("ex1", points=2, hints={
        "QueueError": ("nudge about EnQue/DeQue", "more concrete", "the explanation"),
        "offset": ("nudge about GetBlockIdx", ...),
        "*": ("what to look at first", ...),
    })

A failure's diagnosis is a tuple of keys, most specific first (``diagnosis_of``):

* a sanitizer error: ``"<Class>/<kind>"``, then the class and its parents up to ``KernelError``
  (``("QueueError/deque-empty", "QueueError", "KernelError")``);
* a failed comparison: the key of ``ascend_sim.analysis.diagnose.explain`` and its group
  (``("offset/misplaced", "offset")``);
* another Python exception: ``("python/NameError", "python")``; a hang: ``("stuck",)``; a kernel
  defined by code no longer in the notebook: ``("stale",)``; a cycle budget: ``("budget",)``.

For each key in turn, most specific first, the exercise's table and then ``DEFAULT_HINTS`` (shared by
every lab) are searched; then the exercise's ``"*"``, then the default ``"*"``. Levels: the first
failure with a diagnosis shows its first level; each further failure with the same diagnosis, and each
``hint("exN")`` the learner asks for after a failure, shows one more. So the explanation comes after three failed runs, or after one
failed run and two requests: never before a real attempt.

Code in a hint is marked «...» in its Python spelling (``ascend_sim.engine.spelling``): a learner whose answer is
C++ reads it in C++ (``«que.DeQue(half)»`` -> ``que.DeQue<half>()``), a Python learner reads the text without the
marks. ``levels(diagnosis, language)`` and ``first`` render; ``pick`` gives the table's text as written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ascend_sim.engine.spelling import PYTHON, render

__all__ = ["GENERIC", "MAX_LEVELS", "DEFAULT_HINTS", "HintTable", "HintLog", "diagnosis_of", "expand"]

GENERIC = "*"
MAX_LEVELS = 3

DEFAULT_HINTS: dict[str, tuple[str, ...]] = {
    "QueueError": (
        "A queue rule was broken: read the error's first line, it names the call and the queue.",
        "The protocol per tile is AllocTensor -> fill -> EnQue, then DeQue -> use -> FreeTensor; every DeQue "
        "needs an EnQue before it on the same queue, every AllocTensor a FreeTensor.",
        "Walk one tile through CopyIn, Compute and CopyOut and count, per queue, AllocTensor/EnQue/DeQue/"
        "FreeTensor: each must appear once per tile, in that order.",
    ),
    "QueueError/alloc-full": (
        "AllocTensor found every buffer of the queue still in use: which tensor of it was never given back?",
        "Every AllocTensor needs a FreeTensor on the same queue once the tensor's last reader is issued (the "
        "inputs in Compute after the vector instruction, the output in CopyOut after the DataCopy).",
    ),
    "QueueError/leak": (
        "The kernel ended holding a tensor: the error names where it was allocated.",
        "Every AllocTensor needs a FreeTensor, and every EnQue a DeQue, before the kernel returns.",
    ),
    "QueueError/double-free": ("FreeTensor runs twice for one AllocTensor: the error names the queue.",),
    "QueueError/free-queued": (
        "A tensor was freed while still queued: DeQue it first (the consumer stage), then FreeTensor.",
    ),
    "OutOfBoundsError": (
        "An access ran past a buffer: compare the count in the error with the size of the tensor it names.",
        "pipe.InitBuffer(que, num, bytes) takes bytes: a tile of n half elements needs n * 2 bytes.",
    ),
    "AlignmentError": (
        "DataCopy moves whole 32-byte DataBlocks: the length or the address in the error is not a multiple of 32.",
        "For a length that is not a multiple of 32 bytes use DataCopyPad; start each block at a 32-byte "
        "aligned offset.",
    ),
    "SyncError": (
        "A SetFlag/WaitFlag pair does not match: every WaitFlag needs the SetFlag of the same HardEvent and id.",
    ),
    "CapacityError": (
        "The buffers do not fit: the error lists them; use a shorter tile or fewer buffers.",
    ),
    "RaceError": (
        "Two pipes touch the same bytes without an order between them: pass the tensor through a queue "
        "(EnQue/DeQue), or SetFlag/WaitFlag the event the error names.",
    ),
    "python/NameError": (
        "A name is not defined where your code runs: run the setup cell at the top, then your answer cells in order.",
    ),
    "python": (
        "Your code raised an ordinary Python exception: the message names its line.",
    ),
    "stuck": (
        "The check was stopped on the line it names: a loop whose condition never changes, or a wait nobody ends.",
        "Print the loop variable and the bound for a small case (one block, one tile) to see why the loop "
        "never ends.",
    ),
    "stale": (
        "The code that failed is an older version than your cells: re-run the cell that defines it (it must "
        "finish without an error), then the check.",
    ),
    "unwritten": (
        "Part of the output was never written: which part does the message name?",
        "Every tile must reach GM: DataCopy from the VECOUT tensor to the output GlobalTensor at the tile's offset.",
    ),
    "offset": (
        "Some block works on another block's range: how does each block find where its part starts?",
        "Block GetBlockIdx() starts at blockLength * GetBlockIdx(): pass `x + offset` to SetGlobalBuffer.",
    ),
    "loop": (
        "Tiles were skipped: check the loop bound and each tile's offset.",
        "A block of blockLength elements holds «blockLength // tileLength» tiles; tile i starts at i * tileLength.",
    ),
    "tail": (
        "The end of a block is missing: the length is not always a multiple of the tile.",
        "Loop with «range(0, length, tileLength)» and copy the short last tile with DataCopyPad.",
    ),
    "values": (
        "The output is written but wrong: print your output and the expected one for a small case.",
    ),
    "budget": (
        "The result is right but slow: result.profile() shows which pipe waits.",
    ),
    GENERIC: (
        "Read the first line of the message: it names the case, the line and the rule.",
    ),
}


def expand(key: str) -> tuple[str, ...]:
    """``"offset/misplaced"`` -> ``("offset/misplaced", "offset")``: a key, then its groups."""
    parts = key.split("/")
    return tuple("/".join(parts[:i]) for i in range(len(parts), 0, -1))


def diagnosis_of(exc: BaseException) -> tuple[str, ...]:
    """The diagnosis keys of an exception raised by learner code, most specific first."""
    from ascend_sim.engine.errors import KernelError
    if isinstance(exc, KernelError):
        chain = [c.__name__ for c in type(exc).__mro__ if issubclass(c, KernelError)]
        kind = getattr(exc, "kind", "")
        return ((f"{chain[0]}/{kind}",) if kind else ()) + tuple(chain)
    return (f"python/{type(exc).__name__}", "python")


@dataclass(frozen=True)
class HintTable:
    """An exercise's hints: diagnosis key -> levels; a plain sequence is the generic ``"*"`` entry."""

    table: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, hints: "Mapping[str, Sequence[str]] | Sequence[str]", where: str) -> "HintTable":
        table = dict(hints) if isinstance(hints, Mapping) else ({GENERIC: hints} if hints else {})
        for key, levels in table.items():
            if isinstance(levels, str) or not isinstance(key, str):
                raise ValueError(f"{where}: hints[{key!r}] must be a tuple of strings, one per level")
            if not 1 <= len(levels) <= MAX_LEVELS:
                raise ValueError(f"{where}: at most {MAX_LEVELS} hints per diagnosis (nudge, pointer, "
                                 f"explanation), got {len(levels)} for {key!r}")
        return cls({k: tuple(v) for k, v in table.items()})

    def pick(self, diagnosis: Sequence[str]) -> tuple[str, tuple[str, ...]]:
        """(the key matched, its levels) for a failure's diagnosis keys."""
        for k in dict.fromkeys(k for d in diagnosis for k in expand(d)):     # most specific key first
            for source in (self.table, DEFAULT_HINTS):
                if k in source:
                    return k, source[k]
        if GENERIC in self.table:
            return GENERIC, self.table[GENERIC]
        return GENERIC, DEFAULT_HINTS[GENERIC]

    def levels(self, diagnosis: Sequence[str], language: str = PYTHON) -> tuple[str, tuple[str, ...]]:
        """``pick``, its levels spelled in ``language`` (the learner's: "python" or "cpp")."""
        key, levels = self.pick(diagnosis)
        return key, tuple(render(level, language) for level in levels)

    def first(self, diagnosis: Sequence[str] = (), language: str = PYTHON) -> list[str]:
        """The first level only (what the grader's report shows)."""
        return list(self.levels(diagnosis, language)[1][:1])

    def __len__(self) -> int:
        return len(self.table)


@dataclass
class HintLog:
    """One session's failures and requests per (exercise, matched key): how many levels are revealed.

    ``last`` keeps the table's levels as written; ``revealed`` spells them in the language of the exercise's
    last failing answer.
    """

    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    asks: dict[tuple[str, str], int] = field(default_factory=dict)
    last: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    language: dict[str, str] = field(default_factory=dict)

    def failed(self, ex_id: str, key: str, levels: tuple[str, ...], language: str = PYTHON) -> list[str]:
        """Record a failure of an answer in ``language``; the levels it reveals."""
        self.failures[ex_id, key] = self.failures.get((ex_id, key), 0) + 1
        self.last[ex_id] = key, levels
        self.language[ex_id] = language
        return self.revealed(ex_id)

    def ask(self, ex_id: str) -> list[str]:
        """The learner asks for the next hint: one more level, once a run has failed."""
        if ex_id in self.last:
            key = self.last[ex_id][0]
            self.asks[ex_id, key] = self.asks.get((ex_id, key), 0) + 1
        return self.revealed(ex_id)

    def revealed(self, ex_id: str) -> list[str]:
        if ex_id not in self.last:
            return []
        key, levels = self.last[ex_id]
        n = self.failures.get((ex_id, key), 0) + self.asks.get((ex_id, key), 0)
        return [render(level, self.language.get(ex_id, PYTHON)) for level in levels[:n]]
