"""Train the tiny byte-level language model (ascend_sim/models/llm/reference.py) with torch on one CPU thread.

Two weight sets of the same shapes. ``--lm-only`` (``lm_bytes.npz``, the language model of the perplexity,
quantisation and kernel tables): BATCH windows of the text a step, next-byte cross-entropy, 1500 steps. The default
(``lm_passkey.npz``, judged by the KV-cache compression on the passkey task): as follows.

Data: ``corpus.corpus_bytes("train")`` (the standard library's ``pydoc_data.topics``, every topic except each
tenth one in sorted order; see corpus.py). Each step takes BATCH rows of CONTEXT + 1 bytes drawn from one seeded
numpy generator: BATCH - COPY_ROWS - PASSKEY_ROWS windows of the text, COPY_ROWS copy rows (a random string twice:
they teach the model to look back, induction) and PASSKEY_ROWS passkey rows (passkey.py: training text as filler,
a random key early, the cue and the key last). The loss is the next-byte cross-entropy
of every byte plus that of the cued key alone (weight KEY_WEIGHT), so the retrieval is learnt alongside
the language. AdamW, linear warm-up then
cosine decay. Determinism: fixed seeds, one torch thread, ``torch.use_deterministic_algorithms(True)``, so a
rerun on the same Python (the same corpus text) writes the same weights. At the end the held-out perplexity
and the passkey accuracy on held-out prompts (``passkey.heldout_prompts``) are printed through the float32 numpy
reference on the float16 weights that ship (the ones checked).

    python scripts/train_llm.py              # lm_passkey.npz: the text, copy rows and passkey rows, 1200 steps
    python scripts/train_llm.py --lm-only    # lm_bytes.npz: the text alone, 1500 steps (the first version's loop)

Needs torch (the ``train`` extra); the package itself does not.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_training import deterministic_torch  # noqa: E402

from ascend_sim.models.datasets import write_npz  # noqa: E402
from ascend_sim.models.llm import reference as R  # noqa: E402
from ascend_sim.models.llm.corpus import corpus_bytes, corpus_digest, encode  # noqa: E402
from ascend_sim.models.llm.passkey import (KEY_ALPHABET, heldout_prompts, key_positions, make_copy_row,  # noqa: E402
                                           make_row, passkey_accuracy)

SEED = 0
STEPS = 1200
BATCH = 32
PASSKEY_ROWS = 8
COPY_ROWS = 6
KEY_WEIGHT = 3.0
LR = 3e-3
WARMUP = 100
WEIGHT_DECAY = 0.01
DATA = Path(__file__).resolve().parents[1] / "ascend_sim" / "models" / "data"
LM_ONLY_STEPS = 1500        # --lm-only: the language model alone (lm_bytes.npz), the loop of the first version


def init_params(gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Normal(0.02) matrices and embeddings (residual outputs scaled by 1/sqrt(2 * layers)), zero biases,
    unit LayerNorm scales."""
    p = {}
    for name, shape in R.param_shapes().items():
        if ".ln" in f".{name}" and name.endswith(".w"):
            t = torch.ones(shape)
        elif len(shape) == 2:
            std = 0.02 / math.sqrt(2 * R.LAYERS) if name.endswith(("proj.w", "fc2.w")) else 0.02
            t = torch.empty(shape)
            with torch.no_grad():
                t.normal_(0.0, std, generator=gen)
        else:
            t = torch.zeros(shape)
        p[name] = t.requires_grad_(True)
    return p


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, (R.D_MODEL,), w, b, R.LN_EPS)


def forward(p: dict[str, torch.Tensor], tokens: torch.Tensor) -> torch.Tensor:
    """The same network as reference.forward, in torch, for a batch ``[B, S]`` -> logits ``[B, S, 256]``."""
    b, s = tokens.shape
    h = p["embed"][tokens] + p["pos"][:s]
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
    for i in range(R.LAYERS):
        n = f"l{i}."
        qkv = layer_norm(h, p[n + "ln1.w"], p[n + "ln1.b"]) @ p[n + "qkv.w"].T + p[n + "qkv.b"]
        q, k, v = (qkv[..., j * R.D_MODEL:(j + 1) * R.D_MODEL].reshape(b, s, R.HEADS, R.HEAD_DIM).transpose(1, 2)
                   for j in range(3))
        a = (q @ k.transpose(-1, -2)) / math.sqrt(R.HEAD_DIM)
        a = torch.softmax(a.masked_fill(mask, float("-inf")), dim=-1)
        a = (a @ v).transpose(1, 2).reshape(b, s, R.D_MODEL)
        h = h + a @ p[n + "proj.w"].T + p[n + "proj.b"]
        m = F.gelu(layer_norm(h, p[n + "ln2.w"], p[n + "ln2.b"]) @ p[n + "fc1.w"].T + p[n + "fc1.b"],
                   approximate="tanh")
        h = h + m @ p[n + "fc2.w"].T + p[n + "fc2.b"]
    return layer_norm(h, p["ln.w"], p["ln.b"]) @ p["embed"].T


