"""Random configurations, valid and invalid, through the validation the UI uses (ModelConfig, then
Task.check): each either builds a model that runs a forward pass on the task's data, or is refused
with a ValueError that names a field. No other exception, for 1,000 examples."""

import dataclasses

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.config import ACTIVATIONS, ARCHITECTURES, ATTN_SCALES, NORMS, POS_ENCODINGS, RESIDUALS, ModelConfig
from explorer.model import build_model
from explorer.tasks import TASK_PRESETS, make_task

FIELDS = [f.name for f in dataclasses.fields(ModelConfig)]
TASKS = {name: make_task(name) for name in ("reversal-fast", "order", "order-vectors", "char-lm")}
DATA = {name: task.sample(2, torch.Generator().manual_seed(0)) for name, task in TASKS.items()}

junk = st.one_of(st.none(), st.text(max_size=4), st.floats(allow_nan=True, allow_infinity=True),
                 st.booleans(), st.integers(-5, 5))


def small_int(lo, hi):
    return st.one_of(st.integers(lo, hi), junk)


def name_from(valid):
    return st.one_of(st.sampled_from(valid), st.text(max_size=8), junk)


config_fields = st.fixed_dictionaries({}, optional={
    "arch": name_from(ARCHITECTURES),
    "src_vocab_size": small_int(0, 140),
    "tgt_vocab_size": small_int(0, 140),
    "d_model": small_int(1, 48),
    "n_heads": small_int(1, 8),
    "n_encoder_layers": small_int(0, 3),
    "n_decoder_layers": small_int(0, 3),
    "d_ff": small_int(1, 64),
    "dropout": st.one_of(st.floats(-0.5, 1.5), junk),
    "pos_encoding": name_from(POS_ENCODINGS),
    "pe_base": st.one_of(st.floats(-10, 1e5), junk),
    "norm": name_from(NORMS),
    "residual": name_from(RESIDUALS),
    "attn_scale": name_from(ATTN_SCALES),
    "activation": name_from(ACTIVATIONS),
    "max_len": small_int(0, 80),
    "tie_embeddings": st.booleans(),
    "n_classes": small_int(0, 4),
    "pad_idx": small_int(-1, 3),
})


def forward(model, task_name):
    batch, kind = DATA[task_name], TASKS[task_name].kind
    args = {"seq2seq": (batch.src, batch.tgt_in), "classify": (batch.src,), "lm": (batch.tgt_in,)}[kind]
    with torch.no_grad():
        return model(*args)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=config_fields, task_name=st.sampled_from(sorted(TASKS)), fill=st.booleans())
def test_random_configs_build_or_name_the_field(fields, task_name, fill):
    task = TASKS[task_name]
    try:
        # Half the time the task fills in what it owns (vocab sizes, arch), as the UI does.
        cfg = task.model_config(ModelConfig(**fields)) if fill else ModelConfig(**fields)
        task.check(cfg)
    except ValueError as err:
        assert any(f in str(err) for f in FIELDS), f"message names no field: {err}"
        return
    out = forward(build_model(cfg, seed=0), task_name)
    assert torch.isfinite(out).all()


def test_presets_are_all_covered():
    assert set(TASKS) <= set(TASK_PRESETS)
