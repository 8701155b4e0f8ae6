"""The Train, Gradients and Runs pages under AppTest: a tiny run trains in the background, shows live,
stops and resumes through the buttons, and then appears on every page; refusals (budget, busy server)
and divergence show a message. Every job started here is stopped and joined in the `jobs` fixture
(a torch thread alive at interpreter exit aborts the process).

AppTest never fires `run_every` by itself: `poll_until` reruns the app until the job gets there.
"""

import io
import time
import zipfile

import numpy as np
import pandas as pd
import pytest
import torch

from explorer import checkpoints, runs, slots
from explorer.config import ModelConfig
from explorer.gradients import depth_profile, evenness
from explorer.jobs import TrainingJob
from explorer.model import build_model
from explorer.recipes import recommended
from explorer.tasks import make_task
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps
from tests.app.test_app import SHIPPED, array, assert_ok, figures, open_app
from ui import model_config, models, owner, saved_runs, session_jobs, state, train_settings, train_view, training_job

TRAIN, GRADIENTS, RUNS = "pages/train.py", "pages/gradients.py", "pages/runs.py"
ME = "a-visitors-own-token-0123456789"  # this AppTest's cookie, as a browser would send it
TINY = {"cfg_d_model": 16, "cfg_n_heads": 2, "cfg_d_ff": 32, "cfg_n_encoder_layers": 1, "cfg_n_decoder_layers": 1,
        train_settings.TRAIN_BATCH: 16, train_settings.TRAIN_WARMUP: 5}


def open_train(steps: int, **state):
    return open_app(TRAIN, state={**TINY, train_settings.TRAIN_STEPS: steps, **state})


