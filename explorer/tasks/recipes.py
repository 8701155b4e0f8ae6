"""Recommended recipes: for each task preset, a model and a training run that learn it quickly on a
laptop CPU (one thread). The figures behind them are in bench/README.md (bench/time_to_accuracy.py).

    overrides, train = recommended("reversal-seed")
    task = make_task("reversal-seed")
    model = build_model(task.model_config(ModelConfig(max_len=32).replace(**overrides)), seed=train.seed)

The shipped models (explorer/store/shipped.py) are trained with these same recipes, so there is one source.
"""

from __future__ import annotations

from explorer.train_config import TrainConfig


def _model(d_model: int, layers: int, n_heads: int = 4, d_ff: int | None = None, **kw) -> dict:
    return dict(d_model=d_model, n_heads=n_heads, n_encoder_layers=layers, n_decoder_layers=layers,
                d_ff=d_ff or 2 * d_model, **kw)


def _train(steps: int, lr: float, warmup: int = 50, batch_size: int = 64, **kw) -> TrainConfig:
    # evaluation only at the last step and one thread: what the shipped builds use (the app sets
    # its own evaluation cadence and thread count)
    return TrainConfig(**{**dict(steps=steps, batch_size=batch_size, lr=lr, warmup=warmup, schedule="cosine",
                                 grad_clip=1.0, beta2=0.98, eval_every=0, threads=1), **kw})


RECOMMENDED: dict[str, tuple[dict, TrainConfig]] = {
    # The classroom preset: 4-8 digits; >= 95% exact match in a few seconds, 100% by the end.
    "reversal-fast": (_model(32, 2), _train(800, 3e-3)),
    # The chapter's exercise 2.3: 10-20 integers in 1..100, the textbook model (64/4/2+2/256). A short
    # cosine is the lever that counts; 700 steps end with margin (bench/README.md, "Time to accuracy").
    "reversal-seed": (_model(64, 2, d_ff=256), _train(700, 5e-3, warmup=100)),
    "copy": (_model(32, 1), _train(400, 3e-3)),
    "sort": (_model(32, 2), _train(800, 3e-3)),
    "order": (_model(32, 1, d_ff=64), _train(300, 3e-3)),
    # the notebook's: one block over D=16 vectors, lr 0.01 constant, no warmup, clipping or decay
    "order-vectors": (_model(16, 1), _train(300, 1e-2, warmup=0, schedule="constant", grad_clip=0.0,
                                            weight_decay=0.0)),
    "char-lm": (_model(64, 2, dropout=0.1), _train(800, 3e-3, batch_size=32)),
    # SCAN: one recipe for its three splits, so the experiment compares the data only (bench/README.md,
    # "More to explore: SCAN and a teacher's own data").
    **dict.fromkeys(("scan-simple", "scan-addjump", "scan-length"), (_model(64, 2), _train(1500, 2e-3))),
    # Two layers with rotary positions: the induction head forms in a phase change near step 250 of 800
    # (bench/README.md, "How models learn"); one layer (the shipped induction-1l) cannot form one.
    # Evaluated every 20 steps (200 rows): the loss on the repeated half over training is the phase change.
    "induction": (_model(64, 2, d_ff=64, pos_encoding="rope"), _train(800, 3e-3, eval_every=20)),
    # Grokking as Nanda et al. train it, smaller: one layer, full batch, AdamW with weight decay 1, constant lr
    # after 10 warmup steps, no clipping; training accuracy is 100% by step ~200, validation rises after ~1000
    # (a cosine schedule decays the rate before it groks: 48% at step 1300). Every 50 steps, all of validation.
    "modular-add": (_model(64, 1, d_ff=256, pos_encoding="learned"),
                    _train(2000, 3e-3, warmup=10, batch_size=1_740, schedule="constant", grad_clip=0.0,
                           weight_decay=1.0, spike_nats=0.0, eval_every=50, eval_examples=1_741)),
}


def recommended(preset: str) -> tuple[dict, TrainConfig]:
    """(ModelConfig overrides, TrainConfig) for a task preset. The overrides hold sizes only;
    vocabularies and arch come from the task (Task.model_config)."""
    if preset not in RECOMMENDED:
        raise ValueError(f"no recipe for task preset {preset!r}; choose one of {', '.join(RECOMMENDED)}")
    overrides, train = RECOMMENDED[preset]
    return dict(overrides), train


__all__ = ["RECOMMENDED", "recommended"]
