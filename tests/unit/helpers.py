"""Data and helpers more than one test module uses (the shipped manifest, quick configs, a run cut short)."""

from __future__ import annotations

import random

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import runs
from explorer.store.checkpoints import pretrained_manifest
from explorer.tasks import TaskConfig
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps

WORDS = "zero one two three four five six seven eight nine".split()


def number_words(n: int = 300, seed: int = 0) -> str:
    """'three one four<TAB>3 1 4' lines: distinct sources of 1-4 number words."""
    rng, seen, lines = random.Random(seed), set(), []
    while len(lines) < n:
        xs = tuple(rng.randrange(10) for _ in range(rng.randint(1, 4)))
        if xs not in seen:
            seen.add(xs)
            lines.append(" ".join(WORDS[x] for x in xs) + "\t" + " ".join(map(str, xs)))
    return "\n".join(lines) + "\n"


MANIFEST = pretrained_manifest()


BY_NAME = {e["name"]: e for e in MANIFEST}


TASK = TaskConfig("reversal", n_symbols=6, min_len=3, max_len=5, n_train=300, n_val=20)


# dropout and clipping on, warmup and cosine decay under way at the cut: everything that must carry over
MODEL = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32, dropout=0.1)


TRAIN = TrainConfig(steps=14, batch_size=8, lr=3e-3, warmup=6, eval_every=4, eval_examples=8, grad_clip=0.5,
                    snapshot_every=0, seed=3, batching="by-length")


def interrupted(task, at: int, name: str = "cut") -> str:
    """Train `at` steps, stop, save with the state to resume from."""
    model = build_model(task.model_config(MODEL), seed=TRAIN.seed)
    state = new_state(model, task, TRAIN)
    steps = train_steps(model, task, TRAIN, state)
    for _ in range(at):
        next(steps)
    steps.close()
    return runs.save_run(name, model, task.cfg, TRAIN, state.history, state=state).name


# Reversal-fast: 1 layer each side, d_model 64, 300 steps at lr 5e-3 gives >= 0.99 for seeds 0-4
# (250 steps dipped to 0.94 for one seed); about 8 s on one loaded core.
FAST = ModelConfig(d_model=64, n_heads=4, n_encoder_layers=1, n_decoder_layers=1, d_ff=256)


FAST_TRAIN = TrainConfig(steps=300, batch_size=64, lr=5e-3, warmup=30, eval_every=0, eval_examples=500)
