"""A study's figures, drawn by Optuna's own `optuna.visualization` and restyled into the house style: the
optimisation history, the learning curves the pruner saw (intermediate values), the timeline of trials,
slice, contour of two parameters, the empirical distribution (EDF), parallel coordinates, importances, and a
multi-objective study's Pareto front. Pure: a study in, a figure out (ValueError says why there is nothing
to draw yet).

Every trace a trial can be clicked on carries the trial numbers of its points in `trace.meta` (a list, one
per point, or one number for a whole trace: a curve, a line through the axes); `trial_at(fig, point)` reads
the trial a selection's point belongs to. A log-scaled parameter has a log axis in every figure: Optuna's
slice and contour do so themselves, its parallel coordinates put the parameter on a log10 scale with a tick
per decade only (two labels on a 1e-4:1e-2 range), which `parallel` marks at 1, 2 and 5 of each decade.
"""

from __future__ import annotations

import math
import re

import optuna.visualization as ov
import plotly.graph_objects as go
from optuna.distributions import FloatDistribution, IntDistribution
from plotly.colors import sample_colorscale

from explorer.figures.layout import COLORBAR, EXPECTED_COLOUR, LEGEND_BELOW, PALETTE
from explorer.figures.optuna_style import house, need, objective_target, plain, quiet, trial_text
from explorer.figures.search import SEARCH_SCALE, STATE_COLOURS
from explorer.quoting import hover

STATE_FILL = {**STATE_COLOURS, "RUNNING": PALETTE[4], "WAITING": PALETTE[5]}
LOG_STEPS = (1, 2, 5)          # the ticks of a decade on a log axis of parallel coordinates
LOG_METRICS = ("params",)      # a parameter count spans orders of magnitude: a log axis on the Pareto front
_NUMBER = re.compile(r'"number":\s*(\d+)')


def is_log(study, param: str) -> bool:
    """Whether the study samples `param` on a log scale."""
    for t in study.get_trials(deepcopy=False):
        dist = t.distributions.get(param)
        if dist is not None:
            return isinstance(dist, (FloatDistribution, IntDistribution)) and dist.log
    return False


def parameters(study) -> list[str]:
    """The parameters the study's trials searched, in the order first seen."""
    seen: dict[str, None] = {}
    for t in study.get_trials(deepcopy=False):
        seen.update(dict.fromkeys(t.params))
    return list(seen)


def trial_at(fig: go.Figure, point: dict) -> int | None:
    """The trial a selected point (Streamlit's `curve_number`, `point_index`) belongs to, if it has one."""
    curve, index = point.get("curve_number"), point.get("point_index", point.get("point_number"))
    if curve is None or not 0 <= curve < len(fig.data):
        return None
    meta = fig.data[curve].meta
    if isinstance(meta, int):
        return meta
    if isinstance(meta, (list, tuple)) and isinstance(index, int) and 0 <= index < len(meta):
        return None if meta[index] is None else int(meta[index])
    return None


# ----------------------------------------------------------------------------------- figures
def history(study, names: list[str], objective: int = 0) -> go.Figure:
    """Each trial's value by trial number and the best so far (Optuna's plot_optimization_history)."""
    need(study)
    target, name = objective_target(study, names, objective)
    fig = house(quiet(ov.plot_optimization_history, study, target=target, target_name=hover(name)),
                 f"Optimisation history: {hover(name)}", 340, xaxis=dict(title="trial"), yaxis=dict(title=hover(name)),
                 legend=LEGEND_BELOW)
    for trace in fig.data:
        if trace.mode == "markers" and trace.x is not None and len(trace.x):
            trace.update(meta=list(trace.x), marker=dict(color=PALETTE[0], size=9), name="trials",
                         hovertemplate=f"trial %{{x}}<br>{hover(name)} %{{y:.4g}}<extra></extra>")
        elif trace.mode == "lines":
            trace.update(line=dict(color=EXPECTED_COLOUR, width=2), name="best so far",
                         hovertemplate=f"best {hover(name)} %{{y:.4g}}<extra></extra>")
        else:
            trace.update(hoverinfo="skip")
    return fig


