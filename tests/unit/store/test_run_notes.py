"""Runs as a researcher keeps them: notes and tags (the owner's only, within explorer.limits, meta.json
rewritten whole), the study a search trial's run belongs to, and the throughput every run records."""

import json

import pytest

from explorer.cli.main import main
from explorer.jobs.training import TrainingJob
from explorer.limits import MAX_NOTE_CHARS, MAX_TAG_CHARS, MAX_TAGS, check_notes, check_tags
from explorer.model import build_model
from explorer.store.checkpoints import read_meta, write_meta
from explorer.store.runs import annotate_run, run_info, save_run

ME, YOU = "a" * 32, "b" * 32


def save(trained, name="run", **kw):
    task, model, cfg, history = trained
    return save_run(name, model, task.cfg, cfg, history, **kw)


def test_notes_and_tags_round_trip_for_their_owner(trained):
    info = save(trained, owner=ME)
    assert info.notes == "" and info.tags == ()
    back = annotate_run(info.name, notes="  lr too high?\ntry 3e-3  ", tags=["baseline", " pre  LN ", "Baseline"],
                        owner=ME)
    assert back.notes == "lr too high?\ntry 3e-3" and back.tags == ("baseline", "pre LN")
    assert run_info(info.name).notes == back.notes and run_info(info.name).tags == back.tags
    meta = json.loads((info.path / "meta.json").read_text())
    assert meta["tags"] == ["baseline", "pre LN"] and meta["owner"] == ME and meta["final"] == info.final
    annotate_run(info.name, tags=[], owner=ME)   # notes untouched when not given
    assert run_info(info.name).tags == () and run_info(info.name).notes == back.notes
    assert not list(info.path.glob("*.tmp*"))     # written through a temporary file, renamed into place


def test_only_the_owner_annotates_and_the_cli_may(trained):
    mine, nobodys = save(trained, "mine", owner=ME), save(trained, "nobodys")
    with pytest.raises(PermissionError, match="belongs to another visitor"):
        annotate_run(mine.name, notes="hijacked", owner=YOU)
    with pytest.raises(PermissionError, match="has no owner"):
        annotate_run(nobodys.name, tags=["x"], owner=YOU)
    assert run_info(mine.name).notes == "" and run_info(nobodys.name).tags == ()
    assert annotate_run(nobodys.name, tags=["cli"]).tags == ("cli",)   # no owner given: the command line


def test_limits_on_notes_and_tags(trained):
    info = save(trained, owner=ME)
    assert check_notes("x" * MAX_NOTE_CHARS) == "x" * MAX_NOTE_CHARS
    with pytest.raises(ValueError, match=f"at most {MAX_NOTE_CHARS:,}"):
        annotate_run(info.name, notes="x" * (MAX_NOTE_CHARS + 1), owner=ME)
    with pytest.raises(ValueError, match=f"at most {MAX_TAGS}"):
        check_tags([f"t{i}" for i in range(MAX_TAGS + 1)])
    with pytest.raises(ValueError, match=f"at most {MAX_TAG_CHARS}"):
        check_tags(["y" * (MAX_TAG_CHARS + 1)])
    assert check_tags(["line\nbreak"]) == ("line break",)   # whitespace is collapsed, not refused
    for bad in (["a,b"], ["bell\x07"], ["rtl\u202e"]):
        with pytest.raises(ValueError, match="comma or a control character"):
            check_tags(bad)
    with pytest.raises(ValueError, match="list of texts"):
        check_tags("one string")
    assert check_tags([f"t{i}" for i in range(MAX_TAGS)] + ["T0", "  "]) == tuple(f"t{i}" for i in range(MAX_TAGS))
    assert run_info(info.name).notes == ""     # nothing over a limit was written


def test_every_run_records_its_throughput_and_old_runs_still_load(trained):
    _, _, _, history = trained
    info = save(trained, wall_seconds=history[-1].elapsed + 2.0)
    assert info.steps_per_second == pytest.approx(6 / history[-1].elapsed)
    assert info.wall_seconds == pytest.approx(history[-1].elapsed + 2.0)
    default = save(trained, "default")   # a caller that trained without pausing: the trainer's seconds
    assert default.wall_seconds == pytest.approx(history[-1].elapsed)
    meta = read_meta(default.path)
    write_meta(default.path, {k: v for k, v in meta.items() if k not in ("steps_per_second", "wall_seconds")})
    old = run_info(default.name)   # saved before throughput was recorded: derived from steps and duration
    assert old.steps_per_second == pytest.approx(6 / history[-1].elapsed) and old.wall_seconds is None


def test_a_trial_run_names_its_study(trained):
    info = save(trained, "study-t3", extra={"status": "finished", "search": "my-study", "trial": 3})
    assert (info.study, info.trial) == ("my-study", 3)
    assert (save(trained, "plain").study, save(trained, "plain").trial) == (None, None)


def test_a_training_job_records_its_wall_time_across_a_resume(trained):
    task, trained_model, cfg, _ = trained
    model = build_model(trained_model.cfg, seed=1)
    job = TrainingJob(model, task, cfg.replace(steps=3), name="walled", owner=ME)
    job.start()
    job.join()
    first = run_info(job.run_name)
    assert first.wall_seconds >= first.duration > 0 and first.steps_per_second == pytest.approx(3 / first.duration)
    again = TrainingJob.from_run(first.name, owner=ME)
    again.resume(extra_steps=2)
    again.join()
    second = run_info(again.run_name)
    assert second.steps == 5 and second.wall_seconds >= first.wall_seconds + (second.duration - first.duration)


def test_the_command_line_tags_and_notes_any_run_with_one_line_errors(trained, capsys):
    name = save(trained, "cli-run", owner=ME).name
    assert main(["runs", "tag", name, "--add", "baseline", "--add", "lr-sweep"]) == 0
    assert main(["runs", "tag", name, "--remove", "BASELINE", "--add", "warmup"]) == 0
    assert run_info(name).tags == ("lr-sweep", "warmup") and capsys.readouterr().out.endswith("lr-sweep, warmup\n")
    assert main(["runs", "note", name, "diverged at 3e-2"]) == 0 and run_info(name).notes == "diverged at 3e-2"
    capsys.readouterr()
    for argv, says in ((["runs", "tag", "no-such-run", "--add", "x"], "no run named"),
                       (["runs", "tag", name, "--add", "a,b"], "comma"),
                       (["runs", "tag", name], "give --add"),
                       (["runs", "note", name, "x" * (MAX_NOTE_CHARS + 1)], "at most")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1 and "Traceback" not in err
    assert run_info(name).tags == ("lr-sweep", "warmup")
