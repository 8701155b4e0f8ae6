"""Run history on disk: save, list, load, delete; names can never escape the runs folder, are never
given twice, and a run's owner alone deletes it."""

import json
import shutil

import pytest
import torch

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import checkpoints, runs
from explorer.store.runs import claim_run, delete_run, list_runs, load_run, name_was_used, runs_dir, safe_name, save_run
from explorer.tasks import make_task
from explorer.train_config import TrainConfig


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path / "runs"


def test_runs_dir_follows_the_environment(root):
    assert runs_dir() == root and root.is_dir()


def test_save_list_load_delete(root, trained):
    task, model, cfg, history = trained
    info = save_run("my run", model, task.cfg, cfg, history, extra={"note": "first"})
    assert info.name == "my-run" and info.path == root / "my-run" and info.steps == 6
    assert info.task["name"] == "copy" and info.train["steps"] == 6 and info.model["n_decoder_layers"] == 2
    assert info.final["val_exact"] == history[-1].val_exact and info.duration == history[-1].elapsed
    second = save_run("my run", model, task.cfg, cfg, history[:4])
    assert second.name == "my-run-2" and second.steps == 4
    assert second.final["val_loss"] == history[3].val_loss  # latest validation carried forward
    assert [r.name for r in list_runs()] == ["my-run-2", "my-run"]  # newest first
    loaded, meta, frame = load_run("my-run")
    assert meta["note"] == "first" and meta["name"] == "my-run"
    src = torch.tensor([[3, 4, 5]])
    tgt = torch.tensor([[1, 3, 4]])
    model.eval()
    assert torch.equal(loaded(src, tgt), model(src, tgt))
    assert list(frame["step"]) == list(range(1, 7)) and {"grad_enc_0", "grad_dec_1"} <= set(frame.columns)
    assert frame["val_exact"].notna().sum() == 2  # steps 4 and 6
    delete_run("my-run")
    assert [r.name for r in list_runs()] == ["my-run-2"] and not (root / "my-run").exists()


def test_newest_first_whatever_the_names(root, trained):
    task, model, cfg, history = trained
    for name, when in (("b", "2024-01-01T00:00:00+00:00"), ("a", "2025-01-01T00:00:00+00:00")):
        save_run(name, model, task.cfg, cfg, history)
        path = root / name / "meta.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "created": when}))
    assert [r.name for r in list_runs()] == ["a", "b"]


@pytest.mark.parametrize("text, expected", [
    ("../x", "x"), ("/etc/passwd", "etc-passwd"), ("a/../../b", "a-..-..-b"), (".hidden", "hidden"),
    ("run 1 (lr=3e-3)", "run-1-lr-3e-3"), ("x" * 100, "x" * 64), ("naïve", "na-ve"),
])
def test_safe_name_sanitises(text, expected):
    assert safe_name(text) == expected


@pytest.mark.parametrize("text", ["..", "", ".", "///", "   "])
def test_safe_name_refuses_names_with_nothing_left(text):
    with pytest.raises(ValueError, match="name"):
        safe_name(text)


def test_traversal_never_leaves_the_runs_folder(root, trained, tmp_path):
    task, model, cfg, history = trained
    info = save_run("../../escape", model, task.cfg, cfg, history)
    assert info.path.parent == root and not (tmp_path / "escape").exists()
    victim = tmp_path / "victim"
    victim.mkdir()
    for bad in ("../victim", "..", "/etc/passwd", ""):
        with pytest.raises(ValueError):
            load_run(bad)
        with pytest.raises(ValueError):
            delete_run(bad)
    assert victim.exists()
    with pytest.raises(FileNotFoundError):
        load_run("not-there")


def test_broken_folders_are_skipped(root, trained):
    task, model, cfg, history = trained
    save_run("good", model, task.cfg, cfg, history)
    (root / "empty").mkdir()
    (root / "bad-json").mkdir()
    (root / "bad-json" / "meta.json").write_text("{oops")
    (root / "no-task").mkdir()
    (root / "no-task" / "meta.json").write_text('{"format": 1, "model": {}}')
    (root / "stray.txt").write_text("not a run")
    assert [r.name for r in list_runs()] == ["good"]


def test_a_failed_save_leaves_no_half_run(root, trained, monkeypatch):
    task, model, cfg, history = trained

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(runs, "save_checkpoint", boom)
    with pytest.raises(OSError):
        save_run("half", model, task.cfg, cfg, history)
    assert not (root / "half").exists()


