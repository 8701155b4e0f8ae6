"""Saved runs on the Runs page: whose each is, deleting one (its owner only), sharing one trained on own
data (private until then, explorer.store.runs), and a zip of one's folder for a download."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from explorer.store import runs
from explorer.store.resume import can_resume
from ui.models import forget_run, visible_runs
from ui.owner import NOBODYS, OTHERS, YOURS, owner_id, whose


def delete_refusal(info: runs.RunInfo | None) -> str | None:
    """Why this visitor may not delete the run, or None when they may (a run of this session only, or
    one saved on disk with their id)."""
    owner = whose(info.owner) if info is not None else None
    if owner == OTHERS:
        return "Another visitor trained this run: only they can delete it."
    if owner == NOBODYS:
        return ("This run has no owner (saved from the command line, or before runs had owners), so it is "
                "read-only here.")
    return None


def resumable() -> list[str]:
    """Saved runs that carry what resuming needs: this visitor's first, then the others', newest first."""
    ready = [info for info in visible_runs() if can_resume(info.path)]
    return [info.name for info in sorted(ready, key=lambda info: whose(info.owner) != YOURS)]


def delete_run(name: str) -> str | None:
    """Delete this visitor's run `name` (its folder, if it has one) and forget it in this session;
    returns why not, or None."""
    try:
        runs.delete_run(name, owner=owner_id())
    except FileNotFoundError:
        pass  # a run of this session only
    except PermissionError as err:
        return f"Could not delete: {err}."
    except (OSError, ValueError) as err:
        return f"Could not delete run {name!r}: {err}"
    forget_run(name)
    return None


def share(name: str, shared: bool) -> str | None:
    """Share this visitor's run `name` with every visitor, or make it private again; returns why not, or None."""
    try:
        runs.share_run(name, owner_id(), shared)
    except (OSError, ValueError) as err:
        return f"Could not change who sees run {name!r}: {err}"
    return None


def run_archive(path: Path) -> bytes:
    """A zip of a run's folder (weights, meta.json, metrics), built in memory for a download."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(Path(path).iterdir()):
            if file.is_file() and not file.name.startswith("."):  # not a half-written temp file
                archive.write(file, f"{Path(path).name}/{file.name}")
    return buffer.getvalue()
