"""EXPERIMENTS: every experiment by name, in the order a page should list them; the runner looks names up
here, the package re-exports it. `own_data_experiments()`: those whose task may be a teacher's pairs."""

from __future__ import annotations

from explorer.experiments import (
    alignment,
    attn_scale,
    beam,
    d_head,
    grokking,
    heads,
    induction_heads,
    label_smoothing,
    length,
    lm_length,
    norm,
    pe_order,
    pe_types,
    residuals,
    scan,
    sweep,
)
from explorer.experiments.base import Experiment
from explorer.experiments.params import takes_own_data

EXPERIMENTS: dict[str, Experiment] = {m.EXPERIMENT.name: m.EXPERIMENT for m in (
    pe_order, norm, residuals, label_smoothing, alignment, heads, length, pe_types, beam, lm_length, attn_scale,
    d_head, scan, induction_heads, grokking, sweep)}


def own_data_experiments() -> list[str]:
    """The experiments whose task may be a teacher's pairs (task "pairs", its text in `data`)."""
    return [name for name, exp in EXPERIMENTS.items() if takes_own_data(exp.params)]


__all__ = ["EXPERIMENTS", "own_data_experiments"]
