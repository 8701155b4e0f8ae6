"""The Experiments page under AppTest: every experiment renders by default, a tiny one runs from the Run
button in the background and shows its figures and table, a cached result shows at once, Stop ends a run,
and a bad parameter shows an error element. Every job is stopped and joined in the `jobs` fixture (a torch
thread alive at interpreter exit aborts the process). AppTest never fires `run_every`: `poll_until` reruns.
"""

import dataclasses
import json
import time

import pytest

from explorer.experiments import EXPERIMENTS, SerialExecutor, run_cached
from explorer.jobs.experiment import ExperimentJob
from tests.app.helpers import assert_ok, open_app
from tests.app.training_helpers import poll_until
from ui import experiment_job, experiment_params, owner, session_jobs

PAGE = "pages/experiments.py"
SAME_BROWSER = "the-same-browser-token-0123456789"


def open_experiment(name: str, budget: str = "full", token: str | None = None):
    """The page on experiment `name`; `token` is the browser's owner cookie (None: a visitor of its own)."""
    at = open_app(PAGE, state={owner.TOKEN: token} if token else None)
    at.segmented_control(key=experiment_params.EXP_NAME).set_value(name).run()
    at.segmented_control(key=experiment_params.EXP_BUDGET).set_value(budget).run()
    assert_ok(at)
    return at


