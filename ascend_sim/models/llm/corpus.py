"""The language model's text: the Python standard library's own help topics, split by topic, as bytes.

``pydoc_data.topics.topics`` is the dict behind ``help("if")``, ``help("FORMATTING")`` ...: English technical
prose shipped with every CPython (PSF License), so nothing is downloaded. The corpus is built deterministically:
the topic names sorted, each topic's text UTF-8 encoded, topics joined with a blank line. The held-out split
is every tenth topic of that sorted list (sorted index ``i % 10 == 9``), the training split all the others, so
held-out topics are never seen in training. The text changes a little between Python versions:
``corpus_digest()`` names the exact text a figure was measured on.

Tokenizer (分词器): byte-level, one token per UTF-8 byte, vocabulary 256; no special tokens.
"""
from __future__ import annotations

import hashlib

import numpy as np

VOCAB = 256
HELDOUT_EVERY = 10
SEPARATOR = b"\n\n"


def _topics() -> list[tuple[str, bytes]]:
    from pydoc_data.topics import topics
    return [(name, topics[name].encode("utf-8")) for name in sorted(topics)]


def split_topics(split: str) -> list[str]:
    """The topic names of ``split`` ("train" or "heldout"), in sorted order."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    held = split == "heldout"
    return [name for i, (name, _) in enumerate(_topics()) if (i % HELDOUT_EVERY == HELDOUT_EVERY - 1) == held]


def corpus_bytes(split: str) -> bytes:
    """The split's text: its topics in sorted order, joined with a blank line."""
    names = set(split_topics(split))
    return SEPARATOR.join(text for name, text in _topics() if name in names)


def corpus_digest() -> str:
    """sha256 (first 16 hex digits) of train + heldout: which Python's topics a figure was measured on."""
    return hashlib.sha256(corpus_bytes("train") + b"\0" + corpus_bytes("heldout")).hexdigest()[:16]


def encode(text: str | bytes) -> np.ndarray:
    """Text -> int32 token ids (its UTF-8 bytes)."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return np.frombuffer(data, np.uint8).astype(np.int32)


def decode(tokens) -> str:
    """Token ids -> text (bytes that do not form UTF-8 become U+FFFD)."""
    return bytes(int(t) for t in tokens).decode("utf-8", errors="replace")


__all__ = ["VOCAB", "HELDOUT_EVERY", "split_topics", "corpus_bytes", "corpus_digest", "encode", "decode"]
