"""The Search page under AppTest: it renders with Start ready and the command line; a bad space shows an
error naming the field and keeps Start off; a 2-trial search runs from Start in the server's worker
processes and shows the history, parallel coordinates and the trials linked to their runs; the best
trial's "Use this model" picks its run and "Train with these settings" loads its settings for Train; a space
the fixed settings cannot run is refused before Start, a study whose trials all fail is a failure, and the
page's "From a terminal" command, run as a process, gives the page's trials exactly.
AppTest never fires `run_every`: the test waits for the job (rerunning the page only once it has ended:
reruns during the search would take the cores its trials need) and reruns once. The search is stopped and
joined at the end. Its worker processes are the server's shared pool, warm when the system tier ran first.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import time

import pytest

from explorer.store.runs import open_for_resume
from tests.app.helpers import ROOT, assert_ok, open_app, wait_ended
from ui import search_job, search_params

PAGE = "pages/search.py"


def test_the_page_renders_ready_to_start():
    at = open_app(PAGE)
    assert at.title[0].value == "Search" and not at.error
    assert not at.button(key="search_start").disabled and at.button(key="search_stop").disabled
    assert any("python -m explorer search --task reversal-fast" in c.value and "lr=0.0001:0.01:log" in c.value
               for c in at.caption)
    assert at.multiselect(key=search_params.SEARCH_FIELDS).value == ["lr", "d_model"]


@pytest.mark.parametrize(("field", "text", "says"), [("lr", "a:b", "lr: 'a' is not a number"),
                                                     ("d_model", " , ", "d_model: no choices")])
def test_a_bad_space_says_which_field_and_keeps_start_off(field, text, says):
    at = open_app(PAGE)
    at.text_input(key=f"{search_params.SEARCH_SPACE}_{field}").set_value(text).run()
    assert_ok(at)
    assert any(says in e.value for e in at.error) and at.button(key="search_start").disabled


def test_a_links_numbers_are_used_when_in_range_and_named_when_not():
    at = open_app(PAGE, query={search_params.SEARCH_TRIALS: "100000", search_params.SEARCH_STEPS: "300"})
    assert at.number_input(key=search_params.SEARCH_TRIALS).value == 8   # the default, and the user is told
    assert at.number_input(key=search_params.SEARCH_STEPS).value == 300
    assert any("`search_trials=100000` is not valid (it takes a number from 1 to 40), so it is 8" in w.value
               for w in at.warning), [w.value for w in at.warning]


def test_too_much_work_for_a_shared_server_is_refused():
    at = open_app(PAGE)
    at.number_input(key=search_params.SEARCH_TRIALS).set_value(40).run()
    at.number_input(key=search_params.SEARCH_STEPS).set_value(2000).run()
    assert any("more than one search may take here" in e.value for e in at.error)


def test_a_search_runs_from_start_and_offers_its_best_model(searches):
    at = open_app(PAGE)
    at.text_input(key=f"{search_params.SEARCH_SPACE}_d_model").set_value("16, 32").run()
    at.number_input(key=search_params.SEARCH_TRIALS).set_value(2).run()
    at.number_input(key=search_params.SEARCH_STEPS).set_value(10).run()
    at.button(key="search_start").click().run()
    assert_ok(at)
    job = at.session_state[search_job.SEARCH_JOB]
    assert at.button(key="search_start").disabled and not at.button(key="search_stop").disabled
    deadline = time.monotonic() + 300
    while not job.ended:
        assert time.monotonic() < deadline, "the search did not end in time"
        time.sleep(0.2)
    at.run()
    assert_ok(at)
    view = job.view()
    assert job.status == "finished", view.message
    assert [r["state"] for r in view.rows] == ["COMPLETE", "COMPLETE"]
    assert all(r["worker"].rpartition(":")[2] != str(os.getpid()) for r in view.rows)  # a worker
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    history = next(s for s in specs if s["layout"]["title"]["text"].startswith("Optimisation history"))
    assert sorted(p for t in history["data"] for p in t["x"] if t["mode"] == "markers") == [0, 1]
    parallel = next(s for s in specs if s["data"][0]["type"] == "parcoords")
    assert [d["label"] for d in parallel["data"][0]["dimensions"]] == ["lr", "d_model", "val_exact"]
    table = at.dataframe[0].value
    assert list(table["trial"]) == [0, 1] and all(f"model_run={r['run']}" in link
                                                  for r, link in zip(view.rows, table["run"]))
    best = view.best["run"]
    at.button(key="search_use").click().run()
    assert_ok(at)
    assert at.session_state["model_run"] == best       # the sidebar now looks inside the best trial's run
    at.button(key="search_recipe").click().run()
    assert_ok(at)
    assert at.session_state["cfg_d_model"] == view.best["params"]["d_model"]
    assert at.session_state["train_lr"] == view.best["params"]["lr"] and at.session_state["train_steps"] == 10
    assert any("on the Train page" in m.value for m in at.success)


def test_a_ray_address_that_does_not_answer_is_named_on_the_page(monkeypatch, searches):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"   # nobody listens once closed
    monkeypatch.setenv("EXPLORER_RAY_ADDRESS", address)
    at = open_app(PAGE)
    at.button(key="search_start").click().run()
    assert_ok(at)
    assert any(address in e.value and "Ray" in e.value for e in at.error)
    assert search_job.SEARCH_JOB not in at.session_state and not at.button(key="search_start").disabled


def test_a_search_on_uploaded_pairs_keeps_them_in_its_trials_and_a_bad_file_is_refused(searches):
    from tests.unit.helpers import number_words

    at = open_app(PAGE)
    upload = at.file_uploader(key=search_params.SEARCH_DATA)
    upload.set_value(("bad.tsv", (number_words(40) + "one two\n").encode(), "text/tab-separated-values")).run()
    assert any("line 41: no tab" in e.value for e in at.error) and at.button(key="search_start").disabled
    pairs = number_words(60)
    at.file_uploader(key=search_params.SEARCH_DATA).set_value(("digits.tsv", pairs.encode(), "text/plain")).run()
    assert_ok(at)
    assert any("Runs on `digits.tsv`: 60 pairs" in s.value for s in at.success), [s.value for s in at.success]
    assert any("python -m explorer search --data digits.tsv" in c.value for c in at.caption)
    at.number_input(key=search_params.SEARCH_TRIALS).set_value(1).run()
    at.number_input(key=search_params.SEARCH_STEPS).set_value(10).run()
    at.button(key="search_start").click().run()
    job = at.session_state[search_job.SEARCH_JOB]
    assert job.spec.task == "pairs" and job.spec.data == pairs
    deadline = time.monotonic() + 300
    while not job.ended:
        assert time.monotonic() < deadline, "the search did not end in time"
        time.sleep(0.2)
    assert job.status == "finished", job.view().message
    from explorer.store.runs import open_for_resume

    _, task, *_ = open_for_resume(job.view().rows[0]["run"])   # the trial's run reopens on the file
    assert task.name == "pairs" and task.cfg.text == pairs


def test_the_fixed_residual_and_attention_scale_reach_every_trial(searches):
    at = open_app(PAGE, query={"cfg_residual": "Off", "cfg_attn_scale": "None"})
    at.number_input(key=search_params.SEARCH_TRIALS).set_value(1).run()
    at.number_input(key=search_params.SEARCH_STEPS).set_value(10).run()
    at.button(key="search_start").click().run()
    job = at.session_state[search_job.SEARCH_JOB]
    assert (job.spec.base["residual"], job.spec.base["attn_scale"]) == ("none", "none")


def test_a_space_the_fixed_settings_cannot_run_is_refused_before_start():
    at = open_app(PAGE, query={f"{search_params.SEARCH_SPACE}_d_model": "7"})
    assert any("d_model=7 (with n_heads=4" in e.value and "not divisible by n_heads=4" in e.value
               for e in at.error), [e.value for e in at.error]
    assert at.button(key="search_start").disabled


def test_a_study_whose_trials_all_fail_is_a_failure_with_the_first_reason(searches):
    at = open_app(PAGE, query={search_params.SEARCH_FIELDS: "lr", f"{search_params.SEARCH_SPACE}_lr": "1e8, 1e9",
                               search_params.SEARCH_TRIALS: "1", search_params.SEARCH_STEPS: "10"})
    at.button(key="search_start").click().run()
    job = at.session_state[search_job.SEARCH_JOB]
    wait_ended(job)
    at.run()
    assert_ok(at)
    assert job.status == "failed" and [r["state"] for r in job.view().rows] == ["FAIL"]
    assert any(e.value.startswith("All 1 trial failed; trial 0: diverged") for e in at.error), \
        [e.value for e in at.error]
    assert not any(i.value.endswith("trials finished.") for i in at.info)


def test_the_terminal_command_runs_the_pages_study(searches, tmp_path):
    # settings other than the recipe's (warmup 4, not 50; 2 heads, not 4) and steps past the warmup
    at = open_app(PAGE, query={"cfg_n_heads": "2", "train_warmup": "4", search_params.SEARCH_TRIALS: "2",
                               search_params.SEARCH_STEPS: "12", f"{search_params.SEARCH_SPACE}_d_model": "16, 32"})
    command = next(m.group(1) for c in at.caption if (m := re.search(r"`(python -m explorer search [^`]*)`", c.value)))
    assert "--set warmup=4" in command and "--set n_heads=2" in command
    at.button(key="search_start").click().run()
    job = at.session_state[search_job.SEARCH_JOB]
    wait_ended(job)
    assert job.status == "finished", job.view().message
    argv = shlex.split(command)[1:] + ["--json", "--workers", "1", "--storage", f"sqlite:///{tmp_path / 'cli.db'}"]
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    cli = json.loads(done.stdout)["trials"]
    page = job.view().rows
    assert [(t["number"], t["params"], t["value"], t["state"]) for t in cli] == \
        [(r["number"], r["params"], r["value"], r["state"]) for r in page]
    for mine, theirs in zip(page, cli):   # step by step, the same training
        losses = [[h.loss for h in open_for_resume(t["run"])[3].history] for t in (mine, theirs)]
        assert losses[0] == losses[1] and len(losses[0]) == 12
