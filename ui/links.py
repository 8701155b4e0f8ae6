"""Widgets bound to the URL: a shared link opens the same view.

A bound widget reads its value off the URL only on the page that draws it, so values other pages need
(the config, the training settings) are adopted into session state before any widget exists
(`adopt_from_url`, called by `ui.state.init_state`). A selection widget writes its option's *label* into
the URL (?cfg_norm=Post-LN), so reading a value maps labels back to options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import streamlit as st

from explorer.quoting import md

# Widget keyword arguments: the value outlives the page it is drawn on and goes into the link.
SHARED = dict(bind="query-params", persist_state="session")

# (session key, default, option -> label or None, is the value acceptable, what is valid in words)
UrlSpec = tuple[str, object, dict | None, Callable[[object], bool], str]
IGNORED = "_link_ignored"  # what a shared link asked for that could not be used, said once


def state_value(key: str, default):
    """A widget's value on a page that may not draw it (bound widgets keep their value across page
    switches, and `adopt_from_url` adopts a shared link's), else the default."""
    return st.session_state.get(key, default)


def parse(text: str, default, labels: dict | None = None):
    """A URL parameter as the type of `default` (or an option of `labels`); None if it does not parse."""
    if labels:
        by_label = {label: option for option, label in labels.items()}
        return by_label.get(text, text if text in labels else None)
    try:
        if isinstance(default, bool):
            return {"true": True, "false": False}.get(text.lower())
        return type(default)(text)
    except (TypeError, ValueError):
        return None


def number_specs(numbers: dict[str, tuple]) -> list[UrlSpec]:
    """Specs of number widgets given as key -> (min, max, default)."""
    return [(k, d, None, lambda v, lo=lo, hi=hi: lo <= v <= hi, f"a number from {lo:g} to {hi:g}")
            for k, (lo, hi, d) in numbers.items()]


def adopt_from_url(specs: Iterable[UrlSpec]) -> None:
    """Copy a shared link's values into session state before any widget exists. A value that does not
    parse or falls outside its widget's range is not used, and `say_ignored` tells the user so."""
    for key, default, labels, ok, valid in specs:
        if key in st.session_state or key not in st.query_params:
            continue
        text = st.query_params[key]
        value = parse(text, default, labels)
        if value is not None and ok(value):
            st.session_state[key] = value
        else:
            shown = default if labels is None else labels.get(default, default)
            st.session_state.setdefault(IGNORED, []).append(
                f"{md(f'{key}={text}')} is not valid (it takes {valid}), so it is {shown}")


def say_ignored() -> None:
    """Once: which of a shared link's values could not be used, and what they take."""
    ignored = st.session_state.pop(IGNORED, None)
    if ignored:
        st.warning("**Part of this link was not used.** " + "; ".join(ignored) + ".", icon=":material/link_off:")
