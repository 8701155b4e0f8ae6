"""`python -m explorer train --data FILE.tsv` and `--text FILE`: a good file trains and saves a run that
reopens with its data; a bad one exits 2 with one line on stderr, before anything is trained or written."""

import json

import pytest

from explorer.cli import main
from explorer.store.runs import open_for_resume, run_info
from tests.system.helpers import TINY, explorer

PAIRS = "".join(f"{a} {b}\t{b} {a}\n" for a in "pqrs" for b in "tuvw")
TEXT = "A teacher pastes a text, and the model learns its characters one by one. " * 10


def test_train_on_a_tsv_saves_a_run_that_reopens_with_its_data(tmp_path, monkeypatch):
    data = tmp_path / "swap.tsv"
    data.write_text(PAIRS)
    out = explorer(["train", "--data", str(data), "--steps", "10", "--task-seed", "2", *TINY], tmp_path / "runs")
    assert out.returncode == 0, out.stderr
    assert f"run saved to {tmp_path / 'runs' / 'swap'}" in out.stdout
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    model, task, *_ = open_for_resume("swap")
    assert task.name == "pairs" and task.cfg.text == PAIRS and task.cfg.seed == 2
    assert model.cfg.src_vocab_size == len(task.vocab) == 3 + 8
    # the app lists a run on own data to nobody (it has no owner there), unless it was trained --shared
    assert "the app lists it to nobody; train with --shared" in out.stdout
    assert run_info("swap").private and not run_info("swap").visible_to("anyone")
    shared = explorer(["train", "--data", str(data), "--steps", "2", "--shared", *TINY], tmp_path / "runs")
    assert shared.returncode == 0 and "lists it to nobody" not in shared.stdout, shared.stderr
    assert not run_info("swap-2").private and run_info("swap-2").visible_to("anyone")


def test_train_on_a_text_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "mine.txt").write_text(TEXT)
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    assert main(["train", "--text", str(tmp_path / "mine.txt"), "--steps", "3", *TINY]) == 0
    _, task, *_ = open_for_resume("mine")
    assert task.kind == "lm" and task.cfg.text == TEXT and set(task.vocab[3:]) == set(TEXT)


BAD = [
    (["--data"], PAIRS + "p q r\n", "bad.tsv: line 17: no tab"),
    (["--data"], PAIRS + "p\tq\tr\n", "bad.tsv: line 17: 2 tabs"),
    (["--data"], PAIRS + "p\t\n", "bad.tsv: line 17: the target is empty"),
    (["--data"], PAIRS + "p\t" + "q " * 70 + "\n", "bad.tsv: line 17: the target has 70 tokens; the limit is 64"),
    (["--data"], PAIRS.encode() + b"\xff\tq\n", "bad.tsv: line 17: not UTF-8 (byte 0xff)"),
    (["--data"], "p\tq\n" * 25_001, "bad.tsv: line 25001: more than 25,000 pairs"),
    (["--text"], "too short", "bad.tsv: the text has 9 characters; the character LM needs 500"),
    (["--data"], None, "bad.tsv: No such file or directory"),
    (["--text", "x.txt", "--data"], PAIRS, "give --data or --text, not both"),
    (["--n-symbols", "4", "--data"], PAIRS, "--n-symbols cannot go with --data"),
]


@pytest.mark.parametrize("args, content, message", BAD, ids=[m.split(";")[0][:36] for *_, m in BAD])
def test_bad_files_exit_2_with_one_line_and_nothing_written(tmp_path, monkeypatch, capsys, args, content, message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    bad = tmp_path / "bad.tsv"
    if content is not None:
        bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["train", *args, str(bad), "--steps", "1", *TINY]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_a_bad_file_in_a_subprocess_exits_2_without_a_traceback(tmp_path):
    (tmp_path / "bad.tsv").write_text(PAIRS + "no tab here\n")
    out = explorer(["train", "--data", str(tmp_path / "bad.tsv")], tmp_path / "runs")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().endswith("bad.tsv: line 17: no tab; each line is source<TAB>target, tokens separated "
                                       "by spaces (exactly one tab)") and out.stderr.count("\n") == 1
    assert not (tmp_path / "runs").exists()


def test_an_experiment_and_a_search_run_on_a_tsv(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    (tmp_path / "swap.tsv").write_text(PAIRS)
    assert main(["experiment", "decoding", "--tiny", "--data", str(tmp_path / "swap.tsv"), "--workers", "1"]) == 0
    stored = json.loads((tmp_path / "runs" / "experiments" / "decoding" / "result.json").read_text())
    assert stored["params"]["task"] == "pairs" and stored["params"]["data"] == PAIRS
    assert main(["search", "--data", str(tmp_path / "swap.tsv"), "--trials", "1", "--steps", "3", "--workers", "1",
                 "--space", "lr=1e-3,3e-3", "--storage", "memory", "--json"]) == 0
    trial = next(p.name for p in (tmp_path / "runs").iterdir() if p.name.startswith("pairs-"))
    _, task, *_ = open_for_resume(trial)   # the trial's run carries the file
    assert task.name == "pairs" and task.cfg.text == PAIRS


@pytest.mark.parametrize("argv, message", [
    (["experiment", "pe-types", "--tiny"], "--data: experiment 'pe-types' makes its own data; the experiments that "
                                           "take your pairs are label-smoothing, decoding, attn-scale, d-head, sweep"),
    (["experiment", "decoding", "--tiny"], "bad.tsv: line 17: no tab"),
    (["search", "--task", "copy"], "give --task or --data, not both"),
    (["search"], "bad.tsv: line 17: no tab"),
])
def test_experiments_and_searches_refuse_bad_data_with_one_line(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    (tmp_path / "bad.tsv").write_text(PAIRS + "no tab here\n")
    assert main([*argv, "--data", str(tmp_path / "bad.tsv")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "runs").exists()
