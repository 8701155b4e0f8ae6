"""Figures as image files for slides and papers: PNG and SVG through Plotly's image export (kaleido
driving the Chromium already installed, never a browser download), and the time-lapse as an animated GIF.

The browser: $BROWSER_PATH (kaleido's own setting), else `chromium` on the PATH, kept running between exports
(explorer.export.browser). Kaleido gets plotly's bundled plotly.js and no MathJax, so an export makes no
request to any network.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from explorer.export import browser
from explorer.figures.attention import slider_frames

WIDTH = 1280          # px: a 16:9 slide's width; the height is the figure's own (it holds its content)
PNG_SCALE = 2         # PNG pixels per CSS pixel: sharp on a projector and in print
FORMATS = ("png", "svg", "gif")
GIF_FRAME_MS, GIF_HOLD_MS = 500, 2000   # per snapshot; the last (the trained state) stays longer
GIF_MAX_FRAMES = 30   # evenly spaced, first and last kept: ~0.45 s a frame to render (bench/README.md)


class ImageExportError(RuntimeError):
    """An image cannot be rendered here (no browser); the message says what to install or set."""


def browser_path() -> str:
    path = os.environ.get("BROWSER_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path or not Path(path).is_file():
        raise ImageExportError("image export needs Chromium (apt-get install chromium), or BROWSER_PATH set to a "
                               "Chrome or Chromium executable")
    return path


def size(fig: go.Figure) -> tuple[int, int]:
    """(width, height) in CSS pixels of the exported image: slide-wide, the figure's own height."""
    return WIDTH, int(fig.layout.height or 720)


def render(figs: list[go.Figure], fmt: str, scale: float | None = None) -> list[bytes]:
    """PNG or SVG bytes of each figure, rendered by the process's one browser (explorer.export.browser: started
    by the first export, reused by the later ones, closed at exit). Its event loop runs in a thread of its own,
    so this works from a script, a notebook (whose loop is running) and a Streamlit callback alike."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"format {fmt!r}: choose png or svg")
    scale = (PNG_SCALE if fmt == "png" else 1) if scale is None else scale
    path = browser_path()
    jobs = [(fig, dict(format=fmt, width=size(fig)[0], height=size(fig)[1], scale=scale)) for fig in figs]
    try:
        return browser.render(jobs, path)
    except browser.BrowserFailed as e:
        raise ImageExportError(f"the image export failed twice, the second time in a new browser ({path}): "
                               f"{e}") from e


def image_bytes(fig: go.Figure, fmt: str) -> bytes:
    """One figure as PNG (at PNG_SCALE) or SVG bytes."""
    return render([fig], fmt)[0]


def gif_bytes(fig: go.Figure, frame_ms: int = GIF_FRAME_MS, hold_ms: int = GIF_HOLD_MS) -> bytes:
    """An animated GIF of a `z_slider` figure (the attention time-lapse), a frame per step (at most
    GIF_MAX_FRAMES, evenly spaced), rendered by kaleido and assembled with Pillow; a figure without a slider
    gives a one-frame GIF."""
    from PIL import Image  # Pillow: only a GIF needs it

    stills = slider_frames(fig) or [fig]
    if len(stills) > GIF_MAX_FRAMES:
        keep = np.unique(np.linspace(0, len(stills) - 1, GIF_MAX_FRAMES).round().astype(int))
        stills = [stills[i] for i in keep]
    frames = [Image.open(io.BytesIO(png)).convert("RGB") for png in render(stills, "png", scale=1)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], loop=0, optimize=True,
                   duration=[frame_ms] * (len(frames) - 1) + [hold_ms])
    return buffer.getvalue()


def write_image(fig: go.Figure, path) -> Path:
    """Write fig to path as PNG, SVG or GIF (by its suffix)."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"{path.name}: the file name must end in .png, .svg or .gif")
    data = gif_bytes(fig) if fmt == "gif" else image_bytes(fig, fmt)
    path.write_bytes(data)
    return path


__all__ = ["WIDTH", "PNG_SCALE", "FORMATS", "GIF_MAX_FRAMES", "ImageExportError", "browser_path", "size", "render",
           "image_bytes", "gif_bytes", "write_image"]
