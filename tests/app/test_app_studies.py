"""The Studies page under AppTest: a study the library ran (as the CLI runs it) is listed and opens with
every plot, log axes for its log-scaled lr; a selected trial offers its run; two studies compare side by
side; a two-objective study draws its Pareto front; a study that is not this visitor's cannot be deleted,
one that is can; with no study the page says how to make one."""

from __future__ import annotations

import pytest

from explorer.search.driver import run_search
from explorer.search.executors import SerialExecutor
from explorer.search.studies import list_studies
from explorer.search.study import SearchSpec, default_storage
from tests.app.helpers import assert_ok, figures, open_app
from tests.hostile import VALUES, live_markdown, live_plotly
from tests.unit.search.samples import pareto, single
from ui import models, owner
from ui import studies as glue

PAGE = "pages/studies.py"
SINGLE = {"Optimisation history: val_exact", "Learning curves: val_exact at each evaluation",
          "Timeline: when each trial ran, and how it ended", "Slice: val_exact against each parameter",
          "Empirical distribution of val_exact", "Trials in parallel coordinates", "Parameter importance"}


def _titles(at) -> set[str]:
    return {f["layout"]["title"]["text"] for f in figures(at)}


def _open(study: str, **state) -> object:
    return open_app(PAGE, query={glue.STUDY: study}, state=state)


@pytest.fixture
def ran(runs_dir) -> str:
    """A study run by the library as `python -m explorer search` runs it: 3 tiny trials, each saved as a run."""
    spec = SearchSpec(task="reversal-fast", space=("lr=1e-4:1e-2:log", "d_model=16,32"), trials=3, steps=3,
                      sampler="random", pruner="median", eval_examples=8)
    outcome = run_search(spec, SerialExecutor())
    assert all(t["state"] in ("COMPLETE", "PRUNED") for t in outcome["trials"])
    return outcome["study"]


def test_a_study_run_by_the_library_opens_with_every_plot_and_log_axes(ran):
    at = _open(ran)
    listed = at.dataframe[0].value
    assert list(listed["Study"]) == [ran] and list(listed["Whose"]) == [owner.NOBODYS]
    assert at.selectbox(key=glue.STUDY).value == ran
    assert SINGLE <= _titles(at) and any(t.startswith("Contour: val_exact over") for t in _titles(at))
    by_title = {f["layout"]["title"]["text"]: f for f in figures(at)}
    sliced = by_title["Slice: val_exact against each parameter"]["layout"]
    axes = [a for k, a in sliced.items() if k.startswith("xaxis")]
    assert any(a.get("type") == "log" and a["title"]["text"] == "lr" for a in axes)
    contour = next(f for t, f in by_title.items() if t.startswith("Contour"))["layout"]
    assert "log" in (contour["xaxis"].get("type"), contour["yaxis"].get("type"))
    assert "lr (log)" in by_title["Trials in parallel coordinates"]["layout"]["xaxis"]["ticktext"]
    trials = next(d.value for d in at.dataframe if "state" in d.value.columns)
    assert len(trials) == 3 and trials["run"].str.contains(f"model_run={ran}-t").all()
    assert at.button(key="studies_delete").disabled     # made outside the app: nobody's to delete


def test_a_selected_trial_offers_to_open_its_run(ran):
    at = _open(ran, **{glue.TRIAL: (ran, 1)})
    assert any("**Trial 1**" in m.value for m in at.markdown)
    assert at.button(key="studies_open_run").label == f"Open its run {ran}-t1"
    at.button(key="studies_open_run").click().run()
    assert_ok(at)
    assert at.session_state[models.SOURCE] == "run" and at.session_state[models.RUN] == f"{ran}-t1"
    assert at.title[0].value != "Studies"           # the Attention page, inside the trial's run
    at = _open(ran, **{glue.TRIAL: ("another study", 1)})    # a selection made in another study is not this one's
    assert not any("**Trial 1**" in m.value for m in at.markdown)


def test_two_studies_compare_side_by_side(runs_dir):
    single(default_storage(), "first", trials=6)
    single(default_storage(), "second", trials=4)
    at = open_app(PAGE, query={glue.STUDY: "first", glue.COMPARE: "second"})
    assert [s.value for s in at.subheader][:2] == ["Compare", "Study first"]
    histories = [f for f in figures(at) if f["layout"]["title"]["text"] == "Optimisation history: val_exact"]
    assert len(histories) == 3          # each of the two side by side, and the opened study's own
    best = next(d.value for d in at.dataframe if list(d.value.columns) == ["first", "second"])
    assert {"trial", "val_exact", "lr", "d_model", "n_heads"} <= set(best.index)


def test_a_two_objective_study_draws_its_pareto_front(runs_dir):
    pareto(default_storage(), "two", trials=8)
    at = _open("two")
    titles = _titles(at)
    assert "Pareto front: val_exact against params" in titles
    assert not any(t.startswith("Learning curves") for t in titles)


def test_a_study_not_yours_cannot_be_deleted_and_yours_can(runs_dir):
    mine = owner.id_of("t" * 30)
    single(default_storage(), "theirs", owner="someone else", trials=2)
    single(default_storage(), "mine", owner=mine, trials=2)
    at = _open("theirs", **{owner.TOKEN: "t" * 30})
    assert list(at.dataframe[0].value["Study"]) == ["mine", "theirs"]   # this visitor's first
    assert at.button(key="studies_delete").disabled
    assert any("only they can delete it" in c.value for c in at.caption)
    at.selectbox(key=glue.STUDY).set_value("mine").run()
    at.button(key="studies_delete").click().run()
    at.button(key="studies_delete_yes").click().run()
    assert_ok(at)
    assert [s.name for s in list_studies(storage=default_storage())] == ["theirs"]


def test_with_no_study_the_page_says_how_to_make_one(runs_dir):
    at = open_app(PAGE)
    assert at.title[0].value == "Studies" and "No study yet" in at.info[0].value


def test_hostile_study_names_and_metrics_from_the_storage_stay_text(runs_dir):
    for value in (VALUES[0], VALUES[2], VALUES[6]):
        study = single(default_storage(), value, trials=3)
        study.set_user_attr("spec", {"task": VALUES[1], "sampler": VALUES[6], "metric": VALUES[2],
                                     "space": [VALUES[0]]})
    at = _open(VALUES[2], **{glue.COMPARE: VALUES[6]})
    assert at.selectbox(key=glue.STUDY).value == VALUES[2]
    for kind in ("markdown", "caption", "subheader", "error", "info"):
        for el in at.get(kind):
            assert live_markdown(str(el.value)) == [], (kind, str(el.value)[:200])
    assert figures(at) and all(live_plotly(fig) == [] for fig in figures(at))
