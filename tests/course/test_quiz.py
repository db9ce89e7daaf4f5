"""Module 0's quiz: every question accepts the right answer, rejects wrong ones with a message that
says what the answer meant, and calls an unanswered `...` "not answered"."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import CapacityError, HardEvent, get_chip, launch
from ascend_sim.course import quiz
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom

RIGHT = {"q1": 48, "q2": "L0B", "q3": HardEvent.MTE2_V, "q4": 15696, "q5": (7, 104), "q6": 512, "q7": "MTE2",
         "q8": False}

# (question, a wrong answer, a phrase the message must contain)
WRONG = [
    ("q1", 24, "AIC (cube) cores"),
    ("q1", 47, "AIV (vector) core count"),
    ("q1", 48.5, "whole number"),
    ("q2", "L1", "A1/B1"),
    ("q2", "l0a", "buffer of A2"),
    ("q2", "L0C", "buffer of CO1"),
    ("q2", 3, "string"),
    ("q3", HardEvent.V_MTE2, "reversed"),
    ("q3", "MTE3_V", "which pipe copies GM into UB"),
    ("q3", "MTE2_VEC", "there is no HardEvent.MTE2_VEC"),
    ("q4", 16384, "ub_usable_bytes"),
    ("q4", 31392, "BUFFER_NUM = 2"),
    ("q4", 15700, "multiple of 32 bytes"),
    ("q4", 15712, "more than"),
    ("q4", 8192, "find the largest"),
    ("q5", (8, 0), "not 1000"),
    ("q5", (6, 232), "mask of the last repeat is below 128"),
    ("q5", 7, "not a usable answer"),
    ("q6", 256, "2 bytes"),
    ("q6", 32, "DataBlock"),
    ("q7", "V", "far faster"),
    ("q7", "mte3", "busier"),
    ("q8", True, "cost model"),
    ("q8", "False", "True or False"),
]


@pytest.mark.parametrize("qid", sorted(quiz.QUESTIONS))
def test_right_answer_is_correct(qid):
    result = quiz.check(qid, RIGHT[qid])
    assert result.ok and result.status == "correct", str(result)
    assert str(result).startswith(f"{qid}: ✔ correct")


@pytest.mark.parametrize("qid, answer, phrase", WRONG, ids=[f"{q}-{a!r}" for q, a, _ in WRONG])
def test_wrong_answer_is_rejected_with_its_diagnosis(qid, answer, phrase):
    result = quiz.check(qid, answer)
    assert result.status == "wrong" and not result.ok
    assert phrase in result.message, result.message


def test_every_question_has_a_wrong_answer_tested():
    assert {q for q, _, _ in WRONG} == set(quiz.QUESTIONS) == set(RIGHT)


@pytest.mark.parametrize("qid", sorted(quiz.QUESTIONS))
def test_unanswered(qid):
    result = quiz.check(qid, ...)
    assert result.status == "not answered" and "replace the ..." in result.message


def test_unknown_question_names_the_questions():
    with pytest.raises(KeyError, match="q1, q2"):
        quiz.check("q9", 1)


def test_q4_answer_is_what_the_simulator_accepts():
    """The largest double-buffered add tile fits in UB; one DataBlock more does not."""
    tile = quiz.expected("q4")

    def run(tile_length: int) -> None:
        x = np.ones(2 * tile_length, np.float16)
        launch(add_custom, 1, x, x.copy(), np.zeros_like(x), AddCustomTilingData(2 * tile_length, 1, 2))

    run(tile)
    with pytest.raises(CapacityError):
        run(tile + 16)


def test_q6_fractal_is_the_l0_alignment():
    assert quiz.expected("q6") == get_chip(None).l0ab_align


def test_answers_follow_the_chip(monkeypatch):
    """The expected answers are read from the chip profile, not typed in."""
    import dataclasses

    small = dataclasses.replace(get_chip(None), aiv_count=40, aic_count=20, ub_usable_bytes=96 * 1024)
    monkeypatch.setattr(quiz, "get_chip", lambda _: small)
    assert quiz.expected("q1") == 40
    assert quiz.expected("q4") == 96 * 1024 // 12 // 16 * 16
