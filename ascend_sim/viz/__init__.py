"""Views over a launch's trace: pipeline timeline, memory-tier traffic, what-if explorer, comparison.

Each view is a Jupyter widget (anywidget / ipywidgets 8) that also carries a
static PNG, and has a matplotlib twin for exported notebooks::

    from ascend_sim.viz import TimelineView, TrafficView, CompareView, WhatIfExplorer
    TimelineView(result)                      # interactive
    timeline_figure(result)                   # matplotlib Figure

See docs/widgets.md.
"""
from ._widget import set_static_fallback
from .compare import CompareView, compare, compare_figure
from .explorer import WhatIfExplorer, make_control
from .layout import Row, timeline_rows
from .occupancy import Occupancy, occupancy
from .static import figure_png
from .summary import Comparison, profile_html
from .timeline import TimelineView, timeline_figure, timelines_figure
from .traffic import Edge, traffic_edges
from .traffic_view import TrafficData, TrafficView, traffic_figure
from .tracedata import PipeStats, TraceTable, as_table, pipe_stats

__all__ = [
    "TimelineView", "TrafficView", "CompareView", "WhatIfExplorer",
    "timeline_figure", "timelines_figure", "traffic_figure", "compare_figure", "figure_png",
    "as_table", "TraceTable", "pipe_stats", "PipeStats", "traffic_edges", "Edge", "occupancy",
    "Occupancy", "TrafficData", "compare", "Comparison", "profile_html", "timeline_rows", "Row",
    "make_control", "set_static_fallback",
]
