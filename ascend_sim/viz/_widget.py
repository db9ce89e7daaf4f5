"""What every view widget shares: a static PNG in its MIME bundle, the ESM/CSS files."""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from ascend_sim.viz.static import figure_png

HERE = Path(__file__).parent
CSS = HERE / "viz.css"


def esm(name: str) -> str:
    """The ES module of a view: the shared DOM helper (dom.js) followed by ``name``."""
    return (HERE / "dom.js").read_text(encoding="utf-8") + "\n" + (HERE / name).read_text(encoding="utf-8")

_settings = {"static_png": True}


def set_static_fallback(enabled: bool) -> None:
    """Turn the PNG copy in each widget's output on or off (on by default).

    The PNG is what GitHub, nbconvert and front ends without widgets show.
    """
    _settings["static_png"] = bool(enabled)


class StaticFallbackMixin:
    """Adds ``image/png`` of :meth:`static_figure` next to the widget view.

    JupyterLab, Notebook 7 and VS Code prefer the widget view; renderers
    without a widget manager show the PNG instead.
    """

    def static_figure(self) -> Figure:  # pragma: no cover - every view defines it
        raise NotImplementedError

    def static_png(self) -> bytes:
        """PNG bytes of the static picture (a widget showing several figures may stack them)."""
        return figure_png(self.static_figure())

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict]:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data, meta = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        data = dict(data)
        data["text/plain"] = repr(self)
        if _settings["static_png"]:
            data["image/png"] = base64.b64encode(self.static_png()).decode("ascii")
        return data, meta