# ------------------------------------------------------------------------------ names and owners
def test_a_deleted_runs_name_is_never_given_again(root, trained):
    task, model, cfg, history = trained
    assert [save_run("x", model, task.cfg, cfg, history).name for _ in range(2)] == ["x", "x-2"]
    delete_run("x-2")
    assert save_run("x", model, task.cfg, cfg, history).name == "x-3"  # not x-2: a link to x-2 finds nothing
    delete_run("x")
    shutil.rmtree(root / "x-3")  # removed by hand on the server: still used
    assert save_run("x", model, task.cfg, cfg, history).name == "x-4"
    assert name_was_used("x") and name_was_used("x-2") and name_was_used("x-4") and not name_was_used("x-5")
    assert not name_was_used("../x") and [r.name for r in list_runs()] == ["x-4"]


def test_a_run_from_before_the_names_file_keeps_its_name_used_once_deleted(root, trained):
    task, model, cfg, history = trained
    save_run("old", model, task.cfg, cfg, history)
    (root / runs.NAMES_FILE).unlink()  # as a runs folder written before names were recorded
    delete_run("old")
    assert not name_was_used("new") and name_was_used("old")
    assert save_run("old", model, task.cfg, cfg, history).name == "old-2"


def test_only_its_owner_deletes_a_run(root, trained):
    task, model, cfg, history = trained
    mine = save_run("mine", model, task.cfg, cfg, history, owner="alice")
    assert mine.owner == "alice" and load_run("mine")[1]["owner"] == "alice"
    with pytest.raises(PermissionError, match="belongs to another visitor: only they can delete it"):
        delete_run("mine", owner="bob")
    assert (root / "mine").is_dir()
    delete_run("mine", owner="alice")
    assert not (root / "mine").exists()


def test_a_run_without_owner_is_read_only_for_owners_and_deletable_from_the_command_line(root, trained):
    task, model, cfg, history = trained
    assert save_run("cli", model, task.cfg, cfg, history).owner is None
    with pytest.raises(PermissionError, match="has no owner .* delete its folder on the server"):
        delete_run("cli", owner="alice")
    delete_run("cli")  # the CLI and a notebook act for whoever can write the folder
    assert not (root / "cli").exists()


def test_claim_records_the_owner_of_an_unowned_run_only(root, trained):
    task, model, cfg, history = trained
    save_run("job", model, task.cfg, cfg, history, extra={"status": "finished"})
    weights = (root / "job" / checkpoints.MODEL_FILE).read_bytes()
    claim_run("job", "alice")
    claim_run("job", "alice")  # again: nothing changes
    info = next(r for r in list_runs() if r.name == "job")
    assert info.owner == "alice" and load_run("job")[1]["status"] == "finished" and info.steps == len(history)
    assert (root / "job" / checkpoints.MODEL_FILE).read_bytes() == weights
    with pytest.raises(PermissionError, match="another visitor"):
        claim_run("job", "bob")
    with pytest.raises(ValueError, match="owner"):
        claim_run("job", "")
    assert load_run("job")[1]["owner"] == "alice"


def test_shipped_models_are_read_only(root, trained, monkeypatch):
    task, model, cfg, history = trained
    save_run("shipped", model, task.cfg, cfg, history)
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", root.parent)  # a runs folder inside pretrained/
    for act in (lambda: delete_run("shipped"), lambda: claim_run("shipped", "alice")):
        with pytest.raises(PermissionError, match="shipped models are read-only"):
            act()
    assert (root / "shipped" / checkpoints.META_FILE).is_file() and "owner" not in load_run("shipped")[1]


def test_a_run_on_own_data_is_private_to_its_owner_until_shared(root, trained):
    from explorer.tasks.own_data import pairs_config

    task = make_task(pairs_config("".join(f"s{i} a\ta s{i}\n" for i in range(30))))
    model = build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1,
                                                      n_decoder_layers=1, d_ff=32)), seed=0)
    own = save_run("own", model, task.cfg, TrainConfig(steps=1), [], owner="alice")
    preset = save_run("preset", trained[1], trained[0].cfg, trained[2], trained[3], owner="alice")
    assert own.own_data and own.private and not preset.private
    assert [r.name for r in runs.visible_runs("bob")] == ["preset"]
    assert {r.name for r in runs.visible_runs("alice")} == {"own", "preset"}
    assert {r.name for r in list_runs()} == {"own", "preset"}          # the CLI sees every run
    with pytest.raises(PermissionError, match="another visitor"):
        runs.share_run("own", "bob", True)
    runs.share_run("own", "alice", True)
    assert runs.run_info("own").visible_to("bob") and not runs.run_info("own").private
    runs.share_run("own", "alice", False)
    assert not runs.run_info("own").visible_to("bob")
    meta = json.loads((root / "own" / "meta.json").read_text())
    del meta["private"]                                                # a run saved before runs were private
    (root / "own" / "meta.json").write_text(json.dumps(meta))
    assert runs.run_info("own").private and not runs.run_info("own").visible_to(None)
