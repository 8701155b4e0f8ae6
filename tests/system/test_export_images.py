"""Figures as images through kaleido and Debian's Chromium: real PNG, SVG and GIF files of the size the
export promises (presentation width, the figure's own height; PNG at 2x)."""

import io
import struct
import xml.etree.ElementTree as ET

from PIL import Image

from explorer import cli
from explorer.export.images import PNG_SCALE, WIDTH, render, size
from explorer.export.kinds import build_figure
from explorer.store.subject import open_subject
from tests.export_run import SNAPSHOT_STEPS, save_tiny_run


def test_figure_command_writes_a_png_at_twice_presentation_size(tmp_path):
    out = tmp_path / "attention.png"
    assert cli.main(["figure", "attention", "--model", "reversal-fast", "--example", "2", "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    _, fig_height = size(build_figure("attention", open_subject("reversal-fast"), 2))
    assert (width, height) == (WIDTH * PNG_SCALE, fig_height * PNG_SCALE)


def test_svg_is_a_vector_image_of_the_figure_size():
    s = open_subject("reversal-fast")
    figs = [build_figure("curves", s), build_figure("gradients", s)]
    for fig, svg in zip(figs, render(figs, "svg")):
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        assert (root.get("width"), root.get("height")) == tuple(str(v) for v in size(fig))
        assert root.find(".//{http://www.w3.org/2000/svg}path") is not None        # drawn, not an empty canvas


def test_time_lapse_gif_has_a_frame_per_snapshot(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    save_tiny_run()
    fig = build_figure("timelapse", open_subject("tiny-lapse"))
    out = tmp_path / "lapse.gif"
    assert cli.main(["figure", "timelapse", "--model", "tiny-lapse", "--out", str(out)]) == 0
    gif = Image.open(io.BytesIO(out.read_bytes()))
    assert gif.format == "GIF" and gif.n_frames == len(SNAPSHOT_STEPS) and gif.size == size(fig)
    frames = []
    for i in (0, gif.n_frames - 1):
        gif.seek(i)
        frames.append(gif.convert("RGB").tobytes())
    assert frames[0] != frames[1]                                   # the frames differ: it animates
