"""Reports, figure kinds and the export commands, without a browser: what each one contains, and the
one-line errors of bad input (the images themselves: tests/system/test_export_images.py)."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from explorer import cli
from explorer.export.kinds import KINDS, build_figure
from explorer.export.report import MAX_METRIC_ROWS, build_report, evaluated_steps
from explorer.figures.attention import attention_heatmap, playable, slider_frames, z_slider
from explorer.store.snapshots import load_snapshots
from explorer.store.subject import open_subject
from tests.export_run import SNAPSHOT_STEPS, save_tiny_run


def report_figures(html: str) -> list[dict]:
    """Each Plotly.newPlot(id, data, layout, ...) of a report as {"data", "layout"}, parsed as JSON: plotly
    writes non-ASCII text escaped or not depending on its JSON engine (orjson or the standard json)."""
    decode, figures = json.JSONDecoder().raw_decode, []
    for call in re.finditer(r"Plotly\.newPlot\(\s*", html):
        args, at = [], call.end()
        for _ in range(3):
            value, at = decode(html, at)
            args.append(value)
            at = re.compile(r"\s*,\s*").match(html, at).end()
        figures.append({"data": args[1], "layout": args[2]})
    return figures


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    return save_tiny_run()


def test_a_saved_run_keeps_its_attention_snapshots(run):
    info, history = run
    recorded = [r.snapshot for r in history if r.snapshot is not None]
    loaded = load_snapshots(info.path)
    assert [s.step for s in loaded] == list(SNAPSHOT_STEPS) == [s.step for s in recorded]
    for a, b in zip(loaded, recorded):
        np.testing.assert_allclose(a.pattern, b.pattern, atol=1e-3)   # kept as float16
        assert (a.kind, a.q_labels, a.k_labels) == (b.kind, b.q_labels, b.k_labels)


def test_every_figure_kind_builds_for_a_run_with_snapshots(run):
    s = open_subject("tiny-lapse")
    assert s.source == "run" and len(s.snapshots) == len(SNAPSHOT_STEPS)
    for kind in KINDS:
        fig = build_figure(kind, s, 1)
        assert fig.data, kind
    lapse = build_figure("timelapse", s)
    assert [st.label for st in lapse.layout.sliders[0].steps] == [str(x) for x in SNAPSHOT_STEPS]


def test_kinds_without_data_say_why(unreplayed):
    save_tiny_run("bare", snapshot_every=0)
    with pytest.raises(ValueError, match="'bare' has no attention snapshots .* train a run with --snapshot-every"):
        build_figure("timelapse", open_subject("bare"))
    with pytest.raises(ValueError, match="its training was not replayed; run python -m explorer interpret "
                                         "snapshots --model order-pe"):
        build_figure("timelapse", open_subject("order-pe"))
    with pytest.raises(ValueError, match="no positional encoding"):
        build_figure("positional", open_subject("order-nope"))
    with pytest.raises(ValueError, match="unknown figure kind 'nope'; choose one of attention"):
        build_figure("nope", open_subject("reversal-fast"))


def test_prefixes_pick_a_run_over_a_shipped_model_of_the_same_name(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    save_tiny_run("copy")                                 # "copy" is a shipped model's name too
    assert open_subject("copy").source == "shipped"
    assert open_subject("run:copy").source == "run"
    with pytest.raises(ValueError, match="no shipped model or saved run named 'tiny-lapse'"):
        open_subject("shipped:tiny-lapse")


def _lapse(n=3):
    zs = [np.full((2, 3), i / 10) for i in range(n)]
    slider = z_slider([f"{i}" for i in range(n)], zs, [f"step {i}" for i in range(n)], n - 1)
    return attention_heatmap(zs[-1], ["a", "b"], ["x", "y", "z"], slider=slider, play=True), zs


def test_a_long_time_lapse_gif_keeps_evenly_spaced_frames_with_the_first_and_the_last(monkeypatch):
    import io

    from PIL import Image

    from explorer.export import images

    fig, _ = _lapse(61)
    drawn = []

    def fake_render(stills, fmt, scale=None):   # the browser's part: one small PNG a frame
        drawn.extend(f.layout.title.text for f in stills)
        out = []
        for i in range(len(stills)):
            buffer = io.BytesIO()
            Image.new("RGB", (8, 8), (4 * i, 0, 0)).save(buffer, format="PNG")
            out.append(buffer.getvalue())
        return out

    monkeypatch.setattr(images, "render", fake_render)
    gif = Image.open(io.BytesIO(images.gif_bytes(fig)))
    assert gif.n_frames == len(drawn) == images.GIF_MAX_FRAMES
    assert drawn[0] == "step 0" and drawn[-1] == "step 60" and drawn[15] == "step 31"
    assert len(set(drawn)) == len(drawn)


def test_playable_time_lapse_animates_in_plotly_alone():
    fig, zs = _lapse()
    out = playable(fig)
    assert [f.name for f in out.frames] == ["0", "1", "2"]
    np.testing.assert_allclose(out.frames[0].data[0].z, zs[0])
    assert out.frames[2].layout.title.text == "step 2"
    assert out.layout.updatemenus[0].buttons[0].method == "animate"           # "skip" in the app
    assert {s.method for s in out.layout.sliders[0].steps} == {"animate"}
    assert fig.layout.updatemenus[0].buttons[0].method == "skip"               # the app's figure is untouched


def test_slider_frames_are_stills_of_each_step():
    fig, zs = _lapse(4)
    stills = slider_frames(fig)
    assert [s.layout.title.text for s in stills] == [f"step {i}" for i in range(4)]
    assert [s.layout.sliders[0].active for s in stills] == [0, 1, 2, 3]
    np.testing.assert_allclose(stills[1].data[0].z, zs[1])
    assert all(not s.layout.updatemenus for s in stills)


def test_report_is_one_file_with_every_section_and_plotly_inline_once(run):
    html = build_report(open_subject("tiny-lapse"))
    assert html.count('class="figure"') == 8   # loss, accuracy, 3 attention kinds, time-lapse, gradients, entropy
    assert len(re.findall(r"<script[^>]+src=", html)) == 0                     # nothing loaded from elsewhere
    assert html.count("Plotly.newPlot") == 8 and html.count("plotly.js v") == 1
    for section in ("Configuration and recipe", "Curves", "Attention", "Attention time-lapse",
                    "Gradient norms per layer", "Output entropy", "Metrics", "snapshot_every"):
        assert section in html
    assert '"method":"animate"' in html.replace(" ", "")


def test_report_of_a_shipped_model_notes_the_missing_time_lapse(unreplayed):
    html = build_report(open_subject("order-pe"))
    assert "has no attention snapshots" in html
    assert html.count('class="figure"') == 5    # curves, accuracy, one attention kind, gradients, entropy


def test_report_of_a_shipped_model_with_replayed_training_has_its_time_lapse():
    """pretrained/snapshots/reversal-fast: its recipe replayed to the same weights (explorer.interpret)."""
    subject = open_subject("reversal-fast")
    assert len(subject.snapshots) > 2
    html = build_report(subject)
    labels = [b.get("label") for f in report_figures(html) for m in f["layout"].get("updatemenus", [])
              for b in m["buttons"]]
    assert "has no attention snapshots" not in html and "▶ Play" in labels


def test_evaluated_steps_are_thinned_but_keep_the_last():
    h = pd.DataFrame({"step": range(1, 501), "loss": 1.0, "val_loss": [1.0 if i % 5 == 0 else np.nan
                                                                       for i in range(1, 501)]})
    rows = evaluated_steps(h)
    assert len(rows) <= MAX_METRIC_ROWS + 1 and rows["step"].iloc[-1] == 500 and rows["step"].iloc[0] == 5


@pytest.mark.parametrize("argv, message", [
    (["figure", "bogus", "--model", "reversal-fast"], "unknown figure kind 'bogus'; choose one of attention"),
    (["figure", "attention", "--model", "nope"], "no shipped model or saved run named 'nope'"),
    (["figure", "timelapse", "--model", "bare"], "'bare' has no attention snapshots"),
    (["figure", "attention", "--model", "reversal-fast", "--example", "x"], "--example 'x' must be a whole number"),
    (["figure", "attention", "--model", "reversal-fast", "--example", "500"], "out of range"),
    (["figure", "curves", "--model", "reversal-fast", "--out-suffix", ".gif"], "only the timelapse animates"),
    (["figure", "curves", "--model", "reversal-fast", "--out-suffix", ".txt"], "must end in .png or .svg or .gif"),
    (["report", "nope"], "no shipped model or saved run named 'nope'"),
    (["report", "reversal-fast", "--out-suffix", ".png"], "must end in .html or .htm"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    save_tiny_run("bare", snapshot_every=0)
    suffix = argv.pop(argv.index("--out-suffix") + 1) if "--out-suffix" in argv else None
    if suffix:
        argv.remove("--out-suffix")
    out = tmp_path / ("out" + (suffix or (".html" if argv[0] == "report" else ".png")))
    assert cli.main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()                                   # nothing half-written is left


@pytest.mark.parametrize("where, message", [("missing/dir/out.png", "cannot write"), ("folder.png", "is a folder")])
def test_an_unwritable_output_is_refused_before_any_work(where, message, tmp_path, capsys):
    (tmp_path / "folder.png").mkdir()
    assert cli.main(["figure", "attention", "--model", "reversal-fast", "--out", str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_report_command_writes_the_file(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert cli.main(["report", "copy", "--out", str(out), "--example", "3"]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "Validation example 3" in text
    assert str(out) in capsys.readouterr().out
