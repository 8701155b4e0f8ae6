"""Sequence length: order detection with sinusoidal PE at T=8 vs T=32 (notebook exercise 2)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from explorer.figures.curves import line_chart

from ._order import OrderBase, order_run
from .base import Context, Experiment, Result, bars, build_result, curve_bands, pct, seed_major, stat, whole

HOLDS_WITHIN = 0.05   # "holds up": the longer sequence loses less than five points


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


def _verdict(p: LengthParams):
    def verdict(table) -> tuple[str, None]:
        stats = {t: stat(table, _label(t), "accuracy") for t in p.lengths}
        short, long_ = min(p.lengths), max(p.lengths)
        drop = stats[short][0] - stats[long_][0]
        text = ", ".join(f"{_label(t)} {pct(m, s)}" for t, (m, s, _) in stats.items())
        if math.isnan(drop):  # a condition was not measured
            return f"{text}: the seed leaves this open", None
        finding = ("accuracy holds up at the longer length" if drop < HOLDS_WITHIN else
                   f"the longer sequence costs {100 * drop:.0f} points with the same data and steps")
        return f"{text}: {finding} (the seed leaves this open)", None
    return verdict


def run(p: LengthParams, ctx: Context) -> Result:
    def work(unit):
        seed, t = unit
        return order_run(ctx, p, seed, _label(t), "sinusoidal", p.n_heads, t)

    done = ctx.collect(seed_major(p.seeds, p.lengths), work, lambda u: f"seed {u[0]}, {_label(u[1])}")
    predictions = {(_label(max(p.lengths)), "accuracy"): (None, "open: does PE alone keep it solvable?")}
    return build_result(NAME, p, done, predictions, _verdict(p))


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
