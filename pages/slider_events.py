"""Tell the server where a chart's own Plotly slider was moved.

A Plotly slider switches its figure in the browser at once, without a rerun (the Attention page
flips heads with one: ~0.1 s instead of a rerun's ~0.7 s). Streamlit reports a chart's selections,
not its slider, so this component (JavaScript only, nothing on screen) listens for the chart's
`plotly_sliderchange` and sends the step's value as a trigger. The rerun it causes comes after the
browser has already shown the step: the page then brings the rest in line (the link, an outline).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
import streamlit.components.v2 as components

# Streamlit replaces a chart's div whenever its figure changes, so the listener is attached to each
# new div as it appears: one observer per chart, replaced when the component renders again.
REST_MS = 250
_JS = """
const REST_MS = %d;
export default function ({ data, setTriggerValue }) {
  const hub = (window.__explorerSliders ??= { send: {}, watch: {}, timer: {} });
  const chart = data.chart;
  // Sent once the slider rests: a drag across eight heads asks for one rerun, and the browser paints
  // the new head before the rerun's work arrives.
  hub.send[chart] = (value) => {
    clearTimeout(hub.timer[chart]);
    hub.timer[chart] = setTimeout(() => setTriggerValue("step", value), REST_MS);
  };
  hub.watch[chart]?.disconnect();
  const attach = () => {
    const gd = document.querySelector(`.st-key-${chart} .js-plotly-plot`);
    if (gd?.on && !gd.__explorerSlider) {
      gd.__explorerSlider = true;
      gd.on("plotly_sliderchange", (e) => hub.send[chart]?.(e.step.value));
    }
  };
  const watch = new MutationObserver(attach);
  watch.observe(document.querySelector("[data-testid=stMain]") ?? document.body, { childList: true, subtree: true });
  hub.watch[chart] = watch;
  attach();
  return () => { watch.disconnect(); if (hub.watch[chart] === watch) delete hub.watch[chart]; };
}
"""
_listen = components.component("explorer_slider_events", js=_JS % REST_MS)


def on_slider(chart_key: str, changed: Callable[[str], None]) -> None:
    """Call changed(step value) before the rerun that follows a move of chart `chart_key`'s slider."""
    key = f"{chart_key}_events"

    def fire() -> None:
        value = (st.session_state.get(key) or {}).get("step")
        if value is not None:
            changed(str(value))

    _listen(key=key, data={"chart": chart_key}, on_step_change=fire, height=0)
