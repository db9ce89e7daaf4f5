"""The tiny byte-level language model (issue 28): perplexity and weight memory under weight-only quantisation,
the kernel path against the reference, and the simulated time of prefill and decode steps.

Tables:
  1. the model and its data (parameters, corpus digest, split sizes);
  2. held-out perplexity (strided window: CONTEXT 128, stride 64, each token scored once) and weight memory:
     the float32 numpy reference on the shipped fp16 weights, then group-wise RTN W8A16 / W4A16 (and W4A16
     with the first and last layer kept at 8 bits), perplexity run by the numpy reference on the dequantised
     weights; memory = codes + fp16 scales of the decoder linears (and the whole model);
  3. the fp16 kernel path (910B) against the reference on the first ``--npu-bytes`` held-out bytes
     (a simulation per window: slow, hence a subset), and greedy text of both on the fixed prompts;
  4. simulated kernel time of a prefill and of decode steps at several cache lengths, 910B and 310B;
  5. edge deployment: a 1.5B-parameter model's decode step (fp16 vs int4-g128 weights, batch 1) and its
     prefill (time to first token) on the 310B, per launch with its bound pipe, timing-only
     (ascend_sim/migrate/llm_edge.py), against the source's "< 500 ms";
  6. RazorAttention-style KV-cache compression (models/llm/kv_compress.py) of the passkey-trained weights
     (lm_passkey.npz, the same shapes): retrieval-head scores, the copy
     task's accuracy, and per policy the cache bytes saved at the full context, the passkey accuracy on
     ``--kv-prompts`` held-out prompts (models/llm/passkey.py: the retrieval task the model is trained for), the
     held-out perplexity (first ``--kv-bytes`` held-out bytes) and the decode attention time per step;
  7. W4A16 through the kernels (310B): held-out perplexity of the fused W4A16 cube kernel path against the numpy
     reference on the same dequantised weights (first ``--w4-bytes`` bytes), the tiny model's prefill time with
     fp16 and int4 weights, and generation with the NPU's sampling kernel (greedy, temperature + top-k) against
     the reference.

    python benchmarks/bench_llm.py [--npu-bytes N] [--quick] [--edge-context 512] [--edge-prompt 128] [--edge-only]
                                   [--kv-bytes 2048] [--kv-prompts 64] [--kv-only] [--w4-bytes 1024] [--w4-only]
"""
from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from ascend_sim.migrate.llm_quant import Scheme, quantise, schemes
from ascend_sim.kernels.m4.decode_attention import decode_attention
from ascend_sim.migrate.llm_edge import HIDDEN, VOCAB, decode_table, format_rows, linears, prefill_table, total_ms
from ascend_sim.models.llm import reference as R
from ascend_sim.models.llm.kv_compress import Razor, copy_accuracy, evaluate_policy, head_scores, retrieval_heads
from ascend_sim.models.llm.corpus import corpus_bytes, corpus_digest, decode, encode
from ascend_sim.models.llm.passkey import KEY_ALPHABET, KEY_LENGTH, heldout_prompts, retrieval_distances
from ascend_sim.models.llm.npu import NpuLM

PROMPTS = ("The if statement is used for conditional execution", "A class definition defines a class object")
STRIDE = R.CONTEXT // 2
KEY_DROP = 0.05         # passkey accuracy this far below the full cache's counts as a drop (table 6)


def model_table(params) -> None:
    n = sum(v.size for v in params.values())
    print("## 1. The model\n")
    print(f"{n:,} parameters ({R.LAYERS} layers, d_model {R.D_MODEL}, {R.HEADS} heads of {R.HEAD_DIM}, MLP "
          f"{R.D_MLP}, context {R.CONTEXT}, byte vocabulary 256, tied embedding); corpus pydoc_data.topics of "
          f"Python {platform.python_version()} (digest {corpus_digest()}): train {len(corpus_bytes('train')):,} "
          f"bytes, held-out {len(corpus_bytes('heldout')):,} bytes\n")


