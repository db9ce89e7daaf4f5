"""Module 0's self-check quiz (自测): each answer is checked at once against the simulator's own facts.

In the notebook a learner writes ``q1 = 48`` and runs ``quiz.check("q1", q1)``. The expected value
is computed from ``get_chip()``, ``TIER_OF``, ``HardEvent`` or a real launch, never typed in, so the
quiz stays true when a chip profile changes. A wrong answer gets a message that says what the
answer would have meant and where to look; an answer left as ``...`` is "not answered". Checks are
deterministic and never raise on a learner's answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ascend_sim import HardEvent, TPosition, get_chip
from ascend_sim.api.pipe import TIER_OF

__all__ = ["QUESTIONS", "QuizResult", "check", "expected"]

NOT_ANSWERED = ...


@dataclass(frozen=True)
class QuizResult:
    """The verdict on one answer: ``status`` is "correct", "wrong" or "not answered"."""

    qid: str
    status: str
    message: str

    @property
    def ok(self) -> bool:
        return self.status == "correct"

    def __str__(self) -> str:
        mark = {"correct": "✔ correct", "wrong": "✘ not yet", "not answered": "… not answered"}[self.status]
        return f"{self.qid}: {mark}. {self.message}"

    __repr__ = __str__


@dataclass(frozen=True)
class Question:
    """One question: the expected answer (computed), how to compare, and the message for each kind of miss."""

    title: str
    expected: Callable[[], Any]
    explain: str                                   # shown with a correct answer
    diagnose: Callable[[Any, Any], str]            # (answer, expected) -> message for a wrong answer
    normalise: Callable[[Any], Any] = lambda a: a


QUESTIONS: dict[str, Question] = {}


def _ask(qid: str, title: str, expected_fn: Callable[[], Any], explain: str, diagnose: Callable[[Any, Any], str],
         normalise: Callable[[Any], Any]) -> None:
    QUESTIONS[qid] = Question(title, expected_fn, explain, diagnose, normalise)


def expected(qid: str) -> Any:
    """The expected answer of ``qid`` (for tests and instructors)."""
    return _get(qid).expected()


def check(qid: str, answer: Any) -> QuizResult:
    """Check ``answer`` to question ``qid``; returns the verdict (printed as one line in a notebook)."""
    q = _get(qid)
    if answer is NOT_ANSWERED or answer is None:
        return QuizResult(qid, "not answered", f"replace the ... with your answer ({q.title}).")
    want = q.expected()
    try:
        got = q.normalise(answer)
    except (TypeError, ValueError) as e:
        return QuizResult(qid, "wrong", f"{answer!r} is not a usable answer here: {e}.")
    if got == want:
        return QuizResult(qid, "correct", q.explain.format(want=want))
    return QuizResult(qid, "wrong", q.diagnose(got, want))


def _get(qid: str) -> Question:
    if qid not in QUESTIONS:
        raise KeyError(f"no quiz question {qid!r}; the questions are {', '.join(QUESTIONS)}")
    return QUESTIONS[qid]


# ----------------------------------------------------------------------------- normalisers
def _as_int(a: Any) -> int:
    if isinstance(a, bool) or int(a) != a:
        raise ValueError("expected a whole number")
    return int(a)


def _as_name(a: Any) -> str:
    if not isinstance(a, str):
        raise TypeError("expected a string such as 'UB'")
    return a.strip().upper()


def _as_event(a: Any) -> str:
    if isinstance(a, HardEvent):
        return a.name
    if isinstance(a, str):
        return a.strip().upper().removeprefix("HARDEVENT.").removeprefix("HARDEVENT::")
    raise TypeError("expected a HardEvent member, e.g. HardEvent.S_V")


def _as_pair(a: Any) -> tuple[int, int]:
    full, mask = a
    return _as_int(full), _as_int(mask)


def _as_bool(a: Any) -> bool:
    if not isinstance(a, bool):
        raise TypeError("expected True or False")
    return a


# ----------------------------------------------------------------------------- the questions
def _halves_per_repeat() -> int:
    return get_chip(None).vec_repeat_bytes // 2


def _q1_diagnose(got: int, want: int) -> str:
    chip = get_chip(None)
    if got == chip.aic_count:
        return (f"{got} is the number of AIC (cube) cores. On the separated {chip.name} each AIC has "
                f"{chip.aiv_count // chip.aic_count} AIV partners; read get_chip(None).aiv_count.")
    return f"{got} is not it: print get_chip(None) and read the AIV (vector) core count."


_ask("q1", "the number of AIV cores, an int", lambda: get_chip(None).aiv_count,
     "The default chip has {want} AIV (vector) cores: a vector kernel can use up to that many blocks at once.",
     _q1_diagnose, _as_int)


def _q2_diagnose(got: str, want: str) -> str:
    if got == "L1":
        return "L1 holds A1/B1, the cube's staging copies. The 2 in B2 means the level next to the cube: L0."
    if got in ("L0A", "L0C"):
        return f"{got} is the buffer of {'A2' if got == 'L0A' else 'CO1'}. B is the right-hand (B) matrix."
    return f"{got!r} is not a buffer of the cube path: look at the TIER_OF table in the lesson."


_ask("q2", "a buffer name as a string, e.g. 'UB'", lambda: TIER_OF[TPosition.B2],
     "TPosition.B2 lives in {want}: the right-hand matrix, one step from the cube.",
     _q2_diagnose, _as_name)


def _q3_diagnose(got: str, want: str) -> str:
    src, _, dst = want.partition("_")
    if got == f"{dst}_{src}":
        return (f"HardEvent.{got} is reversed. Events are named SOURCE_DESTINATION: the pipe that finishes "
                f"first and sets the flag ({src}), then the pipe that waits ({dst}).")
    if got not in HardEvent.__members__:
        return f"there is no HardEvent.{got}; the names are SOURCE_DESTINATION, e.g. HardEvent.MTE3_V."
    return f"HardEvent.{got} joins other pipes: which pipe copies GM into UB, and which one computes on UB?"


_ask("q3", "a HardEvent, e.g. HardEvent.S_V", lambda: HardEvent.MTE2_V.name,
     "HardEvent.{want}: MTE2 sets the flag when its copy has landed, V waits on it. EnQue/DeQue of a "
     "VECIN queue insert exactly this pair for you.",
     _q3_diagnose, _as_event)


QUEUES, BUFFER_NUM, HALF_BYTES = 3, 2, 2     # q4: x, y (VECIN) and z (VECOUT), double-buffered halves


def _q4_expected() -> int:
    chip = get_chip(None)
    per_element = QUEUES * BUFFER_NUM * HALF_BYTES
    step = chip.ub_align // HALF_BYTES
    return chip.ub_usable_bytes // per_element // step * step


def _q4_diagnose(got: int, want: int) -> str:
    chip = get_chip(None)
    per_element = QUEUES * BUFFER_NUM * HALF_BYTES
    step = chip.ub_align // HALF_BYTES
    need = got * per_element
    if got * HALF_BYTES % chip.ub_align:
        return (f"{got} halves = {got * HALF_BYTES} bytes is not a multiple of {chip.ub_align} bytes: "
                f"every UB buffer is whole 32-byte blocks, so tileLength must be a multiple of "
                f"{step}.")
    if got == chip.ub_bytes // per_element // step * step:
        return (f"that fills all {chip.ub_bytes:,} bytes of UB; TPipe.InitBuffer may hand out only "
                f"ub_usable_bytes = {chip.ub_usable_bytes:,} (the rest is reserved).")
    if got == chip.ub_usable_bytes // (QUEUES * HALF_BYTES) // step * step:
        return "that fits one buffer per queue; with BUFFER_NUM = 2 every queue holds two tiles."
    if need > chip.ub_usable_bytes:
        return (f"3 queues x 2 buffers x {got} halves x 2 bytes = {need:,} bytes, more than the "
                f"{chip.ub_usable_bytes:,} bytes TPipe may hand out.")
    return (f"{got} fits ({need:,} of {chip.ub_usable_bytes:,} bytes), but a larger multiple of {step} fits too: "
            f"find the largest.")


_ask("q4", "a tileLength in halves, an int", _q4_expected,
     "{want} halves: 3 queues x 2 buffers x {want} x 2 bytes is the most of ub_usable_bytes that whole "
     "32-byte blocks can fill. (A real kernel also leaves room for scratch buffers.)",
     _q4_diagnose, _as_int)


Q5_COUNT = 1000
FRACTAL_SIDE = 16     # q6: an fp16 fractal is 16 x 16 (Mmad's m0 = k0 = n0 for half)


def _q5_expected() -> tuple[int, int]:
    lanes = _halves_per_repeat()
    return Q5_COUNT // lanes, Q5_COUNT % lanes


def _q5_diagnose(got: tuple[int, int], want: tuple[int, int]) -> str:
    lanes = _halves_per_repeat()
    full, rest = got
    if full * lanes + rest != Q5_COUNT:
        return (f"{full} full repeats x {lanes} + a last mask of {rest} = {full * lanes + rest} halves, "
                f"not {Q5_COUNT}.")
    return (f"one repeat covers at most {lanes} halves ({get_chip(None).vec_repeat_bytes} bytes), so the mask of "
            f"the last repeat is below {lanes}.")


_ask("q5", "a pair (full repeats, mask of the last repeat)", _q5_expected,
     "({want[0]}, {want[1]}): {want[0]} repeats with a full mask, then one with mask {want[1]}. The count form "
     "Add(dst, a, b, 1000) asks for the same work in one call.",
     _q5_diagnose, _as_pair)


def _q6_expected() -> int:
    return FRACTAL_SIDE * FRACTAL_SIDE * HALF_BYTES


def _q6_diagnose(got: int, want: int) -> str:
    if got == 256:
        return "256 counts the elements; each half is 2 bytes."
    if got == 32:
        return "32 bytes is one DataBlock, UB's alignment; a fractal is a 16 x 16 tile of halves."
    return "multiply: 16 rows x 16 columns x 2 bytes per half."


_ask("q6", "a number of bytes, an int", _q6_expected,
     "{want} bytes: one 16 x 16 fp16 fractal, which is why L0A/L0B tensors start on {want}-byte "
     "boundaries (chip.l0ab_align).",
     _q6_diagnose, _as_int)


def _q7_expected() -> str:
    from ascend_sim.kernels.add_custom import run_add_custom
    return run_add_custom(seed=0)[3].profile().bound


def _q7_diagnose(got: str, want: str) -> str:
    if got == "V":
        return ("the vector unit adds 128 halves per cycle, far faster than one core's GM copies bring them in: "
                "compare the ratios in result.profile().")
    if got == "MTE3":
        return "MTE3 writes one tensor out for every two that MTE2 reads in: which one is busier?"
    return "the pipes of a vector kernel are MTE2, V, MTE3 and S: run the profile and read its ratios."


_ask("q7", "a pipe name as a string, e.g. 'V'", _q7_expected,
     "{want}: the vector unit adds a 256-byte repeat per cycle, while one core's MTE2 brings in far fewer bytes "
     "per cycle, so copying in takes the longest. The kernel is memory-bound (访存瓶颈).",
     _q7_diagnose, _as_name)


def _q8_diagnose(got: bool, want: bool) -> str:
    return ("no chip was measured here: the cycles come from a cost model whose copy and vector costs were fitted "
            "to one published case and whose other costs are estimates. Use them to compare kernels and find "
            "bottlenecks.")


_ask("q8", "True or False", lambda: False,
     "{want}: the cycle counts come from a calibrated model, not from a 910B. Trust their ratios and "
     "bottlenecks more than their absolute microseconds.",
     _q8_diagnose, _as_bool)
