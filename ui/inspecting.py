"""What the Attention and Outputs pages share: their session keys, the input picker (a validation
example or typed tokens; one choice follows the user across both pages) and cached wrappers of
explorer.analysis.views.

Caches are keyed on `version(sel)`: the model's name plus a digest of its weights, so a run
trained further is recomputed; the model itself goes in as an `_underscored` argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from explorer.analysis import views
from explorer.quoting import md, md_text
from explorer.tasks import BOS, SPECIALS, Task
from ui.links import SHARED
from ui.models import SelectedModel

# The input both pages inspect (shared, so one example follows you across them)
INSPECT_MODE, INSPECT_INDEX, INSPECT_TEXT = "inspect_mode", "inspect_index", "inspect_text"
INSPECT_TEACHER, INSPECT_PAD = "inspect_teacher", "inspect_pad"
# Attention page
ATT_KIND, ATT_REF = "att_kind", "att_ref"  # in the link as labels: ?att_kind=Cross&att_ref=same+position
ATT_REF_FOR = "_att_ref_for"      # kind -> the comparison chosen for it (each kind keeps its own)
ATT_LAYER, ATT_HEAD = "att_layer", "att_head"  # the focused head (ints; "L1" / "H2" in a shared link)
ATT_MOSAIC = "att_mosaic"         # the mosaic chart (a click on a tile's name focuses that head)
ATT_CLOSEUP = "att_closeup"       # the close-up chart, whose own slider flips heads in the browser
ATT_FOCUS_FOR = "_att_focus_for"  # (model, kind, reference) the focused head was picked for
_LAST_READ = "_inspect_last_read"  # task config -> the last Picked that could be read (shown under a typo)
# Outputs page
OUT_TOP_K, OUT_BEAM, OUT_PENALTY = "out_top_k", "out_beam_k", "out_length_penalty"
OUT_NEW, OUT_TEMPERATURE, OUT_SEED = "out_new_chars", "out_temperature", "out_seed"

MODES = {"example": "Example", "typed": "Type your own"}


@dataclass(frozen=True)
class Picked:
    """The input both pages inspect."""

    src: tuple                  # token ids (the LM's text), or vectors as tuples for order-vectors
    target: tuple[int, ...]     # the correct output (see views.solution); may be () for typed LM text
    typed: bool
    teacher: bool = False       # seq2seq: the decoder reads the correct target instead of its own output
    pad: bool = False           # pad like a training batch (Attention page)


def version(sel: SelectedModel) -> str:
    return f"{sel.key}@{views.fingerprint(sel.model)}"


# ---------------------------------------------------------------------------------- the picker
def _typing_help(task: Task) -> str:
    if task.kind == "lm":
        known = "".join(t for t in task.vocab[len(SPECIALS):] if t != "\n")
        return f"Any text of up to {task.max_tgt_len} characters, made of these (its training text's): {known}"
    if task.kind == "classify":
        return (f"{task.max_src_len} tokens or fewer, separated by spaces: A and B once each, distractors "
                f"1..{task.cfg.n_symbols} elsewhere.")
    return (f"{task.cfg.min_len} to {task.max_src_len} integers in 1..{task.cfg.n_symbols}, separated by spaces "
            "(shorter or longer inputs are allowed up to the maximum; the model never saw them).")


def _prefill(text: str) -> None:
    """Switching to typing starts from the example on screen, not from an empty box."""
    if st.session_state.get(INSPECT_MODE) == "typed" and not st.session_state.get(INSPECT_TEXT):
        st.session_state[INSPECT_TEXT] = text


def _as_tuple(src) -> tuple:
    return tuple(tuple(float(v) for v in row) if isinstance(row, (list, tuple)) else int(row) for row in src)


def pick_input(sel: SelectedModel, pad_toggle: bool = False) -> Picked | None:
    """Draw the input widgets; returns the input. Typed text that cannot be read shows what is wrong and
    returns the last input of this task that could be read (None if there was none): a typo keeps the view."""
    picked = _pick_input(sel, pad_toggle)
    last = st.session_state.setdefault(_LAST_READ, {})
    if picked is not None:
        last[sel.task.cfg] = picked
        return picked
    if sel.task.cfg in last:
        st.caption(":material/history: Below: the last input that could be read.")
    return last.get(sel.task.cfg)


def _pick_input(sel: SelectedModel, pad_toggle: bool) -> Picked | None:
    task = sel.task
    n = len(task.val)
    if st.session_state.get(INSPECT_INDEX, 0) >= n:   # a task with fewer examples than the last one
        st.session_state[INSPECT_INDEX] = 0
    with st.container(border=True):
        # The two toggles share a column, one above the other: side by side, "Teacher forcing" was cut to
        # "Teacher f…" at 1280 px.
        cols = st.columns([3, 4, 3], vertical_alignment="bottom")
        index = int(st.session_state.get(INSPECT_INDEX, 0))
        example, target = task.example("val", index)
        mode = cols[0].segmented_control(
            "Input", list(MODES), format_func=MODES.get, default="example", required=True, key=INSPECT_MODE,
            on_change=_prefill, args=(views.text_of(task, example),), **SHARED)
        typed = mode == "typed" and not views.takes_vectors(task)
        if typed:
            text = cols[1].text_input("Your input", key=INSPECT_TEXT, help=_typing_help(task), **SHARED,
                                      placeholder=views.text_of(task, example))
        else:
            cols[1].number_input(f"Example (0–{n - 1} of the validation split)", 0, n - 1, 0, key=INSPECT_INDEX,
                                 **SHARED, help="Held-out examples the model never trained on.")
        teacher = task.kind == "seq2seq" and cols[2].toggle(
            "Teacher forcing", key=INSPECT_TEACHER, **SHARED,
            help="Off: the decoder reads its own output so far (what the model really says). "
                 "On: it reads the correct answer, as during training.")
        pad = pad_toggle and task.kind != "lm" and not views.takes_vectors(task) and cols[2].toggle(
            "Pad like a batch", key=INSPECT_PAD, **SHARED,
            help=f"Append <pad> tokens up to the longest sequence ({task.max_src_len}), as in a training "
                 "batch, to see the padding mask at work.")
        if mode == "typed" and views.takes_vectors(task):
            st.info("This task feeds random vectors, so there is nothing to type: showing a validation "
                    "example instead.", icon=":material/info:")
        if not typed:
            return Picked(_as_tuple(example), views.solution(task, example), False, teacher, pad)
        try:
            src = views.read_input(task, text or "")
        except ValueError as err:
            st.error(f"**This input cannot be read.** {md_text(str(err)[:1].upper() + str(err)[1:])}.",
                     icon=":material/error:")
            return None
    return Picked(src, views.solution(task, src), True, teacher, pad)


def describe(task: Task, picked: Picked) -> str:
    """One line: the input and, where known, the correct output."""
    if views.takes_vectors(task):
        shown = " ".join(task.position_labels([list(v) for v in picked.src]))
        return f"Input (A and B among noise vectors): {md(shown, None)}"
    if task.kind == "lm":
        shown = "".join(task.tokens(picked.src))
        return f"Text: {md(shown, None)}"
    line = f"Input: {md(' '.join(task.tokens(picked.src)), None)}"
    if task.kind == "classify":
        return line + f" · correct answer: **{task.class_names[picked.target[0]]}**"
    lengths = task.cfg.min_len <= len(picked.src) <= task.cfg.max_len
    note = "" if lengths else f" · the model was trained on {task.cfg.min_len}–{task.cfg.max_len} tokens only"
    return line + f" · correct output: {md(' '.join(task.tokens(picked.target)), None)}" + note


# ------------------------------------------------------------------------------------ caches
@st.cache_data(max_entries=256, show_spinner=False)
def greedy_output(version: str, _model, _task: Task, src: tuple) -> tuple[int, ...]:
    return views.greedy_output(_model, _task, src)


def decoder_input_for(sel: SelectedModel, picked: Picked, ver: str) -> tuple[int, ...] | None:
    """What the decoder reads (see views.decoder_input), from the cached greedy output
    (`ver`: version(sel), which a page computes once a rerun: it digests the weights)."""
    if sel.task.kind != "seq2seq":
        return None
    if picked.teacher:
        return (BOS, *picked.target)
    return (BOS, *greedy_output(ver, sel.model, sel.task, picked.src)[:-1])


@st.cache_data(max_entries=128, show_spinner=False)
def attention(version: str, _model, _task: Task, src: tuple, tgt_in: tuple | None,
              pad: bool) -> views.AttentionView:
    return views.attention_for(_model, _task, src, tgt_in, pad=pad)


@st.cache_data(max_entries=128, show_spinner=False)
def output_distribution(version: str, _model, _task: Task, src: tuple, tgt_in: tuple | None) -> np.ndarray:
    return views.output_distribution(_model, _task, src, tgt_in)


@st.cache_data(max_entries=128, show_spinner=False)
def decode_both(version: str, _model, _task: Task, src: tuple, k: int,
                length_penalty: float) -> views.Decoded:
    return views.decode_both(_model, _task, src, k, length_penalty)


@st.cache_data(max_entries=128, show_spinner=False)
def continue_text(version: str, _model, src: tuple, n_new: int, temperature: float, seed: int) -> tuple[int, ...]:
    return views.continue_text(_model, src, n_new, temperature, seed)
