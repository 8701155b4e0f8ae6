"""Views a lesson file names: each page's main view with that page's link parameters (`VIEWS`), and every
shipped step's own view (`ch2/<step-slug>`, explorer/lessons/shipped_parts.py).

    view = VIEWS["positional"]
    values = view.resolve({"d_model": 64})    # checked: KeyError for an unknown key, ValueError for a value
    view.build(values) -> View                # one figure from explorer.figures, as the page draws it
    view.try_it(values) -> ("positional", {"pe_type": "sinusoidal", "pe_d_model": "64", ...})

Parameters use the seeds' short names (d_model, n_heads, norm, pos_encoding ...) and accept the page's own
link key as well (`pe_d_model`); every number has the page's range (ui/state.py PAGE_NUMBERS, explorer/limits.py).
Everything is computed by the functions the pages and the shipped lessons call; nothing here draws anew.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from explorer.analysis.gradients import depth_profile
from explorer.analysis.views import single_threaded
from explorer.config import ARCHITECTURES, NORMS, ModelConfig, param_count
from explorer.export.kinds import attention_view, build_figure
from explorer.figures.architecture import architecture_diagram, param_breakdown
from explorer.figures.attention import attention_heatmap
from explorer.figures.curves import line_chart
from explorer.figures.gradients import grad_norm_profile
from explorer.figures.interpret import ablation_heatmap
from explorer.figures.positional import pe_heatmap, similarity_heatmap
from explorer.inspect import ATTENTION_KINDS
from explorer.interpret.stored import ablation_table
from explorer.lessons.base import View
from explorer.lessons.params import NamedView, Param
from explorer.lessons.shipped_parts import STEP_VIEWS
from explorer.limits import CAPS
from explorer.positional import POSITIONAL, alibi_slopes, rope_angles, sinusoidal_table
from explorer.store.shipped import SHIPPED_NAMES, shipped_model
from explorer.store.subject import open_subject

NORM_LABELS = {"pre": "Pre-LN", "post": "Post-LN"}   # what the pages write into a link (ui/model_config.py)
ARCH_TASKS = {"encoder-decoder": "reversal-fast", "encoder": "order-vectors", "decoder": "char-lm"}
D_FF = tuple(2**k for k in range(4, CAPS["d_ff"].bit_length()))   # the Architecture page's options
BASES = (10, 100, 1_000, 10_000, 100_000, 1_000_000)             # the Positional encoding page's
GRAD_D_MODELS = (32, 64, 128, 256)                                 # the Gradients page's
MODEL = Param("model", SHIPPED_NAMES[0], options=SHIPPED_NAMES, aliases=("model_pretrained",),
              help="a shipped model")
EXAMPLE = Param("example", 0, 0, 99, aliases=("inspect_index",), help="a held-out example of its task")


# ------------------------------------------------------------------------------------------ architecture
def _config(v: dict) -> ModelConfig:
    return ModelConfig(arch=v["arch"], d_model=v["d_model"], n_heads=v["n_heads"], n_encoder_layers=v["n_layers"],
                       n_decoder_layers=v["n_decoder_layers"], d_ff=v["d_ff"], norm=v["norm"],
                       pos_encoding=v["pos_encoding"])


def _architecture(v: dict) -> View:
    cfg = _config(v)
    if v["figure"] == "diagram":
        return View(architecture_diagram(cfg), "The stack this config builds: hover a box for its parameters.")
    parts = param_count(cfg)
    return View(param_breakdown(parts, title=f"{parts['total']:,} parameters"),
                "Where the parameters are: embeddings grow with the vocabulary, attention and the FFN with "
                "d_model² per layer.")


def _architecture_link(v: dict) -> tuple[str, dict]:
    return "architecture", {"cfg_task": ARCH_TASKS[v["arch"]], "cfg_d_model": str(v["d_model"]),
                            "cfg_n_heads": str(v["n_heads"]), "cfg_n_encoder_layers": str(v["n_layers"]),
                            "cfg_n_decoder_layers": str(v["n_decoder_layers"]), "cfg_d_ff": str(v["d_ff"]),
                            "cfg_norm": NORM_LABELS[v["norm"]],
                            "cfg_pos_encoding": POSITIONAL[v["pos_encoding"]].label}


ARCHITECTURE = NamedView("architecture", "a model config's parameters by part, or its block diagram", (
    Param("arch", "encoder-decoder", options=ARCHITECTURES),
    Param("d_model", 64, 4, CAPS["d_model"], aliases=("cfg_d_model",)),
    Param("n_heads", 4, 1, CAPS["n_heads"], aliases=("cfg_n_heads",)),
    Param("n_layers", 2, 1, CAPS["n_encoder_layers"], aliases=("n_encoder_layers", "cfg_n_encoder_layers")),
    Param("n_decoder_layers", 2, 1, CAPS["n_decoder_layers"], aliases=("cfg_n_decoder_layers",)),
    Param("d_ff", 256, options=D_FF, aliases=("cfg_d_ff",)),
    Param("norm", "pre", options=NORMS, aliases=("cfg_norm",)),
    Param("pos_encoding", "sinusoidal", options=tuple(POSITIONAL), aliases=("cfg_pos_encoding",)),
    Param("figure", "parameters", options=("parameters", "diagram"))), _architecture, _architecture_link,
    check=lambda v: _config(v) and None)


# ------------------------------------------------------------------------------------------ positional
def _cosine(table: np.ndarray) -> np.ndarray:
    unit = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)
    return unit @ unit.T                                                # (P, P)


def _positional(v: dict) -> View:
    kind, d, n, base = v["encoding"], v["d_model"], v["positions"], float(v["base"])
    if kind == "alibi":
        slopes, distance = alibi_slopes(v["heads"]), np.arange(n)
        shown = np.unique(np.linspace(0, v["heads"] - 1, min(v["heads"], 8)).round().astype(int))
        return View(line_chart({f"H{h}": (distance, -slopes[h] * distance) for h in shown},
                               title="ALiBi: bias added to a score, −m_h × distance", x_title="distance |i − j|",
                               y_title="bias"), "Each head subtracts its slope times the distance from every score.")
    if kind == "rope":
        angles = rope_angles(n, d, base)                                # (P, d_model/2)
        table = np.stack([np.cos(angles), np.sin(angles)], axis=-1).reshape(n, d)
        title = f"RoPE: cos and sin of each rotation angle, {n} positions × d_model {d}"
    else:
        table, title = sinusoidal_table(n, d, base), f"Sinusoidal encoding: {n} positions × d_model {d}"
    if v["figure"] == "similarity":
        return View(similarity_heatmap(_cosine(table), title="Cosine similarity between positions", zmin=-1, zmax=1),
                    "How alike two positions' vectors are: neighbours look alike, similarity fades with distance.")
    return View(pe_heatmap(table, title), "Each row is one position's vector; each column one dimension of it.")


def _positional_check(v: dict) -> None:
    if v["encoding"] == "rope" and v["d_model"] % 2:
        raise ValueError(f"d_model = {v['d_model']} is odd: RoPE rotates pairs of dimensions (an even d_model)")


POSITIONAL_VIEW = NamedView("positional", "a positional encoding's table, or how alike its positions are", (
    Param("encoding", "sinusoidal", options=("sinusoidal", "rope", "alibi"), aliases=("pos_encoding", "pe_type")),
    Param("d_model", 64, 2, 512, aliases=("pe_d_model",)),
    Param("positions", 100, 2, 512, aliases=("pe_positions",)),
    Param("base", 10_000, options=BASES, aliases=("pe_base",)),
    Param("heads", 8, 1, 64, aliases=("pe_heads",)),
    Param("figure", "table", options=("table", "similarity"))), _positional,
    lambda v: ("positional", {"pe_type": v["encoding"], "pe_d_model": str(v["d_model"]),
                              "pe_positions": str(v["positions"]), "pe_base": str(v["base"]),
                              "pe_heads": str(v["heads"])}), check=_positional_check)


# ------------------------------------------------------------------------------ a shipped model's views
@lru_cache(maxsize=4)
def _subject(name: str):
    """A shipped model, read-only and shared by every visitor (as module6's tiny_lm)."""
    return open_subject(f"shipped:{name}")


def _model_link(v: dict, **more) -> dict:
    return {"model_source": "Shipped model", "model_pretrained": v["model"], "inspect_index": str(v["example"]),
            **more}


def _head_check(v: dict) -> None:
    cfg = shipped_model(v["model"]).model
    layers = max(cfg.n_encoder_layers, cfg.n_decoder_layers)
    if v["layer"] >= layers or v["head"] >= cfg.n_heads:
        raise ValueError(f"{v['model']} has layers 0 to {layers - 1} and heads 0 to {cfg.n_heads - 1} "
                         f"(layer = {v['layer']}, head = {v['head']})")


def _attention(v: dict) -> View:
    s = _subject(v["model"])
    view = attention_view(s, v["example"])
    kind = v["kind"] if v["kind"] in view.kinds else view.kinds[-1]
    patterns = view.patterns[kind]                                      # (L, H, Q, K)
    layer, head = min(v["layer"], patterns.shape[0] - 1), min(v["head"], patterns.shape[1] - 1)
    fig = attention_heatmap(patterns[layer, head], view.q_labels[kind], view.k_labels[kind],
                            f"{s.name}: {ATTENTION_KINDS[kind]}, layer {layer}, head {head}", mask=view.masks[kind],
                            expected=view.expected.get(kind))
    return View(fig, "Each row is a query, each column a key: where that token gathers its information from.")


ATTENTION = NamedView("attention", "one head's attention of a shipped model on one example", (
    MODEL, EXAMPLE, Param("layer", 0, 0, 11, aliases=("att_layer",)), Param("head", 0, 0, 15, aliases=("att_head",)),
    Param("kind", "cross", options=tuple(ATTENTION_KINDS), help="the task's own kind when the model has no such")),
    _attention, lambda v: ("attention", _model_link(v, att_layer=f"L{v['layer']}", att_head=f"H{v['head']}")),
    check=_head_check)

OUTPUTS = NamedView("outputs", "a shipped model's output distribution on one example", (MODEL, EXAMPLE),
                    lambda v: View(build_figure("outputs", _subject(v["model"]), v["example"]),
                                   "Each row is one output position: how likely the model finds every token there."),
                    lambda v: ("outputs", _model_link(v)))


def _inside(v: dict) -> View:
    s = _subject(v["model"])
    table = ablation_table(s.name, s.model, s.task, v["mode"])
    kinds = [k for k in ATTENTION_KINDS if k in set(table["kind"])]
    return View(ablation_heatmap(table, kinds, title=f"What knocking out each head costs {s.name}"),
                "Each cell: how much exact match falls when that one head is switched off.")


INSIDE = NamedView("inside", "head ablation of a shipped model: what each head is worth", (
    MODEL, Param("mode", "zero", options=("zero", "mean"), aliases=("inside_mode",))), _inside,
    lambda v: ("inside", {"model_source": "Shipped model", "model_pretrained": v["model"],
                          "inside_view": "Head ablation"}))


# ------------------------------------------------------------------------------------------ gradients
@single_threaded
def _gradients(v: dict) -> View:
    norms = ("pre", "post") if v["norm"] == "both" else (v["norm"],)
    profiles = {}
    for norm in norms:
        p = depth_profile(norm, n_layers=v["n_layers"], d_model=v["d_model"], seed=v["seed"])
        profiles[NORM_LABELS[norm]] = p.weight_grad if v["what"] == "weights" else p.input_grad
    return View(grad_norm_profile(profiles, title=f"Gradient norm per layer at initialisation, {v['n_layers']} "
                                                  f"layers, d_model {v['d_model']}"),
                "Fresh encoder stacks with the same weights and random batch; one loss goes backward once. "
                "Layer 0 is the first; the scale is logarithmic.")


GRADIENTS = NamedView("gradients", "gradient norm per layer at initialisation, Pre-LN against Post-LN", (
    Param("n_layers", 12, 2, 48, aliases=("grad_layers",)),
    Param("d_model", 64, options=GRAD_D_MODELS, aliases=("grad_d_model",)),
    Param("seed", 0, 0, 9999, aliases=("grad_seed",)),
    Param("norm", "both", options=("both", *NORMS)),
    Param("what", "weights", options=("weights", "inputs"), aliases=("grad_what",))), _gradients,
    lambda v: ("gradients", {"grad_layers": str(v["n_layers"]), "grad_d_model": str(v["d_model"]),
                             "grad_seed": str(v["seed"])}))


PAGE_VIEWS: dict[str, NamedView] = {v.name: v for v in (ARCHITECTURE, POSITIONAL_VIEW, ATTENTION, OUTPUTS,
                                                         GRADIENTS, INSIDE)}
VIEWS: dict[str, NamedView] = {**PAGE_VIEWS, **STEP_VIEWS}


def view_names() -> str:
    """The valid names, for a message: the page views, then the shipped steps' by lesson."""
    lessons = sorted({name.split("/")[0] for name in STEP_VIEWS})
    return ", ".join(PAGE_VIEWS) + ", or a shipped step's as " + ", ".join(f"{lesson}/<step>" for lesson in lessons)


__all__ = ["VIEWS", "PAGE_VIEWS", "view_names", "NORM_LABELS"]
