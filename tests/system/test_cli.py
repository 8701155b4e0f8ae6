"""`python -m explorer train ...` end to end, in a subprocess with its own runs folder."""

import math
import signal

import pytest

from explorer.cli import COMMANDS, main
from explorer.cli import train as cli
from explorer.jobs import budget
from explorer.store.runs import list_runs, load_run
from tests.system.helpers import TINY, explorer


def test_train_writes_a_loadable_run(tmp_path, monkeypatch):
    out = explorer(["train", "--task", "reversal-fast", "--steps", "20", "--eval-every", "10",
                    "--pos-encoding", "rope", "--norm", "post", "--label-smoothing", "0.1", "--name", "cli run",
                    *TINY], tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"run saved to {tmp_path / 'cli-run'}" in out.stdout and "val_exact" in out.stdout
    assert "step 20/20" in out.stderr  # the progress line
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path))
    model, meta, frame = load_run("cli-run")
    assert meta["steps"] == 20 and meta["train"]["label_smoothing"] == 0.1
    assert model.cfg.pos_encoding == "rope" and model.cfg.norm == "post" and model.cfg.n_encoder_layers == 1
    assert len(frame) == 20 and meta["interrupted"] is False


def test_a_bad_flag_exits_2_with_the_message(tmp_path):
    out = explorer(["train", "--d-model", "100", "--n-heads", "8", "--steps", "5"], tmp_path)
    assert out.returncode == 2
    assert "d_model=100 is not divisible by n_heads=8" in out.stderr and "Traceback" not in out.stderr
    assert not any(tmp_path.iterdir())  # nothing was trained or saved


def test_ctrl_c_stops_after_the_step_and_still_saves(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path))
    monkeypatch.setattr(budget, "MAX_RUN_SECONDS", math.inf)   # a run of minutes, checked like any: let it start
    real = cli.train_steps

    def interrupted_at_3(*args):
        for rec in real(*args):
            yield rec
            if rec.step == 3:
                signal.raise_signal(signal.SIGINT)  # Ctrl-C while step 4 is being computed

    monkeypatch.setattr(cli, "train_steps", interrupted_at_3)
    before = signal.getsignal(signal.SIGINT)   # Python's own, unless a Ray driver in this process changed it
    assert main(["train", "--steps", "100000", "--name", "stopped", *TINY]) == 130
    assert "interrupted after step 4" in capsys.readouterr().out  # step 4 was finished, not torn
    assert signal.getsignal(signal.SIGINT) is before  # handler restored
    (info,) = list_runs()
    _, meta, frame = load_run("stopped")
    assert info.name == "stopped" and info.steps == 4 and meta["interrupted"] is True and len(frame) == 4


@pytest.mark.parametrize("argv, message", [
    (["train", "--steps", "0"], "steps=0 must be"),
    (["train", "--task-seed", "-1"], "seed=-1"),
    (["train", "--task", "order", "--d-model", "30", "--n-heads", "4"], "not divisible"),
    (["train", "--name", "..", "--steps", "1"], "no usable characters"),
])
def test_config_errors_return_2_in_process(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_argparse_errors_exit_2_and_subcommands_are_a_registry(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", "--schedule", "sometimes"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err
    assert "train" in COMMANDS and callable(COMMANDS["train"].run)
