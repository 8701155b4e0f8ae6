"""Running experiments, and the on-disk cache that lets the next visitor see a result at once.

A result is cached per configuration: the key hashes the experiment's name and version, its
parameters and CODE_VERSION. Each entry is a folder of plain files,

    <cache>/<name>/<key>/result.json     name, params, verdict, holds, outcome, evidence, seconds, column types
                         table.csv, samples.csv, curves.csv, extra-<frame>.csv

written to a temporary folder and renamed into place, so a reader never sees half an entry.
Figures are not stored: they are rebuilt from the frames. Stopped (partial) runs are not cached.

`holds` is true, false or null; `outcome` "holds", "does not hold", "equivalent" (no meaningful difference:
holds is null) or "inconclusive"; `evidence` lists one object per claim (see evidence.Evidence.to_json):
{"test", "claim", "metric", "conditions", "estimate", "interval": [low, high], "threshold", "direction",
"n", "df", "level", "holds", "reason", "unit", "outcome", "margin", "equivalence_p", "equivalence_interval",
"equivalent"}. A folder written before verdicts were tested over seeds (no "evidence") loads as inconclusive;
one written before margins existed loads with no margin.

One experiment's work is capped: `work_units(name, params)` (training runs per seed x seeds x steps)
may not exceed MAX_WORK; `refusal_of(name, params)` says why a configuration is refused (or None), and
`run` refuses such a configuration with that message as a ValueError.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import torch

from explorer.analysis.evidence import Evidence
from explorer.experiments.base import Context, Experiment, ProgressFn, Result, Stopped
from explorer.experiments.registry import EXPERIMENTS
from explorer.limits import check_values
from explorer.store.atomic import atomic_write, write_text
from explorer.store.runs import runs_dir

CODE_VERSION = 2   # bump when a change anywhere makes every cached result wrong (2: verdicts over seeds)
MAX_WORK = 12_000  # training steps of one experiment in all (runs per seed x seeds x steps)
# an experiment's parameter -> the cap it is held to (explorer/limits.py); the others are named as the caps are
CAPPED_AS = {"layers": "n_encoder_layers", "n_layers": "n_encoder_layers", "init_layers": "n_encoder_layers",
             "train_layers": "n_encoder_layers", "shallow_layers": "n_encoder_layers", "heads": "n_heads",
             "d_heads": "d_model", "seq_len": "max_len", "context": "max_len", "lengths": "max_len"}
RESULT_FILE = "result.json"
OLD_VERDICT = ("Inconclusive: this result was stored before verdicts were tested over seeds; run it again for a "
               "verdict with its 95% interval")
_FRAMES = ("table", "samples", "curves")


def experiment(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise ValueError(f"no experiment named {name!r}; choose one of {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


def resolve_params(exp: Experiment, params=None):
    """None -> the defaults; a dict -> the defaults with those fields changed; a params instance as is."""
    if params is None or isinstance(params, dict):
        return exp.make_params(params)
    if not isinstance(params, exp.params):
        raise ValueError(f"params for {exp.name!r} must be a dict or a {exp.params.__name__}, "
                         f"not {type(params).__name__}")
    return params


def work_units(name: str, params=None) -> int:
    """Training steps one configuration takes in all: runs per seed (conditions) x seeds x steps."""
    exp = experiment(name)
    return exp.work_units(resolve_params(exp, params))


def refusal_of(name: str, params=None) -> str | None:
    """Why this configuration is over a cap every run shares (explorer/limits.py) or more work than one
    experiment may take (one line, naming MAX_WORK), or None when it fits. `params` as for `run`; an invalid
    one raises ValueError naming the field."""
    exp = experiment(name)
    p = resolve_params(exp, params)
    try:
        check_values({f.name: getattr(p, f.name) for f in dataclasses.fields(p)}, CAPPED_AS)
    except ValueError as err:
        return f"{name}: {err}"
    work = exp.work_units(p)
    if work <= MAX_WORK:
        return None
    runs, seeds = exp.runs_per_seed(p), p.seeds
    plural = "s" if seeds != 1 else ""
    shape = (f"{runs} runs per seed x {seeds} seed{plural} x {p.steps} steps" if work == runs * seeds * p.steps
             else f"{runs} runs per seed x {seeds} seed{plural}, their steps added up")
    return (f"{name}: {shape} = {work:,} training steps, more than one experiment may take (MAX_WORK = "
            f"{MAX_WORK:,}); use fewer conditions, seeds or steps")


def cache_key(name: str, params=None) -> str:
    exp = experiment(name)
    p = dataclasses.asdict(resolve_params(exp, params))
    if p.get("data") == "":  # no own data: the keys (and the shipped results) stay those from before it existed
        del p["data"]
    blob = json.dumps({"name": name, "version": exp.version, "code": CODE_VERSION, "params": p}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cache_root(cache_dir: str | Path | None = None) -> Path:
    return Path(cache_dir) if cache_dir is not None else runs_dir() / "experiments" / "cache"


def cache_path(name: str, params=None, cache_dir: str | Path | None = None) -> Path:
    return cache_root(cache_dir) / name / cache_key(name, params)


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

def with_figures(result: Result) -> Result:
    return dataclasses.replace(result, figures=tuple(experiment(result.name).figures(result)))


def run(name: str, params=None, progress: ProgressFn | None = None, stop: threading.Event | None = None,
        executor=None) -> Result:
    """Run one experiment now (no cache). A stop keeps the finished seeds (`partial=True`);
    Stopped is raised if none had finished."""
    exp = experiment(name)
    p = resolve_params(exp, params)
    refused = refusal_of(name, p)
    if refused:
        raise ValueError(refused)
    ctx = Context(progress, stop, executor)
    threads, start = torch.get_num_threads(), time.perf_counter()
    torch.set_num_threads(1)  # an experiment is a one-core job: it leaves a core to the app (or another job)
    try:
        result = exp.run(p, ctx)
    finally:
        torch.set_num_threads(threads)
    if ctx.stopped and result.samples.empty:
        raise Stopped(f"experiment {name!r} was stopped before any run finished")
    verdict = f"Stopped early, partial result: {result.verdict}" if ctx.stopped else result.verdict
    result = dataclasses.replace(result, seconds=time.perf_counter() - start, partial=ctx.stopped,
                                 verdict=verdict, holds=None if ctx.stopped else result.holds)
    return with_figures(result)


def cached(name: str, params=None, cache_dir: str | Path | None = None) -> Result | None:
    """The cached result for this configuration, with figures, or None."""
    path = cache_path(name, params, cache_dir)
    if not (path / RESULT_FILE).is_file():
        return None
    try:
        return with_figures(dataclasses.replace(load_result(path), cached=True))
    except (OSError, ValueError, KeyError, TypeError, pd.errors.ParserError):  # a damaged entry is a miss
        return None


def run_cached(name: str, params=None, progress: ProgressFn | None = None, stop: threading.Event | None = None,
               cache_dir: str | Path | None = None, executor=None, refresh: bool = False) -> Result:
    """The cached result if there is one (unless `refresh`), else run, cache and return it."""
    if not refresh:
        hit = cached(name, params, cache_dir)
        if hit is not None:
            if progress is not None:
                progress(1.0, "loaded from cache")
            return hit
    result = run(name, params, progress, stop, executor)
    if not result.partial:
        _store(result, cache_path(name, result.params, cache_dir), replace=refresh)
    return result


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

def _frames(result: Result) -> dict[str, pd.DataFrame]:
    out = {"table": result.table, "samples": result.samples}
    if result.curves is not None:
        out["curves"] = result.curves
    out.update({f"extra-{k}": v for k, v in result.extra.items()})
    return out


def _kind(dtype) -> str:
    return "int" if pd.api.types.is_integer_dtype(dtype) else (
        "float" if pd.api.types.is_numeric_dtype(dtype) else "str")


def save_csv(result: Result, folder: str | Path) -> list[Path]:
    """Write every frame as CSV plus result.json (verdict, params, column types); returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths, types = [], {}
    for key, df in _frames(result).items():
        path = folder / f"{key}.csv"
        atomic_write(path, lambda tmp, df=df: df.to_csv(tmp, index=False))
        paths.append(path)
        types[key] = {c: _kind(df[c].dtype) for c in df.columns}
    meta = {"name": result.name, "params": result.params, "verdict": result.verdict, "holds": result.holds,
            "outcome": result.outcome,
            "evidence": [e.to_json() for e in result.evidence], "seconds": result.seconds,
            "partial": result.partial, "code_version": CODE_VERSION,
            "version": experiment(result.name).version, "frames": types,
            "created": datetime.now(UTC).isoformat(timespec="seconds")}
    write_text(folder / RESULT_FILE, json.dumps(meta, indent=1))
    return [*paths, folder / RESULT_FILE]


