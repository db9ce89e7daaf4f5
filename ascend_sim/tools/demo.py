"""``ascend-sim demo``: LeNet-5 on MNIST through the simulated kernels, headless.

Runs the float16 network (``ascend_sim.models.lenet.LeNetRuntime``) on the bundled
1,000 held-out digits (or the 10,000-image MNIST test set with
``--mnist-dir``), prints the accuracy and the per-operator simulated time,
and writes into ``--out``:

- ``timeline_<node>.png``: per-pipe Gantt of one representative launch (the
  slowest operator, run once more on one chunk of images);
- ``<node>.trace.json``: the same launch as a Chrome trace (Perfetto,
  chrome://tracing).

Only argparse is imported at module level, so ``ascend-sim --help`` stays fast.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

DEMO_HELP = "run LeNet-5 on MNIST through the simulator: accuracy, per-operator time, timeline and trace"
DEFAULT_OUT = "ascend_sim_demo_out"
REPRESENTATIVE_IMAGES = 16

#: ``(flags, add_argument keywords)`` of the demo's options.
DEMO_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("--out",), dict(default=DEFAULT_OUT, help=f"output folder (default: ./{DEFAULT_OUT})")),
    (("--limit",), dict(type=int, default=None, metavar="N", help="use only the first N images")),
    (("--mnist-dir",), dict(default=None, metavar="DIR",
                            help="folder with the MNIST IDX test files (t10k-*): evaluate those 10,000 images "
                                 "instead of the bundled held-out 1,000")),
    (("--dtype",), dict(default="float16", choices=["float16", "float32"], help="network dtype (default: float16)")),
    (("--batch",), dict(type=int, default=2048, help="images per launch (default: 2048)")),
    (("--no-progress",), dict(action="store_true", help="no progress bar")),
]


def add_demo_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the demo's options to ``parser``."""
    for flags, kwargs in DEMO_ARGS:
        parser.add_argument(*flags, **kwargs)
    return parser


def add_demo_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``demo`` on an ``add_subparsers()`` object; the handler is ``run_demo``."""
    p = subparsers.add_parser("demo", help=DEMO_HELP, description=DEMO_HELP)
    add_demo_arguments(p)
    p.set_defaults(_fn=run_demo)
    return p


def demo_main(argv: Sequence[str] | None = None) -> int:
    """``ascend-sim demo [options]`` as a function; returns the exit status."""
    parser = add_demo_arguments(argparse.ArgumentParser(prog="ascend-sim demo", description=DEMO_HELP))
    return run_demo(parser.parse_args(argv))


def run_demo(args: argparse.Namespace) -> int:
    """Evaluate, print the report, write the timeline PNG and the Chrome trace; 0 on success."""
    from ascend_sim.models.lenet import LeNetRuntime

    images, labels, source = _load(args.mnist_dir, args.limit)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rt = LeNetRuntime(dtype=args.dtype)
    print(f"LeNet-5 ({args.dtype}) on {len(images)} {source} images through the simulated kernels", flush=True)
    report = rt.evaluate(images, labels, batch=args.batch, progress=not args.no_progress)
    print(report)
    table = report.table
    slowest = max(table.rows, key=lambda r: r.cycles).name
    rt.forward(_first(images, REPRESENTATIVE_IMAGES))      # small launches: a readable timeline and trace
    result = rt.last_results[slowest]
    png = out / f"timeline_{slowest}.png"
    trace = out / f"{slowest}.trace.json"
    save_timeline(result, png, title=f"{slowest}: {REPRESENTATIVE_IMAGES} images, {result.block_dim} blocks")
    result.to_chrome_trace(trace)
    print(f"representative launch: {result}")
    print(f"wrote {png}\nwrote {trace}  (open in https://ui.perfetto.dev)")
    return 0


def _load(mnist_dir: str | None, limit: int | None):
    from ascend_sim.models.datasets import load_mnist_idx, load_mnist_subset

    if mnist_dir:
        images, labels = load_mnist_idx(mnist_dir, "t10k")
        source = "MNIST test"
    else:
        images, labels = load_mnist_subset("heldout")
        source = "held-out"
    if limit is not None:
        if limit < 1:
            raise ValueError(f"--limit must be at least 1, got {limit}")
        images, labels = images[:limit], labels[:limit]
    return images, labels, source


def _first(images, n: int):
    from ascend_sim.models.datasets import normalize
    return normalize(images[:n])


def save_timeline(result, path: Path, title: str = "") -> None:
    """PNG of the launch's timeline: the viz module's figure if available, else a plain per-pipe Gantt."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    try:
        from ascend_sim.viz import timeline_figure
        fig = timeline_figure(result, cores="0", title=title)
    except ImportError:                         # the widget stack (anywidget) is not installed
        fig = _gantt(result, title)
    fig.savefig(path, dpi=100)


def _gantt(result, title: str):
    """Per-pipe Gantt of block 0 with plain matplotlib."""
    import numpy as np
    from matplotlib.figure import Figure

    from ascend_sim.trace.table import as_table

    t = as_table(result)
    first = t.core == 0
    pipes = [p for p in ("S", "MTE2", "V", "M", "MTE1", "MTE3", "FIX") if (first & (t.pipe == p)).any()]
    fig = Figure(figsize=(11, 0.5 * len(pipes) + 1.2), layout="constrained")
    ax = fig.subplots()
    for i, p in enumerate(pipes):
        m = first & (t.pipe == p)
        ax.broken_barh(list(zip(t.start[m], np.maximum(t.end[m] - t.start[m], 0.5))), (i - 0.35, 0.7))
    ax.set_yticks(range(len(pipes)), pipes)
    ax.invert_yaxis()
    ax.set_xlabel("cycles")
    ax.set_title(title or result.kernel_name, fontsize=9, loc="left")
    return fig


if __name__ == "__main__":  # pragma: no cover
    sys.exit(demo_main())
