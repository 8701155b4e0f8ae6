"""Views and reveals more than one lesson shows: the sinusoidal table, how fast each dimension turns, a
block's parameters. Computed from the library's own functions, never restated."""

from __future__ import annotations

import numpy as np

from explorer.config import ModelConfig, attention_params, ffn_params
from explorer.figures.curves import line_chart
from explorer.figures.positional import pe_heatmap
from explorer.lessons.base import Control, Reveal, SeedCheck, View
from explorer.positional import sinusoidal_table

D_MODEL = Control("d_model", "d_model", (16, 32, 64, 128), 64, "The width of every position's encoding vector")
POSITIONS = Control("positions", "Positions", (25, 50, 100, 200), 100)


def pe_view(values: dict) -> View:
    d, n = int(values.get("d_model", 64)), int(values.get("positions", 100))
    table = sinusoidal_table(n, d)                                      # (P, d_model)
    return View(pe_heatmap(table, f"Sinusoidal encoding: {n} positions × d_model {d}"),
                "Each row is one position's vector, added to its token's embedding; each column is one "
                "dimension of it.")


def pe_try_it(values: dict) -> tuple[str, dict]:
    return "positional", {"pe_type": "sinusoidal", "pe_d_model": str(values.get("d_model", 64)),
                          "pe_positions": str(values.get("positions", 100))}


def wavelengths(d_model: int, base: float = 10_000.0) -> np.ndarray:
    """Positions per full turn of every dimension: 2π·base^(2i/d_model), read off the table's formula."""
    dim = np.arange(d_model)
    return 2 * np.pi * np.power(base, (dim - dim % 2) / d_model)


def measured_wavelengths(d_model: int, n_positions: int = 20_000) -> np.ndarray:
    """The same, measured: positions between sign changes of each column of the table, times two."""
    table = sinusoidal_table(n_positions, d_model)
    flips = (np.diff(np.sign(table), axis=0) != 0).sum(axis=0)          # (d_model,)
    return np.where(flips > 0, 2 * n_positions / np.maximum(flips, 1), np.inf)


LOW_FAST, HIGH_FAST, EQUAL = ("the low dimensions (0, 1, ...)", "the high dimensions (near d_model)",
                              "all change equally fast")
FASTEST_CHOICES = (EQUAL, HIGH_FAST, LOW_FAST)   # the right one's place says nothing


def fastest_dimensions(d_model: int = 64) -> Reveal:
    """Which end of the vector turns fastest (FASTEST_CHOICES), with the measured periods."""
    period = wavelengths(d_model)
    low_fast = period[0] < period[-1]
    seen = measured_wavelengths(d_model)
    fig = line_chart({"formula": (list(range(d_model)), period.tolist()),
                      "counted in the table": (list(range(d_model)), np.where(np.isinf(seen), np.nan, seen).tolist())},
                     f"Positions per full turn, d_model {d_model}", "dimension", "positions per turn (log)",
                     log_y=True, dashed=True)
    check = SeedCheck(
        "the Haskell module: \"lower dimensions change slowly, higher dimensions change rapidly\".",
        f"dimension 0 turns once every {period[0]:.1f} positions, dimension {d_model - 1} once every "
        f"{period[-1]:,.0f}: the low dimensions change fastest.",
        "the module's own formula (the same as the chapter's) — its sentence has the order backwards; the "
        "chapter's exercise 2.1 says it right: the slow sinusoids sit in the high dimensions.")
    return Reveal(f"Dimension 0 repeats every **{period[0]:.1f}** positions; dimension {d_model - 1} every "
                  f"**{period[-1]:,.0f}**. The frequency 1/10000^(2i/d_model) falls as i grows, so the low "
                  "dimensions change fastest and the high ones carry the coarse position.",
                  correct=(FASTEST_CHOICES.index(LOW_FAST if low_fast else HIGH_FAST),),
                  view=View(fig, "Counting sign changes over 20,000 positions agrees with the formula "
                                 "(the slowest dimensions never change sign in that span).", check=check))


def block_parameters(d_model: int, d_ff: int) -> dict[str, int]:
    """One encoder block's parameters by part, from explorer.config (weights and biases)."""
    cfg = ModelConfig(d_model=d_model, d_ff=d_ff, n_heads=1)
    return {"attention": attention_params(d_model), "feed-forward": ffn_params(cfg), "layer norms": 4 * d_model}
