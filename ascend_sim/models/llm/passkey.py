"""The passkey task (密钥检索): a long-context retrieval the tiny model is trained for, and its accuracy.

One row is ``CONTEXT + 1`` bytes: help-topic text (the filler) with ``The passkey is Q. `` placed early in it
(the key right after ``LEAD``, which starts at a filler offset drawn from ``OFFSETS``) and the cue
``The passkey is `` plus the same key at the very end. Predicting the last byte needs the key read ~100 positions
back: far beyond the recent window that a compressed head keeps (models/llm/kv_compress.py). The key is a random
capital letter, so no language statistics help: chance is 1 in 26. (``KEY_LENGTH`` letters work the same way; a
key of one letter is what the tiny model learns within a CPU training budget of minutes.)

Training rows (scripts/train_llm.py) take their filler from ``corpus_bytes("train")``; the evaluation prompts
(``heldout_prompts``) from ``corpus_bytes("heldout")`` with their own seed, so neither the filler text nor the
draw is seen in training. A key counts as retrieved when the greedy continuation of the prompt is exactly the key:
with teacher forcing that is every digit's argmax right, which one forward pass of the whole row measures.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.models.llm.corpus import corpus_bytes, encode
from ascend_sim.models.llm.reference import CONTEXT, Params, forward

LEAD = b"The passkey is "
KEY_LENGTH = 1
KEY_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
OFFSETS = (8, 24)          # the early sentence starts at a filler offset drawn from [8, 24)
HELDOUT_SEED = 20261206
CALIBRATION_SEED = 7
ROW = CONTEXT + 1


def key_positions() -> np.ndarray:
    """Positions of the cued key's bytes in a row (the last ``KEY_LENGTH``)."""
    return np.arange(ROW - KEY_LENGTH, ROW)


def retrieval_distances() -> tuple[int, int]:
    """(nearest, farthest) distance in tokens from a cued key byte back to the same byte of the early key."""
    first = ROW - KEY_LENGTH - len(LEAD)
    return first - (OFFSETS[1] - 1), first - OFFSETS[0]


def make_row(filler: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One ``ROW``-byte row: filler at a random start, the key sentence at a random early offset, the cue and key
    last. Draws, in order: the key digits, the offset, the filler start."""
    key = encode(KEY_ALPHABET)[rng.integers(0, len(KEY_ALPHABET), KEY_LENGTH)]
    offset = int(rng.integers(*OFFSETS))
    lead = encode(LEAD)
    early = np.concatenate([lead, key, encode(". ")])
    late = np.concatenate([lead, key])
    n_fill = ROW - len(early) - len(late)
    start = int(rng.integers(0, len(filler) - n_fill))
    fill = filler[start:start + n_fill]
    return np.concatenate([fill[:offset], early, fill[offset:], late]).astype(np.int32)


def make_copy_row(rng: np.random.Generator) -> np.ndarray:
    """A ``ROW``-byte copy row: a newline, then random lowercase letters and digits, the same string twice (the
    training aid that teaches induction: its second half is predictable only by looking back)."""
    alphabet = encode("abcdefghijklmnopqrstuvwxyz0123456789")
    half = alphabet[rng.integers(0, len(alphabet), (ROW - 1) // 2)]
    return np.concatenate([encode("\n"), half, half]).astype(np.int32)


def heldout_prompts(count: int = 64, seed: int = HELDOUT_SEED) -> np.ndarray:
    """``[count, ROW]`` evaluation rows on held-out filler (never trained on)."""
    rng = np.random.default_rng(seed)
    filler = encode(corpus_bytes("heldout"))
    return np.stack([make_row(filler, rng) for _ in range(count)])


def calibration_prompts(count: int = 16, seed: int = CALIBRATION_SEED) -> np.ndarray:
    """``[count, ROW]`` rows on training filler: what a measured retrieval score may look at (never the held-out)."""
    rng = np.random.default_rng(seed)
    filler = encode(corpus_bytes("train"))
    return np.stack([make_row(filler, rng) for _ in range(count)])


def early_key_position(row: np.ndarray) -> int:
    """Position of the early key's first byte in ``row``."""
    return bytes(np.asarray(row, np.uint8)).index(LEAD) + len(LEAD)


def passkey_accuracy(params: Params, rows: np.ndarray, attention=None) -> tuple[float, float]:
    """(keys retrieved exactly, key bytes right) over ``rows``; ``attention`` as in ``reference.forward`` (a
    compressed cache: ``Razor.attention``)."""
    pos = key_positions()
    keys = digits = 0
    for row in rows:
        pred = forward(params, row[:-1], attention=attention).argmax(-1)[pos - 1]
        right = pred == row[pos]
        keys += bool(right.all())
        digits += int(right.sum())
    return keys / len(rows), digits / (len(rows) * KEY_LENGTH)


__all__ = ["LEAD", "KEY_LENGTH", "KEY_ALPHABET", "OFFSETS", "HELDOUT_SEED", "CALIBRATION_SEED", "ROW", "key_positions",
           "retrieval_distances", "make_row", "make_copy_row", "heldout_prompts", "calibration_prompts",
           "early_key_position",
           "passkey_accuracy"]
