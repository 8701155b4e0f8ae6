"""One set of limits for every path: the Train page, a search trial, an experiment, the CLI, the job classes.

    check_run(cfg, train_cfg, task)           # ValueError naming what is over a cap, or what to reduce to fit
    check_values({"d_model": 1024})           # the caps alone, by field name (a space's tops, experiment params)
    check_search(dims, settings, configs)     # a search before its first trial: its space and its largest trial
    check_search_work(trials, steps, dims)    # what the app's Search page adds on a shared server
    check_notes(text), check_tags(tags)       # a run's notes and tags (visitor text) as they are stored

The caps bound what a run may ask for whatever the machine (so no request allocates terabytes); the budget
(explorer/jobs/budget.py: MAX_TRAIN_BYTES of memory, MAX_RUN_SECONDS per run, measured here) bounds what it costs.
The app's widget ranges are drawn from CAPS. Files are read at most a limit + 1 bytes (tasks/own_data.py).
"""

from __future__ import annotations

from collections.abc import Callable

from explorer.config import ModelConfig
from explorer.jobs.budget import MAX_RUN_SECONDS, MAX_TRAIN_BYTES, check_budget
from explorer.tasks import Task
from explorer.train_config import TrainConfig

# the largest value a run may ask for: 12 layers is the deepest stack the seeds' experiments train; batches of
# 2048 rows hold modular-add's full batch (1,740 rows of 4 tokens; check_budget still bounds the memory)
CAPS = {
    "d_model": 512, "n_heads": 16, "n_encoder_layers": 12, "n_decoder_layers": 12, "d_ff": 2048, "max_len": 512,
    "steps": 100_000, "batch_size": 2048,
}
ALIASES = {"n_layers": "n_encoder_layers", "layers": "n_encoder_layers"}  # a search's and the CLI's depth
MAX_SEARCH_WORK = 24_000   # trials x steps one search may take on the app's shared server
MAX_NOTE_CHARS = 2000      # a run's notes: a paragraph or two, kept in its meta.json
MAX_TAGS, MAX_TAG_CHARS = 8, 32   # a run's tags: short labels to filter the Runs page by


def cap_of(name: str, aliases: dict | None = None) -> int | None:
    """The cap of a field (or of its alias), None if it has none."""
    return CAPS.get({**ALIASES, **(aliases or {})}.get(name, name))


def check_values(values: dict, aliases: dict | None = None) -> None:
    """ValueError naming the first value over its cap (`aliases`: name -> the cap's field, beside ALIASES); a
    tuple is checked value by value; fields without a cap pass."""
    for name, value in values.items():
        cap = cap_of(name, aliases)
        for v in value if isinstance(value, tuple) else (value,):
            if cap is not None and isinstance(v, (int, float)) and not isinstance(v, bool) and v > cap:
                raise ValueError(f"{name}={v:,} is over the limit of this machine: {name} may be at most {cap:,}")


