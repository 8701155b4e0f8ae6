"""Time to accuracy: how many steps and seconds a recipe needs to learn a task preset.

    python bench/time_to_accuracy.py                                  # recommended reversal-seed recipe, seed 0
    python bench/time_to_accuracy.py --preset reversal-fast --seeds 0,1,2
    python bench/time_to_accuracy.py --set lr=3e-3 --set batching=random
    python bench/time_to_accuracy.py --sweep base lr=3e-3 schedule=constant,warmup=0 --seeds 0,1

A run trains with `explorer.training.train_steps` (the app's loop) and, every --eval-every steps, with
the clock stopped, measures teacher-forced token accuracy on 500 held-out sequences the task never
trains on (`explorer.store.shipped.held_out_task`) and, once that passes 97%, greedy exact match on the
same 500. It reports steps and training seconds to 95% and 99% token accuracy and to 99% exact match,
and the loss spikes; it stops at 99% exact unless --full. Seconds are wall-clock training time (evaluation
excluded); on one thread the CPU time of the training thread is reported too ('c'), which is close to what
an idle machine takes when the machine is shared. Each run writes its curve to
bench/results/tta_<preset>_<variant>_seed<k>.csv.

A variant is a comma-separated list of field=value: TrainConfig fields (lr, batch_size, schedule, warmup,
beta1, beta2, grad_clip, batching, threads, steps, ...), ModelConfig fields (d_model, n_heads, d_ff,
layers=N for both stacks, ...), and two levers that act on the built model: embed_scale=1 (no sqrt(d_model)
on the embeddings) and init=normal (embeddings drawn from N(0, 1/d_model), so scaled ones have unit size)
or init=small-out (the residual-branch output projections shrunk by 1/sqrt(2 * layers)); buckets=N sets
how many length ranges batching=by-length uses (Task.length_buckets).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.config import ModelConfig  # noqa: E402
from explorer.evaluation import evaluate  # noqa: E402
from explorer.model import build_model  # noqa: E402
from explorer.store.shipped import held_out_task  # noqa: E402
from explorer.tasks import TASK_PRESETS, make_task  # noqa: E402
from explorer.tasks.recipes import recommended  # noqa: E402
from explorer.train_config import TrainConfig  # noqa: E402
from explorer.training import train_steps  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
HELD_OUT = 500
GREEDY_FROM = 0.97      # greedy decoding is slow: only once teacher-forced accuracy is close
TRAIN_FIELDS = {f.name for f in dataclasses.fields(TrainConfig)}
MODEL_FIELDS = {f.name for f in dataclasses.fields(ModelConfig)} | {"layers"}
EXTRA_LEVERS = {"embed_scale", "init", "buckets"}


def parse_variant(text: str) -> dict:
    """'lr=3e-3,schedule=constant' -> {'lr': 0.003, 'schedule': 'constant'}; 'base' -> {}."""
    out = {}
    for item in filter(None, text.split(",")):
        if item == "base":
            continue
        key, _, raw = item.partition("=")
        if key not in TRAIN_FIELDS | MODEL_FIELDS | EXTRA_LEVERS or not raw:
            raise SystemExit(f"{item!r}: expected field=value with a TrainConfig or ModelConfig field, "
                             f"embed_scale, init or buckets")
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                value = raw
        out[key] = value
    return out


def setup(preset: str, variant: dict, seed: int):
    """(model, task, TrainConfig) for the recommended recipe of `preset` changed by `variant`."""
    overrides, train = recommended(preset)
    overrides = dict(overrides)
    changes = {k: v for k, v in variant.items() if k in TRAIN_FIELDS}
    for k, v in variant.items():
        if k == "layers":
            overrides.update(n_encoder_layers=v, n_decoder_layers=v)
        elif k in MODEL_FIELDS:
            overrides[k] = v
    if "lr" in changes:
        changes["lr"] = float(changes["lr"])
    train = train.replace(seed=seed, eval_every=0, eval_examples=1, **changes)
    task = make_task(preset)
    if "buckets" in variant:
        task.length_buckets = int(variant["buckets"])
    model = build_model(task.model_config(ModelConfig(max_len=32).replace(**overrides)), seed=seed)
    apply_model_levers(model, variant)
    return model, task, train


def apply_model_levers(model, variant: dict) -> None:
    stacks = [s for s in (getattr(model, "encoder", None), getattr(model, "decoder", None)) if s is not None]
    if "embed_scale" in variant:
        for s in stacks:
            s.scale = float(variant["embed_scale"])
    init = variant.get("init")
    with torch.no_grad():
        if init == "normal":
            for s in stacks:
                if s.embed is not None:
                    s.embed.weight.normal_(0.0, model.cfg.d_model ** -0.5)
                    s.embed.weight[model.cfg.pad_idx].zero_()
        elif init == "small-out":
            n = sum(len(s.layers) for s in stacks)
            for name, p in model.named_parameters():
                if name.endswith(("out_proj.weight", "linear2.weight")):
                    p.mul_((2 * n) ** -0.5)
        elif init is not None:
            raise SystemExit(f"init={init!r}: choose normal or small-out")


def held_out_scores(model, task) -> tuple[float, float | None]:
    """(teacher-forced token accuracy, greedy exact match) on the first HELD_OUT rows; exact match is
    None while the token accuracy is below GREEDY_FROM (greedy decoding is slow)."""
    scores = evaluate(model, task, HELD_OUT, batch_size=250, exact=False)
    if scores["val_token_acc"] >= GREEDY_FROM:
        scores = evaluate(model, task, HELD_OUT, batch_size=250)
    return scores["val_token_acc"], scores["val_exact"]


def spikes(losses: list[float], alpha: float = 0.1, rise: float = 0.3) -> tuple[int, float]:
    """Loss spikes: times the smoothed training loss (an EMA over ~10 steps, so that batches of different
    lengths do not count) climbs `rise` nats above its lowest value so far; and the largest such climb."""
    count, worst, low, ema, up = 0, 0.0, math.inf, None, False
    for loss in losses:
        ema = loss if ema is None else (1 - alpha) * ema + alpha * loss
        low = min(low, ema)
        worst = max(worst, ema - low)
        count += ema - low > rise and not up
        up = ema - low > rise
    return count, worst


def dips(held: list[float], drop: float = 0.05) -> int:
    """Held-out token accuracy falling `drop` below its best so far (each fall counted once)."""
    count, best, down = 0, 0.0, False
    for acc in held:
        best = max(best, acc)
        count += best - acc > drop and not down
        down = best - acc > drop
    return count


def run(preset: str, variant: dict, seed: int, eval_every: int, full: bool, label: str) -> dict:
    model, task, cfg = setup(preset, variant, seed)
    held = held_out_task(TASK_PRESETS[preset])
    rows, load, exact, cpu = [], os.getloadavg()[0], None, 0.0
    steps = train_steps(model, task, cfg)
    while True:
        start = time.thread_time()    # CPU time of this thread: on one thread, what an idle machine would take
        rec = next(steps, None)
        cpu += time.thread_time() - start
        if rec is None:
            break
        if rec.stopped:
            print(f"  {label} seed {seed}: {rec.stopped}", file=sys.stderr)
            break
        row = dict(step=rec.step, seconds=round(rec.elapsed, 3), cpu_seconds=round(cpu, 3) if cfg.threads == 1 else "",
                   loss=rec.loss, lr=rec.lr,
                   train_token_acc=rec.token_acc, grad_norm=rec.grad_norm, held_token_acc="", held_exact="")
        if rec.step % eval_every == 0 or rec.step == cfg.steps:
            tok, exact = held_out_scores(model, held)
            row.update(held_token_acc=tok, held_exact="" if exact is None else exact)
            print(f"  {label} seed {seed} step {rec.step} {rec.elapsed:.1f}s loss {rec.loss:.4f} tok {tok:.4f}"
                  + ("" if exact is None else f" exact {exact:.3f}"), file=sys.stderr, flush=True)
        rows.append(row)
        if (exact or 0) >= 0.99 and not full:
            break
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"tta_{preset}_{label}_seed{seed}.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return analyse(rows, label, seed, (load + os.getloadavg()[0]) / 2)


def analyse(rows: list[dict], label: str, seed: int, load: float = math.nan) -> dict:
    """Steps and seconds to each threshold, spikes, dips and the median step time of one run's rows."""
    reached = dict.fromkeys(KEYS)   # key -> (step, seconds)
    for r in rows:
        tok, exact = _num(r["held_token_acc"]), _num(r["held_exact"])
        for key, value, bound in (("tok95", tok, 0.95), ("tok99", tok, 0.99), ("exact95", exact, 0.95),
                                  ("exact99", exact, 0.99)):
            if value is not None and value >= bound and reached[key] is None:
                reached[key] = (int(r["step"]), float(r["seconds"]), _num(r.get("cpu_seconds")))
    n_spikes, worst = spikes([float(r["loss"]) for r in rows])
    held = [_num(r["held_token_acc"]) for r in rows if _num(r["held_token_acc"]) is not None]
    secs = [float(b["seconds"]) - float(a["seconds"]) for a, b in zip(rows, rows[1:])]
    cpu = [_num(b.get("cpu_seconds")) - _num(a.get("cpu_seconds")) for a, b in zip(rows, rows[1:])
           if _num(a.get("cpu_seconds")) is not None]
    return dict(label=label, seed=seed, reached=reached, steps=len(rows), spikes=n_spikes, worst=worst,
                dips=dips(held), ms=1000 * statistics.median(secs) if secs else math.nan,
                cpu_ms=1000 * statistics.median(cpu) if cpu else math.nan, load=load)


