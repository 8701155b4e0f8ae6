"""A chart's own Plotly slider: tell the server where it was moved, and move it with the keyboard.

A Plotly slider switches its figure in the browser at once, without a rerun (the Attention page
flips heads with one; bench/README.md, "The app", has the times). Streamlit reports a chart's selections,
not its slider, so this component (JavaScript only, nothing on screen) listens for the chart's
`plotly_sliderchange` and sends the step's value as a trigger. The rerun it causes comes after the
browser has already shown the step: the page then brings the rest in line (the link, an outline).
A Plotly slider takes no keyboard input, so the chart also becomes a focusable stop whose arrow and
Page Up / Page Down keys (a presenter's clicker) move the slider a step, as a click on the next tick;
a "Play" button in the figure (`explorer.figures.attention.attention_heatmap(..., play=True)`) walks it to the end the
same way, and a click on another chart's point can move it (the mosaic's tile names pick a head).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
import streamlit.components.v2 as components

REST_MS = 250   # the slider rests this long before the server hears of it
PLAY_MS = 8000  # a Play button plays the whole slider in about this long (80-400 ms a step)
_JS = """
const REST_MS = %d, PLAY_MS = %d;
const MOVES = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1 };

// Move the slider to step i: a press and release on its tick, as a mouse would.
function moveTo(gd, i) {
  const ticks = gd?.querySelectorAll(".slider-tick-rect") ?? [];
  const rail = gd?.querySelector(".slider-rail-touch-rect");
  const tick = ticks[Math.min(ticks.length - 1, Math.max(0, i))];
  if (!tick || !rail) return;
  const box = tick.getBoundingClientRect(), railBox = rail.getBoundingClientRect();
  const at = { bubbles: true, cancelable: true, view: window,
               clientX: box.left + box.width / 2, clientY: railBox.top + railBox.height / 2 };
  rail.dispatchEvent(new MouseEvent("mousedown", at));
  gd.dispatchEvent(new MouseEvent("mouseup", at));
}

const active = (gd) => gd._fullLayout?.sliders?.[0]?.active ?? 0;
const step = (gd, by) => moveTo(gd, active(gd) + by);

// Play: the whole slider in about PLAY_MS, from where it is (from the start if it is at the end); a second
// click, or the end, stops it. The chart's div is looked up in its box each time: a rerun may replace it.
function play(host) {
  if (host.__playing) { clearInterval(host.__playing); host.__playing = null; return; }
  const now = () => host.querySelector(".js-plotly-plot");
  const last = () => now().querySelectorAll(".slider-tick-rect").length - 1;
  if (active(now()) >= last()) moveTo(now(), 0);
  const pace = Math.max(80, Math.min(400, PLAY_MS / Math.max(1, last())));
  host.__playing = setInterval(() => {
    const gd = now();
    if (!gd || active(gd) >= last()) {
      clearInterval(host.__playing); host.__playing = null; return;
    }
    step(gd, 1);
  }, pace);
}

function keys(host) {
  if (host.__explorerKeys) return;  // the chart's box can outlive its div: listen once
  host.__explorerKeys = true;
  if (!document.getElementById("explorer-slider-focus")) {  // a ring when the keyboard reaches the chart
    const style = Object.assign(document.createElement("style"), { id: "explorer-slider-focus" });
    style.textContent = "[data-explorer-slider]:focus-visible { outline: 2px solid #ff4b4b; outline-offset: 4px; }";
    document.head.appendChild(style);
  }
  host.dataset.explorerSlider = "";
  host.tabIndex = 0;
  host.setAttribute("aria-label", "Chart with a slider: the arrow keys move it a step");
  // Plotly's slider cancels the press, so a click would not focus the chart: focus it here.
  host.addEventListener("pointerdown", () => host.focus({ preventScroll: true }), { capture: true });
  host.addEventListener("keydown", (e) => {
    if (!(e.key in MOVES)) return;
    e.preventDefault();
    step(host.querySelector(".js-plotly-plot"), MOVES[e.key]);
  });
}

export default function ({ data, setTriggerValue }) {
  const hub = (window.__explorerSliders ??= { send: {}, watch: {}, timer: {} });
  const chart = data.chart;
  // Sent once the slider rests: a drag across eight heads asks for one rerun, and the browser paints
  // the new head before the rerun's work arrives.
  hub.send[chart] = !data.send ? null : (value) => {
    clearTimeout(hub.timer[chart]);
    hub.timer[chart] = setTimeout(() => setTriggerValue("step", value), REST_MS);
  };
  // Streamlit replaces a chart's div whenever its figure changes, so the listeners go on each new div as
  // it appears: one observer per chart, replaced when the component renders again.
  hub.watch[chart]?.disconnect();
  const plot = (key) => document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const attach = () => {
    const gd = plot(chart);
    if (gd?.on && !gd.__explorerSlider) {
      gd.__explorerSlider = true;
      gd.on("plotly_sliderchange", (e) => hub.send[chart]?.(e.step.value));
      const host = gd.closest(`.st-key-${chart}`);
      keys(host);
      gd.on("plotly_buttonclicked", (e) => e.button?.label?.includes("Play") && play(host));
    }
    // A click on a point of the picker chart whose customdata is a step number moves the slider there.
    const picker = data.picker && plot(data.picker);
    if (picker?.on && !picker.__explorerPicker) {
      picker.__explorerPicker = true;
      picker.on("plotly_click", (e) => {
        const to = e.points?.find((p) => typeof p.customdata === "number")?.customdata;
        if (to !== undefined) moveTo(plot(chart), to);
      });
    }
  };
  const watch = new MutationObserver(attach);
  watch.observe(document.querySelector("[data-testid=stMain]") ?? document.body, { childList: true, subtree: true });
  hub.watch[chart] = watch;
  attach();
  return () => { watch.disconnect(); if (hub.watch[chart] === watch) delete hub.watch[chart]; };
}
"""
_listen = components.component("explorer_slider_events", js=_JS % (REST_MS, PLAY_MS))


def on_slider(chart_key: str, changed: Callable[[str], None] | None = None, picker: str | None = None) -> None:
    """Give chart `chart_key`'s slider its keys and, with `changed`, call changed(step value) before the
    rerun that follows a move (without it nothing reruns: only the browser's view changes). A click on
    a point of chart `picker` whose customdata is a step number moves the slider to that step."""
    key = f"{chart_key}_events"

    def fire() -> None:
        value = (st.session_state.get(key) or {}).get("step")
        if value is not None:
            changed(str(value))

    _listen(key=key, data={"chart": chart_key, "send": changed is not None, "picker": picker}, height=0,
            **({"on_step_change": fire} if changed else {}))