def poll_until(at, done, timeout: float = 90.0):
    """Rerun the app (what the fragments' run_every does in a browser) until done() holds."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the job did not get there in time"
        time.sleep(0.2)
        at.run()
        assert_ok(at)
    at.run()
    assert_ok(at)
    return at


def chart(at, key: str) -> dict:
    return next(f for el, f in zip(at.get("plotly_chart"), figures(at)) if el.proto.id.endswith(key))


def trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


def job_of(at) -> TrainingJob:
    return at.session_state[training_job.JOB]


def click(at, key: str):
    at.button(key=key).click().run()
    assert_ok(at)
    return at


# ----------------------------------------------------------------------------------------- Train
def test_a_tiny_run_trains_shows_live_and_is_offered_everywhere(jobs):
    at = open_train(30)
    assert any("No run yet" in i.value for i in at.info)
    assert at.button(key="train_stop").disabled and at.button(key="train_use").disabled
    job = job_of(click(at, "train_start"))
    assert at.button(key="train_start").disabled  # one run at a time
    poll_until(at, lambda: job.ended)
    assert job.status == "finished" and job.progress().step == 30
    assert any("saved as run" in s.value for s in at.success)

    loss = chart(at, "train_loss_chart")
    assert len(array(trace(loss, "train loss")["y"])) == 30
    assert np.allclose(array(trace(loss, "train loss")["y"]), [r.loss for r in job.history()])
    grads = chart(at, "train_grad_chart")
    assert array(grads["data"][0]["z"]).shape == (2, 30)  # enc 0 and dec 0, every step

    # time-lapse: the chart's own slider holds every recorded snapshot of the head that learned best
    snaps = job.snapshots()
    expected = job.task.expected_cross_attention(job.task.example("val", 0)[0])
    layer, head = train_view.best_head(snaps[-1].pattern, expected)  # the default view: the head that learned best
    shown = chart(at, train_view.TRAIN_ATTENTION)
    assert f"L{layer} H{head} · step {snaps[-1].step}" in shown["layout"]["title"]["text"]  # named as on Attention
    assert np.allclose(array(shown["data"][0]["z"]), snaps[-1].pattern[layer, head], atol=1e-6)
    slider = shown["layout"]["sliders"][0]
    assert slider["active"] == len(snaps) - 1 and [s["label"] for s in slider["steps"]] == [str(s.step) for s in snaps]
    for step, snap in zip(slider["steps"], snaps):
        data, title, _ = step["args"]
        assert title["title.text"].endswith(f"step {snap.step}")
        assert np.allclose(array(data["z"][0]), snap.pattern[layer, head], atol=1e-4)

    name = job.run_name
    click(at, "train_use")
    assert at.sidebar.radio(key=models.SOURCE).value == "run" and at.sidebar.selectbox(key=models.RUN).value == name
    assert at.button(key="train_use").disabled and "In use" in at.button(key="train_use").label
    sel = at.session_state[models.SELECTED]
    assert sel.model is not job.model  # a copy: Resume trains the job's own model in place
    assert all(torch.equal(a, b) for a, b in zip(sel.model.state_dict().values(), job.model.state_dict().values()))

    at.switch_page(RUNS).run()
    assert_ok(at)
    table = at.dataframe[0].value
    assert list(table["Run"]) == [name] and table["Steps"].iloc[0] == 30
    assert table["Saved"].iloc[0] == "disk + session"
    at.switch_page(GRADIENTS).run()
    assert_ok(at)
    assert at.selectbox(key=state.GRAD_RUN_A).value == f"run:{name}"
    assert array(chart(at, state.GRAD_RUN_A)["data"][0]["z"]).shape == (2, 30)


def test_stop_keeps_the_weights_and_resume_continues_from_there(jobs):
    at = open_train(20_000)
    job = job_of(click(at, "train_start"))
    poll_until(at, lambda: job.progress().step >= 3)
    click(at, "train_stop")
    poll_until(at, lambda: job.ended)
    stopped_at = job.progress().step
    assert job.status == "stopped" and 3 <= stopped_at < 20_000
    assert any("Resume" in i.value for i in at.info)
    assert at.button(key="train_stop").disabled and not at.button(key="train_resume").disabled
    weights = [p.detach().clone() for p in job.model.parameters()]
    first_name = job.run_name
    assert first_name in at.session_state[models.SESSION_RUNS]  # a stopped run is offered too

    click(at, "train_resume")
    assert job_of(at) is job  # the same job, not a fresh one
    poll_until(at, lambda: job.progress().step >= stopped_at + 3)
    click(at, "train_stop")
    poll_until(at, lambda: job.ended)
    steps = [r.step for r in job.history()]
    assert steps == list(range(1, len(steps) + 1))  # one history, continued, never restarted
    assert len(steps) > stopped_at
    assert not all(torch.equal(w, p) for w, p in zip(weights, job.model.parameters()))
    # the second save replaced the first in the sidebar's list
    session_runs = at.session_state[models.SESSION_RUNS]
    assert job.run_name in session_runs and first_name not in session_runs
    # ...and on disk, where the second save is this visitor's too
    assert [(r.name, r.owner) for r in runs.list_runs()] == [(job.run_name, owner.id_of(at.session_state[owner.TOKEN]))]


def test_switching_pages_keeps_training_and_the_sidebar_shows_it(jobs):
    at = open_train(20_000)
    job = job_of(click(at, "train_start"))
    at.switch_page("pages/home.py").run()
    assert_ok(at)
    poll_until(at, lambda: job.progress().step >= 2)
    assert job.status == "running"
    assert any("Training" in (p.proto.text or "") for p in at.sidebar.get("progress"))
    assert any(job.name in c.value for c in at.sidebar.caption)
    at.switch_page(TRAIN).run()
    assert_ok(at)
    assert job_of(at) is job and not job.ended
    click(at, "train_stop")
    poll_until(at, lambda: job.ended)


def test_a_run_too_big_for_the_machine_is_refused_with_a_message(jobs):
    at = open_train(100_000, cfg_d_model=512, cfg_n_heads=8, cfg_d_ff=2048, cfg_n_encoder_layers=6,
                    cfg_n_decoder_layers=6, **{train_settings.TRAIN_BATCH: 1024})
    assert any("Too big for this machine" in e.value for e in at.error)
    assert at.button(key="train_start").disabled
    assert not jobs


def test_a_busy_server_queues_the_run_visibly_or_says_try_again(jobs, monkeypatch):
    monkeypatch.setattr(slots, "MAX_CONCURRENT_JOBS", 1)
    task = make_task("reversal-fast")
    blocker = TrainingJob(build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, d_ff=32)), seed=0), task,
                          TrainConfig(steps=100_000, batch_size=4, eval_every=0))
    blocker.start()
    at = open_train(20_000)
    job = job_of(click(at, "train_start"))
    assert job.status == "queued"
    assert any("position 1 in the queue" in i.value for i in at.info)
    at.switch_page("pages/home.py").run()
    assert any("position 1" in m.value for m in at.sidebar.markdown)

    monkeypatch.setattr(training_job, "MAX_WAITING", 1)  # one waiting already: the next is told to retry
    other = open_train(50)
    click(other, "train_start")
    assert any("busy" in e.value and "Try again" in e.value for e in other.error)
    assert training_job.JOB not in other.session_state

    blocker.stop()
    poll_until(at, lambda: job.status != "queued")
    job.stop()


def test_divergence_stops_with_a_message_and_keeps_the_last_good_weights(jobs):
    task = make_task("reversal-fast")
    model = build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, d_ff=32)), seed=0)
    with torch.no_grad():
        model.output_proj.bias.fill_(float("nan"))  # every logit NaN: the first loss is not finite
    job = TrainingJob(model, task, TrainConfig(steps=10, batch_size=4, eval_every=0))
    at = open_train(10, **{training_job.JOB: job})
    job.start()
    poll_until(at, lambda: job.ended)
    assert job.status == "diverged"
    assert any("diverged" in e.value and "learning rate" in e.value for e in at.error)
    assert at.button(key="train_resume").disabled


def test_training_settings_come_from_a_shared_link():
    at = open_app(query={"train_steps": "120", "train_lr": "0.01", "train_schedule": "constant",
                         "train_threads": "2", "cfg_norm": "Post-LN"})
    at.switch_page(TRAIN).run()
    assert_ok(at)
    assert at.number_input(key=train_settings.TRAIN_STEPS).value == 120
    assert at.number_input(key=train_settings.TRAIN_LR).value == pytest.approx(0.01)
    assert at.selectbox(key=train_settings.TRAIN_SCHEDULE).value == "constant"
    assert at.radio(key=train_settings.TRAIN_THREADS).value == 2 and at.radio(key="cfg_norm").value == "post"
    values = {field: at.session_state[key] for field, key in train_settings.SETTINGS.items()}
    cfg, err = train_settings.train_config(values)
    assert err is None and cfg.steps == 120 and cfg.schedule == "constant" and cfg.threads == 2


@pytest.mark.parametrize("preset", ["sort", "reversal-seed"])
def test_the_recommended_recipe_button_loads_the_tasks_model_and_settings(preset):
    at = open_app(query={"cfg_task": preset, "cfg_norm": "Post-LN", "train_lr": "0.05"})
    at.switch_page(TRAIN).run()
    at.button(key="train_recipe").click().run()
    assert_ok(at)
    overrides, train = recommended(preset)
    cfg = ModelConfig(**{f: at.session_state[f"cfg_{f}"] for f in model_config.CONFIG_FIELDS})
    assert all(getattr(cfg, f) == v for f, v in overrides.items()) and cfg.norm == "pre"  # the rest: defaults
    values = {field: at.session_state[key] for field, key in train_settings.SETTINGS.items()}
    shown, err = train_settings.train_config(values)
    assert err is None
    assert (shown.steps, shown.lr, shown.warmup, shown.batch_size) == (train.steps, train.lr, train.warmup,
                                                                      train.batch_size)
    assert not at.error


def test_best_head_is_the_one_on_the_expected_cells_else_the_most_focused():
    pattern = np.full((2, 3, 4, 4), 0.25)                                 # (L, H, Q, K), uniform
    pattern[1, 2] = np.eye(4)[::-1]                                       # layer 1, head 2: anti-diagonal
    pattern[0, 1] = np.eye(4)                                             # layer 0, head 1: diagonal
    assert train_view.best_head(pattern, np.eye(4)[::-1]) == (1, 2)
    assert train_view.best_head(pattern, np.eye(4)) == (0, 1)
    assert train_view.best_head(pattern, None) == (0, 1)                          # first of the two sharpest


def test_closing_the_tab_stops_its_jobs(jobs):
    """What the session-scoped resource's on_release does when the session disconnects."""
    task = make_task("copy")
    job = TrainingJob(build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, d_ff=32)), seed=0), task,
                      TrainConfig(steps=100_000, batch_size=4, eval_every=0))
    holder = session_jobs.SessionJobs()
    holder.add(job)
    job.start()
    session_jobs.release(holder)
    assert job.join(timeout=60) and job.status == "stopped"