def _num(value) -> float | None:
    return None if value in ("", None) else float(value)


def _fmt(hit) -> str:
    """steps, wall seconds and (on one thread) CPU seconds."""
    if hit is None:
        return f"{'-':>19}"
    return f"{hit[0]:5d} {hit[1]:5.0f}s " + (f"{hit[2]:5.0f}c" if hit[2] is not None else "     -")


KEYS = ("tok95", "tok99", "exact95", "exact99")
HEADER = (f"{'variant':32} {'seeds':>5}  " + "  ".join(f"{k:>19}" for k in ("tok>=95%", "tok>=99%", "exact>=95%",
                                                                            "exact>=99%")) +
          f"  {'spk':>3} {'worst':>5} {'dips':>4}  {'ms/st':>6} {'cpu':>5}  load")


def report(r: dict) -> str:
    reach = "  ".join(_fmt(r["reached"][k]) for k in KEYS)
    return (f"{r['label']:32} {r['seed']:5d}  {reach}  {r['spikes']:3d} {r['worst']:5.2f} {r['dips']:4d}  "
            f"{r['ms']:6.1f} {r['cpu_ms']:5.1f}  {r['load']:4.1f}")


def summary(results: list[dict]) -> None:
    print("\nmedian over seeds (steps / seconds; '-' = not reached in every seed); spikes and dips summed")
    for label in dict.fromkeys(r["label"] for r in results):
        rs = [r for r in results if r["label"] == label]
        cells = []
        for key in KEYS:
            hits = [r["reached"][key] for r in rs]
            cpu = [h[2] for h in hits if h is not None and h[2] is not None]
            cells.append(_fmt(None) if None in hits else
                         _fmt((round(statistics.median(h[0] for h in hits)), statistics.median(h[1] for h in hits),
                               statistics.median(cpu) if len(cpu) == len(hits) else None)))
        print(f"{label:32} {len(rs):5d}  {'  '.join(cells)}  {sum(r['spikes'] for r in rs):3d} "
              f"{max(r['worst'] for r in rs):5.2f} {sum(r['dips'] for r in rs):4d}  "
              f"{statistics.median(r['ms'] for r in rs):6.1f} {statistics.median(r['cpu_ms'] for r in rs):5.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="reversal-seed", choices=sorted(TASK_PRESETS))
    ap.add_argument("--set", action="append", default=[], help="field=value applied to every run")
    ap.add_argument("--sweep", nargs="+", default=["base"], help="variants to compare, each field=value[,...]")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--eval-every", type=int, default=25)
    ap.add_argument("--full", action="store_true", help="train every step of the recipe, not until 99%% exact")
    ap.add_argument("--from-csv", action="store_true", help="report the curves already in bench/results, no training")
    args = ap.parse_args()
    common = parse_variant(",".join(args.set))
    print(f"preset={args.preset} torch={torch.__version__} cores={os.cpu_count()} recipe={recommended(args.preset)}"
          f" common={common}")
    print(HEADER)
    results = []
    for text in args.sweep:
        variant = {**common, **parse_variant(text)}
        label = ",".join(args.set + [text]).replace("=", "").replace(",", "_") or "base"
        for seed in (int(s) for s in args.seeds.split(",")):
            if args.from_csv:
                path = RESULTS / f"tta_{args.preset}_{label}_seed{seed}.csv"
                with path.open() as f:
                    r = analyse(list(csv.DictReader(f)), label, seed)
            else:
                r = run(args.preset, variant, seed, args.eval_every, args.full, label)
            results.append(r)
            print(report(r), flush=True)
    if len(results) > 1:
        summary(results)
    print(f"curves: {RESULTS}/tta_{args.preset}_*.csv")


if __name__ == "__main__":
    main()
