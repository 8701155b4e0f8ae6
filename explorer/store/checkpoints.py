"""Checkpoints are data, not code: safetensors tensors + a JSON config, loaded without pickle.

A checkpoint is a folder with two files:
  model.safetensors   the weights (tied weights stored once)
  meta.json           {"format": 1, "model": ModelConfig dict, ...whatever the caller adds}
Each file is replaced atomically, so an interrupted save leaves the old file or the new one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import safetensors
import safetensors.torch
from torch import Tensor, nn

from explorer.config import ModelConfig, param_count
from explorer.model import build_model
from explorer.store.atomic import atomic_write, write_text

if TYPE_CHECKING:   # pandas is imported where it is read: a Ray worker training a run never needs it
    import pandas as pd

FORMAT_VERSION = 1
MODEL_FILE, META_FILE = "model.safetensors", "meta.json"
HISTORY_FILE = "metrics.csv"  # one row per training step (StepMetrics.to_row), where a folder keeps it
MAX_UPLOAD_BYTES = 50 * 2**20
MAX_META_BYTES = 2**20
# An installed explorer ships no models: $EXPLORER_PRETRAINED_DIR names a checkout's pretrained/ (README)
PRETRAINED_DIR = Path(os.environ.get("EXPLORER_PRETRAINED_DIR") or Path(__file__).parents[2] / "pretrained")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message says what is wrong."""


# ---------------------------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------------------------

def save_checkpoint(directory, model: nn.Module, meta: dict) -> Path:
    """Write model.safetensors and meta.json into directory (created if needed); returns it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    doc = {**meta, "format": FORMAT_VERSION, "model": model.cfg.to_dict()}
    text = json.dumps(doc, indent=2, allow_nan=True, default=_jsonable)
    atomic_write(directory / MODEL_FILE, lambda tmp: safetensors.torch.save_model(model, tmp))
    write_text(directory / META_FILE, text)
    return directory


def write_meta(directory, meta: dict) -> None:
    """Replace a checkpoint folder's meta.json as a whole (bookkeeping such as a run's owner; the
    weights and the model config are untouched): readers see the old file or the new one."""
    path = Path(directory) / META_FILE
    text = json.dumps(meta, indent=2, allow_nan=True, default=_jsonable)
    write_text(path, text)


def _jsonable(value):
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "tolist"):   # numpy / torch scalars and arrays
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} cannot be stored in meta.json")


# ---------------------------------------------------------------------------------------------
# Validation (shared by files on disk and uploads)
# ---------------------------------------------------------------------------------------------

def _parse_meta(text: bytes | str, where: str) -> dict:
    try:
        meta = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{where} is not valid JSON ({e})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where} must hold a JSON object, not {type(meta).__name__}")
    version = meta.get("format")
    if version != FORMAT_VERSION:
        raise CheckpointError(f"{where} has format version {version!r}; this version of the explorer "
                              f"reads format {FORMAT_VERSION}")
    if not isinstance(meta.get("model"), dict):
        raise CheckpointError(f"{where} has no model config (a \"model\" object)")
    return meta


def _config(meta: dict, where: str) -> ModelConfig:
    try:
        return ModelConfig.from_dict(meta["model"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"the model config in {where} is invalid: {e}") from None


def _check_tensors(model: nn.Module, shapes: dict[str, tuple[int, ...]]) -> None:
    """Names and shapes in the file must be exactly what the config builds (tied weights once)."""
    expected = model.state_dict()
    unexpected = sorted(set(shapes) - set(expected))
    if unexpected:
        raise CheckpointError(f"the weights file has {len(unexpected)} tensor(s) the config does not build: "
                              f"{unexpected[:5]}")
    wrong = [f"{n} is {list(s)}, the config needs {list(expected[n].shape)}"
             for n, s in shapes.items() if tuple(expected[n].shape) != tuple(s)]
    if wrong:
        raise CheckpointError("tensor shapes do not match the config: " + "; ".join(wrong[:3]))
    groups: dict[int, list[str]] = {}  # tied weights share storage: one name of each group suffices
    for name, t in expected.items():
        groups.setdefault(t.untyped_storage().data_ptr(), []).append(name)
    missing = [names[0] for names in groups.values() if not any(n in shapes for n in names)]
    if missing:
        raise CheckpointError(f"the weights file lacks {len(missing)} tensor(s) the config needs: {missing[:5]}")


def _sniff(head: bytes, where: str) -> None:
    if len(head) >= 10 and head[8:9] == b"{":  # safetensors: 8-byte header length, then a JSON header
        return
    if head.startswith(b"PK") or head.startswith(b"\x80"):  # torch.save's zip, or a bare pickle
        raise CheckpointError(f"{where} is a pickle / torch.save file; only safetensors are accepted "
                              "(pickle can run code when loaded)")
    raise CheckpointError(f"{where} is not a safetensors file")


def _load_into(model: nn.Module, tensors: dict[str, Tensor]) -> None:
    _check_tensors(model, {n: tuple(t.shape) for n, t in tensors.items()})
    model.load_state_dict(tensors, strict=False)  # names left out are tied to names loaded


def _build(cfg: ModelConfig) -> nn.Module:
    try:
        model = build_model(cfg)
    except (TypeError, ValueError, RuntimeError) as e:  # e.g. a layer count of 1.5 slipped through
        raise CheckpointError(f"the model config cannot be built: {e}") from None
    return model.eval()


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

def read_meta(directory) -> dict:
    """The validated meta.json of a checkpoint folder."""
    path = Path(directory) / META_FILE
    if not path.is_file():
        raise CheckpointError(f"{path} is missing: not a checkpoint folder")
    if path.stat().st_size > MAX_META_BYTES:
        raise CheckpointError(f"{path} is larger than {MAX_META_BYTES} bytes")
    return _parse_meta(path.read_bytes(), str(path))


def load_checkpoint(directory) -> tuple[nn.Module, dict]:
    """Rebuild the model from meta.json and load its weights; returns (model in eval mode, meta)."""
    meta = read_meta(directory)
    path = Path(directory) / MODEL_FILE
    model = _build(_config(meta, str(Path(directory) / META_FILE)))
    if not path.is_file():
        raise CheckpointError(f"{path} is missing")
    with open(path, "rb") as f:
        _sniff(f.read(16), str(path))
    try:
        with safetensors.safe_open(path, framework="pt") as f:
            shapes = {n: tuple(f.get_slice(n).get_shape()) for n in f.keys()}
    except Exception as e:  # safetensors raises its own error types for a bad header
        raise CheckpointError(f"{path} is not a readable safetensors file ({e})") from None
    _check_tensors(model, shapes)
    try:
        safetensors.torch.load_model(model, path, strict=True)
    except Exception as e:
        raise CheckpointError(f"{path} could not be loaded: {e}") from None
    return model, meta


def load_uploaded(data: bytes, meta_json: bytes) -> tuple[nn.Module, dict]:
    """A checkpoint uploaded as two blobs: size-limited and validated before anything is built."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise CheckpointError(f"the weights file is {len(data) / 2**20:.1f} MB; the limit is "
                              f"{MAX_UPLOAD_BYTES // 2**20} MB")
    if len(meta_json) > MAX_META_BYTES:
        raise CheckpointError(f"meta.json is larger than {MAX_META_BYTES} bytes")
    meta = _parse_meta(meta_json, "meta.json")
    cfg = _config(meta, "meta.json")
    need = 4 * (param_count(cfg)["total"] + 2 * cfg.max_len * cfg.d_model)  # weights + position tables
    if need > 2 * MAX_UPLOAD_BYTES:
        raise CheckpointError(f"the model config describes {need / 2**20:.0f} MB of weights, more than an "
                              f"upload may hold ({MAX_UPLOAD_BYTES // 2**20} MB)")
    _sniff(bytes(data[:16]), "the weights file")
    try:
        tensors = safetensors.torch.load(bytes(data))
    except Exception as e:
        raise CheckpointError(f"the weights file is not a readable safetensors file ({e})") from None
    model = _build(cfg)
    _load_into(model, tensors)
    return model, meta


