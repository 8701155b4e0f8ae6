"""Refuse a run before it starts: the memory and time a training run would take on this machine.

    check_budget(cfg, train_cfg, task)      # ValueError saying what to reduce, if it would not fit
    estimate_budget(cfg, train_cfg, task)   # Budget: parameters, memory, seconds per step and per run
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .config import ModelConfig, flops_per_token, human, param_count, train_memory_bytes
from .tasks import Task
from .train_config import TrainConfig

# Guard rails: a speed below what classroom-sized models reach on one thread, so the estimate errs
# pessimistic (bench/README.md, "Budget"). Extra threads and evaluation steps are not counted.
MAX_TRAIN_BYTES = 2 * 2**30
MAX_RUN_SECONDS = 600.0
FLOPS_PER_SECOND = 10e9
STEP_OVERHEAD_S = 0.01


@dataclass(frozen=True)
class Budget:
    params: int
    state_bytes: float        # weights, gradients and Adam moments
    activation_bytes: float
    step_s: float             # estimated seconds per training step
    run_s: float              # step_s * steps

    @property
    def memory_bytes(self) -> float:
        return self.state_bytes + self.activation_bytes


def estimate_budget(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> Budget:
    """Memory (config.train_memory_bytes) and time (FLOPs at FLOPS_PER_SECOND) of one run."""
    seq_len = task.longest + 1  # a seq2seq target carries BOS or EOS
    mem = train_memory_bytes(cfg, train_cfg.batch_size, seq_len)
    flops = flops_per_token(cfg, seq_len)["train"] * train_cfg.batch_size * seq_len
    step_s = STEP_OVERHEAD_S + flops / FLOPS_PER_SECOND
    return Budget(param_count(cfg)["total"], mem["weights"] + mem["gradients"] + mem["optimizer"],
                  mem["activations"], step_s, step_s * train_cfg.steps)


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
        fits = int((MAX_RUN_SECONDS - STEP_OVERHEAD_S) // b.step_s)
        fewer = f"reduce steps to {fits} or fewer, or " if fits >= 1 else ""
        raise ValueError(f"{train_cfg.steps} steps would take about {b.run_s / 60:.0f} min "
                         f"({b.step_s:.2f} s per step at ~{FLOPS_PER_SECOND / 1e9:.0f} GFLOP/s), over the "
                         f"{MAX_RUN_SECONDS / 60:.0f} min limit; {fewer}reduce batch_size, d_model, d_ff "
                         "or the number of layers")


__all__ = ["MAX_TRAIN_BYTES", "MAX_RUN_SECONDS", "FLOPS_PER_SECOND", "STEP_OVERHEAD_S", "Budget", "estimate_budget",
           "check_budget"]