def _read(path: Path, types: dict) -> pd.DataFrame:
    if not types:
        return pd.DataFrame()
    df = pd.read_csv(path, keep_default_na=False, na_values=[""],
                     dtype={c: str for c, k in types.items() if k == "str"})
    for c, k in types.items():
        if k == "str":
            df[c] = df[c].fillna("")
        elif k == "int":
            df[c] = df[c].astype("int64")
        else:
            df[c] = df[c].astype(float)
    return df[list(types)]


def load_result(folder: str | Path) -> Result:
    """Read back what save_csv wrote (without figures)."""
    folder = Path(folder)
    meta = json.loads((folder / RESULT_FILE).read_text())
    types = meta["frames"]
    frames = {k: _read(folder / f"{k}.csv", t) for k, t in types.items()}
    extra = {k[len("extra-"):]: v for k, v in frames.items() if k.startswith("extra-")}
    if "evidence" in meta:
        verdict, holds = meta["verdict"], meta["holds"]
        evidence = tuple(Evidence.from_json(e) for e in meta["evidence"])
    else:  # written before verdicts were tested over seeds: its "as predicted" may rest on one seed
        verdict, holds, evidence = OLD_VERDICT, None, ()
    return Result(name=meta["name"], table=frames["table"], samples=frames["samples"], curves=frames.get("curves"),
                  verdict=verdict, holds=holds, params=meta["params"], seconds=meta["seconds"],
                  extra=extra, partial=meta.get("partial", False), evidence=evidence)


def _store(result: Result, path: Path, replace: bool = False) -> None:
    """Write the entry next to its place and rename it in; an existing entry wins unless `replace`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; a cache entry is for every visitor
    old = path.parent / f"{tmp.name}-old"
    try:
        save_csv(result, tmp)
        if replace and path.exists():
            os.replace(path, old)
        try:
            os.replace(tmp, path)
        except OSError:  # another visitor stored the same configuration first
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


__all__ = ["CODE_VERSION", "MAX_WORK", "work_units", "refusal_of", "experiment", "resolve_params", "cache_key",
           "cache_root", "cache_path", "run", "run_cached", "cached", "save_csv", "load_result", "with_figures"]