def quant_table(params, held: np.ndarray) -> float:
    print("## 2. Held-out perplexity and weight memory (numpy reference on the (dequantised) weights)\n")
    print("| weights | perplexity | vs fp16 | decoder linears (bytes) | vs fp16 | whole model (bytes) |")
    print("|---|---:|---:|---:|---:|---:|")
    base_ppl = base_mem = None
    for s in schemes():
        q = quantise(params, s)
        ppl = R.perplexity(lambda w: R.forward(q.params, w), held, STRIDE)
        base_ppl = base_ppl or ppl
        base_mem = base_mem or q.linear_bytes
        print(f"| {s.name} | {ppl:.4f} | {100 * (ppl / base_ppl - 1):+.2f} % | {q.linear_bytes:,} | "
              f"{100 * (q.linear_bytes / base_mem - 1):+.1f} % | {q.total_bytes:,} |")
    print("\nTargets of the source (example 3): -75 % weight memory with < 1 % perplexity loss.\n")
    return base_ppl


def npu_table(params, held: np.ndarray, n_bytes: int, steps: int) -> None:
    print(f"## 3. The fp16 kernel path (Ascend910B) against the float32 reference\n")
    sub = held[:n_bytes]
    model = NpuLM(params)

    def npu_logits(w):
        model.reset()
        return model.forward(w)

    t0 = time.time()
    ppl_npu = R.perplexity(npu_logits, sub, STRIDE)
    wall = time.time() - t0
    ppl_ref = R.perplexity(lambda w: R.forward(params, w), sub, STRIDE)
    print(f"first {len(sub):,} held-out bytes: perplexity reference {ppl_ref:.4f}, kernels {ppl_npu:.4f} "
          f"({100 * (ppl_npu / ppl_ref - 1):+.3f} %), {wall:.0f} s of simulation\n")
    print("| prompt | reference (greedy) | kernels (greedy) | same tokens |")
    print("|---|---|---|---|")
    for p in PROMPTS:
        ref = R.greedy_generate(params, encode(p), steps)
        out = model.generate(encode(p), steps)
        print(f"| {p!r} | {decode(ref)!r} | {decode(out)!r} | {out.tolist() == ref.tolist()} |")
    print()


