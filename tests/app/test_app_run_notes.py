"""The Runs page as a researcher keeps it, under AppTest: notes and tags on one's own run (another visitor's are
shown as text, not editable), the filters by study, tag and task, and the throughput columns."""

from explorer.store import runs
from tests.app.helpers import assert_ok, open_app
from tests.app.training_helpers import ME, RUNS, pick_for_export, saved_run
from ui import owner, run_notes, state

THEM = "another-visitors-token-0123456789"
HOSTILE = "see [here](https://evil.example) **now**"


def test_the_owner_keeps_notes_and_tags_and_another_visitor_only_reads_them():
    mine = saved_run("mine", "pre", steps=4, owner_token=ME)
    theirs = saved_run("theirs", "post", steps=4, owner_token=THEM)
    runs.annotate_run(theirs, notes=HOSTILE, tags=["their-tag"])
    at = open_app(RUNS, state={owner.TOKEN: ME})
    at.session_state[state.RUNS_TABLE] = {"selection": {"rows": [0, 1], "columns": [], "cells": []}}
    at.run()
    pick_for_export(at, mine)
    at.text_area(key=f"{run_notes.RUNS_NOTES}:{mine}").set_value("lr 3e-3 diverged once\nretry with warmup")
    at.text_input(key=f"{run_notes.RUNS_TAGS}:{mine}").set_value(" baseline, pre-LN ,baseline")
    at.button(key=run_notes.RUNS_NOTES_SAVE).click().run()
    assert_ok(at)
    info = runs.run_info(mine)
    assert info.notes == "lr 3e-3 diverged once\nretry with warmup" and info.tags == ("baseline", "pre-LN")
    table = at.dataframe[0].value.set_index("Run")
    assert table.loc[mine, "Tags"] == "baseline, pre-LN" and table.loc[mine, "Notes"].startswith("lr 3e-3")
    assert table.loc[mine, "Steps/s"] > 0 and table.loc[mine, "Wall (s)"] >= table.loc[mine, "Time (s)"]

    at.text_input(key=f"{run_notes.RUNS_TAGS}:{mine}").set_value("x" * 40)   # over a limit: said, not saved
    at.button(key=run_notes.RUNS_NOTES_SAVE).click().run()
    assert any("at most 32" in e.value for e in at.error) and runs.run_info(mine).tags == ("baseline", "pre-LN")

    pick_for_export(at, theirs)   # another visitor's run: no form, its notes shown as text
    assert not [w for w in at.text_area if w.key.endswith(theirs)] and not at.get("form")
    shown = " ".join(m.value for m in at.markdown)
    assert "their-tag" in shown and "](" not in shown.replace("\\](", "") and "**now**" not in shown
    assert any("only the browser that trained it" in c.value for c in at.caption)


def test_filters_by_study_tag_and_task_keep_a_study_together():
    t1 = saved_run("study-t1", "pre", steps=4, extra={"search": "lr-study", "trial": 1})
    other = saved_run("lonely", "pre", steps=4, task="reversal-fast")
    t0 = saved_run("study-t0", "pre", steps=4, extra={"search": "lr-study", "trial": 0})
    runs.annotate_run(other, tags=["keep"])
    at = open_app(RUNS)
    table = at.dataframe[0].value
    assert list(table["Run"]) == [t0, t1, other]   # the study's runs together, by trial, where its newest stands
    assert list(table["Study"]) == ["lr-study #0", "lr-study #1", ""]
    at.multiselect(key=run_notes.RUNS_STUDY).set_value(["lr-study"]).run()
    assert list(at.dataframe[0].value["Run"]) == [t0, t1]
    at.multiselect(key=run_notes.RUNS_STUDY).set_value([]).run()
    at.multiselect(key=run_notes.RUNS_TAG).set_value(["keep"]).run()
    assert list(at.dataframe[0].value["Run"]) == [other]
    at.multiselect(key=run_notes.RUNS_TAG).set_value([]).run()
    at.multiselect(key=run_notes.RUNS_TASK).set_value(["copy"]).run()
    assert set(at.dataframe[0].value["Run"]) == {t0, t1}
    at.multiselect(key=run_notes.RUNS_STUDY).set_value(["lr-study"])
    at.multiselect(key=run_notes.RUNS_TAG).set_value(["keep"]).run()   # nothing has both
    assert_ok(at)
    assert not at.dataframe and any("No run matches" in i.value for i in at.info)
