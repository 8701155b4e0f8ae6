"""What a screen reader and a keyboard need that Streamlit's markup lacks (WCAG 2.1 AA; ACCESSIBILITY.md
says what conforms and how it is checked). `apply()` runs once per script run from app.py:

- every chart (ui/widgets.py draws it in a `chartbox_` container with its description beside it) becomes a
  named figure: `role="figure"`, `aria-label` its title, `aria-describedby` its description (1.1.1);
- the modebar's icon links get their names as buttons (4.1.2); the room's live count is announced
  politely (4.1.3, `role="status"`);
- a "Skip to the page" link comes first for the keyboard (2.4.1), and focus is always visible (2.4.7);
- under `prefers-reduced-motion` Plotly's transitions are instant (2.3.3).

One listener for the page (JavaScript, nothing on screen): a MutationObserver labels what each rerun
draws. Text stays as Streamlit rendered it: labels are copied with textContent, never as markup.
"""

from __future__ import annotations

import streamlit as st
import streamlit.components.v2 as components

BOX, DESC = "chartbox_", "chartdesc_"   # container key prefixes around a chart and its words (ui/widgets.py)
KEY = "a11y"

CSS = f"""<style>
/* A chart's words are for screen readers: out of the flow (no gap under the chart), clipped, not hidden. */
[data-testid=stLayoutWrapper]:has(> [class*="st-key-{DESC}"]), [class*="st-key-{DESC}"] {{
  position: absolute !important; width: 1px !important; height: 1px !important; overflow: hidden !important;
  clip-path: inset(50%) !important; white-space: nowrap !important; margin: 0 !important; padding: 0 !important; }}
/* Focus is always visible, also on the components that drop the browser's outline (2.4.7). */
a:focus-visible, button:focus-visible, [role=button]:focus-visible, [role=radio]:focus-visible,
[role=slider]:focus-visible, [role=tab]:focus-visible, input:focus-visible, textarea:focus-visible,
summary:focus-visible, [tabindex]:focus-visible {{ outline: 3px solid #3558c7 !important; outline-offset: 2px; }}
#explorer-skip {{ position: fixed; left: 0.5rem; top: -3rem; z-index: 1000000; padding: 0.5rem 0.75rem;
  background: #3558c7; color: #fff; border-radius: 0.25rem; font-weight: 600; text-decoration: none; }}
#explorer-skip:focus {{ top: 0.5rem; }}
/* A formula wider than a 320 px screen scrolls in its own box instead of being cut (1.4.10). */
.katex-display {{ overflow-x: auto; overflow-y: hidden; }}
@media (prefers-reduced-motion: reduce) {{ *, *::before, *::after {{ transition: none !important;
  animation: none !important; scroll-behavior: auto !important; }} }}
</style>"""

_JS = f"""
function label() {{
  for (const box of document.querySelectorAll('[class*="st-key-{BOX}"]')) {{
    const plot = box.querySelector('.js-plotly-plot'), desc = box.querySelector('[class*="st-key-{DESC}"]');
    if (!plot || !desc) continue;
    if (!desc.id) desc.id = 'chart-desc-' + Math.random().toString(36).slice(2);
    const words = desc.querySelector('[data-testid=stMarkdownContainer]');
    const name = words?.querySelector('strong')?.textContent || 'Chart';
    if (plot.getAttribute('aria-label') !== name) plot.setAttribute('aria-label', name);
    plot.setAttribute('role', 'figure');
    plot.setAttribute('aria-describedby', desc.id);
  }}
  for (const b of document.querySelectorAll('.modebar-btn:not([aria-label])')) {{
    b.setAttribute('role', 'button');
    b.setAttribute('aria-label', b.getAttribute('data-title') || 'chart tool');
  }}
  for (const d of document.querySelectorAll('[class*="st-key-drawing_"]:not([tabindex])')) {{
    d.tabIndex = 0;   // a diagram wider than a phone scrolls sideways: the keyboard must reach it (2.1.1)
    d.setAttribute('role', 'region');
    d.setAttribute('aria-label', 'Diagram (scrolls sideways)');
  }}
  for (const m of document.querySelectorAll('.katex-display:not([tabindex])')) m.tabIndex = 0;   // it may scroll
  const count = document.querySelector('.st-key-room_count');
  if (count && count.getAttribute('role') !== 'status') {{ count.setAttribute('role', 'status');
    count.setAttribute('aria-live', 'polite'); }}
  const main = document.querySelector('[data-testid=stMain]');
  if (main && main.id !== 'explorer-main') {{ main.id = 'explorer-main'; main.setAttribute('tabindex', '-1'); }}
  if (!document.getElementById('explorer-skip')) {{
    const skip = document.createElement('a');
    skip.id = 'explorer-skip'; skip.href = '#explorer-main'; skip.textContent = 'Skip to the page';
    skip.addEventListener('click', e => {{ e.preventDefault(); document.getElementById('explorer-main')?.focus(); }});
    document.body.prepend(skip);
  }}
}}

export default function () {{
  const hub = (window.__explorerA11y ??= {{}});
  label();
  if (!hub.watching) {{
    hub.watching = true;
    let queued = false;
    new MutationObserver(() => {{ if (!queued) {{ queued = true;
      requestAnimationFrame(() => {{ queued = false; label(); }}); }} }})
      .observe(document.body, {{childList: true, subtree: true}});
  }}
}}
"""
_component = components.component("explorer_a11y", js=_JS)


def apply() -> None:
    st.html(CSS)
    _component(key=KEY, height=0)


__all__ = ["apply", "BOX", "DESC"]
