"""Views over a launch's trace: pipeline timeline, memory-tier traffic, what-if explorer, comparison.

Each view is a Jupyter widget (anywidget / ipywidgets 8) that also carries a
static PNG, and has a matplotlib twin for exported notebooks::

    from ascend_sim.viz import TimelineView, TrafficView, CompareView, WhatIfExplorer
    TimelineView(result)                      # interactive
    timeline_figure(result)                   # matplotlib Figure

See docs/widgets.md.
"""
from ascend_sim.viz._widget import StaticFallbackMixin, set_static_fallback
from ascend_sim.viz.compare import CompareView, compare, compare_figure
from ascend_sim.viz.explorer import WhatIfExplorer, make_control
from ascend_sim.viz.layout import Row, timeline_rows
from ascend_sim.viz.occupancy import Occupancy, occupancy
from ascend_sim.viz.static import figure_png
from ascend_sim.viz.summary import Comparison, profile_html
from ascend_sim.viz.timeline import TimelineView, timeline_figure, timelines_figure
from ascend_sim.viz.traffic import Edge, traffic_edges
from ascend_sim.viz.traffic_view import TrafficData, TrafficView, traffic_figure
from ascend_sim.trace.table import PipeStats, TraceTable, as_table, pipe_stats

__all__ = [
    "TimelineView", "TrafficView", "CompareView", "WhatIfExplorer",
    "timeline_figure", "timelines_figure", "traffic_figure", "compare_figure", "figure_png",
    "as_table", "TraceTable", "pipe_stats", "PipeStats", "traffic_edges", "Edge", "occupancy",
    "Occupancy", "TrafficData", "compare", "Comparison", "profile_html", "timeline_rows", "Row",
    "make_control", "set_static_fallback", "StaticFallbackMixin",
]
