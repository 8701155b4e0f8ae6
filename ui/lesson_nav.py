"""Where a lesson is: the lesson and step a link names (`lessons?lesson=ID&step=K`, K from 1), moving
between steps (Back / Next and the arrow keys), and the step's controls, fixed by `&lock=1`.

The URL is the single record of the position, so a reload, a shared link and the browser's own
history all land on the same step.
"""

from __future__ import annotations

import streamlit as st
import streamlit.components.v2 as components

from explorer.lessons import Lesson, Step, all_lessons, find_lesson
from explorer.quoting import md
from ui import presenter

LESSON, STEP, LOCK = "lesson", "step", "lock"      # URL parameters (a contract: links are shared)
PREV, NEXT = "lesson_prev", "lesson_next"          # button keys
AT = "_lesson_at"                                  # (lesson id, step index) drawn last
PROBLEM = "_lesson_problem"                        # what a link asked for that does not exist, said once
CONTROL = "lesson_ctl_"                            # widget key prefix of a step's controls
NAV, KEYS = "lesson_nav", "lesson_keys"            # the Back / step / Next row; the keys' component
BUTTON_PX = 104                                    # Back, the step and Next fit a 390 px phone's row
FOLLOW_HELP = "The teacher moves the steps: your screen follows"
KEYS_HELP = "← and → or Page Up and Page Down (a presenter's clicker) move between steps"

# One listener for the whole page (JavaScript only, nothing on screen): the four keys press Back or Next
# wherever the focus is, except in a text field (its caret) and in a chart whose slider took the key. A
# radio or slider keeps its arrow keys outside presenter view; in presenter view the step wins, so a
# clicker never changes the class's prediction. A new step opens scrolled to its top.
_JS = """
const MOVES = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1 };
const TYPING = "textarea, [contenteditable=true], input:not([type=radio]):not([type=checkbox])";
const WIDGET = "[role=radio], [role=radiogroup], [role=slider], input[type=radio]";

function move(by) {
  const button = document.querySelector(`.st-key-${by > 0 ? "lesson_next" : "lesson_prev"} button`);
  if (button && !button.disabled) button.click();
}

function wanted(e) {   // the step this key asks for (-1 or 1), or 0
  const hub = window.__explorerLesson;
  if (!hub?.moves || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return 0;
  return MOVES[e.key] ?? 0;
}

// Capture phase, before a radio or slider handles the key itself (Base Web's radio takes the arrows).
function onWidgetKey(e) {
  const by = wanted(e), at = e.target instanceof Element ? e.target : null;
  if (!by || !at?.closest(WIDGET) || (e.key.startsWith("Arrow") && !window.__explorerLesson.present)) return;
  e.preventDefault();
  e.stopPropagation();
  move(by);
}

// Bubble phase: everywhere else, unless a chart's slider took the key.
function onKey(e) {
  const by = wanted(e), at = e.target instanceof Element ? e.target : null;
  if (!by || e.defaultPrevented || at?.closest(TYPING) || at?.closest(WIDGET)) return;
  e.preventDefault();
  move(by);
}

function toTop() {
  window.scrollTo(0, 0);
  for (const sel of ["[data-testid=stMain]", "[data-testid=stAppViewContainer]"])
    document.querySelector(sel)?.scrollTo(0, 0);
}

export default function ({ data }) {
  const hub = (window.__explorerLesson ??= {});
  hub.moves = data.moves;
  hub.present = data.present;
  if (hub.at !== data.at) {
    hub.at = data.at;
    toTop();
    requestAnimationFrame(toTop);   // after the new step's first elements are laid out
  }
  if (!hub.listening) {
    hub.listening = true;
    window.addEventListener("keydown", onWidgetKey, true);
    document.addEventListener("keydown", onKey);
  }
}
"""
_keys = components.component("explorer_lesson_keys", js=_JS)


