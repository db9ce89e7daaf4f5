"""What-if explorer (假设分析): sliders and dropdowns that re-run a kernel and redraw its views.

``WhatIfExplorer(build, params)`` calls ``build(**values)`` (which must return
a LaunchResult) whenever a control changes, then updates the timeline, the
profile summary and, if asked, the memory-tier view. A rule the kernel breaks
(a ``KernelError``, e.g. a tile too large for UB) is shown, not raised.
"""
from __future__ import annotations

import html
import time
from typing import Any, Callable, Mapping

import ipywidgets as W
from matplotlib.figure import Figure

from ascend_sim.viz._widget import StaticFallbackMixin
from ascend_sim.viz.summary import compare_tables, comparison_html, profile_html
from ascend_sim.viz.timeline import TimelineView, timelines_figure
from ascend_sim.viz.traffic_view import TrafficView
from ascend_sim.trace.table import TraceTable, as_table

Spec = Any   # list/tuple of choices, (min, max[, step]) range, bool, dict label->value, or a Widget


def make_control(name: str, spec: Spec, value: Any = None) -> W.ValueWidget:
    """A control for one parameter.

    * a list of numbers: a slider over exactly those values (``[64, 128, 256]``)
    * any other list, or a dict ``{label: value}``: a dropdown
    * a tuple ``(min, max)`` or ``(min, max, step)``: an int or float slider
    * a bool: a checkbox; an ipywidgets control: used as is
    """
    style = {"description_width": "initial"}
    common = {"description": name, "continuous_update": False, "style": style}
    if isinstance(spec, W.ValueWidget):
        return spec
    if isinstance(spec, bool):
        return W.Checkbox(value=spec if value is None else bool(value), description=name, indent=False)
    if isinstance(spec, dict):
        opts = list(spec.items())
        return W.Dropdown(options=opts, value=opts[0][1] if value is None else value,
                          description=name, style=style)
    if isinstance(spec, tuple) and 2 <= len(spec) <= 3 and all(isinstance(v, (int, float)) for v in spec):
        lo, hi = spec[0], spec[1]
        step = spec[2] if len(spec) == 3 else 1
        cls = W.IntSlider if all(isinstance(v, int) for v in spec) else W.FloatSlider
        return cls(min=lo, max=hi, step=step, value=lo if value is None else value, **common)
    if isinstance(spec, (list, tuple)):
        opts = list(spec)
        if not opts:
            raise ValueError(f"parameter {name!r} has no choices")
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in opts):
            return W.SelectionSlider(options=opts, value=opts[0] if value is None else value, **common)
        return W.Dropdown(options=opts, value=opts[0] if value is None else value,
                          description=name, style=style)
    raise TypeError(f"cannot make a control for {name!r} from {spec!r}")


class WhatIfExplorer(StaticFallbackMixin, W.VBox):
    """Controls that re-run ``build(**params)`` and update the timeline and profile.

    Args:
        build: ``build(**values) -> LaunchResult`` (build the tiling, launch the kernel).
        params: ``{name: spec}``, see :func:`make_control`.
        values: starting values (default: each control's first value).
        traffic: also show the memory-tier view.
        cores: cores shown in the timeline, as for :class:`TimelineView`.
    """

    def __init__(self, build: Callable[..., Any], params: Mapping[str, Spec],
                 values: Mapping[str, Any] | None = None, traffic: bool = False,
                 cores: str | None = None, title: str = "", **kwargs: Any) -> None:
        values = dict(values or {})
        self._build = build
        self.controls = {n: make_control(n, s, values.get(n)) for n, s in params.items()}
        self.status = W.HTML()
        self.summary = W.HTML()
        self.timeline = TimelineView(cores=cores, title=title)
        self.traffic = TrafficView() if traffic else None
        self.pin_button = W.Button(description="pin as baseline", tooltip=(
            "keep this run and show the next ones against it on one time axis"))
        self.unpin_button = W.Button(description="unpin", disabled=True)
        self.pin_button.on_click(lambda _: self.pin())
        self.unpin_button.on_click(lambda _: self.unpin())
        self.result: Any = None
        self.error: str | None = None
        self.baseline: TraceTable | None = None
        self.last_update_ms: float = 0.0
        box = W.HBox(list(self.controls.values()) + [self.pin_button, self.unpin_button],
                     layout=W.Layout(flex_flow="row wrap", align_items="center"))
        parts: list[W.Widget] = [box, self.status, self.summary, self.timeline]
        if self.traffic is not None:
            parts.append(self.traffic)
        super().__init__(parts, **kwargs)
        self.add_class("asim-explorer")
        for c in self.controls.values():
            c.observe(self._on_change, names="value")
        self.update()

    @property
    def values(self) -> dict[str, Any]:
        """Current parameter values."""
        return {n: c.value for n, c in self.controls.items()}

    def set(self, **values: Any) -> None:
        """Change controls from code (one re-run for all of them)."""
        self._quiet = True
        try:
            for n, v in values.items():
                self.controls[n].value = v
        finally:
            self._quiet = False
        self.update()

    _quiet = False

    def _on_change(self, _change: Any) -> None:
        if not self._quiet:
            self.update()

    def update(self) -> float:
        """Re-run ``build`` with the current values and redraw; returns the time taken in ms."""
        t0 = time.perf_counter()
        try:
            result = self._build(**self.values)
        except Exception as exc:  # noqa: BLE001 - shown to the learner, who fixes the parameters
            self.error = f"{type(exc).__name__}: {exc}"
            self.status.value = f"<div class='asim-error'>{html.escape(self.error)}</div>"
            self.last_update_ms = (time.perf_counter() - t0) * 1e3
            return self.last_update_ms
        self.error = None
        self.result = result
        label = ", ".join(f"{k}={v}" for k, v in self.values.items())
        table = as_table(result, label)
        if self.baseline is not None:
            self.timeline.set_traces([self.baseline, table], keep_view=False)
            self.summary.value = comparison_html(compare_tables(self.baseline, table)) + profile_html(
                table, result)
        else:
            self.timeline.set_traces([table], keep_view=False)
            self.summary.value = profile_html(table, result)
        if self.traffic is not None:
            self.traffic.update(result)
        self.last_update_ms = (time.perf_counter() - t0) * 1e3
        self.status.value = (f"<span class='asim-hint'>{html.escape(label)}: re-ran and redrew in "
                             f"{self.last_update_ms:.0f} ms</span>")
        return self.last_update_ms

    def pin(self) -> None:
        """Keep the current run as the baseline the next runs are compared with."""
        if self.result is not None:
            label = "baseline: " + ", ".join(f"{k}={v}" for k, v in self.values.items())
            self.baseline = as_table(self.result, label)
            self.unpin_button.disabled = False

    def unpin(self) -> None:
        """Stop comparing with the baseline."""
        self.baseline = None
        self.unpin_button.disabled = True
        self.update()

    def static_figure(self) -> Figure:
        t = self.timeline
        title = ", ".join(f"{k}={v}" for k, v in self.values.items())
        if self.error:
            title += f"\n{self.error[:120]}"
        return timelines_figure(t.tables, cores=t.cores or None, expanded=t.expanded, title=title)

    def __repr__(self) -> str:
        return f"WhatIfExplorer({', '.join(self.controls)})"