# ---------------------------------------------------------------------------------------------
# Shipped, pretrained checkpoints
# ---------------------------------------------------------------------------------------------

def pretrained_manifest() -> list[dict]:
    """Entries of pretrained/manifest.json ([] if there is none): name, path, task, description, metrics."""
    path = PRETRAINED_DIR / "manifest.json"
    if not path.is_file():
        return []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path} is not valid JSON ({e})") from None
    entries = doc.get("models", []) if isinstance(doc, dict) else doc
    return [e for e in entries if isinstance(e, dict) and "name" in e and "path" in e]


def load_pretrained(name: str) -> tuple[nn.Module, dict]:
    entries = {e["name"]: e for e in pretrained_manifest()}
    if name not in entries:
        where = "" if entries else (f" (no {PRETRAINED_DIR / 'manifest.json'}: set EXPLORER_PRETRAINED_DIR to a "
                                    "checkout's pretrained/ folder)")
        raise CheckpointError(f"no pretrained model named {name!r}; available: {sorted(entries) or 'none'}{where}")
    root = PRETRAINED_DIR.resolve()
    path = (root / entries[name]["path"]).resolve()
    if not path.is_relative_to(root):
        raise CheckpointError(f"pretrained entry {name!r} points outside {root}")
    return load_checkpoint(path)


def pretrained_history(name: str) -> pd.DataFrame | None:
    """The training history a shipped model keeps (per-step metrics, per-layer gradient norms), or None."""
    entries = {e["name"]: e for e in pretrained_manifest()}
    path = PRETRAINED_DIR / entries[name]["path"] / HISTORY_FILE if name in entries else None
    if path is None or not path.is_file():
        return None
    import pandas as pd

    try:
        return pd.read_csv(path)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise CheckpointError(f"the training history of {name!r} cannot be read: {err}") from err


__all__ = ["FORMAT_VERSION", "CheckpointError", "save_checkpoint", "write_meta", "load_checkpoint", "read_meta",
           "MAX_UPLOAD_BYTES", "load_uploaded", "PRETRAINED_DIR", "pretrained_manifest", "load_pretrained",
           "HISTORY_FILE", "pretrained_history"]