# ------------------------------------------------------------------------------------ Gradients
def test_gradients_at_initialisation_shows_both_variants():
    at = open_app(GRADIENTS)
    fig = chart(at, "grad_profile_chart")
    assert [t["name"] for t in fig["data"]] == ["Pre-LN", "Post-LN"]
    for t, norm in zip(fig["data"], ("pre", "post")):
        assert np.allclose(array(t["y"]), depth_profile(norm, n_layers=12, d_model=64, seed=0).weight_grad)
    assert any("chapter predicts" in m.value for m in at.markdown)
    at.slider(key=state.GRAD_LAYERS).set_value(4).run()
    at.radio(key=state.GRAD_WHAT).set_value("inputs").run()
    assert_ok(at)
    fig = chart(at, "grad_profile_chart")
    assert np.allclose(array(fig["data"][1]["y"]), depth_profile("post", n_layers=4, d_model=64, seed=0).input_grad)
    assert any("p.grad.norm()" in m.value for m in at.markdown)  # why the input measure differs


def test_the_gradients_verdict_is_taken_over_seeds_and_says_when_it_cannot_tell():
    at = open_app(GRADIENTS)  # the chapter's exercise: 12 layers, each layer's weights
    said = next(m.value for m in at.markdown if "Over 8 seeds" in m.value)
    e = evenness("weights", 12, 64, seeds=range(8))
    assert f"Pre-LN ×{e.pre:.2f}, Post-LN ×{e.post:.2f}" in said
    assert ("Inconclusive" in said) == (e.holds is None) and "Welch's t" in said
    at.slider(key=state.GRAD_LAYERS).set_value(48).run()  # deep stacks: where the chapter says it shows
    said = next(m.value for m in at.markdown if "Over 8 seeds" in m.value)
    assert evenness("weights", 48, 64, seeds=range(8)).holds and "As the chapter predicts" in said


