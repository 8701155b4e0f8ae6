"""How to train: `TrainConfig` (optimiser, schedule, regularisation, evaluation, snapshots), checked
when it is made, and the learning rate its schedule gives each step (`lr_at`).

    cfg = TrainConfig(steps=300, lr=5e-3, warmup=30)   # ValueError names a bad field and what is valid
    lr_at(0, cfg), lr_at(299, cfg)                     # linear warmup, then cosine / inverse-sqrt / constant
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from explorer.config import FromDict

SCHEDULES = ("cosine", "inverse_sqrt", "constant")
BATCHING = ("random", "by-length")


def _check(name: str, value, low, below=math.inf, whole: bool = False, low_open: bool = False) -> None:
    """value >= low (> low if low_open) and < below, else a ValueError naming the field."""
    ok = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool)
    ok = ok and math.isfinite(value) and (value > low if low_open else value >= low) and value < below
    if not ok:
        bounds = (f"> {low}" if low_open else f">= {low}") + ("" if below == math.inf else f" and < {below}")
        raise ValueError(f"{name}={value!r} must be {'a whole number' if whole else 'a number'} {bounds}")


@dataclass(frozen=True)
class TrainConfig(FromDict):
    """How to train: optimiser (AdamW), schedule, regularisation, evaluation and snapshots."""

    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    warmup: int = 100            # linear warmup steps before the schedule
    schedule: str = "cosine"     # one of SCHEDULES
    label_smoothing: float = 0.0
    grad_clip: float = 1.0       # max total gradient norm; 0 = off
    weight_decay: float = 0.01   # AdamW, on matrices only
    beta1: float = 0.9
    beta2: float = 0.98          # Vaswani et al.
    seed: int = 0                # batches, dropout, and (by convention) the model's initial weights
    eval_every: int = 100        # 0 = only at the last step
    eval_examples: int = 200
    snapshot_every: int = 0      # 0 = off
    threads: int = 1
    spike_nats: float = 2.0      # stop when a loss exceeds the first step's by this many nats; 0 = off
    batching: str = "random"     # one of BATCHING; "by-length": each batch from one range of lengths (less padding)

    def __post_init__(self) -> None:
        for name, low in (("steps", 1), ("batch_size", 1), ("warmup", 0), ("seed", 0), ("eval_every", 0),
                          ("eval_examples", 1), ("snapshot_every", 0), ("threads", 1)):
            _check(name, getattr(self, name), low, whole=True)
        _check("lr", self.lr, 0, low_open=True)
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule={self.schedule!r} is not known; choose one of {', '.join(SCHEDULES)}")
        if self.batching not in BATCHING:
            raise ValueError(f"batching={self.batching!r} is not known; choose one of {', '.join(BATCHING)}")
        for name, below in (("label_smoothing", 1), ("grad_clip", math.inf), ("weight_decay", math.inf),
                            ("beta1", 1), ("beta2", 1), ("spike_nats", math.inf)):
            _check(name, getattr(self, name), 0, below)

    def replace(self, **changes) -> TrainConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


_SCHEDULE: dict[str, Callable[[int, TrainConfig], float]] = {
    "constant": lambda s, c: 1.0,
    "cosine": lambda s, c: 0.5 * (1 + math.cos(math.pi * min(1.0, (s - c.warmup) / max(1, c.steps - c.warmup)))),
    "inverse_sqrt": lambda s, c: math.sqrt(max(c.warmup, 1) / (s + 1)),
}


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate of update `step` (0-based): linear warmup, then the schedule."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    return cfg.lr * _SCHEDULE[cfg.schedule](step, cfg)


__all__ = ["SCHEDULES", "BATCHING", "TrainConfig", "lr_at"]
