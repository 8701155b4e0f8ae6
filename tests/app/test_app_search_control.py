"""The Search page's search control under AppTest: the constraints field (a bad one named, Start kept off),
the objectives and the enqueue form reach the study and its terminal command; a two-objective search runs
its enqueued trial first, draws its Pareto front with each point's trial number, and a picked point offers
that trial's run; *Rerun over seeds* then trains the best configuration over 3 fresh seeds and shows it
ranked with its interval. AppTest never fires `run_every`: the test waits for each job and reruns once."""

import json

from tests.app.helpers import assert_ok, open_app, wait_ended
from ui import search_confirm, search_job, search_params

PAGE = "pages/search.py"


def _plain(text: str) -> str:
    """Markdown shown as text (explorer.quoting) without its escapes."""
    return text.replace("\\", "")


def test_a_bad_constraint_is_named_and_a_good_one_reaches_the_terminal_command():
    at = open_app(PAGE, query={search_params.SEARCH_FIELDS: ["lr", "d_model", "d_ff"]})
    at.text_input(key=search_params.SEARCH_CONSTRAINTS).set_value("d_ff>=2*dmodel").run()
    assert_ok(at)
    assert any("unknown name 'dmodel'" in _plain(e.value) and "e.g. d_ff>=2*d_model" in _plain(e.value)
               for e in at.error), [e.value for e in at.error]
    assert at.button(key="search_start").disabled and at.button(key=search_confirm.CONFIRM_BUTTON).disabled
    at.text_input(key=search_params.SEARCH_CONSTRAINTS).set_value("d_ff>=2*d_model; lr<=5e-3").run()
    at.multiselect(key=search_params.SEARCH_METRICS).set_value(["val_exact", "params"]).run()
    assert_ok(at)
    assert not at.error and not at.button(key="search_start").disabled
    command = next(_plain(c.value) for c in at.caption if "python -m explorer search" in c.value)
    for part in ("--constraint 'd_ff>=2*d_model'", "--constraint 'lr<=5e-3'", "--metric val_exact",
                 "--metric params"):
        assert part in command, command


def test_a_two_objective_search_runs_its_enqueued_trial_first_and_its_best_reruns_over_seeds(searches):
    at = open_app(PAGE, query={search_params.SEARCH_TRIALS: "2", search_params.SEARCH_STEPS: "10"})
    at.text_input(key=f"{search_params.SEARCH_SPACE}_d_model").set_value("16, 32").run()
    at.multiselect(key=search_params.SEARCH_METRICS).set_value(["val_loss", "params"]).run()
    at.text_area(key=search_params.SEARCH_ENQUEUE).set_value("lr=3e-3, d_model=16")
    next(b for b in at.button if b.label == "Run these first").click().run()
    assert_ok(at)
    assert any("--enqueue lr=3e-3,d_model=16" in _plain(c.value) for c in at.caption)
    at.button(key="search_start").click().run()
    job = at.session_state[search_job.SEARCH_JOB]
    wait_ended(job)
    at.run()
    assert_ok(at)
    view = job.view()
    assert job.status == "finished", view.message
    assert view.rows[0]["params"] == {"lr": 3e-3, "d_model": 16}          # the enqueued trial, first
    assert all(set(r["values"]) == {"val_loss", "params"} for r in view.rows)
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    pareto = next(s for s in specs if s["layout"]["title"]["text"].startswith("Pareto front"))
    on_front = next(t for t in pareto["data"] if t["name"] == "on the front")   # the Studies page's figure
    assert sorted(on_front["customdata"]) == sorted(t["number"] for t in view.pareto) and view.pareto
    assert pareto["layout"]["yaxis"]["type"] == "log" and pareto["layout"]["yaxis"]["title"]["text"] == "params"

    picked = view.pareto[0]
    at.session_state[search_confirm.PARETO_CHART] = {"selection": {"points": [{"customdata": picked["number"]}]}}
    at.run()
    assert_ok(at)
    assert any(f"Picked: trial {picked['number']}" in m.value for m in at.markdown)
    at.button(key="search_picked_recipe").click().run()
    assert at.session_state["cfg_d_model"] == picked["params"]["d_model"]

    at.number_input(key=search_confirm.CONFIRM_TOP).set_value(1).run()
    at.button(key=search_confirm.CONFIRM_BUTTON).click().run()
    assert_ok(at)
    rerun = at.session_state[search_job.SEARCH_JOB]
    assert not at.error, [e.value for e in at.error]
    assert rerun is not job and rerun.confirm == (3, 1)
    wait_ended(rerun)
    at.run()
    assert_ok(at)
    assert rerun.status == "finished", rerun.message
    entry = rerun.view().confirm["configurations"][0]
    assert entry["n"] == 3 and entry["trial"] == view.best["number"] and entry["interval"][0] < entry["mean"]
    table = next(d.value for d in at.dataframe if "95% interval" in d.value.columns)
    assert list(table["rank"]) == [1] and list(table["seeds"]) == [3]
    assert list(table["on the front"]) == ["yes"]
    assert list(table["params (mean)"]) == [entry["metrics"]["params"]["mean"]]
    assert any("the front" in c.value for c in at.caption if "over fresh seeds" in c.value)
