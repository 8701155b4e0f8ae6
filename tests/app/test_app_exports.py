"""The app's downloads: PNG and SVG under every chart at presentation size, the modebar camera at the
same size, and the run report on Runs and Train, made only when clicked."""

import json

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from explorer.config import ModelConfig
from explorer.export import browser
from explorer.export.images import PNG_SCALE, WIDTH
from explorer.jobs.training import TrainingJob
from explorer.model import build_model
from explorer.store.subject import from_job
from explorer.tasks import make_task
from explorer.train_config import TrainConfig
from tests.app.helpers import assert_ok, open_app
from tests.export_run import SNAPSHOT_STEPS, save_tiny_run

RUNS, TRAIN = "pages/runs.py", "pages/train.py"


@pytest.fixture
def deferred(monkeypatch):
    """file id -> (file name, the callable a deferred download button registered: run only when asked for)."""
    made, calls = {}, []
    real = MediaFileManager.add_deferred

    def spy(self, data_callable, *args, **kwargs):
        file_id = real(self, data_callable, *args, **kwargs)

        def counted():
            calls.append(file_id)
            return data_callable()
        made[file_id] = (kwargs.get("file_name") or (args[2] if len(args) > 2 else None), counted)
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    made["calls"] = calls
    return made


def _button(at, label: str):
    return next(b for b in at.get("download_button") if b.proto.label == label)


def test_every_chart_has_png_and_svg_at_presentation_size_and_nothing_is_rendered_on_a_rerun(deferred):
    browser.stop()
    save_tiny_run("demo-run")
    at = open_app(RUNS)
    charts = at.get("plotly_chart")
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("PNG") == labels.count("SVG") == len(charts) >= 2
    for el in charts:
        spec, config = json.loads(el.proto.spec), json.loads(el.proto.config)
        camera = config["toImageButtonOptions"]
        assert (camera["format"], camera["width"], camera["scale"]) == ("png", WIDTH, PNG_SCALE)
        assert camera["height"] == spec["layout"]["height"]
    png, svg = _button(at, "PNG"), _button(at, "SVG")
    assert deferred[png.proto.deferred_file_id][0] == "training-curves.png"
    assert deferred[svg.proto.deferred_file_id][0] == "training-curves.svg"
    assert deferred["calls"] == []                                  # no kaleido, no report on any rerun
    at.run()
    assert browser.pid() is None                              # an idle app starts no browser


def test_the_first_png_click_starts_the_browser_and_the_next_clicks_reuse_it(deferred):
    browser.stop()
    save_tiny_run("demo-run")
    at = open_app(RUNS)
    png, svg = _button(at, "PNG"), _button(at, "SVG")
    try:
        first = deferred[png.proto.deferred_file_id][1]()
        pid = browser.pid()
        assert pid is not None and first[:8] == b"\x89PNG\r\n\x1a\n"
        assert deferred[svg.proto.deferred_file_id][1]()[:4] == b"<svg"
        assert deferred[png.proto.deferred_file_id][1]() == first and browser.pid() == pid
    finally:
        browser.stop()


def test_runs_report_button_downloads_the_saved_runs_report(deferred):
    save_tiny_run("demo-run")
    at = open_app(RUNS)
    report = _button(at, "Report (HTML)")
    name, make = deferred[report.proto.deferred_file_id]
    assert not report.proto.disabled and name == "demo-run-report.html"
    html = make()
    assert html.startswith("<!DOCTYPE html>") and "<h1>demo-run</h1>" in html
    assert html.count('class="figure"') == 8 and f"step {SNAPSHOT_STEPS[-1]}" in html   # with its time-lapse


def test_train_report_waits_for_a_run_and_the_presenter_view_has_no_image_buttons():
    at = open_app(TRAIN)
    assert _button(at, "Report (HTML)").proto.disabled               # no run in this tab yet
    present = open_app("pages/runs.py", query={"present": "1"})
    assert_ok(present)
    assert not [b for b in present.get("download_button") if b.proto.label in ("PNG", "SVG")]


def test_a_finished_jobs_report_has_its_recipe_curves_and_snapshots():
    task = make_task("copy")
    model = build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                                      d_ff=32)), seed=0)
    job = TrainingJob(model, task, TrainConfig(steps=12, batch_size=8, eval_every=4, eval_examples=8,
                                               snapshot_every=4), name="job-report")
    job.start()
    try:
        assert job.join(timeout=120)
        s = from_job(job)
    finally:
        job.close(timeout=60)
    assert s.source == "session" and s.train["snapshot_every"] == 4 and s.final["step"] == 12
    assert [snap.step for snap in s.snapshots] == [4, 8, 12] and len(s.history) == 12


def test_a_chart_with_a_slider_also_downloads_as_a_gif_of_its_steps(deferred):
    import io

    from PIL import Image

    browser.stop()
    at = open_app("pages/attention.py")
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    sliding = [s for s in specs if len((s["layout"].get("sliders") or [{}])[0].get("steps", [])) > 1]
    gifs = [b for b in at.get("download_button") if b.proto.label == "GIF"]
    assert len(gifs) == len(sliding) >= 1 and deferred["calls"] == []    # only slider charts, made on click
    try:
        data = deferred[gifs[0].proto.deferred_file_id][1]()
    finally:
        browser.stop()
    gif = Image.open(io.BytesIO(data))
    assert data[:6] == b"GIF89a" and gif.n_frames == len(sliding[0]["layout"]["sliders"][0]["steps"])
