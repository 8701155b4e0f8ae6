"""Refuse a run before it starts: the memory and time a training run would take on this machine.

    check_budget(cfg, train_cfg, task)      # ValueError saying what to reduce, if it would not fit
    estimate_budget(cfg, train_cfg, task)   # Budget: parameters, memory, seconds per step and per run

Memory comes from the closed form (config.train_memory_bytes). Time comes from a probe: a few real
training steps and one evaluation of this very config on this machine, timed once and cached, since
FLOPs alone mispredict small models by 2-10x (bench/README.md, "Estimates"). A probe that would refuse the
run is taken again once it is a minute old, keeping the fastest: a machine busy for a moment slows a probe,
and a refusal should not outlive the moment.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from dataclasses import dataclass

import numpy as np
import torch

from explorer.config import ModelConfig, flops_per_token, human, param_count, train_memory_bytes
from explorer.evaluation import evaluate, snapshot
from explorer.jobs.slots import env_number
from explorer.model import build_model
from explorer.tasks import Task
from explorer.train_config import TrainConfig
from explorer.training import train_steps

MAX_TRAIN_BYTES = 2 * 2**30
# Ten minutes a run keeps a shared classroom server shared; a server of one's own may allow more (10 s to a day).
MAX_RUN_SECONDS = float(env_number("EXPLORER_MAX_RUN_S", 600.0, 10.0, 24 * 3600.0))
PEAK_FLOPS = 200e9     # faster than any laptop core: a run over the limit even at this speed is not probed
PROBE_STEPS = 4        # the first warms up, the next three are timed
SLOW_STEP_S = 0.2      # a step slower than this is timed once: the probe itself should not keep a user waiting
REPROBE_S = 60.0       # a refusing probe older than this is taken again (bench/README.md, "Estimates")
MAX_PROBES = 128       # configs whose probe is kept
_PROBE_LOCK = threading.Lock()  # one probe at a time: two at once would time each other
_PROBES: dict[tuple, tuple[Probe, float]] = {}   # (config, task config, batch, threads, evals) -> (probe, when)


@dataclass(frozen=True)
class Probe:
    """Measured on this machine: seconds per training step, per evaluation, per attention snapshot."""

    step_s: float
    eval_s: float
    snapshot_s: float


@dataclass(frozen=True)
class Budget:
    params: int
    state_bytes: float        # weights, gradients and Adam moments
    activation_bytes: float
    step_s: float             # seconds per training step (measured, or the optimistic bound)
    run_s: float              # the whole run: steps, evaluations and snapshots
    measured: bool = True     # False: too long to probe, run_s is a lower bound at PEAK_FLOPS

    @property
    def memory_bytes(self) -> float:
        return self.state_bytes + self.activation_bytes


def _memory(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> dict:
    return train_memory_bytes(cfg, train_cfg.batch_size, task.longest + 1)  # a target carries BOS or EOS


def _optimistic_step_s(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> float:
    seq_len = task.longest + 1
    return flops_per_token(cfg, seq_len)["train"] * train_cfg.batch_size * seq_len / PEAK_FLOPS


def _measure(cfg: ModelConfig, task: Task, batch_size: int, threads: int, eval_examples: int) -> Probe:
    # a tiny learning rate and no spike check: the same work as a real step, and no probe ever diverges
    probe_cfg = TrainConfig(steps=PROBE_STEPS + 1, batch_size=batch_size, threads=threads, lr=1e-9, warmup=0,
                            spike_nats=0.0, eval_every=0, snapshot_every=0, eval_examples=eval_examples)
    before = torch.get_num_threads()
    with _PROBE_LOCK, torch.random.fork_rng():  # leave the caller's threads and random state as they were
        try:
            model = build_model(cfg, seed=0)
            times, steps = [], train_steps(model, task, probe_cfg)
            for rec in steps:  # stops before the last step, which would evaluate
                times.append(rec.elapsed)
                if len(times) == PROBE_STEPS or len(times) == 2 and times[1] - times[0] > SLOW_STEP_S:
                    break
            steps.close()
            eval_s = min(_timed(lambda: evaluate(model, task, eval_examples)) for _ in range(2))  # the first warms up
            snapshot_s = _timed(lambda: snapshot(model, task))
        finally:
            torch.set_num_threads(before)
    step_s = float(np.median([b - a for a, b in zip(times, times[1:])]))  # the steps after the first
    return Probe(step_s, eval_s, snapshot_s)


def _timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def probe(cfg: ModelConfig, train_cfg: TrainConfig, task: Task, max_age: float = math.inf) -> Probe:
    """This config's step, evaluation and snapshot times on this machine: cached per config, the fastest of
    its probes; a cached one older than `max_age` seconds is probed again."""
    # a task's seed draws its examples, not their shapes: the seeds of an experiment share one probe
    key = (cfg, task.cfg.replace(seed=0), train_cfg.batch_size, train_cfg.threads, train_cfg.eval_examples)
    held = _PROBES.get(key)
    if held is not None and time.monotonic() - held[1] < max_age:
        return held[0]
    new = _measure(cfg, task, *key[2:])
    if held is not None:  # load only ever slows a probe: the fastest is the closest to this machine's speed
        new = Probe(*(min(a, b) for a, b in zip(dataclasses.astuple(held[0]), dataclasses.astuple(new))))
    if key not in _PROBES and len(_PROBES) >= MAX_PROBES:
        _PROBES.pop(next(iter(_PROBES)))  # the oldest config
    _PROBES[key] = (new, time.monotonic())
    return new


def _counts(train_cfg: TrainConfig) -> tuple[int, int]:
    """Evaluations and attention snapshots a run makes (the last step always evaluates)."""
    n, every = train_cfg.steps, train_cfg.eval_every
    evals = (n // every + (n % every != 0)) if every else 1
    return evals, (n // train_cfg.snapshot_every if train_cfg.snapshot_every else 0)


def estimate_budget(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> Budget:
    """Memory and time of one run; the time from `probe`, unless even PEAK_FLOPS would take too long."""
    mem = _memory(cfg, train_cfg, task)
    state = mem["weights"] + mem["gradients"] + mem["optimizer"]
    params = param_count(cfg)["total"]
    fastest = _optimistic_step_s(cfg, train_cfg, task)
    if mem["weights"] + mem["gradients"] + mem["optimizer"] + mem["activations"] > MAX_TRAIN_BYTES \
            or fastest * train_cfg.steps > MAX_RUN_SECONDS:
        return Budget(params, state, mem["activations"], fastest, fastest * train_cfg.steps, measured=False)
    evals, snapshots = _counts(train_cfg)

    def run_s(p: Probe) -> float:
        return train_cfg.steps * p.step_s + evals * p.eval_s + snapshots * p.snapshot_s

    p = probe(cfg, train_cfg, task)
    if run_s(p) > MAX_RUN_SECONDS:  # a refusal stands on a recent probe: a busy minute must not refuse it for good
        p = probe(cfg, train_cfg, task, max_age=REPROBE_S)
    return Budget(params, state, mem["activations"], p.step_s, run_s(p))


def check_budget(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> None:
    """Raise ValueError, saying what to reduce, if the run would not fit this machine."""
    cores = os.cpu_count() or 1
    if train_cfg.threads > cores:
        raise ValueError(f"threads={train_cfg.threads} is more than the {cores} CPU cores of this machine; "
                         f"use threads <= {cores}")
    b = estimate_budget(cfg, train_cfg, task)
    if b.memory_bytes > MAX_TRAIN_BYTES:
        need = f"training this model needs about {b.memory_bytes / 2**30:.2f} GiB, over the " \
               f"{MAX_TRAIN_BYTES / 2**30:.0f} GiB limit"
        if b.state_bytes >= b.activation_bytes:
            raise ValueError(f"{need}: most of it is its {human(b.params)} parameters with their gradients "
                             "and Adam moments; reduce d_model, d_ff, the number of layers or the vocabulary")
        raise ValueError(f"{need}: most of it is activations; reduce batch_size={train_cfg.batch_size}, "
                         "d_model or the number of layers")
    if b.run_s > MAX_RUN_SECONDS:
        per_step = b.run_s / train_cfg.steps
        fits = int(MAX_RUN_SECONDS // per_step)
        fewer = f"reduce steps to {fits:,} or fewer, or " if fits >= 1 else ""
        how = (f"measured here: {b.step_s * 1000:.0f} ms a step, evaluations included {per_step * 1000:.0f} ms"
               if b.measured else "even at the fastest speed a laptop core reaches")
        raise ValueError(f"{train_cfg.steps:,} steps would take {'about' if b.measured else 'at least'} "
                         f"{b.run_s / 60:.0f} min ({how}), over the {MAX_RUN_SECONDS / 60:.0f} min limit; "
                         f"{fewer}reduce batch_size, d_model, d_ff or the number of layers")


__all__ = ["MAX_TRAIN_BYTES", "MAX_RUN_SECONDS", "PEAK_FLOPS", "Probe", "probe", "Budget", "estimate_budget",
           "check_budget"]
