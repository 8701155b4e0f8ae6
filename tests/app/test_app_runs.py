"""The Runs page under AppTest: compare runs, delete one's own after asking, download a run's folder,
resume a saved run on the Train page."""

import io
import zipfile

import pandas as pd

from explorer.store import runs
from tests.app.helpers import assert_ok, open_app
from tests.app.training_helpers import ME, RUNS, chart, click, job_of, poll_until, saved_run
from ui import owner, saved_runs, state


def test_runs_compare_highlights_config_differences_and_exports():
    pre, post = saved_run("copy-preLN-d16-seed0", "pre"), saved_run("copy-postLN-d16-seed0", "post", steps=12)
    at = open_app(RUNS)
    table = at.dataframe[0].value
    assert set(table["Run"]) == {pre, post}
    at.session_state[state.RUNS_TABLE] = {"selection": {"rows": [0, 1], "columns": [], "cells": []}}
    at.run()
    assert_ok(at)
    curves = chart(at, "runs_curves_chart")
    assert {t["name"] for t in curves["data"]} == {f"{run} · {m}" for run in (pre, post)
                                                   for m in ("train loss", "validation loss")}
    diff = at.dataframe[1].value
    assert {"model.norm", "train.steps"} <= set(diff.index) and "model.d_model" not in diff.index
    assert at.get("download_button")


def test_deleting_a_run_asks_first():
    keep, gone = saved_run("copy-preLN-d16-seed0", "pre", owner_token=ME), saved_run("copy-postLN-d16-seed0", "post",
                                                                                    owner_token=ME)
    at = open_app(RUNS, state={owner.TOKEN: ME})
    at.selectbox(key=state.RUNS_EXPORT).set_value(at.selectbox(key=state.RUNS_EXPORT).options[0]).run()
    at.session_state[state.RUNS_TABLE] = {"selection": {"rows": [0, 1], "columns": [], "cells": []}}
    at.run()
    at.selectbox(key=state.RUNS_EXPORT).set_value(gone).run()
    click(at, "runs_delete")
    assert any(gone in w.value for w in at.warning)
    click(at, "runs_delete_no")
    assert not at.warning and (runs.runs_dir() / gone).is_dir()
    click(at, "runs_delete")
    click(at, "runs_delete_yes")
    assert not (runs.runs_dir() / gone).exists() and (runs.runs_dir() / keep).is_dir()
    assert list(at.dataframe[0].value["Run"]) == [keep]


def test_the_checkpoint_download_is_the_run_folder_zipped():
    name = saved_run("copy-preLN-d16-seed0", "pre")
    data = saved_runs.run_archive(runs.runs_dir() / name)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == [f"{name}/{f}" for f in ("meta.json", "metrics.csv", "model.safetensors",
                                                                       "resume.json", "resume.safetensors")]
        metrics = pd.read_csv(archive.open(f"{name}/metrics.csv"))
    assert list(metrics["step"]) == list(range(1, 9))


def test_the_runs_page_resumes_a_saved_run_on_the_train_page(jobs):
    name = saved_run("copy-preLN-d16-seed0", "pre", steps=8)
    at = open_app(RUNS)
    assert not at.button(key="runs_resume").disabled
    at.button(key="runs_resume").click().run()
    job = job_of(at)
    saved = runs.load_run(name)[2]
    assert [r.loss for r in job.history()[:8]] == list(saved["loss"])  # it continues that run
    poll_until(at, lambda: job.ended)
    assert job.run_name != name and job.progress().step > 8  # a finished run trains the Train page's steps more
