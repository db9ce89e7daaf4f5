"""The passkey task (models/llm/passkey.py): the rows' layout, the held-out prompts' filler, and the shipped
model retrieving the key from ~90 tokens back, which it cannot do once the key's tokens are gone."""
import numpy as np
import pytest

from ascend_sim.models.llm import reference as R
from ascend_sim.models.llm.corpus import corpus_bytes, decode, encode
from ascend_sim.models.llm.passkey import (KEY_ALPHABET, KEY_LENGTH, LEAD, ROW, heldout_prompts, key_positions,
                                           make_copy_row, make_row, passkey_accuracy, retrieval_distances)


@pytest.fixture(scope="module")
def params():
    return R.load_lm_weights(R.PASSKEY_WEIGHTS_FILE)


def test_a_row_holds_the_key_early_and_after_the_cue():
    filler = encode(corpus_bytes("train"))
    row = make_row(filler, np.random.default_rng(5))
    text = decode(row)
    assert len(row) == ROW == R.CONTEXT + 1
    key = decode(row[key_positions()])
    assert len(key) == KEY_LENGTH and set(key.encode()) <= set(KEY_ALPHABET)
    early = text.index(LEAD.decode())
    assert text[early:].startswith(f"{LEAD.decode()}{key}. ") and text.endswith(LEAD.decode() + key)
    near, far = retrieval_distances()
    assert near <= key_positions()[0] - (early + len(LEAD)) <= far and near > 64     # beyond a 64-token window
    assert len({decode(make_row(filler, np.random.default_rng(s))[key_positions()]) for s in range(40)}) > 10
    copy = make_copy_row(np.random.default_rng(5))
    assert len(copy) == ROW and copy[1:65].tolist() == copy[65:].tolist()


def test_heldout_prompts_use_heldout_filler_and_are_reproducible():
    rows = heldout_prompts(4)
    assert rows.tolist() == heldout_prompts(4).tolist()
    held = corpus_bytes("heldout")
    for row in rows:
        pieces = decode(row).split(LEAD.decode())
        filler = max(pieces, key=len).split(". ", 1)[-1].encode()
        assert len(filler) > 40 and filler in held           # (the help topics share some sentences: not checked
                                                            # against the training text)


def _early_key(row: np.ndarray) -> slice:
    start = bytes(row.astype(np.uint8)).index(LEAD) + len(LEAD)
    return slice(start, start + KEY_LENGTH)


def test_the_model_retrieves_the_key_and_fails_without_it(params):
    rows = heldout_prompts(32)
    keys, _ = passkey_accuracy(params, rows)
    assert keys >= 0.75                                     # chance: 1 / 26
    # the early key replaced by the next letter: the cue's key is no longer in the context, and is not answered
    shifted = rows.copy()
    for row in shifted:
        row[_early_key(row)] = (row[_early_key(row)] - ord("A") + 1) % 26 + ord("A")
    assert passkey_accuracy(params, shifted)[0] <= 0.1
    for row in shifted:                                     # ... but the new early key is: it reads it back
        row[-KEY_LENGTH:] = row[_early_key(row)]
    assert passkey_accuracy(params, shifted)[0] >= 0.75
