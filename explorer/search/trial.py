"""One trial, trained where an executor puts it (this process, a worker process, a Ray task): plain data
in, plain data out, so every executor runs the same function and gets the same numbers.

    out = run_trial(spec)      # spec: trial_spec(...); out: value, state, reports, worker, seconds, error, run

The driver samples; a trial receives fixed params and its own seed. Pruning happens here, between
evaluations, against the finished trials the driver knew when it sent the trial (`spec["peers"]`), with
Optuna's own pruner on a throwaway in-memory study, so no worker needs the driver's storage.
"""

from __future__ import annotations

import functools
import math
import os
import time

import torch

from explorer.model import build_model
from explorer.search.objectives import VALIDATION, measure
from explorer.search.space import FIELDS
from explorer.search.worker import worker_id
from explorer.store.resume import state_payload
from explorer.tasks import TASK_PRESETS, make_task, presets
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps

COMPLETE, PRUNED, FAIL = "COMPLETE", "PRUNED", "FAIL"   # Optuna's TrialState names
PRUNERS = ("none", "median", "halving")
STOPPED = "stopped before it finished"


@functools.lru_cache(maxsize=8)
def _task(preset: str, data_seed: int | None, dim: int | None, text: str = ""):
    data = presets.preset_or_pairs(preset, text, data_seed)
    return make_task(data.replace(dim=dim) if dim is not None else data)


def configs(spec: dict):
    """(task, ModelConfig, TrainConfig) of a trial: the base settings with its params on top.
    ValueError when the combination cannot exist (d_model not divisible by n_heads, ...)."""
    fields = {**spec["base"], **spec["params"]}
    preset = spec["task"]
    # the notebook's vectors are d_model wide
    dim = fields.get("d_model") if preset in TASK_PRESETS and TASK_PRESETS[preset].name == "order-vectors" else None
    task = _task(preset, spec.get("data_seed"), dim, spec.get("data", ""))
    model = {k: v for k, v in fields.items() if FIELDS.get(k, ("",))[0] == "model"}
    layers = model.pop("n_layers", None)
    if layers is not None:
        model.update(n_encoder_layers=layers, n_decoder_layers=layers)
    if "d_model" in model:
        model.setdefault("d_ff", 2 * model["d_model"])
    # every field as an override, so the task cannot quietly swap an invalid choice for a valid one
    model_cfg = task.model_config(None, **model)
    task.check(model_cfg)
    train = {k: v for k, v in fields.items() if FIELDS.get(k, ("",))[0] == "train"}
    steps = train.get("steps", 1)
    train["warmup"] = min(train.get("warmup", 0), max(0, steps - 1))
    # the loss-spike guard off: a trial measures what training does (experiments/base.py, `measuring`)
    train_cfg = TrainConfig(**{"spike_nats": 0.0, "threads": 1, **train, "seed": spec["seed"],
                               "eval_every": spec.get("eval_every", 0),
                               "eval_examples": spec.get("eval_examples", 200)})
    return task, model_cfg, train_cfg


class _Pruner:
    """Optuna's pruner over the peers' intermediate values: `should_prune(step, value)`."""

    def __init__(self, kind: str, direction: str, peers: list, steps: int) -> None:
        import optuna  # in a worker only when a trial prunes: a trial is plain data in and out

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        pruner = (optuna.pruners.MedianPruner(n_startup_trials=2) if kind == "median" else
                  optuna.pruners.SuccessiveHalvingPruner(min_resource=max(1, steps // 8), reduction_factor=2))
        self.study = optuna.create_study(direction=direction, pruner=pruner)
        self.study.add_trials(peers)
        self.trial = self.study.ask()

    def should_prune(self, step: int, value: float) -> bool:
        self.trial.report(value, step)
        return self.trial.should_prune()

    def rungs(self) -> dict:
        """The halving pruner's bookkeeping, for the driver to store with the trial."""
        mine = self.study.get_trials(deepcopy=False)[-1]   # the asked trial, as the study stores it
        return {k: v for k, v in mine.system_attrs.items() if k.startswith("completed_rung_")}


def _payload(model, task, train_cfg, state) -> dict:
    """What the driver needs to save the run as any other (explorer.store.runs.save_run, resumable)."""
    return {"model_cfg": model.cfg.to_dict(), "task_cfg": task.cfg.to_dict(), "train_cfg": train_cfg.to_dict(),
            **state_payload(state), "history": list(state.history)}


def run_trial(spec: dict) -> dict:
    """Train one trial; never raises (a failure is a FAIL state with its reason). One torch thread."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    out = {"number": spec.get("number"), "value": math.nan, "state": FAIL, "reports": [], "worker": worker_id(),
           "seconds": 0.0, "error": "", "rungs": {}, "run": None}
    stop_file = spec.get("stop_file")
    try:
        task, model_cfg, train_cfg = configs(spec)
        model = build_model(model_cfg, seed=train_cfg.seed)
        state = new_state(model, task, train_cfg)
        metric = spec["metric"]
        names = spec.get("metrics") or [metric]
        reported = metric if metric in VALIDATION else None   # params or seconds: nothing to report while training
        pruner = (_Pruner(spec["pruner"], spec["direction"], spec.get("peers", []), train_cfg.steps)
                  if spec.get("pruner", "none") != "none" else None)
        last = None
        for rec in train_steps(model, task, train_cfg, state):
            last = rec
            if stop_file and os.path.exists(stop_file):
                out["error"] = STOPPED
                return out
            value = getattr(rec, reported) if reported else None
            if value is not None and rec.step < train_cfg.steps and rec.stopped is None:
                out["reports"].append((rec.step, float(value)))
                if pruner is not None and pruner.should_prune(rec.step, float(value)):
                    out.update(state=PRUNED, value=float(value), rungs=pruner.rungs())
                    break
        if out["state"] != PRUNED:
            if last is None or last.stopped:
                out["error"] = last.stopped if last is not None else "no step ran"
            else:
                values = [measure(name, last, model, time.perf_counter() - start) for name in names]
                out.update(state=COMPLETE, value=values[0], values=values)
                if reported:
                    out["reports"].append((last.step, out["value"]))
            if pruner is not None:
                out["rungs"] = pruner.rungs()
        if spec.get("keep_run") and last is not None:
            out["run"] = _payload(model, task, train_cfg, state)
    except (ValueError, RuntimeError) as err:   # a config that cannot exist, a model too big: this trial only
        out["error"] = str(err) or type(err).__name__
    finally:
        out["seconds"] = time.perf_counter() - start
    return out


__all__ = ["COMPLETE", "PRUNED", "FAIL", "PRUNERS", "STOPPED", "configs", "run_trial"]
