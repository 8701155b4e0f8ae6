"""Sequence length: order detection with sinusoidal PE at T=8 vs T=32 (notebook exercise 2)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from explorer.experiments._order import OrderBase, order_run
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, seed_major, whole
from explorer.experiments.charts import bars, curve_bands, pct, stat
from explorer.figures.curves import line_chart


@dataclass(frozen=True)
class LengthParams(OrderBase):
    """The order-detection setting with positional encoding; `lengths` are the values of T compared."""

    n_heads: int = 4
    lengths: tuple[int, ...] = (8, 32)

    def __post_init__(self) -> None:
        super().__post_init__()
        whole("n_heads", self.n_heads)
        if len(self.lengths) < 2 or any(not isinstance(t, int) or not 2 <= t <= 256 for t in self.lengths):
            raise ValueError(f"lengths={self.lengths!r} must list at least two sequence lengths in 2..256")


def _label(t: int) -> str:
    return f"T={t}"


def _measure(p: LengthParams):
    def measure(table) -> tuple[str, list[Claim]]:
        short, long_ = min(p.lengths), max(p.lengths)
        text = ", ".join(f"{_label(t)} {pct(*stat(table, _label(t), 'accuracy')[:2])}" for t in p.lengths)
        return f"{text} (the seed leaves this open)", [
            Claim(f"what {_label(long_)} costs in accuracy against {_label(short)}", "accuracy", _label(short),
                  _label(long_), unit="%", open=True)]
    return measure


def run(p: LengthParams, ctx: Context) -> Result:
    def work(unit):
        seed, t = unit
        return order_run(ctx, p, seed, _label(t), "sinusoidal", p.n_heads, t)

    done = ctx.collect(seed_major(p.seeds, p.lengths), work, lambda u: f"seed {u[0]}, {_label(u[1])}")
    predictions = {(_label(max(p.lengths)), "accuracy"): (None, "open: does PE alone keep it solvable?")}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, "val_exact")
    return [bars(r.table, "accuracy", "Order detection with PE: test accuracy by sequence length",
                 "accuracy (%)", 100.0),
            line_chart(series, "Test accuracy while training (mean ± std over seeds)", "step", "accuracy",
                       bands=bands)]


NAME = "length"
EXPERIMENT = Experiment(
    name=NAME, title="Longer sequences",
    question="With positional encoding, does order detection still work when T grows from 8 to 32?",
    prediction="The notebook asks rather than claims: PE still gives every position its own signature, but "
               "the pair of positions is one of 992 instead of 56, so the same 400 examples may not be enough.",
    source="notebook: order detection, exercise 2",
    params=LengthParams, tiny=dataclasses.replace(LengthParams(), steps=25, seeds=2, n_train=100, n_val=50,
                                                  lengths=(8, 16)),
    run=run, figures=draw)