def learning_rate(step: int, steps: int) -> float:
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    return LR * 0.5 * (1 + math.cos(math.pi * (step - WARMUP) / max(1, steps - WARMUP)))


def lm_step(p: dict[str, torch.Tensor], data: torch.Tensor, rng: np.random.Generator, step: int, steps: int,
            opt: torch.optim.Optimizer) -> float:
    """One step of the language model alone (``--lm-only``): BATCH windows of the text, next-byte loss."""
    starts = torch.from_numpy(rng.integers(0, len(data) - R.CONTEXT - 1, BATCH))
    x = data[starts[:, None] + torch.arange(R.CONTEXT + 1)[None, :]]
    for g in opt.param_groups:
        g["lr"] = learning_rate(step, steps)
    loss = F.cross_entropy(forward(p, x[:, :-1]).reshape(-1, 256), x[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
    opt.step()
    return loss.item()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lm-only", action="store_true", help="train lm_bytes.npz: the text alone, 1500 steps")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--batch", type=int, default=BATCH)
    ap.add_argument("--copy-rows", type=int, default=COPY_ROWS)
    ap.add_argument("--key-weight", type=float, default=KEY_WEIGHT)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    args.steps = args.steps or (LM_ONLY_STEPS if args.lm_only else STEPS)
    args.out = args.out or DATA / (R.WEIGHTS_FILE if args.lm_only else R.PASSKEY_WEIGHTS_FILE)
    deterministic_torch(SEED)
    gen = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    text = encode(corpus_bytes("train"))
    data = torch.from_numpy(text.astype(np.int64))
    held = encode(corpus_bytes("heldout"))
    p = init_params(gen)
    decay = [t for n, t in p.items() if t.ndim == 2 and n != "pos"]
    rest = [t for n, t in p.items() if not (t.ndim == 2 and n != "pos")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": rest, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.95))
    t0, running, running_key = time.time(), None, None
    for step in range(args.steps):
        if args.lm_only:
            loss = lm_step(p, data, rng, step, args.steps, opt)
            running = loss if running is None else 0.98 * running + 0.02 * loss
            if step % 250 == 0 or step == args.steps - 1:
                print(f"step {step:5d}  loss {running:.3f}  ({time.time() - t0:.0f} s)", flush=True)
            continue
        text_rows = args.batch - args.copy_rows - PASSKEY_ROWS
        starts = torch.from_numpy(rng.integers(0, len(data) - R.CONTEXT - 1, text_rows))
        idx = starts[:, None] + torch.arange(R.CONTEXT + 1)[None, :]
        drawn = [make_copy_row(rng) for _ in range(args.copy_rows)]
        drawn += [make_row(text, rng) for _ in range(PASSKEY_ROWS)]
        x = torch.cat([data[idx], torch.from_numpy(np.stack(drawn).astype(np.int64))])
        for g in opt.param_groups:
            g["lr"] = learning_rate(step, args.steps)
        nll = F.cross_entropy(forward(p, x[:, :-1]).transpose(1, 2), x[:, 1:], reduction="none")   # [B, S]
        key_nll = nll[args.batch - PASSKEY_ROWS:, key_positions() - 1].mean()
        loss = nll.mean() + args.key_weight * key_nll
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        opt.step()
        value, key_value = loss.item(), key_nll.item()
        running = value if running is None else 0.98 * running + 0.02 * value
        running_key = key_value if running_key is None else 0.98 * running_key + 0.02 * key_value
        if step % 250 == 0 or step == args.steps - 1:
            print(f"step {step:5d}  loss {running:.3f}  key {running_key:.3f}  ({time.time() - t0:.0f} s)",
                  flush=True)
    weights = {n: t.detach().numpy().astype(np.float16) for n, t in p.items()}
    write_npz(args.out, weights)
    ppl = R.perplexity(lambda w: R.forward(weights, w), held)
    n_params = sum(int(np.prod(s)) for s in R.param_shapes().values())
    print(f"wrote {args.out} ({n_params:,} parameters, corpus {corpus_digest()}); held-out perplexity "
          f"(numpy fp32 on the fp16 weights, {len(held):,} bytes): {ppl:.3f}")
    if args.lm_only:
        return
    keys, digits = passkey_accuracy(weights, heldout_prompts())
    print(f"held-out passkey prompts: {keys:.1%} of the keys retrieved exactly, {digits:.1%} of the key bytes "
          f"(chance {1 / len(KEY_ALPHABET):.1%} a byte)")


if __name__ == "__main__":
    main()