def intermediate(study, names: list[str]) -> go.Figure:
    """Each trial's value at every evaluation: the learning curves the pruner judged."""
    if len(study.directions) > 1:
        raise ValueError("a multi-objective study reports no intermediate values (it cannot be pruned)")
    trials = [t for t in study.get_trials(deepcopy=False) if t.intermediate_values]
    if not trials:
        raise ValueError("no trial reported intermediate values: run the search with a pruner "
                         "(median or halving) to evaluate trials as they train")
    fig = house(quiet(ov.plot_intermediate_values, study), f"Learning curves: {hover(names[0])} at each evaluation",
                 360, xaxis=dict(title="step"), yaxis=dict(title=hover(names[0])), showlegend=False)
    states = {t.number: t.state.name for t in trials}
    pruned = sum(s == "PRUNED" for s in states.values())
    for trace in fig.data:
        found = re.fullmatch(r"Trial(\d+)", str(trace.name or ""))
        if found:
            number = int(found.group(1))
            colour = STATE_FILL.get(states.get(number, ""), PALETTE[0])
            trace.update(meta=number, name=f"trial {number}", line=dict(color=colour, width=1.5),
                         marker=dict(color=colour, size=5),
                         hovertemplate=f"trial {number}<br>step %{{x}}<br>%{{y:.4g}}<extra></extra>")
    fig.layout.meta = {"summary": f"{len(trials)} trials' curves, {pruned} of them pruned (grey, ended early)"}
    return fig


def timeline(study) -> go.Figure:
    """When each trial ran and how it ended (Optuna's plot_timeline), one bar a trial."""
    trials = study.get_trials(deepcopy=False)
    if not any(t.datetime_start for t in trials):
        raise ValueError("no trial has started yet")
    fig = house(quiet(ov.plot_timeline, study), "Timeline: when each trial ran, and how it ended",
                 max(260, 120 + 14 * len(trials)), xaxis=dict(title="time (UTC)"), yaxis=dict(title="trial"),
                 legend=LEGEND_BELOW)
    by_number = {t.number: t for t in trials}
    for trace in fig.data:
        numbers = [int(n) for n in trace.y or ()]
        trace.update(meta=numbers, marker=dict(color=STATE_FILL.get(str(trace.name), PALETTE[0])),
                     name=str(trace.name).lower(),
                     text=[trial_text(by_number[n]) if n in by_number else "" for n in numbers],
                     hovertemplate=f"%{{text}}<br>%{{base|%H:%M:%S}}, %{{x:.0f}} ms<extra>{hover(trace.name)}</extra>")
    ended = {str(t.name).lower(): len(t.y or ()) for t in fig.data}
    fig.layout.meta = {"summary": f"{len(trials)} trials, one bar each from its start to its end: "
                                  + ", ".join(f"{n} {state}" for state, n in ended.items())}
    return fig


def _trial_colours(fig: go.Figure, title: str) -> None:
    """Markers coloured by trial number on the search's colour scale, its bar at the plot's edge."""
    for trace in fig.data:
        if trace.mode == "markers" and trace.marker.color is not None and not isinstance(trace.marker.color, str):
            trace.update(meta=[int(c) for c in trace.marker.color],
                         marker=dict(colorscale=SEARCH_SCALE, size=9, line=dict(width=0.5, color="white"),
                                     colorbar=dict(COLORBAR, title=dict(text=title))))


def slice_plot(study, names: list[str], params: list[str] | None = None, objective: int = 0) -> go.Figure:
    """The objective against each parameter, a panel each (Optuna's plot_slice; log axes where log)."""
    need(study)
    target, name = objective_target(study, names, objective)
    params = params or parameters(study)
    fig = house(quiet(ov.plot_slice, study, params=params, target=target, target_name=hover(name)),
                 f"Slice: {hover(name)} against each parameter", 360, margin=dict(r=110), yaxis=dict(title=hover(name)))
    _trial_colours(fig, "trial")
    for trace in fig.data:
        axis = fig.layout[f"xaxis{str(trace.xaxis or 'x')[1:]}"]
        param = hover(axis.title.text or "")
        trace.update(name=f"trials by {param}",
                     hovertemplate=f"trial %{{marker.color}}<br>{param} %{{x}}<br>{hover(name)} %{{y:.4g}}"
                                   "<extra></extra>")
    return fig


def contour(study, names: list[str], x: str, y: str, objective: int = 0) -> go.Figure:
    """The objective over two parameters (Optuna's plot_contour), the trials as dots (log axes where log)."""
    if x == y:
        raise ValueError("pick two different parameters for the contour")
    done = [t for t in need(study, 2) if x in t.params and y in t.params]
    if len({(t.params[x], t.params[y]) for t in done}) < 2:
        raise ValueError(f"the contour needs trials at two or more points of {x} and {y}")
    target, name = objective_target(study, names, objective)
    drawn = quiet(ov.plot_contour, study, params=[x, y], target=target, target_name=hover(name))
    if drawn.layout.xaxis.title.text != x:   # Optuna orders the two by name: turned back to the pick
        drawn = _transposed(drawn)
    fig = house(drawn, f"Contour: {hover(name)} over {hover(x)} and {hover(y)}", 420, margin=dict(r=120))
    for trace in fig.data:
        if trace.type == "contour":
            trace.update(colorscale=SEARCH_SCALE, colorbar=dict(COLORBAR, title=dict(text=hover(name))),
                         hoverinfo="skip")
        elif trace.x is not None and len(trace.x):   # Optuna's dots are the trials, in order, x then y
            left = list(done)
            meta = []
            for px, py in zip(trace.x, trace.y):
                hit = next((t for t in left if _same(t.params[x], px) and _same(t.params[y], py)), None)
                meta.append(None if hit is None else hit.number)
                if hit is not None:
                    left.remove(hit)
            trace.update(meta=meta, name="trials",
                         marker=dict(color="white", size=8, line=dict(color="#2a3f5f", width=1.5)),
                         hovertemplate=f"{hover(x)} %{{x}}<br>{hover(y)} %{{y}}<extra></extra>")
        else:
            trace.update(hoverinfo="skip")
    for axis, param in (("xaxis", x), ("yaxis", y)):
        fig.layout[axis].title.text = hover(param) + (" (log)" if is_log(study, param) else "")
    return fig