def saved_run(name: str, norm: str, steps: int = 8, owner_token: str | None = None) -> str:
    task = make_task("copy")
    cfg = task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32,
                                        norm=norm))
    model, train_cfg = build_model(cfg, seed=0), TrainConfig(steps=steps, batch_size=4, eval_every=4, eval_examples=8)
    state = new_state(model, task, train_cfg)
    list(train_steps(model, task, train_cfg, state))
    return runs.save_run(name, model, task.cfg, train_cfg, state.history, state=state,
                         owner=owner.id_of(owner_token) if owner_token else None).name


def test_gradients_over_training_compares_two_runs_on_one_colour_scale():
    pre, post = saved_run("copy-preLN-d16-seed0", "pre"), saved_run("copy-postLN-d16-seed0", "post")
    at = open_app(GRADIENTS)
    assert at.selectbox(key=state.GRAD_RUN_A).value == f"run:{pre}"
    assert at.selectbox(key=state.GRAD_RUN_B).value == f"run:{post}"  # a comparable pair: only the norm differs
    a, b = chart(at, state.GRAD_RUN_A), chart(at, state.GRAD_RUN_B)
    assert array(a["data"][0]["z"]).shape == (2, 8)
    assert (a["data"][0]["zmin"], a["data"][0]["zmax"]) == (b["data"][0]["zmin"], b["data"][0]["zmax"])
    assert {t["name"] for t in chart(at, "grad_total_chart")["data"]} == {f"{pre} · grad_norm", f"{post} · grad_norm"}


def test_a_run_stopped_by_a_reload_resumes_from_disk_in_a_new_tab(jobs):
    first = open_train(400)
    click(first, "train_start")
    job = job_of(first)
    poll_until(first, lambda: job.progress().step >= 5)
    job.stop(wait=True)  # what closing the tab (a reload) does after its grace
    poll_until(first, lambda: job.ended and job.run_name is not None)
    stopped_at, name = job.state.step, job.run_name
    again = open_train(50)  # the reloaded tab: a new session, no job of its own
    assert any("No run yet in this tab" in i.value for i in again.info) and training_job.JOB not in again.session_state
    assert again.selectbox(key="train_saved_run").value == name
    click(again, "train_resume_saved")
    resumed = job_of(again)
    rows = lambda records: [r.to_row() for r in records[:stopped_at]]  # noqa: E731 (attention snapshots stay behind)
    assert resumed is not job and rows(resumed.history()) == rows(job.history())
    poll_until(again, lambda: resumed.progress().step >= stopped_at + 3)
    resumed.stop(wait=True)
    poll_until(again, lambda: resumed.ended and resumed.run_name is not None)
    assert resumed.run_name != name and {name, resumed.run_name} <= {r.name for r in runs.list_runs()}


# ------------------------------------------------------------------------------------------ Runs
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


def test_thin_keeps_every_evaluation_and_the_last_step_of_a_long_history():
    n = 1000
    hist = pd.DataFrame({"step": np.arange(1, n + 1), "loss": np.linspace(3, 0, n),
                         "val_loss": [1.0 if s % 37 == 0 else np.nan for s in range(1, n + 1)]})
    shown = train_view.thin(hist, max_rows=100)
    assert len(shown) < 200
    assert shown["step"].iloc[-1] == n
    assert set(hist.dropna()["step"]) <= set(shown["step"])
    assert train_view.thin(hist.iloc[:50], max_rows=100).equals(hist.iloc[:50])


def test_gradients_over_training_offers_the_shipped_pre_and_post_ln_pair(monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)
    at = open_app(GRADIENTS)
    assert at.selectbox(key=state.GRAD_RUN_A).value == "pretrained:reversal-fast"
    assert at.selectbox(key=state.GRAD_RUN_B).value == "pretrained:reversal-fast-postln"
    a, b = chart(at, state.GRAD_RUN_A), chart(at, state.GRAD_RUN_B)
    steps = checkpoints.pretrained_history("reversal-fast")["step"].max()
    assert array(a["data"][0]["z"]).shape[1] == min(steps, 300)
    assert a["layout"]["title"]["text"].startswith("reversal-fast")
    assert (a["data"][0]["zmin"], a["data"][0]["zmax"]) == (b["data"][0]["zmin"], b["data"][0]["zmax"])


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