def where() -> tuple[Lesson | None, int]:
    """The lesson and 0-based step the URL names; a wrong id or step is reported and corrected."""
    lesson_id = st.query_params.get(LESSON)
    if lesson_id is None:
        return None, 0
    lesson = find_lesson(lesson_id)
    if lesson is None:
        st.session_state[PROBLEM] = (f"There is no lesson {md(lesson_id, 40)}. The lessons are "
                                     f"{', '.join(f'`{k}`' for k in all_lessons())}: pick one below.")
        del st.query_params[LESSON]
        return None, 0
    text, n = st.query_params.get(STEP, "1"), len(lesson.steps)
    k = int(text) if text.strip().isdigit() else None
    if k is None or not 1 <= k <= n:
        st.session_state[PROBLEM] = (f"{md(f'step={text}', 20)} is not a step of this lesson (it has steps 1 to {n}), "
                                     f"so it opens at step {1 if k is None or k < 1 else n}.")
        k = 1 if k is None or k < 1 else n
        st.query_params[STEP] = str(k)
    return lesson, k - 1


def say_problem() -> None:
    problem = st.session_state.pop(PROBLEM, None)
    if problem:
        st.warning(problem, icon=":material/link_off:")


def locked() -> bool:
    return st.query_params.get(LOCK) == "1"


def arrived(lesson: Lesson, index: int) -> bool:
    """True on the first run at this step: the step's widgets start afresh there."""
    here = (lesson.id, index)
    if st.session_state.get(AT) == here:
        return False
    st.session_state[AT] = here
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(CONTROL)]:
        del st.session_state[key]
    return True


def go(k: int) -> None:
    st.query_params[STEP] = str(k + 1)


def open_lesson(lesson_id: str) -> None:
    st.query_params[LESSON] = lesson_id
    st.query_params[STEP] = "1"


def nav_buttons(lesson: Lesson, index: int, moves: bool = True) -> None:
    """Back, "Step X of N" and Next in one row, also on the keys (KEYS_HELP); with `moves` False (a page
    that follows a room) the step alone. Every page scrolls to the top of a new step."""
    n = len(lesson.steps)
    with st.container(key=NAV, horizontal=True, horizontal_alignment="center", vertical_alignment="center",
                      wrap=False, width="content"):
        if moves:   # no tooltips: one left under the pointer after a click covered the buttons beside it
            st.button("Back", key=PREV, icon=":material/arrow_back:", disabled=index == 0, on_click=go,
                      args=(index - 1,), width=BUTTON_PX)
        st.caption(f"<b>Step {index + 1} of {n}</b>", unsafe_allow_html=True,
                    help=KEYS_HELP if moves else FOLLOW_HELP, width="content")
        if moves:
            st.button("Next", key=NEXT, icon=":material/arrow_forward:", icon_position="right",
                      disabled=index == n - 1, on_click=go, args=(index + 1,), width=BUTTON_PX, type="primary")
    _keys(key=KEYS, data={"at": f"{lesson.id}/{index}", "moves": moves, "present": presenter.on()}, height=0)


def _remember(param: str, widget: str) -> None:
    """A control moved: the link carries its value (a setting of the view, like `layernorm=post`; no
    authority is ever in the address: the teacher's is the owner cookie's, ui/room.py)."""
    # A student's page moved by the room can still send a change of the last step's control, whose
    # state `arrived` has dropped: that control is gone, so the link keeps nothing of it.
    if widget in st.session_state:
        st.query_params[param] = str(st.session_state[widget])


def control_values(step: Step) -> dict:
    """The step's control values: the link's when valid, else the default. With `lock=1` they are shown
    and cannot be changed; otherwise a change goes into the URL, so the link shows what is on screen."""
    values, fixed = {}, locked()
    for c in step.controls:
        widget = CONTROL + c.key
        from_link = c.parse(st.query_params.get(c.key))
        if widget not in st.session_state or fixed:
            st.session_state[widget] = from_link if from_link is not None else c.default
        st.select_slider(c.label, c.options, key=widget, disabled=fixed, help=c.help,
                         on_change=_remember, args=(c.key, widget))
        values[c.key] = st.session_state[widget]
    if fixed and step.controls:
        st.caption(":material/lock: The teacher's settings: this link fixes them. *Try it yourself* opens "
                   "the same view with nothing fixed.")
    return values
