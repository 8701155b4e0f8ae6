"""Heads: 4 heads vs 1 at d_model 16 on the notebook's order-detection task (notebook exercise 1).

The question is whether several heads help, so the claim is a difference (4 heads more accurate than 1) with a
margin of MARGIN (2 points of accuracy): an interval on one side decides it, and otherwise two one-sided tests may
conclude "no meaningful difference". At the defaults (5 seeds x 300 steps) both reach 99.9% and the difference's
90% interval is [-0.4, 0.4] points: no meaningful difference within ±2 points (bench/README.md, "Equivalence in
verdicts"). It used to say "as predicted" on "at least as accurate, within 2 points", which the same numbers pass
whichever way the heads matter."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from explorer.experiments._order import OrderBase, order_run
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, seed_major, whole
from explorer.experiments.charts import bars, curve_bands, pct, stat
from explorer.figures.curves import line_chart

MARGIN = 0.02   # a difference of accuracy under two points does not matter: "no meaningful difference"


@dataclass(frozen=True)
class HeadsParams(OrderBase):
    """The order-detection setting with positional encoding; `heads` are the conditions compared."""

    seq_len: int = 8
    heads: tuple[int, ...] = (4, 1)

    def __post_init__(self) -> None:
        super().__post_init__()
        whole("seq_len", self.seq_len, 2, 256)
        if len(self.heads) < 2 or any(not isinstance(h, int) or h < 1 or self.d_model % h for h in self.heads):
            raise ValueError(f"heads={self.heads!r} must list at least two head counts that divide "
                             f"d_model={self.d_model}")


def _label(h: int) -> str:
    return f"{h} head" + ("s" if h > 1 else "")


def _measure(p: HeadsParams):
    def measure(table) -> tuple[str, list[Claim]]:
        most, fewest = max(p.heads), min(p.heads)
        text = ", ".join(f"{_label(h)} {pct(*stat(table, _label(h), 'accuracy')[:2])}" for h in p.heads)
        # "help" is the question: a difference, tested both ways, and TOST for its absence within the margin
        return text, [Claim(f"{_label(most)} are more accurate than {_label(fewest)}", "accuracy", _label(most),
                            _label(fewest), unit="%", margin=MARGIN)]
    return measure


def run(p: HeadsParams, ctx: Context) -> Result:
    def work(unit):
        seed, h = unit
        return order_run(ctx, p, seed, _label(h), "sinusoidal", h, p.seq_len)

    done = ctx.collect(seed_major(p.seeds, p.heads), work, lambda u: f"seed {u[0]}, {_label(u[1])}")
    most = max(p.heads)
    predictions = {(_label(most), "accuracy"): (None, "at least as accurate: heads can specialise")}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, "val_exact")
    loss, loss_bands = curve_bands(r.curves, "loss")
    return [bars(r.table, "accuracy", "Order detection with PE: test accuracy by number of heads", "accuracy (%)",
                 100.0),
            line_chart(series, "Test accuracy while training (mean ± std over seeds)", "step", "accuracy",
                       bands=bands),
            line_chart(loss, "Training loss", "step", "loss", log_y=True, bands=loss_bands)]


NAME = "heads"
EXPERIMENT = Experiment(
    name=NAME, title="Several heads or one",
    question="At d_model 16, does splitting attention into 4 heads help over a single head?",
    prediction="Several heads let one layer track several relationships at once instead of averaging them "
               "into one pattern, so 4 heads should do at least as well as 1.",
    source="notebook: multi-head attention, exercise 1",
    params=HeadsParams, tiny=dataclasses.replace(HeadsParams(), steps=25, seeds=2, n_train=100, n_val=50),
    run=run, figures=draw, version=2)   # 2: a difference with a margin, not non-inferiority