def charts(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def shown_table(at):
    frames = [t.value for t in at.table]
    return next(f for f in frames if "measured (mean ± std over seeds)" in f.columns)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_experiment_renders_by_default(name):
    at = open_experiment(name)
    exp = EXPERIMENTS[name]
    assert at.subheader[0].value == exp.title
    assert any(exp.question in m.value for m in at.markdown)
    assert any(exp.prediction in m.value for m in at.markdown)
    assert any("No result yet" in i.value for i in at.info) and not at.error
    assert not at.button(key="exp_run").disabled and at.button(key="exp_stop").disabled
    assert any(f"python -m explorer experiment {name}" in c.value for c in at.caption)


def test_a_tiny_experiment_runs_from_the_button_and_shows_figures_and_table(jobs):
    at = open_experiment("decoding", "quick")
    at.button(key="exp_run").click().run()
    assert_ok(at)
    job = at.session_state[experiment_job.EXP_JOB]
    assert at.button(key="exp_run").disabled and not at.button(key="exp_stop").disabled
    poll_until(at, lambda: job.ended)
    assert job.status == "finished", job.message
    assert len(charts(at)) == len(job.result.figures) >= 1
    table = shown_table(at)
    assert list(table["condition"]) == list(job.result.table["condition"])
    assert all("±" in cell for cell in table["measured (mean ± std over seeds)"])
    verdicts = [*at.success, *at.warning, *at.info]
    assert any(job.result.verdict in v.value for v in verdicts)
    assert any("Computed just now" in c.value for c in at.caption)
    assert at.button(key="exp_run").label == "Run again"  # it is cached now


def test_a_quick_preview_never_decides_and_shows_why(jobs):
    at = open_experiment("label-smoothing", "quick")
    assert any("A preview, not a test" in c.value for c in at.caption)
    at.button(key="exp_run").click().run()
    job = at.session_state[experiment_job.EXP_JOB]
    poll_until(at, lambda: job.ended)
    assert job.status == "finished", job.message
    assert job.result.holds is None and not at.success and not at.warning  # no "as predicted" on one seed
    assert any("inconclusive" in i.value.lower() for i in at.info)
    evidence = next(t.value for t in at.table if "outcome" in t.value.columns)
    assert all(o.startswith("inconclusive: too few seeds") for o in evidence["outcome"])
    assert set(evidence["seeds"]) == {"1 / 1"}  # one seed in each condition


def test_an_experiment_over_the_work_cap_is_refused_naming_the_limit():
    at = open_experiment("label-smoothing")
    key = next(w.key for w in at.text_input if w.key.endswith("_epsilons"))
    at.text_input(key=key).set_value(", ".join(["0.0, 0.1"] * 100)).run()
    assert_ok(at)
    assert at.button(key="exp_run").disabled
    assert any("MAX_WORK" in e.value for e in at.error)


def test_a_cached_result_shows_at_once_with_the_cells_that_could_not_run():
    exp = EXPERIMENTS["sweep"]
    params = dataclasses.replace(exp.tiny, y_values=(1, 3))  # 3 heads divide neither d_model 16 nor 32
    result = run_cached("sweep", params, executor=SerialExecutor())  # an earlier visitor's (or the CLI's) run
    at = open_experiment("sweep", "quick")
    at.text_input(key=f"{experiment_params.EXP_PARAM}_sweep_quick_y_values_n_heads").set_value("1, 3").run()
    assert_ok(at)
    assert experiment_job.EXP_JOB not in at.session_state  # nothing ran for this visitor
    assert any("Cached result" in c.value for c in at.caption)
    assert len(charts(at)) == len(result.figures) == 2
    assert at.button(key="exp_run").label == "Run again"
    table = shown_table(at)
    assert len(table) == len(result.table) == 4
    assert list(table["measured (mean ± std over seeds)"]).count("—") == 2  # the two n_heads=3 cells
    failed = at.main.expander[-1]
    assert "2 cell(s) could not run" in failed.label
    assert all("divisible" in e for e in failed.table[0].value["error"])


def test_stop_ends_the_run_and_says_what_is_left(jobs):
    at = open_experiment("pe-order")
    at.button(key="exp_run").click().run()
    job = at.session_state[experiment_job.EXP_JOB]
    at.button(key="exp_stop").click().run()
    poll_until(at, lambda: job.ended)
    assert job.status == "stopped"
    assert any("nothing to show" in i.value or "partial" in i.value for i in [*at.info, *at.warning,
                                                                             *at.success])
    assert not at.button(key="exp_run").disabled


def test_a_running_experiment_shows_in_the_sidebar_of_other_pages(jobs):
    at = open_experiment("pe-order")
    at.button(key="exp_run").click().run()
    job = at.session_state[experiment_job.EXP_JOB]
    at.switch_page("pages/home.py").run()
    assert_ok(at)
    sidebar = [*at.sidebar.caption, *at.sidebar.markdown]
    assert any(EXPERIMENTS["pe-order"].title in c.value for c in sidebar)
    job.stop()
    poll_until(at, lambda: job.ended)
    assert not any(EXPERIMENTS["pe-order"].title in c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("name, field, value, says", [
    ("pe-order", "seeds", 0, "seeds=0"),
    ("heads", "heads", "4, x", "heads="),
    ("pe-order", "steps", 100_000, "at most 3000"),
])
def test_a_bad_parameter_shows_an_error_not_an_exception(name, field, value, says):
    at = open_experiment(name)
    widget = next(w for w in [*at.number_input, *at.text_input] if w.label == field)
    widget.set_value(value).run()
    assert_ok(at)
    assert any(says in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="exp_run").disabled


def test_a_sweep_axis_brings_its_own_example_values():
    at = open_experiment("sweep")
    at.selectbox(key=f"{experiment_params.EXP_PARAM}_sweep_full_x_axis").set_value("norm").run()
    assert_ok(at)
    values = next(w for w in at.text_input if w.label == "norm values (x)")
    assert values.value == "pre, post" and not at.error


def test_an_experiment_no_tab_polls_stops_after_the_grace(jobs, owned, tmp_path):
    job = ExperimentJob("pe-order", cache_dir=tmp_path)
    owned.register("an-owner", session_jobs.EXPERIMENT, job)   # what Run does (ui.experiment_job.on_run)
    job.start()
    assert owned.sweep(now=time.monotonic() + owned.grace_s / 2) == [] and not job.ended
    assert owned.sweep(now=time.monotonic() + owned.grace_s + 1) == [job]   # no tab of its owner polled it
    assert job.join(60) and job.status == "stopped"


def test_a_reloaded_tab_shows_the_running_experiment_and_stops_it_another_visitor_does_not(jobs):
    first = open_experiment("pe-order", token=SAME_BROWSER)
    first.button(key="exp_run").click().run()
    job = first.session_state[experiment_job.EXP_JOB]
    again = open_experiment("pe-order", token=SAME_BROWSER)   # the same browser, reloaded
    assert again.session_state[experiment_job.EXP_JOB] is job and not again.button(key="exp_stop").disabled
    stranger = open_experiment("pe-order")
    assert experiment_job.EXP_JOB not in stranger.session_state and stranger.button(key="exp_stop").disabled
    again.button(key="exp_stop").click().run()
    poll_until(again, lambda: job.ended)
    assert job.status == "stopped"


def test_an_experiment_runs_on_uploaded_pairs_and_a_bad_file_is_refused(jobs):
    from tests.unit.helpers import number_words

    at = open_experiment("decoding", "quick")
    key = f"{experiment_params.EXP_PARAM}_decoding_quick_data"
    bad = number_words(40) + "one two\n"
    at.file_uploader(key=key).set_value(("bad.tsv", bad.encode(), "text/tab-separated-values")).run()
    assert any("line 41: no tab" in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="exp_run").disabled
    pairs = number_words(60)
    at.file_uploader(key=key).set_value(("digits.tsv", pairs.encode(), "text/tab-separated-values")).run()
    assert_ok(at)
    assert any("Runs on `digits.tsv`: 60 pairs" in s.value for s in at.success), [s.value for s in at.success]
    assert any("python -m explorer experiment decoding --tiny --data digits.tsv" in c.value for c in at.caption)
    assert any("On **digits.tsv**: the question is asked of your pairs" in c.value for c in at.caption)
    assert not any(w.label == "task" for w in at.selectbox)   # the file is the task
    at.button(key="exp_run").click().run()
    job = at.session_state[experiment_job.EXP_JOB]
    assert job.params.task == "pairs" and job.params.data == pairs
    poll_until(at, lambda: job.ended)
    assert job.status == "finished", job.message
    assert_ok(at)
    assert "digits.tsv" not in str(at.query_params) and pairs not in str(at.query_params)
