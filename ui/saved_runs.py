"""Saved runs on the Runs page: deleting one, and a zip of one's folder for a download."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from explorer import runs
from explorer.resume import can_resume
from ui.models import forget_run


def resumable() -> list[str]:
    """Saved runs that carry what resuming needs, newest first."""
    return [info.name for info in runs.list_runs() if can_resume(info.path)]


def delete_run(name: str) -> str | None:
    """Delete a run's folder (if it has one) and forget it in this session; returns an error or None."""
    try:
        runs.delete_run(name)
    except FileNotFoundError:
        pass  # a run of this session only
    except (OSError, ValueError) as err:
        return f"Could not delete run {name!r}: {err}"
    forget_run(name)
    return None


def run_archive(path: Path) -> bytes:
    """A zip of a run's folder (weights, meta.json, metrics), built in memory for a download."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(Path(path).iterdir()):
            if file.is_file() and not file.name.startswith("."):  # not a half-written temp file
                archive.write(file, f"{Path(path).name}/{file.name}")
    return buffer.getvalue()
