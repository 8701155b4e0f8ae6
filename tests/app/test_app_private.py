"""A run trained on a visitor's own data carries it (meta.json, the checkpoint zip, its report), so it is
private to that visitor until they share it: another visitor's Runs page, sidebar picker, Inside page and
links neither list nor open it. Two visitors: two AppTests with their own `owner.TOKEN`."""

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import runs
from explorer.tasks import make_task
from explorer.tasks.own_data import pairs_config
from explorer.train_config import TrainConfig
from tests.app.helpers import assert_ok, open_app
from tests.app.training_helpers import ME, RUNS, saved_run
from ui import models, owner, state

THEM = "another-visitors-token-987654321"
SECRET = "".join(f"secret{i} a b\tb a secret{i}\n" for i in range(40))


def own_data_run(name: str, token: str) -> str:
    task = make_task(pairs_config(SECRET))
    cfg = task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32))
    return runs.save_run(name, build_model(cfg, seed=0), task.cfg, TrainConfig(steps=1), [],
                         owner=owner.id_of(token)).name


def listed(at) -> list[str]:
    return list(at.dataframe[0].value["Run"]) if at.dataframe else []


def downloads(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


def pick(at, name: str) -> None:
    """Tick every row of the Runs table, then export `name`."""
    at.session_state[state.RUNS_TABLE] = {"selection": {"rows": list(range(len(listed(at)))), "columns": [],
                                                        "cells": []}}
    at.run()
    at.selectbox(key=state.RUNS_EXPORT).set_value(name).run()
    assert_ok(at)


def test_a_run_on_uploaded_data_is_its_owners_until_shared():
    mine = own_data_run("my-upload", ME)
    public = saved_run("a-preset-run", "pre", owner_token=ME)
    assert runs.run_info(mine).private and not runs.run_info(public).private

    theirs = open_app(RUNS, query={models.SOURCE: "Trained run"}, state={owner.TOKEN: THEM})
    assert listed(theirs) == [public]                                  # not listed, so nothing to download
    assert mine not in theirs.sidebar.selectbox(key=models.RUN).options
    link = open_app(query={models.SOURCE: "Trained run", models.RUN: mine}, state={owner.TOKEN: THEM})
    assert any("another visitor's own data" in w.value for w in link.sidebar.warning)
    assert link.session_state[models.SELECTED].source == "untrained"  # the link opens nothing of it

    at = open_app(RUNS, state={owner.TOKEN: ME})
    assert dict(at.dataframe[0].value.set_index("Run")["Owner"]) == {mine: "yours (private)", public: "yours"}
    pick(at, mine)
    assert "Checkpoint (zip)" in downloads(at)
    share = at.toggle(key=f"runs_share:{mine}")
    assert share.value is False and any("Private to you" in c.value for c in at.caption)
    share.set_value(True).run()
    assert_ok(at)
    assert not runs.run_info(mine).private

    theirs = open_app(RUNS, state={owner.TOKEN: THEM})
    assert mine in listed(theirs)
    pick(theirs, mine)
    assert "Checkpoint (zip)" in downloads(theirs) # only the owner shares:
    assert not [t for t in theirs.get("toggle") if t.key.startswith("runs_share")]
    assert any("which they shared" in c.value for c in theirs.caption)

    at.toggle(key=f"runs_share:{mine}").set_value(False).run()          # private again: gone for the other
    assert runs.run_info(mine).private
    theirs.run()
    assert mine not in listed(theirs)
    link = open_app(query={models.SOURCE: "Trained run", models.RUN: mine}, state={owner.TOKEN: THEM})
    assert link.session_state[models.SELECTED].source == "untrained"
