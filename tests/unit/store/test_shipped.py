"""The shipped models in pretrained/: each loads, keeps its recorded quality on sequences it never saw,
and the build that made them is deterministic."""

import json
import time

import pandas as pd
import pytest
import torch

from explorer.config import ModelConfig
from explorer.evaluation import evaluate
from explorer.store.checkpoints import PRETRAINED_DIR, load_pretrained
from explorer.store.shipped import (
    DEFAULT_MODEL,
    FRESH_EXAMPLES,
    SHIPPED_NAMES,
    Quality,
    held_out_task,
    shipped_model,
)
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from tests.unit.helpers import BY_NAME, MANIFEST

# The issue's floors: a recipe may be stricter, never looser.
ISSUE_FLOOR = {"reversal-fast": ("min", 0.99), "reversal-fast-postln": ("min", 0.99),
               "reversal-fast-learned": ("min", 0.99), "reversal-fast-rope": ("min", 0.99),
               "reversal-seed": ("min", 0.99), "order-pe": ("min", 0.98), "order-nope": ("max", 0.65)}


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_manifest_lists_every_recipe_default_first():
    assert [e["name"] for e in MANIFEST] == list(SHIPPED_NAMES)
    assert MANIFEST[0]["name"] == DEFAULT_MODEL == "reversal-fast"
    assert [e["name"] for e in MANIFEST if e.get("default")] == [DEFAULT_MODEL]
    for e in MANIFEST:
        r = shipped_model(e["name"])  # the manifest records the recipe in the code, not an older one
        # from_dict: a field added to a config later takes its default, as when the model was built
        assert TaskConfig.from_dict(e["task"]) == r.task and TrainConfig.from_dict(e["train"]) == r.train
        assert e["quality"] == r.quality.to_dict() and e["train"]["threads"] == 1
        assert e["train_seconds"] > 0 and e["params"] > 0 and e["description"]


@pytest.mark.parametrize("name", SHIPPED_NAMES)
def test_recorded_metrics_meet_the_threshold(name):
    e = BY_NAME[name]
    q = Quality(**e["quality"])
    assert q.holds(e["metrics"]) and q.holds(e["fresh_metrics"])
    if name in ISSUE_FLOOR:
        side, bound = ISSUE_FLOOR[name]
        assert e["quality"]["metric"] == "val_exact"
        assert e["quality"][side] >= bound if side == "min" else e["quality"][side] <= bound


@pytest.mark.parametrize("name", SHIPPED_NAMES)
def test_loads_and_keeps_its_quality_on_fresh_data(name):
    e = BY_NAME[name]
    start = time.perf_counter()
    model, meta = load_pretrained(name)
    print(f"{name}: loaded in {(time.perf_counter() - start) * 1000:.1f} ms")  # recorded, not asserted
    assert not model.training and model.cfg == ModelConfig.from_dict(e["model"])  # later fields: defaults
    assert meta["task"] == e["task"] and meta["name"] == name
    task = held_out_task(e["task"])
    task.check(model.cfg)
    metrics = evaluate(model, task, max_examples=FRESH_EXAMPLES)
    q = Quality(**e["quality"])
    assert q.holds(metrics), f"{name}: {q.metric}={metrics[q.metric]:.4f} on fresh data, needs {q.text()}"


def test_the_fresh_set_was_never_trained_on():
    cfg = TaskConfig.from_dict(BY_NAME["reversal-fast"]["task"])
    train = {tuple(r) for r in make_task(cfg).train.src.tolist()}
    fresh = held_out_task(cfg)
    rows = [tuple(r) for r in fresh.val.src.tolist()]
    assert len(rows) >= FRESH_EXAMPLES and not train & set(rows)
    assert fresh.cfg.seed == cfg.seed + 1000


def test_files_are_small_and_hold_no_pickle():
    files = [p for p in PRETRAINED_DIR.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} <= {".safetensors", ".json", ".md", ".csv"}  # the histories are plain text
    for p in files:
        if p.suffix == ".csv" and "experiments" not in p.relative_to(PRETRAINED_DIR).parts:  # lessons' answers
            assert list(pd.read_csv(p).columns[:2]) == ["step", "loss"]
    total = sum(p.stat().st_size for p in files)
    assert total < 25 * 2**20, f"pretrained/ holds {total / 2**20:.1f} MB"
    for e in MANIFEST:
        weights = PRETRAINED_DIR / e["path"] / "model.safetensors"
        data = weights.read_bytes()  # safetensors: 8-byte little-endian header length, a JSON header, raw tensors
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n])
        assert not data.startswith(b"PK") and all(v["dtype"] == "F32" for k, v in header.items() if k != "__metadata__")
        assert e["size_bytes"] == sum(p.stat().st_size for p in weights.parent.iterdir())
        assert weights.stat().st_size < 4 * 2**20


def test_quality_reads_min_or_max():
    assert Quality("val_exact", min=0.9).holds({"val_exact": 0.95})
    assert not Quality("val_exact", max=0.65).holds({"val_exact": 0.7})
    with pytest.raises(ValueError, match="exactly one"):
        Quality("val_exact")


