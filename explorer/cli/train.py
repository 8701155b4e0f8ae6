"""`python -m explorer train --task reversal-fast --d-model 64 --steps 500 --name r1` and `resume NAME
[--more N]`: train a model (on a task preset, or a teacher's --data / --text file) and save the run, or
continue a saved run exactly where it stopped. A progress line goes to stderr; the first Ctrl-C ends after
the current step and the run is still saved (exit code 130).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import sys
import threading
import time
from pathlib import Path

from explorer.cli.common import Progress, UsageError, on_ctrl_c, own_file
from explorer.config import ACTIVATIONS, ATTN_SCALES, CLASSROOM_PRESETS, NORMS, POS_ENCODINGS, RESIDUALS
from explorer.jobs.ray_training import RayTrainingJob
from explorer.limits import check_run
from explorer.model import build_model
from explorer.search.ray_cluster import RayUnavailable, acquire, release
from explorer.search.worker import worker_id
from explorer.store.checkpoints import CheckpointError
from explorer.store.runs import open_for_resume, safe_name, save_run, wall_of
from explorer.tasks import TASK_PRESETS, TaskConfig, make_task, own_data, presets
from explorer.train_config import SCHEDULES, TrainConfig
from explorer.training import StepMetrics, TrainState, new_state, train_steps

# ---------------------------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------------------------

MODEL_FLAGS = {  # flag -> (ModelConfig field, type, choices, help)
    "--d-model": ("d_model", int, None, "width of every residual stream vector"),
    "--n-heads": ("n_heads", int, None, "attention heads (must divide d_model)"),
    "--encoder-layers": ("n_encoder_layers", int, None, "encoder blocks"),
    "--decoder-layers": ("n_decoder_layers", int, None, "decoder blocks"),
    "--d-ff": ("d_ff", int, None, "hidden width of the feed-forward network"),
    "--dropout": ("dropout", float, None, "dropout probability"),
    "--pos-encoding": ("pos_encoding", str, POS_ENCODINGS, "positional encoding"),
    "--pe-base": ("pe_base", float, None, "base of sinusoidal / RoPE frequencies"),
    "--norm": ("norm", str, NORMS, "LayerNorm before (pre) or after (post) each sublayer"),
    "--residual": ("residual", str, RESIDUALS, "x + f(x) around each sublayer (add), or f(x) alone (none)"),
    "--activation": ("activation", str, ACTIVATIONS, "feed-forward activation"),
    "--attn-scale": ("attn_scale", str, ATTN_SCALES, "divide q·k by sqrt(d_k) (sqrt_d_k), or leave it unscaled"),
}
TASK_FLAGS = {
    "--n-symbols": ("n_symbols", int, "task: alphabet size (reversal/copy/sort) or distractors (order)"),
    "--min-len": ("min_len", int, "task: shortest sequence"),
    "--max-len": ("max_len", int, "task: longest sequence"),
    "--n-train": ("n_train", int, "task: training examples"),
    "--task-seed": ("seed", int, "task: seed of the generated data"),
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", default="reversal-fast", choices=list(TASK_PRESETS), help="task preset")
    for flag, (dest, typ, text) in TASK_FLAGS.items():
        p.add_argument(flag, dest=f"task_{dest}", type=typ, metavar=dest.upper(), help=text)
    m = p.add_argument_group("model (defaults: ModelConfig, or --model-size)")
    m.add_argument("--model-size", choices=list(CLASSROOM_PRESETS), help="start from a classroom preset")
    m.add_argument("--layers", type=int, metavar="N", help="encoder and decoder blocks (shortcut)")
    for flag, (dest, typ, choices, text) in MODEL_FLAGS.items():
        m.add_argument(flag, dest=f"model_{dest}", type=typ, choices=choices, help=text,
                       metavar=None if choices else dest.upper())
    m.add_argument("--tie-embeddings", dest="model_tie_embeddings", action=argparse.BooleanOptionalAction,
                   help="share input embedding and output projection")
    t = p.add_argument_group("training (defaults: TrainConfig)")
    for f in dataclasses.fields(TrainConfig):
        typ = type(f.default)
        choices = SCHEDULES if f.name == "schedule" else None
        t.add_argument(_flag(f.name), dest=f"train_{f.name}", type=typ, choices=choices,
                       metavar=None if choices else f.name.upper(), help=f"default {f.default}")
    own = p.add_argument_group("own data (instead of --task; checked before anything is trained)")
    own.add_argument("--data", metavar="FILE.tsv", help="pairs to learn, one a line: source<TAB>target")
    own.add_argument("--text", metavar="FILE", help="a text for the character language model")
    p.add_argument("--name", help="run name (sanitised; made unique); default: the task name")
    p.add_argument("--ray", metavar="ADDRESS", help="train as a Ray actor on the cluster at ADDRESS (HOST:PORT or "
                                                    "ray://HOST:PORT), one CPU; the run is saved here")
    p.add_argument("--json", action="store_true", help="print the saved run as JSON on stdout: run, path, status, "
                                                       "steps, final, driver and worker (host:pid)")
    own.add_argument("--shared", action="store_true",
                     help="list a run on own data to every visitor of the app (it is private otherwise: its "
                          "download holds the data)")


def _picked(args: argparse.Namespace, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in vars(args).items() if k.startswith(prefix) and v is not None}


def _configs(args: argparse.Namespace):
    """(task, model config, train config) from the flags; ValueError names the bad field."""
    task = make_task(own_task_config(args) or TASK_PRESETS[args.task].replace(**_picked(args, "task_")))
    model_kw = _picked(args, "model_")
    if args.layers is not None:
        model_kw = {"n_encoder_layers": args.layers, "n_decoder_layers": args.layers, **model_kw}
    base = CLASSROOM_PRESETS[args.model_size] if args.model_size else None
    model_cfg = task.model_config(base, **model_kw)
    task.check(model_cfg)
    if args.name is not None:
        safe_name(args.name)  # refuse a name with nothing usable before training, not after
    train_cfg = TrainConfig(**_picked(args, "train_"))
    check_run(model_cfg, train_cfg, task)   # the Train page's caps and budget, before the model is built
    return task, model_cfg, train_cfg


def own_task_config(args: argparse.Namespace) -> TaskConfig | None:
    """The task of --data or --text (None without either); UsageError names the file, line and reason."""
    path = args.data or args.text
    if path is None:
        return None
    if args.data and args.text:
        raise UsageError("give --data or --text, not both")
    flag = {dest: flag for flag, (dest, *_) in TASK_FLAGS.items()}
    ignored = [flag[k] for k in _picked(args, "task_") if k != "seed"]
    if ignored:
        raise UsageError(f"{', '.join(ignored)} cannot go with {'--data' if args.data else '--text'}: the file "
                         "is the task (--task-seed draws its split)")
    return own_file(path, own_data.pairs_config if args.data else presets.text_config, args.task_seed or 0)


def _show(progress: Progress, rec: StepMetrics, total: int, force: bool = False) -> None:
    """The training line: step, loss, accuracy, rate and ETA (val_exact once measured)."""
    if not progress.due(force):
        return
    rate = rec.step / rec.elapsed if rec.elapsed > 0 else 0.0
    eta = (total - rec.step) / rate if rate else math.inf
    eta_text = f"{eta:.0f}s" if math.isfinite(eta) else "?"
    line = (f"step {rec.step}/{total}  loss {rec.loss:.4f}  acc {rec.token_acc:.3f}  "
            f"{rate:.1f} steps/s  ETA {eta_text}")
    if rec.val_exact is not None:
        line += f"  val_exact {rec.val_exact:.3f}"
    progress.write(line)


def _train_until_interrupted(model, task, train_cfg, state) -> bool:
    """Train with a progress line; the first Ctrl-C ends after the current step. True if interrupted."""
    stop, progress, total = threading.Event(), Progress(every=5.0), train_cfg.steps
    try:
        with on_ctrl_c(stop.set), contextlib.closing(train_steps(model, task, train_cfg, state)) as steps:
            for rec in steps:
                _show(progress, rec, total)
                if stop.is_set():
                    break
    finally:
        if state.history:
            _show(progress, state.history[-1], total, force=True)
        progress.close()
    return stop.is_set()


def _train_on_ray(address: str, model, task, train_cfg, name: str) -> tuple[TrainState, bool, str]:
    """Train on the cluster with the same progress line; (state, interrupted, worker). Bad address: UsageError."""
    try:
        ray = acquire(address)   # here, so that an address that does not answer is a one-line error (exit 2)
    except RayUnavailable as err:
        raise UsageError(str(err)) from None
    stop, progress, total = threading.Event(), Progress(every=5.0), train_cfg.steps
    job = RayTrainingJob(model, task, train_cfg, name=name, ray_address=address, detached=False, saves=False)
    try:
        with on_ctrl_c(stop.set):
            job.start()
            while not job.ended:
                if stop.is_set():
                    job.stop()
                history = job.history()
                if history:
                    _show(progress, history[-1], total)
                job.join(0.2)
    finally:
        job.stop(wait=True, timeout=60)
        if job.state.history:
            _show(progress, job.state.history[-1], total, force=True)
        progress.close()
        release(ray)
    if job.status == "failed":
        raise UsageError(job.message)
    return job.state, stop.is_set() or job.interrupted, job.worker or worker_id()


def _summary(history: list[StepMetrics]) -> str:
    if not history:
        return "no steps were run"
    last = history[-1]
    parts = [f"steps {last.step}", f"time {last.elapsed:.1f}s", f"loss {last.loss:.4f}",
             f"token_acc {last.token_acc:.3f}", f"seq_acc {last.seq_acc:.3f}"]
    val = next((r for r in reversed(history) if r.val_loss is not None), None)
    if val is not None:
        parts += [f"val_loss {val.val_loss:.4f}", f"val_token_acc {val.val_token_acc:.3f}",
                  f"val_exact {val.val_exact:.3f}"]
    return "  ".join(parts)


def run_train(args: argparse.Namespace) -> int:
    try:
        task, model_cfg, train_cfg = _configs(args)
    except ValueError as e:
        raise UsageError(str(e)) from None
    model = build_model(model_cfg, seed=train_cfg.seed)
    default = Path(args.data or args.text).stem if args.data or args.text else args.task
    began = time.monotonic()
    if args.ray:
        state, interrupted, worker = _train_on_ray(args.ray, model, task, train_cfg, args.name or default)
        train_cfg = train_cfg.replace(threads=1)   # what the worker trained with
    else:
        state = new_state(model, task, train_cfg)
        interrupted, worker = _train_until_interrupted(model, task, train_cfg, state), worker_id()
    wall = time.monotonic() - began
    last = state.history[-1] if state.history else None
    info = save_run(args.name or default, model, task.cfg, train_cfg, state.history, state=state,
                    extra={"interrupted": interrupted, "stopped": last.stopped if last else None,
                           **({"driver": worker_id(), "worker": worker} if args.ray else {})}, shared=args.shared,
                    wall_seconds=wall)
    out = sys.stderr if args.json else sys.stdout
    print(f"run saved to {info.path}", file=out)
    if info.private:
        print("the run holds your data, so the app lists it to nobody; train with --shared to list it to everyone",
              file=out)
    print(_summary(state.history), file=out)
    if args.json:
        status = "diverged" if last is not None and last.stopped else "stopped" if interrupted else "finished"
        print(json.dumps({"run": info.name, "path": str(info.path), "status": status, "steps": info.steps,
                          "final": info.final, "driver": worker_id(), "worker": worker}))
    if last is not None and last.stopped:
        print(last.stopped, file=out)
        return 1
    if interrupted:
        print(f"interrupted after step {state.step}; the run was saved", file=out)
        return 130
    return 0


# ---------------------------------------------------------------------------------------------
# resume
# ---------------------------------------------------------------------------------------------

def add_resume_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="the saved run (see the app's Runs page, or the runs/ folder)")
    p.add_argument("--more", metavar="N", help="train N more steps from where it stopped "
                                                "(default: the rest of its planned steps)")


def run_resume(args: argparse.Namespace) -> int:
    try:
        model, task, train_cfg, state, meta = open_for_resume(args.name)
    except (ValueError, FileNotFoundError, CheckpointError) as e:
        raise UsageError(str(e)) from None
    if args.more is not None:
        if not args.more.isdigit() or int(args.more) < 1:
            raise UsageError(f"--more {args.more!r} must be a whole number of steps >= 1")
        more = int(args.more)
    else:
        more = train_cfg.steps - state.step
        if more < 1:
            raise UsageError(f"run {args.name!r} already trained its {train_cfg.steps:,} steps; "
                             "give --more N to train N more")
    train_cfg = train_cfg.replace(steps=state.step + more)
    try:
        check_run(model.cfg, train_cfg.replace(steps=more), task)   # the steps this resume trains
    except ValueError as e:
        raise UsageError(f"run {args.name!r} cannot resume: {e}") from None
    print(f"resuming {args.name!r} at step {state.step:,}: {more:,} more steps", file=sys.stderr)
    began = time.monotonic()
    interrupted = _train_until_interrupted(model, task, train_cfg, state)
    info = save_run(args.name, model, task.cfg, train_cfg, state.history, state=state,
                    extra={"interrupted": interrupted, "resumed_from": args.name},
                    wall_seconds=wall_of(meta) + time.monotonic() - began)
    print(_summary(state.history))
    print(f"saved as run '{info.name}'")
    return 130 if interrupted else 0