def _transposed(fig: go.Figure) -> go.Figure:
    """A one-panel figure with its x and y swapped: data, z and axes."""
    spec = plain(fig.to_plotly_json())
    for trace in spec["data"]:
        trace["x"], trace["y"] = trace.get("y"), trace.get("x")
        if trace.get("z") is not None:
            trace["z"] = [list(row) for row in zip(*trace["z"])]
    layout = spec["layout"]
    xaxis, yaxis = layout.get("yaxis", {}), layout.get("xaxis", {})
    layout["xaxis"], layout["yaxis"] = ({k: v for k, v in a.items() if k not in ("anchor", "domain")}
                                        for a in (xaxis, yaxis))
    return go.Figure(spec)


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    return str(a) == str(b)


def edf(study, names: list[str], objective: int = 0) -> go.Figure:
    """The share of trials at or below each value (Optuna's plot_edf)."""
    need(study)
    target, name = objective_target(study, names, objective)
    fig = house(quiet(ov.plot_edf, study, target=target, target_name=hover(name)),
                 f"Empirical distribution of {hover(name)}", 320, xaxis=dict(title=hover(name)),
                 yaxis=dict(title="share of trials at or below", tickformat=".0%", range=[0, 1.02]), showlegend=False)
    for trace in fig.data:
        trace.update(name="trials", line=dict(color=PALETTE[0], width=2),
                     hovertemplate=f"{hover(name)} %{{x:.4g}}: %{{y:.0%}} of trials<extra></extra>")
    return fig


def importances(study, names: list[str]) -> go.Figure:
    """Each parameter's share of the objective's variation (Optuna's plot_param_importances)."""
    done = need(study, 2)
    if len({tuple(sorted(t.params.items())) for t in done}) < 2:
        raise ValueError("importance needs two completed trials with different settings")
    try:
        drawn = quiet(ov.plot_param_importances, study, target_name=hover(names[0]))
    except (ValueError, RuntimeError) as err:
        raise ValueError(f"importance cannot be computed yet: {err}") from None
    fig = house(drawn, "Parameter importance", max(250, 110 + 36 * len(parameters(study))),
                 xaxis=dict(title="share of the objective's variation"), yaxis=dict(title=None, ticksuffix="  "),
                 legend=LEGEND_BELOW)
    for i, trace in enumerate(fig.data):
        trace.update(marker=dict(color=PALETTE[i % len(PALETTE)]), text=None, textposition="none",
                     hovertemplate="%{y}: %{x:.3g}<extra></extra>")
    return fig


def _log_ticks(low: float, high: float) -> list[float]:
    ticks = [m * 10 ** e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
             for m in LOG_STEPS]
    return [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]


def parallel(study, names: list[str]) -> go.Figure:
    """The completed trials as lines through an axis per objective and parameter (Optuna's
    plot_parallel_coordinate), coloured by the (first) objective; a log parameter's axis marked 1-2-5."""
    done = need(study)
    if len(study.directions) == 1:
        drawn = quiet(ov.plot_parallel_coordinate, study, target_name=hover(names[0]))
    else:
        drawn = quiet(ov.plot_parallel_coordinate, study, target=lambda t: t.values[0],
                       target_name=hover(names[0]))
    fig = house(drawn, "Trials in parallel coordinates", 400, margin=dict(l=70, r=40, b=40))
    lines = [t for t in fig.data if t.mode == "lines"]
    values = [t.values[0] for t in done]
    low, high = min(values), max(values)
    left = list(done)
    for trace in lines:   # Optuna orders the lines by its own rule: each is matched by the values it shows
        trial = next((t for t in left if _shows(trace.customdata or (), t, hover(names[0]))), None)
        if trial is None:
            trace.update(hovertemplate="%{customdata[0]}: %{customdata[1]}<extra></extra>")
            continue
        left.remove(trial)
        share = 0.5 if high == low else (trial.values[0] - low) / (high - low)
        trace.update(meta=trial.number, name=f"trial {trial.number}",
                     line=dict(color=sample_colorscale(SEARCH_SCALE, [share])[0], width=2), opacity=0.8,
                     hovertemplate=f"trial {trial.number}<br>%{{customdata[0]}}: %{{customdata[1]}}<extra></extra>")
    for trace in fig.data:
        if trace.mode != "lines":   # Optuna's colorbar: a trace of two hidden points
            trace.update(hoverinfo="skip", marker=dict(colorscale=SEARCH_SCALE, colorbar=dict(
                COLORBAR, title=dict(text=hover(names[0])))))
    _mark_log_axes(fig, study, done)
    fig.layout.meta = {"summary": f"{len(done)} completed trials through {len(fig.layout.xaxis.tickvals or ())} "
                                  f"axes, coloured by {hover(names[0])} from {low:.3g} to {high:.3g}"}
    return fig


