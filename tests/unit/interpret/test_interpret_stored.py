"""What is stored beside the shipped models for Inside the model: their ablation tables (explorer.interpret.stored:
one per model, of its weights, what ablate computes; rebuild: `python -m explorer interpret ablate --model NAME
--store`) and their replayed training's attention snapshots (`python -m explorer interpret snapshots --model NAME`),
whose last one is the shipped weights' own attention."""

import copy

import pytest
import torch

from explorer.evaluation import snapshot
from explorer.interpret import MODES, Part, ablate, parts
from explorer.interpret.stored import STORED_N, stored
from explorer.store import snapshots
from explorer.store.checkpoints import pretrained_manifest
from explorer.store.snapshots import load_snapshots
from explorer.store.subject import load_model

SHIPPED = [e["name"] for e in pretrained_manifest()]
SAME = dict(rel=1e-5, abs=1e-6)   # json keeps every bit; another CPU's kernels may round a loss otherwise


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_model_has_its_table_in_every_mode(name):
    model, _ = load_model(name)
    for mode in MODES:
        table = stored(name, model, mode, STORED_N)
        assert table is not None, f"rebuild: python -m explorer interpret ablate --model {name} --store"
        heads = table["head"].astype(object).where(table["head"].notna(), None)
        assert list(zip(table["kind"], table["layer"], heads)) == [(p.kind, p.layer, p.head) for p in parts(model)]
        assert table.attrs["n"] == STORED_N and table.attrs["mode"] == mode


@pytest.mark.parametrize("name", ["order-pe", "char-lm"])
def test_a_stored_table_is_what_ablate_computes(name):
    model, task = load_model(name)
    for mode in MODES:
        want, got = ablate(model, task, mode=mode, n=STORED_N), stored(name, model, mode, STORED_N)
        assert list(got.columns) == list(want.columns) and (got["head"].isna() == want["head"].isna()).all()
        assert got.drop(columns=["kind", "head"]).to_numpy() == pytest.approx(
            want.drop(columns=["kind", "head"]).to_numpy(), **SAME)
        assert got.attrs["baseline"] == pytest.approx(want.attrs["baseline"], **SAME)


def test_the_reversal_tables_cross_head_is_what_ablate_computes():
    model, task = load_model("reversal-fast")
    got = stored("reversal-fast", model, "zero", STORED_N)
    row = got[(got["kind"] == "cross") & (got["layer"] == 1) & (got["head"] == 0)].iloc[0]
    want = ablate(model, task, n=STORED_N, which=[Part("cross", 1, 0)]).iloc[0]
    assert row[["exact", "token_acc", "loss"]].to_numpy(float) == pytest.approx(
        want[["exact", "token_acc", "loss"]].to_numpy(float), **SAME)


def test_a_stored_table_is_not_used_for_other_weights_or_counts():
    model, _ = load_model("order-pe")
    other = copy.deepcopy(model)
    with torch.no_grad():
        next(other.parameters()).add_(0.01)
    assert stored("order-pe", other, "zero", STORED_N) is None
    assert stored("order-pe", model, "zero", STORED_N // 2) is None
    assert stored("no-such-model", model, "zero", STORED_N) is None


@pytest.mark.parametrize("entry", pretrained_manifest(), ids=SHIPPED)
def test_every_shipped_model_has_its_replayed_training_ending_on_its_weights(entry):
    name = entry["name"]
    snaps = load_snapshots(snapshots.shipped_folder() / name)
    assert snaps, f"replay: python -m explorer interpret snapshots --model {name}"
    steps = [s.step for s in snaps]
    assert steps == sorted(steps) and steps[-1] == entry["train"]["steps"] and len(steps) >= 10
    model, task = load_model(name)
    now = snapshot(model, task, steps[-1])   # a stale replay (the model rebuilt since) would differ here
    assert (now.kind, now.q_labels, now.k_labels) == (snaps[-1].kind, snaps[-1].q_labels, snaps[-1].k_labels)
    assert now.pattern == pytest.approx(snaps[-1].pattern, rel=2e-3, abs=1e-6)   # stored as float16
