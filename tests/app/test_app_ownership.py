"""Runs belong to the visitor who trained them, under AppTest: each AppTest is a visitor of its own (a
browser's cookie is `owner.TOKEN` here). Others open, compare and download a run but cannot delete it; a
run can be named when it starts; a name is never given twice; a tab viewing a run deleted by its owner
keeps what it had loaded, and a link to a deleted run says so instead of showing another."""

from explorer.store import runs
from tests.app.helpers import assert_ok, open_app
from tests.app.training_helpers import (
    ME,
    RUNS,
    click,
    job_of,
    open_train,
    pick_for_export,
    poll_until,
    saved_run,
)
from ui import models, owner, state, train_settings

THEM = "another-visitors-token-987654321"


# ------------------------------------------------------------------------------------------ Runs
def test_another_visitors_run_cannot_be_deleted_only_opened_and_downloaded():
    mine = saved_run("mine", "pre", owner_token=ME)
    theirs = saved_run("theirs", "post", owner_token=THEM)
    cli = saved_run("from-the-cli", "pre")
    at = open_app(RUNS, state={owner.TOKEN: ME})
    table = at.dataframe[0].value.set_index("Run")
    assert dict(table["Owner"]) == {mine: "yours", theirs: "another visitor's", cli: "no owner"}
    at.session_state[state.RUNS_TABLE] = {"selection": {"rows": [0, 1, 2], "columns": [], "cells": []}}
    at.run()
    for name, why in ((theirs, "only they can delete it"), (cli, "read-only here")):
        pick_for_export(at, name)
        assert at.button(key="runs_delete").disabled
        assert any(why in c.value for c in at.caption)
        assert at.get("download_button")  # the checkpoint and its metrics stay downloadable
    pick_for_export(at, mine)
    assert not at.button(key="runs_delete").disabled

    # a delete asked for anyway (a stale confirmation, a crafted rerun) is refused by explorer.store.runs
    at.session_state[state.RUNS_DELETE] = theirs
    at.run()
    click(at, "runs_delete_yes")
    assert any("belongs to another visitor" in e.value for e in at.error)
    assert (runs.runs_dir() / theirs).is_dir() and (runs.runs_dir() / cli).is_dir()


def test_a_run_trained_in_the_app_is_its_visitors_and_takes_the_name_given(jobs):
    at = open_train(10, **{train_settings.TRAIN_NAME: "my first run"})
    assert any("cannot be used" in e.value and "For example: `my-first-run`" in e.value for e in at.error)
    assert at.button(key="train_start").disabled
    at.text_input(key=train_settings.TRAIN_NAME).input("my-first-run").run()
    assert_ok(at)
    job = job_of(click(at, "train_start"))
    poll_until(at, lambda: job.ended)
    me = owner.id_of(at.session_state[owner.TOKEN])
    assert job.run_name == "my-first-run"
    assert runs.load_run("my-first-run")[1]["owner"] == me
    at.switch_page(RUNS).run()
    assert_ok(at)
    assert at.dataframe[0].value.set_index("Run").loc["my-first-run", "Owner"] == "yours"
    assert not at.button(key="runs_delete").disabled

    visitor = open_app(RUNS)  # another browser: another token
    assert visitor.dataframe[0].value.set_index("Run").loc["my-first-run", "Owner"] == "another visitor's"
    assert visitor.button(key="runs_delete").disabled

    click(at, "runs_delete")
    click(at, "runs_delete_yes")
    assert not (runs.runs_dir() / "my-first-run").exists()
    at.switch_page("pages/train.py").run()
    job = job_of(click(at, "train_start"))  # the same name again: the deleted run's name is not reissued
    poll_until(at, lambda: job.ended)
    assert job.run_name == "my-first-run-2"


# --------------------------------------------------------------------------------- the sidebar
def test_a_tab_viewing_a_run_its_owner_deletes_keeps_its_copy():
    name = saved_run("shared", "pre", owner_token=ME)
    link = {models.SOURCE: "Trained run", models.RUN: name}
    viewer = open_app(query=link)
    assert viewer.sidebar.selectbox(key=models.RUN).value == name
    seen = viewer.session_state[models.SELECTED]
    saved_run("newer", "post", owner_token=ME)
    runs.delete_run(name, owner=owner.id_of(ME))
    viewer.run()
    assert_ok(viewer)
    assert viewer.sidebar.selectbox(key=models.RUN).value == name  # not switched to "newer"
    assert viewer.session_state[models.SELECTED] is seen
    assert any("deleted from the server since this tab opened it" in c.value for c in viewer.sidebar.caption)


def test_a_link_to_a_deleted_run_says_so_and_its_name_is_never_reissued():
    name = saved_run("linked", "pre", owner_token=ME)
    runs.delete_run(name, owner=owner.id_of(ME))
    assert saved_run("linked", "pre", owner_token=ME) == "linked-2"
    at = open_app(query={models.SOURCE: "Trained run", models.RUN: name})
    assert at.sidebar.selectbox(key=models.RUN).value == name
    assert any("Run `linked` was deleted" in w.value for w in at.sidebar.warning)
    assert at.session_state[models.SELECTED].source == "untrained"  # not linked-2, not "the newest"
    stranger = open_app(query={models.SOURCE: "Trained run", models.RUN: "never-here"})
    assert any("is not on this server" in w.value for w in stranger.sidebar.warning)
