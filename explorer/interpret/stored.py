"""Shipped models' ablation tables, stored so that a class's first view of Inside the model is read, not
computed (every head, sublayer and FFN of reversal-fast knocked out takes ~10 s on a loaded machine).

    python -m explorer interpret ablate --model NAME --store      # pretrained/ablation/NAME.json, both modes

A table is used only for the weights it was computed from (`analysis.views.fingerprint`) and the same number of
validation examples; tests/unit/interpret/test_interpret_stored.py checks every shipped model has one and
recomputes some.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from torch import nn

from explorer.analysis.views import fingerprint
from explorer.interpret.ablation import MODES, ablate, table_of
from explorer.store import checkpoints
from explorer.store.subject import load_model

STORED_N = 200   # validation examples of a stored table: the page's count (ui.inside.N_EXAMPLES)


def stored_folder() -> Path:
    return checkpoints.PRETRAINED_DIR / "ablation"


def _clean(value):
    """JSON-safe: pandas' NA becomes null, numpy numbers plain ones (floats keep every bit: json writes repr)."""
    if value is pd.NA:
        return None
    return value.item() if hasattr(value, "item") else value


def store(name: str, n: int = STORED_N) -> Path:
    """Compute shipped model `name`'s ablation in every mode on n validation examples and write it."""
    model, task = load_model(name)
    doc = {"model": name, "fingerprint": fingerprint(model), "n": min(n, len(task.val)), "modes": {}}
    for mode in MODES:
        table = ablate(model, task, mode=mode, n=n)
        rows = [{k: _clean(v) for k, v in row.items()} for row in table.astype(object).to_dict("records")]
        doc["modes"][mode] = {"baseline": table.attrs["baseline"], "ablations": rows}
    path = stored_folder() / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def stored(name: str, model: nn.Module, mode: str, n: int) -> pd.DataFrame | None:
    """The stored table of `name` in `mode` if it was computed from these weights on n examples, else None."""
    path = stored_folder() / f"{name}.json"
    if not path.is_file():
        return None
    doc = json.loads(path.read_text())
    if doc["n"] != n or doc["fingerprint"] != fingerprint(model) or mode not in doc["modes"]:
        return None
    got = doc["modes"][mode]
    return table_of(got["ablations"], got["baseline"], mode, n)


def ablation_table(name: str | None, model: nn.Module, task, mode: str = "zero", n: int = STORED_N) -> pd.DataFrame:
    """Shipped model `name`'s stored table if it is of these weights, else computed (`ablate`); name None: computed."""
    table = None if name is None else stored(name, model, mode, n)
    return ablate(model, task, mode=mode, n=n) if table is None else table


__all__ = ["STORED_N", "ablation_table", "store", "stored", "stored_folder"]
