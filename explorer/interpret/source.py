"""A model and its task by name: a shipped model (pretrained/manifest.json) or a saved run, found as the
reports and figures find theirs (explorer.subject.open_subject)."""

from __future__ import annotations

from torch import nn

from ..tasks import Task


def load_model(name: str) -> tuple[nn.Module, Task]:
    """(model in eval mode, its task). ValueError names the shipped models and saved runs there are."""
    from ..subject import open_subject  # subject reads this package's snapshots folder: imported on call

    subject = open_subject(name)
    return subject.model, subject.task


__all__ = ["load_model"]