def _shown(value) -> set[str]:
    return {str(value), f"{value:.3g}"} if isinstance(value, (int, float)) else {str(value)}


def _shows(customdata, trial, target: str) -> bool:
    """Whether a line's (axis, value as text) pairs are this trial's."""
    values = {**{k: _shown(v) for k, v in trial.params.items()}, target: _shown(trial.values[0])}
    return bool(customdata) and all(label not in values or text in values[label] for label, text in customdata)


def _mark_log_axes(fig: go.Figure, study, done: list) -> None:
    """Each log parameter's axis (x = its place among the axes) ticked at 1, 2 and 5 of each decade."""
    labels = list(fig.layout.xaxis.ticktext or ())
    notes = list(fig.layout.annotations or ())
    for place, label in enumerate(labels):
        if not is_log(study, label) or not all(label in t.params for t in done):
            continue
        values = [float(t.params[label]) for t in done]
        low, high = math.log10(min(values)), math.log10(max(values))
        keep = [a for a in notes if a.x != place]
        ticks = _log_ticks(min(values), max(values))
        span = max(high - low, 1e-12)
        for end in (min(values), max(values)):   # the ends too, unless a tick is close by
            if all(abs(math.log10(end) - math.log10(t)) > 0.1 * span for t in ticks):
                ticks.append(float(f"{end:.2g}") if math.isclose(float(f"{end:.2g}"), end, rel_tol=0.05) else end)
        for tick in ticks:
            y = 0.5 if high == low else min(1.0, max(0.0, (math.log10(tick) - low) / (high - low)))
            keep.append(go.layout.Annotation(x=place, y=y, text=f"{tick:.2g}", showarrow=False, xanchor="right",
                                             xshift=-4, font=dict(size=10, color="#555")))
        notes = keep
        labels[place] = f"{label} (log)"
    fig.layout.annotations = notes
    fig.layout.xaxis.ticktext = labels


def pareto(study, names: list[str]) -> go.Figure:
    """A two-objective study's trials, the Pareto front marked (Optuna's plot_pareto_front); each point's
    trial number is its `meta` and its `customdata`, so a selection names its trial even after new trials
    were drawn (the Search page's front grows while it runs). A parameter count is on a log axis."""
    if len(study.directions) < 2:
        raise ValueError("the Pareto front is for a study with two or more objectives")
    need(study)
    targets = [hover(n) for n in names[:len(study.directions)]]
    axes = [dict(title=hover(n), type="log" if n in LOG_METRICS else "linear") for n in names[:2]]
    fig = house(quiet(ov.plot_pareto_front, study, target_names=targets),
                 f"Pareto front: {hover(names[0])} against {hover(names[1])}", 400,
                 xaxis=axes[0], yaxis=axes[1], legend=LEGEND_BELOW)
    by_number = {t.number: t for t in study.get_trials(deepcopy=False)}
    for trace in fig.data:
        numbers = [int(m.group(1)) if (m := _NUMBER.search(str(s))) else None for s in trace.text or ()]
        best = "Best" in str(trace.hovertemplate)
        trace.update(meta=numbers, customdata=numbers,
                     text=[trial_text(by_number[n]) if n in by_number else "" for n in numbers],
                     name="on the front" if best else "dominated", showlegend=True,
                     marker=dict(color=EXPECTED_COLOUR if best else PALETTE[0], size=11 if best else 8,
                                 symbol="diamond" if best else "circle", colorbar=None, showscale=False),
                     hovertemplate="%{text}<br>%{x:.4g}, %{y:.4g}<extra></extra>")
    return fig


KINDS = ("history", "intermediate", "timeline", "slice", "contour", "edf", "parallel", "importances", "pareto")


__all__ = ["STATE_FILL", "KINDS", "is_log", "parameters", "trial_at", "history", "intermediate", "timeline",
           "slice_plot", "contour", "edf", "importances", "parallel", "pareto"]