def check_run(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> None:
    """Every path's check before a run (the Train page's message): the caps, then the memory and time budget."""
    check_values({name: getattr(cfg, name) for name in CAPS if hasattr(cfg, name) and _used(cfg, name)})
    check_values({name: getattr(train_cfg, name) for name in CAPS if hasattr(train_cfg, name)})
    check_budget(cfg, train_cfg, task)


def _used(cfg: ModelConfig, name: str) -> bool:
    """An encoder-only model's decoder depth (and the other way round) is not built, so it is not capped."""
    unbuilt = {"n_encoder_layers": not cfg.uses_encoder, "n_decoder_layers": not cfg.uses_decoder}
    return not unbuilt.get(name, False)


def tops(dims: dict) -> dict:
    """The largest value each numeric dimension of a search space can take (`Dim`: choices, or low..high)."""
    out = {}
    for name, d in dims.items():
        values = d.choices or (d.high,)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out[name] = max(values)
    return out


def check_search(dims: dict, settings: dict, configs: Callable[[dict], tuple]) -> None:
    """A search within the limits before its first trial: every value its space can take and every fixed
    setting within the caps, and its largest trial (each dimension at its top; `configs(params)` builds a
    trial's (task, model config, train config)) within the budget, so every trial it can make fits."""
    top = tops(dims)
    check_values({**settings, **top})
    largest = _largest(top, dims, configs)
    if largest is None:  # no trial at the top can exist (d_model not divisible by n_heads): those trials fail
        return
    params, (task, cfg, train_cfg) = largest
    try:
        check_run(cfg, train_cfg, task)
    except ValueError as err:
        shown = ", ".join(f"{k}={v:g}" for k, v in params.items())
        raise ValueError(f"the largest trial this search can make ({shown}) is refused: {err}") from None


def _largest(top: dict, dims: dict, configs: Callable[[dict], tuple]) -> tuple[dict, tuple] | None:
    """(params, configs) of the largest trial that can exist: the tops, with fewer heads if the most do not
    divide the widest d_model (heads barely change a step's cost); None if none can."""
    heads = dims.get("n_heads")
    options = [{}] if heads is None or "n_heads" not in top else [
        {"n_heads": h} for h in sorted(heads.choices or range(int(heads.low), int(heads.high) + 1), reverse=True)]
    for option in options:
        params = {**top, **option}
        try:
            return params, configs(params)
        except ValueError:
            continue
    return None


def check_search_work(trials: int, steps: int, dims: dict) -> None:
    """The app's Search page on a shared server: every value of the space within the caps, and trials x steps
    (the space's largest steps, if it searches them) within MAX_SEARCH_WORK."""
    top = tops(dims)
    check_values(top)
    steps = top.get("steps", steps)
    if trials * steps > MAX_SEARCH_WORK:
        raise ValueError(f"{trials} trials x {steps:,} steps is more than one search may take here "
                         f"({MAX_SEARCH_WORK:,} steps); use fewer trials or steps, or the command line")


def check_notes(text) -> str:
    """A run's notes as stored (ends stripped); ValueError unless text of at most MAX_NOTE_CHARS characters."""
    if not isinstance(text, str):
        raise ValueError(f"notes must be text, not {type(text).__name__}")
    text = text.strip()
    if len(text) > MAX_NOTE_CHARS:
        raise ValueError(f"notes are {len(text):,} characters long; at most {MAX_NOTE_CHARS:,} are kept")
    return text


def check_tags(tags) -> tuple[str, ...]:
    """A run's tags as stored: each stripped, inner spaces collapsed, duplicates (ignoring case) and empty ones
    dropped; ValueError for a tag over MAX_TAG_CHARS characters, with a comma or a control character, or for
    more than MAX_TAGS tags."""
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise ValueError("tags must be a list of texts")
    out, seen = [], set()
    for tag in (" ".join(t.split()) for t in tags):
        if not tag or tag.casefold() in seen:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise ValueError(f"tag {tag[:MAX_TAG_CHARS]!r}... is {len(tag)} characters long; a tag may have at most "
                             f"{MAX_TAG_CHARS}")
        if "," in tag or not tag.isprintable():
            raise ValueError(f"tag {tag!r} holds a comma or a control character; a tag is a short label "
                             "(letters, digits, spaces, punctuation other than commas)")
        seen.add(tag.casefold())
        out.append(tag)
    if len(out) > MAX_TAGS:
        raise ValueError(f"{len(out)} tags; a run may have at most {MAX_TAGS}")
    return tuple(out)


__all__ = ["CAPS", "ALIASES", "MAX_SEARCH_WORK", "MAX_NOTE_CHARS", "MAX_TAGS", "MAX_TAG_CHARS", "check_notes",
           "check_tags", "MAX_RUN_SECONDS", "MAX_TRAIN_BYTES", "cap_of", "check_values",
           "check_run", "tops", "check_search", "check_search_work"]
