"""Positional encoding and order: order detection with and without sinusoidal PE (the notebook)."""

from __future__ import annotations

import dataclasses

from explorer.experiments._order import OrderParams, order_run
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, seed_major
from explorer.experiments.charts import bars, curve_bands, pct, stat
from explorer.figures.curves import line_chart

WITH, WITHOUT = "with PE", "without PE"
CHANCE_MAX = 0.65   # above this, "without PE" is no longer "about chance" (150 examples: std ~ 0.04)
LEARNED_MIN = 0.9


def _measure(table) -> tuple[str, list[Claim]]:
    w, ws, _ = stat(table, WITH, "accuracy")
    o, os_, _ = stat(table, WITHOUT, "accuracy")
    return f"with PE {pct(w, ws)}, without PE {pct(o, os_)}", [
        Claim(f"with PE the accuracy is above {LEARNED_MIN:.0%}", "accuracy", WITH, threshold=LEARNED_MIN, unit="%"),
        Claim(f"without PE it stays near chance, below {CHANCE_MAX:.0%}", "accuracy", WITHOUT, above=False,
              threshold=CHANCE_MAX, unit="%")]


def run(p: OrderParams, ctx: Context) -> Result:
    pe = {WITH: "sinusoidal", WITHOUT: "none"}

    def work(unit):
        seed, cond = unit
        return order_run(ctx, p, seed, cond, pe[cond], p.n_heads, p.seq_len)

    done = ctx.collect(seed_major(p.seeds, (WITH, WITHOUT)), work, lambda u: f"seed {u[0]}, {u[1]}")
    predictions = {(WITH, "accuracy"): (1.0, "about 100%: every position has its own signature"),
                   (WITHOUT, "accuracy"): (0.5, "about 50% (chance): mean pooling cannot see order")}
    return build_result(NAME, p, done, predictions, _measure, ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, "val_exact")
    return [bars(r.table, "accuracy", "Order detection: test accuracy over seeds", "accuracy (%)", 100.0),
            line_chart(series, "Test accuracy while training (mean ± std over seeds)", "step",
                       "accuracy", bands=bands)]


NAME = "pe-order"
EXPERIMENT = Experiment(
    name=NAME, title="Positional encoding makes order learnable",
    question="Can a Transformer tell whether A comes before B without positional encoding?",
    prediction="Without positional encoding it stays at chance (about 50%); with sinusoidal PE it "
               "reaches about 100%.",
    source="notebook: order detection with and without positional encoding",
    params=OrderParams, tiny=dataclasses.replace(OrderParams(), steps=60, seeds=2, n_train=200, n_val=100),
    run=run, figures=draw, conditions=2)
