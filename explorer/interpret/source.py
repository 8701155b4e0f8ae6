"""A model and its task by name: a shipped model (pretrained/manifest.json) or a saved run."""

from __future__ import annotations

from torch import nn

from ..checkpoints import CheckpointError, load_pretrained, pretrained_manifest
from ..runs import list_runs, load_run
from ..tasks import Task, TaskConfig, make_task


def load_model(name: str) -> tuple[nn.Module, Task]:
    """(model in eval mode, its task). ValueError names the shipped models and saved runs there are."""
    shipped = [e["name"] for e in pretrained_manifest()]
    try:
        model, meta = load_pretrained(name) if name in shipped else load_run(name)[:2]
    except CheckpointError as err:   # it exists but cannot be read: say why
        raise ValueError(f"{name!r} cannot be loaded: {err}") from None
    except (ValueError, FileNotFoundError):
        saved = [r.name for r in list_runs()][:10]
        raise ValueError(f"no shipped model or saved run named {name!r}; shipped: {', '.join(shipped) or 'none'}"
                         + (f"; runs: {', '.join(saved)}" if saved else "")) from None
    return model, make_task(TaskConfig.from_dict(meta["task"]))


__all__ = ["load_model"]