def timing_table(params, lengths: tuple[int, ...]) -> None:
    print("## 4. Simulated kernel time per step (sum of the launches' us, launch overheads not included)\n")
    print("| chip | step | cache length | us | attention us | matmuls us | vector (LN, GELU, adds, embed) us | launches |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    prompt = encode(corpus_bytes("heldout"))[:R.CONTEXT]
    for chip in ("Ascend910B", "Ascend310B"):
        model = NpuLM(params, chip=chip)
        prefill = lengths[0]
        model.forward(prompt[:prefill])
        rows = [("prefill", prefill, model.results)]
        pos = prefill
        for target in lengths[1:]:
            while pos < target:
                model.forward(prompt[pos:pos + 1])
                pos += 1
            rows.append(("decode", pos, model.results))
        for step, length, results in rows:
            us = {k: 0.0 for k in ("attn", "mm", "vec")}
            for name, r in results:
                leaf = name.split(".")[-1]
                key = "attn" if leaf in ("attn", "cache") else "mm" if leaf in ("qkv", "proj", "fc1", "fc2", "head") \
                    else "vec"
                us[key] += r.us
            print(f"| {chip} | {step} | {length} | {sum(us.values()):.1f} | {us['attn']:.1f} | {us['mm']:.1f} | "
                  f"{us['vec']:.1f} | {len(results)} |")
    print()


def edge_table(context: int, prompt: int) -> None:
    print(f"## 5. A 1.5B model (Qwen2-1.5B shapes) on the Ascend310B profile, batch 1 (timing-only launches)\n")
    decode = {}
    for bits, name in ((16, "fp16"), (4, "int4 g128")):
        rows = decode_table(bits, context)
        decode[bits] = total_ms(rows)
        print(f"Decode step, {name} weights, {context} cached tokens:\n")
        print(format_rows(rows) + "\n")
    rows = prefill_table(prompt)
    ttft = total_ms(rows)
    print(f"Prefill of a {prompt}-token prompt (time to first token), fp16 weights on the cube:\n")
    print(format_rows(rows) + "\n")
    ttft4 = edge_prefill_int4(prompt)
    print(f"decode per token: fp16 {decode[16]:.1f} ms, int4 {decode[4]:.1f} ms ({decode[16] / decode[4]:.2f}x); "
          f"time to first token ({prompt} tokens): fp16 {ttft:.1f} ms, int4 {ttft4:.1f} ms ({ttft / ttft4:.2f}x).")
    embed = VOCAB * HIDDEN * 2
    for bits, name in ((16, "fp16"), (4, "int4 g128")):
        gb = (sum(lin.bytes(bits) * lin.count for lin in linears()) + embed) / 1e9
        print(f"weights held, {name} (embedding table fp16): {gb:.2f} GB; the Atlas 200I DK A2 has 4 GB, the Orange "
              f"Pi AIpro 8 or 16 GB")
    for bits, name in ((16, "fp16"), (4, "int4")):
        first = ttft if bits == 16 else ttft4
        n = int((500 - first) // decode[bits]) if first < 500 else 0
        print(f"'< 500 ms' with {name} decode: per token {'met' if decode[bits] < 500 else 'missed'}; "
              f"first token ({name} prefill) {'met' if first < 500 else 'missed'}; after the first token, {n} more "
              "fit in 500 ms")
    print()


def edge_prefill_int4(prompt: int) -> float:
    """The 1.5B model's prefill with int4-g128 weights through the fused W4A16 cube kernel (310B); its ms."""
    rows = prefill_table(prompt, bits=4)
    print(f"Prefill of a {prompt}-token prompt (time to first token), int4-g128 weights through the fused W4A16 "
          "kernel (codes dequantised in UB, UB -> L1, Mmad; the logits row a GEMV):\n")
    print(format_rows(rows) + "\n")
    return total_ms(rows)


W4_SCHEME = Scheme("W4A16 RTN g32", 4, 32)
W4_TOLERANCE = 0.005     # |kernel / reference - 1| of the perplexity: fp16 activations against float32


def w4a16_table(params, held: np.ndarray, n_bytes: int, steps: int) -> None:
    """Table 7: W4A16 perplexity through the kernels, the tiny model's prefill time, NPU sampling."""
    chip = "Ascend310B"
    print(f"## 7. W4A16 through the kernels ({chip}: the fused W4A16 cube kernel) and sampling on the NPU\n")
    q = quantise(params, W4_SCHEME)
    sub = held[:n_bytes]
    model = NpuLM(q.params, chip=chip, int4=q.int4())

    def npu_logits(w):
        model.reset()
        return model.forward(w)

    t0 = time.time()
    ppl_npu = R.perplexity(npu_logits, sub, STRIDE)
    wall = time.time() - t0
    ppl_ref = R.perplexity(lambda w: R.forward(q.params, w), sub, STRIDE)
    diff = ppl_npu / ppl_ref - 1
    print(f"{W4_SCHEME.name}, first {len(sub):,} held-out bytes: perplexity reference (numpy, dequantised weights) "
          f"{ppl_ref:.4f}, kernels {ppl_npu:.4f} ({100 * diff:+.3f} %; tolerance +-{100 * W4_TOLERANCE:.1f} %: "
          f"{'within' if abs(diff) <= W4_TOLERANCE else 'OUTSIDE'}), {wall:.0f} s of simulation\n")
    prompt = encode(corpus_bytes("heldout"))[:R.CONTEXT]
    print("| weights | prefill tokens | prefill us | of which the four linears' us | launches |")
    print("|---|---:|---:|---:|---:|")
    for name, m in (("fp16", NpuLM(params, chip=chip)), (W4_SCHEME.name, model)):
        for n in (32, R.CONTEXT):
            m.reset()
            m.forward(prompt[:n])
            lin = sum(r.us for k, r in m.results if k.split(".")[-1] in ("qkv", "proj", "fc1", "fc2"))
            print(f"| {name} | {n} | {sum(r.us for _, r in m.results):.1f} | {lin:.1f} | {len(m.results)} |")
    print()
    print("| prompt | sampling | reference | kernels (sampling kernel) | same tokens |")
    print("|---|---|---|---|---|")
    fp16 = NpuLM(params, chip=chip)
    for p in PROMPTS:
        for top_k, temp, seed in ((1, 1.0, 0), (8, 0.8, 1)):
            ref = R.generate(params, encode(p), steps, top_k=top_k, temperature=temp, seed=seed)
            out = fp16.generate(encode(p), steps, top_k=top_k, temperature=temp, seed=seed)
            how = "greedy" if top_k == 1 else f"top-{top_k}, T {temp}, seed {seed}"
            print(f"| {p!r} | {how} | {decode(ref)!r} | {decode(out)!r} | {out.tolist() == ref.tolist()} |")
    print()


def decode_attention_us(policy: Razor | None, length: int = R.CONTEXT) -> float:
    """Simulated us of one decode step's attention in all layers at ``length`` tokens (timing-only, 910B): per
    layer one launch over the full cache for its retrieval heads and one over the kept rows for the others."""
    total = 0.0
    for layer in range(R.LAYERS):
        whole = R.HEADS if policy is None else sum((layer, h) in policy.retrieval for h in range(R.HEADS))
        kept = length if policy is None else policy.head_tokens(length)
        for heads, rows in ((whole, length), (R.HEADS - whole, kept)):
            if heads:
                cache = np.zeros((heads, rows, R.HEAD_DIM), np.float16)
                _, res = decode_attention(np.zeros(3 * heads * R.HEAD_DIM, np.float16), cache, cache.copy(),
                                          rows - 1, numerics=False)
                total += sum(r.us for r in res)
    return total


def kv_table(params, held: np.ndarray, n_bytes: int, n_prompts: int) -> None:
    print("## 6. RazorAttention-style KV-cache compression (numpy reference, the passkey-trained weights "
          f"{R.PASSKEY_WEIGHTS_FILE})\n")
    ind, echo = head_scores(params)
    uniform = 1 / 72          # mean attention a key gets from the second copy's queries (48..95) if spread evenly
    order = np.argsort(-(ind + echo), axis=None, kind="stable")
    ranked = ", ".join(f"l{o // R.HEADS}h{o % R.HEADS} {(ind + echo).flat[o]:.3f}" for o in order[:4])
    print(f"head scores on random letters repeated twice: induction max {ind.max():.4f}, echo max {echo.max():.4f} "
          f"(an even spread gives ~{uniform:.4f}); best induction + echo: {ranked}; copy accuracy on the second "
          f"copy {copy_accuracy(params):.3f} (chance 1/26 = 0.038)\n")
    prompts = heldout_prompts(n_prompts)
    text = held[:n_bytes]
    full = evaluate_policy(params, None, prompts, text, STRIDE)
    near, far = retrieval_distances()
    full_us = decode_attention_us(None)
    print(f"full cache: passkey {full.keys:.1%} of {len(prompts)} held-out prompts retrieved exactly (chance "
          f"{1 / len(KEY_ALPHABET) ** KEY_LENGTH:.1%}; the key sits {near}..{far} tokens before its cue), held-out "
          f"perplexity on the first {len(text):,} bytes {full.perplexity:.4f}, decode attention of one step at "
          f"{R.CONTEXT} tokens (4 layers, 910B kernels, timing-only) {full_us:.1f} us\n")
    print(f"heads scored on the passkey (calibration prompts of training text): "
          f"{sorted(retrieval_heads(params, 2, 'passkey'))} first; by induction + echo: "
          f"{sorted(retrieval_heads(params, 2))}\n")
    print("| retrieval heads kept whole | chosen by | window | sinks | compensation | cache saved at 128 tokens | "
          "passkey keys | "
          "perplexity | vs full | decode attention us |")
    print("|---:|---|---:|---:|---|---:|---:|---:|---:|---:|")
    choices = [(0, "-"), (2, "razor"), (1, "passkey"), (2, "passkey")]
    policies = [(by, Razor(retrieval_heads(params, n, by) if n else frozenset(), w)) for n, by in choices
                for w in (64, 32, 16, 8)]
    policies.append(("passkey", Razor(retrieval_heads(params, 1, "passkey"), 8, compensation=False)))
    rows = []
    for by, pol in policies:
        r = evaluate_policy(params, pol, prompts, text, STRIDE)
        rows.append((by, pol, r))
        print(f"| {len(pol.retrieval)} | {by} | {pol.window} | {pol.sinks} | {pol.compensation} | {r.saved:.1%} | "
              f"{r.keys:.1%} | {r.perplexity:.4f} | {100 * (r.perplexity / full.perplexity - 1):+.2f} % | "
              f"{decode_attention_us(pol):.1f} |")
    print()
    for n, by in choices:
        same = [r for b, pol, r in rows if len(pol.retrieval) == n and b == by and pol.compensation]
        held_up = [r.saved for r in same if r.keys >= full.keys - KEY_DROP]
        dropped = [r.saved for r in same if r.keys < full.keys - KEY_DROP]
        print(f"{n} heads whole (chosen by {by}): passkey accuracy within {100 * KEY_DROP:.0f} points of the full "
              "cache's up to "
              f"{max(held_up, default=0):.1%} saved; " + (f"it drops from {min(dropped):.1%} saved" if dropped else
                                                            "no drop in the windows tried"))
    print("\nSource: RazorAttention cuts the KV cache by > 70 % 'without noticeable impact'.\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--npu-bytes", type=int, default=1024, help="held-out bytes scored through the kernels")
    ap.add_argument("--steps", type=int, default=16, help="greedy tokens per prompt")
    ap.add_argument("--quick", action="store_true", help="skip the kernel-path perplexity and greedy table")
    ap.add_argument("--edge-context", type=int, default=512, help="cached tokens of the 1.5B decode step")
    ap.add_argument("--edge-prompt", type=int, default=128, help="prompt tokens of the 1.5B prefill")
    ap.add_argument("--edge-only", action="store_true", help="print only table 5")
    ap.add_argument("--kv-bytes", type=int, default=2048, help="held-out bytes of the KV-compression table")
    ap.add_argument("--kv-prompts", type=int, default=64, help="held-out passkey prompts of the KV-compression table")
    ap.add_argument("--kv-only", action="store_true", help="print only table 6")
    ap.add_argument("--w4-bytes", type=int, default=1024, help="held-out bytes of table 7's kernel perplexity")
    ap.add_argument("--w4-only", action="store_true", help="print only table 7")
    args = ap.parse_args()
    if args.w4_only:
        return w4a16_table(R.load_lm_weights(), encode(corpus_bytes("heldout")), args.w4_bytes, args.steps)
    if args.edge_only:
        return edge_table(args.edge_context, args.edge_prompt)
    if args.kv_only:
        return kv_table(R.load_lm_weights(R.PASSKEY_WEIGHTS_FILE), encode(corpus_bytes("heldout")), args.kv_bytes,
                        args.kv_prompts)
    params = R.load_lm_weights()
    held = encode(corpus_bytes("heldout"))
    model_table(params)
    quant_table(params, held)
    if not args.quick:
        npu_table(params, held, args.npu_bytes, args.steps)
    timing_table(params, (32, 33, 64, 127))
    edge_table(args.edge_context, args.edge_prompt)
    kv_table(R.load_lm_weights(R.PASSKEY_WEIGHTS_FILE), held, args.kv_bytes, args.kv_prompts)
    w4a16_table(params, held, args.w4_bytes, args.steps)


if __name__ == "__main__":
    main()
