"""100,000 fuzzed API calls (tests/sim/fuzz_util.py): the outcome classes, and the forbidden ones.

    python benchmarks/fuzz_sanitizer.py [--calls 100000] [--seed 0]

Exits non-zero if any call escaped as a non-KernelError (or an InternalError), broke a rule of
fuzz_util.RULES silently, or wrote outside its destination.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "sim"))
import fuzz_util  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t = time.perf_counter()
    outcomes = fuzz_util.fuzz(args.calls, args.seed)
    dt = time.perf_counter() - t
    print(f"{args.calls:,} calls, seed {args.seed}, {dt:.1f} s")
    for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1]):
        print(f"  {v:8,}  {k}")
    bad = fuzz_util.failures(outcomes)
    print(f"escapes: {sum(v for k, v in bad.items() if k.startswith('escape'))}, "
          f"invalid calls accepted: {sum(v for k, v in bad.items() if k.startswith('accepted'))}, "
          f"writes outside the destination: {sum(v for k, v in bad.items() if k.startswith('oob'))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
