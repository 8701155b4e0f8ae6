"""A reload never stops work: a job is its owner's (the owner cookie, `owner.TOKEN` under AppTest), not the
tab's. A second AppTest with the same token is the same browser reloaded: it shows the run or search live and
can stop it; another visitor sees nothing of it; a job no tab polls stops after the grace period (the test's
registry is swept at a time the test gives, `owned.sweep(now=...)`), keeps what it learned and frees its
slot, and the owner coming back is pointed to the run with Resume.
"""

import time

from explorer.jobs.slots import pool_counts
from tests.app.helpers import assert_ok, open_app
from tests.app.training_helpers import chart, click, job_of, open_train, poll_until, trace
from ui import owner, search_job, search_params, training_job

ME = "the-same-browser-token-0123456789"
SEARCH = "pages/search.py"
STEPS = 3_000   # more than a test waits for, well under the budget check even on a loaded machine


def later(seconds: float) -> float:
    """The registry's clock, `seconds` from now."""
    return time.monotonic() + seconds


def test_a_reloaded_tab_shows_the_run_live_and_stops_it_another_visitor_sees_nothing(jobs):
    first = open_train(STEPS, **{owner.TOKEN: ME})
    job = job_of(click(first, "train_start"))
    poll_until(first, lambda: job.progress().step >= 2)

    again = open_train(50, **{owner.TOKEN: ME})          # the same browser, reloaded: a new session
    assert job_of(again) is job and not job.ended
    assert not any("No run yet" in i.value for i in again.info)
    assert again.get("progress") and not again.button(key="train_stop").disabled
    shown = len(trace(chart(again, "train_loss_chart"), "train loss")["y"])
    poll_until(again, lambda: job.progress().step >= shown + 3)
    assert len(trace(chart(again, "train_loss_chart"), "train loss")["y"]) > shown   # the curves keep streaming

    stranger = open_train(50)                           # another browser
    assert training_job.JOB not in stranger.session_state and stranger.button(key="train_stop").disabled
    assert any("No run yet in this browser" in i.value for i in stranger.info)
    click(stranger, "train_start")                      # trains a run of its own, beside the other
    assert job_of(stranger) is not job and not job.ended
    job_of(stranger).stop()

    click(again, "train_stop")                          # Stop works in the reloaded tab
    poll_until(again, lambda: job.ended)
    assert job.status == "stopped" and job.run_name is not None
    first.run()
    assert_ok(first)
    assert any("Resume" in i.value for i in first.info)  # the first tab sees the same run stopped
    assert not any("Your run" in i.value for i in open_train(50).info)   # a stranger is pointed to nothing


def test_a_run_no_tab_polls_stops_after_the_grace_and_its_owner_is_pointed_to_resume(jobs, owned):
    first = open_train(STEPS, **{owner.TOKEN: ME})
    job = job_of(click(first, "train_start"))
    poll_until(first, lambda: job.progress().step >= 2)
    assert owned.sweep(now=later(owned.grace_s / 2)) == [] and not job.ended   # a reload is quicker
    assert owned.sweep(now=later(owned.grace_s + 1)) == [job]                   # the tab is gone
    assert job.join(60) and job.status == "stopped" and job.run_name is not None       # kept what it learned
    assert pool_counts() == (0, 0)                                                     # and freed its slot
    stopped_at = job.state.step

    back = open_train(50, **{owner.TOKEN: ME})          # back before the registry forgot it: the job itself
    assert job_of(back) is job and not back.button(key="train_resume").disabled
    owned.sweep(now=later(owned.grace_s + 1))    # ...and after: the run on disk
    assert owned.job(owner.id_of(ME), "train") is None

    later_tab = open_train(50, **{owner.TOKEN: ME})
    assert training_job.JOB not in later_tab.session_state
    pointer = [i.value for i in later_tab.info if "Your run" in i.value]
    assert pointer == [f"Your run `{job.run_name}` stopped at step {stopped_at:,} of {STEPS:,}. **Resume** continues "
                       "it from there, as a run of its own."]
    assert not any("Your run" in i.value for i in open_train(50).info)   # not to another visitor
    click(later_tab, "train_resume_stopped")
    resumed = job_of(later_tab)
    assert resumed is not job and resumed.train_cfg.steps == STEPS
    poll_until(later_tab, lambda: resumed.progress().step >= stopped_at + 2)
    assert [r.to_row() for r in resumed.history()[:stopped_at]] == [r.to_row() for r in job.history()[:stopped_at]]
    click(later_tab, "train_stop")
    poll_until(later_tab, lambda: resumed.ended)


def open_search(token: str | None):
    at = open_app(SEARCH, state={owner.TOKEN: token} if token else None)
    at.text_input(key=f"{search_params.SEARCH_SPACE}_d_model").set_value("16, 32").run()
    at.number_input(key=search_params.SEARCH_TRIALS).set_value(20).run()   # more than a test's seconds finish
    at.number_input(key=search_params.SEARCH_STEPS).set_value(60).run()    # short: a stopped trial ends soon
    assert_ok(at)
    return at


def wait_ended(job, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not job.ended:
        assert time.monotonic() < deadline, "the search did not end in time"
        time.sleep(0.2)


def test_a_search_reattaches_stops_from_the_reloaded_tab_and_stops_after_the_grace(owned):
    started = []
    try:
        first = open_search(ME)
        first.button(key="search_start").click().run()
        job = first.session_state[search_job.SEARCH_JOB]
        started.append(job)
        again = open_search(ME)                              # the same browser, reloaded
        assert again.session_state[search_job.SEARCH_JOB] is job and not job.ended
        assert not any("No search yet" in i.value for i in again.info)
        assert not again.button(key="search_stop").disabled and again.button(key="search_start").disabled
        stranger = open_search(None)
        assert search_job.SEARCH_JOB not in stranger.session_state and stranger.button(key="search_stop").disabled
        assert any("No search yet in this browser" in i.value for i in stranger.info)
        again.button(key="search_stop").click().run()        # Stop works in the reloaded tab
        wait_ended(job)
        assert job.status == "stopped", job.view().message

        first.run()
        first.button(key="search_start").click().run()       # the same study resumes...
        resumed = first.session_state[search_job.SEARCH_JOB]
        started.append(resumed)
        assert resumed is not job and not resumed.ended
        assert owned.sweep(now=later(owned.grace_s + 1)) == [resumed]   # ...until no tab polls it
        wait_ended(resumed)
        assert resumed.status == "stopped", resumed.view().message
        deadline = time.monotonic() + 180
        while pool_counts() != (0, 0):                        # its trials end after their step, then free slots
            assert time.monotonic() < deadline, f"the stopped search still holds slots: {pool_counts()}"
            time.sleep(0.2)
        owned.sweep(now=later(2 * owned.grace_s + 1))         # long after: the registry still has it...
        back = open_search(ME)                                # ...so a tab opened later shows it, to resume
        assert back.session_state[search_job.SEARCH_JOB] is resumed and not back.button(key="search_start").disabled
        assert any("start again to run the rest" in i.value for i in back.info), [i.value for i in back.info]
        assert not any("No search yet" in i.value for i in back.info)
        assert search_job.SEARCH_JOB not in open_search(None).session_state   # not to another visitor
    finally:
        for job in started:
            job.close()
