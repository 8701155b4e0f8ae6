"""The Train page under AppTest: a tiny run trains in the background, shows live, stops and resumes
through the buttons (and from disk after a reload), and is then offered on every page; refusals
(budget, busy server) and divergence show a message; settings come from a shared link or a recipe."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from explorer.config import ModelConfig
from explorer.jobs import budget, slots
from explorer.jobs.training import TrainingJob
from explorer.model import build_model
from explorer.store import runs
from explorer.tasks import make_task
from explorer.tasks.recipes import recommended
from explorer.train_config import TrainConfig
from tests.app.helpers import array, assert_ok, open_app
from tests.app.training_helpers import GRADIENTS, RUNS, TRAIN, chart, click, job_of, open_train, poll_until, trace
from ui import model_config, models, owner, state, train_settings, train_view, training_job


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


def test_a_run_that_ends_between_the_buttons_and_the_live_view_still_enables_resume(jobs, monkeypatch):
    """The job stops after the page drew its buttons (for a running job) and before its live view: the
    live view reruns the page, so Resume is offered, not left disabled until the visitor reloads."""
    at = open_train(20_000)
    job = job_of(click(at, "train_start"))
    poll_until(at, lambda: job.progress().step >= 2)
    poll = training_job.poll

    def stop_first(job, *args, **kwargs):
        job.stop(wait=True)  # as the worker does between one read of the status and the next
        return poll(job, *args, **kwargs)

    monkeypatch.setattr(training_job, "poll", stop_first)
    at.run()
    assert_ok(at)
    assert job.status == "stopped"
    assert not at.button(key="train_resume").disabled and at.button(key="train_stop").disabled


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


def test_a_stopped_run_resumes_from_disk_in_another_visitors_tab(jobs):
    first = open_train(400)
    click(first, "train_start")
    job = job_of(first)
    poll_until(first, lambda: job.progress().step >= 5)
    job.stop(wait=True)  # what the grace does once no tab of the owner polls the run (test_app_reattach.py)
    poll_until(first, lambda: job.ended and job.run_name is not None)
    stopped_at, name = job.state.step, job.run_name
    again = open_train(50)  # another browser: a new session, no job of its own
    assert any("No run yet in this browser" in i.value for i in again.info)
    assert training_job.JOB not in again.session_state
    assert again.selectbox(key="train_saved_run").value == name
    click(again, "train_resume_saved")
    resumed = job_of(again)
    rows = lambda records: [r.to_row() for r in records[:stopped_at]]  # noqa: E731 (attention snapshots stay behind)
    assert resumed is not job and rows(resumed.history()) == rows(job.history())
    poll_until(again, lambda: resumed.progress().step >= stopped_at + 3)
    resumed.stop(wait=True)
    poll_until(again, lambda: resumed.ended and resumed.run_name is not None)
    assert resumed.run_name != name and {name, resumed.run_name} <= {r.name for r in runs.list_runs()}


def test_a_run_too_big_for_the_machine_is_refused_with_a_message(jobs):
    at = open_train(100_000, cfg_d_model=512, cfg_n_heads=8, cfg_d_ff=2048, cfg_n_encoder_layers=6,
                    cfg_n_decoder_layers=6, **{train_settings.TRAIN_BATCH: 1024})
    assert any("Too big for this machine" in e.value for e in at.error)
    assert at.button(key="train_start").disabled
    assert not jobs


def test_a_busy_server_queues_the_run_visibly_or_says_try_again(jobs, monkeypatch):
    monkeypatch.setattr(slots, "MAX_CONCURRENT_JOBS", 1)
    monkeypatch.setattr(budget, "MAX_RUN_SECONDS", math.inf)   # a blocker of hours, checked like any: let it start
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


@pytest.mark.parametrize("preset", ["sort", "reversal-seed", "modular-add", "induction"])
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


def test_thin_keeps_every_evaluation_and_the_last_step_of_a_long_history():
    n = 1000
    hist = pd.DataFrame({"step": np.arange(1, n + 1), "loss": np.linspace(3, 0, n),
                         "val_loss": [1.0 if s % 37 == 0 else np.nan for s in range(1, n + 1)]})
    shown = train_view.thin(hist, max_rows=100)
    assert len(shown) < 200
    assert shown["step"].iloc[-1] == n
    assert set(hist.dropna()["step"]) <= set(shown["step"])
    assert train_view.thin(hist.iloc[:50], max_rows=100).equals(hist.iloc[:50])
