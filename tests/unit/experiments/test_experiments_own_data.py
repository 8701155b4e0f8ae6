"""Experiments on a teacher's own pairs (task "pairs", the TSV's text in `data`): the experiments that ask
nothing of reversal take them, each seed splitting the file its own way; the others, a preset with data, or
pairs without a valid file are refused by name; a sweep's trials train on the pairs; a result without own
data keeps the cache key it had before own data existed."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from explorer.experiments import EXPERIMENTS, SerialExecutor, own_data_experiments, run
from explorer.experiments._seq2seq import seq2seq_task
from explorer.experiments.runner import CODE_VERSION, cache_key
from explorer.search.study import SearchSpec
from explorer.search.trial import configs
from explorer.tasks import presets
from tests.unit.helpers import number_words

PAIRS = number_words(120)
TAKES = ["label-smoothing", "decoding", "attn-scale", "d-head", "sweep"]


def test_the_experiments_that_take_own_pairs_are_those_that_ask_nothing_of_reversal():
    assert own_data_experiments() == TAKES
    for name in TAKES:
        p = EXPERIMENTS[name].make_params({"task": "pairs", "data": PAIRS}, tiny=True)
        assert p.task == "pairs" and p.data == PAIRS
        assert PAIRS not in repr(p)   # a 4 MiB file stays out of logs and messages


@pytest.mark.parametrize("name", ["pe-types", "alignment-heads"])
def test_experiments_that_need_reversal_refuse_own_pairs(name):
    with pytest.raises(ValueError, match="task='pairs' is not valid"):
        EXPERIMENTS[name].make_params({"task": "pairs", "data": PAIRS}, tiny=True)


@pytest.mark.parametrize("changes, message", [
    ({"task": "pairs"}, "task='pairs' needs data=: the lines of a TSV file"),
    ({"task": "pairs", "data": PAIRS + "no tab\n"}, "line 121: no tab"),
    ({"data": PAIRS}, "data= is only for task='pairs'"),
])
def test_pairs_without_a_valid_file_or_a_preset_with_data_are_refused(changes, message):
    for name in ("decoding", "sweep"):
        with pytest.raises(ValueError, match=message):
            EXPERIMENTS[name].make_params(changes, tiny=True)


def test_each_seed_splits_the_pairs_its_own_way():
    p = EXPERIMENTS["decoding"].make_params({"task": "pairs", "data": PAIRS}, tiny=True)
    a, b = seq2seq_task(p, 0), seq2seq_task(p, 1)
    assert a.name == b.name == "pairs" and a.vocab == b.vocab and len(a.pairs) == 120
    assert a.cfg.seed == 0 and b.cfg.seed == 1
    held_out = {tuple(a.val.src[i].tolist()) for i in range(len(a.val))}
    assert held_out != {tuple(b.val.src[i].tolist()) for i in range(len(b.val))}


def test_a_tiny_experiment_runs_end_to_end_on_own_pairs():
    result = run("decoding", {"task": "pairs", "data": PAIRS, "steps": 10, "eval_examples": 8},
                 executor=SerialExecutor())
    assert result.params["task"] == "pairs" and result.params["data"] == PAIRS
    assert set(result.table["condition"]) >= {"greedy", "beam k=4"} and not result.samples.empty


def test_a_sweeps_trials_train_on_the_pairs():
    p = EXPERIMENTS["sweep"].make_params({"task": "pairs", "data": PAIRS}, tiny=True)
    from explorer.experiments.sweep import search_spec

    spec = search_spec(p)
    assert spec.task == "pairs" and spec.data == PAIRS and spec.objective() == "val_exact"
    from explorer.search.driver import trial_spec

    task, model_cfg, _ = configs(trial_spec(spec, 0, {"d_model": 16, "n_heads": 1, "seed": 1}, [], None))
    assert task.name == "pairs" and task.cfg.seed == 1 and model_cfg.src_vocab_size == len(task.vocab)
    other = dataclasses.replace(spec, data=number_words(120, seed=1))
    assert spec.study_name() != other.study_name()   # another file is another study
    assert "data" not in SearchSpec().key()           # a preset's studies keep their names


def test_a_result_without_own_data_keeps_the_key_it_had_before():
    exp = EXPERIMENTS["decoding"]
    old = {k: v for k, v in dataclasses.asdict(exp.params()).items() if k != "data"}
    blob = json.dumps({"name": "decoding", "version": exp.version, "code": CODE_VERSION, "params": old},
                      sort_keys=True)
    assert cache_key("decoding") == hashlib.sha256(blob.encode()).hexdigest()[:16]
    assert cache_key("decoding", {"task": "pairs", "data": PAIRS}) != cache_key("decoding")


def test_preset_or_pairs_names_the_valid_tasks():
    with pytest.raises(ValueError, match="task 'nope' is not known; choose one of reversal-fast.*pairs"):
        presets.preset_or_pairs("nope")
    assert presets.preset_or_pairs("pairs", PAIRS, seed=3).seed == 3
