"""Block diagram of a Transformer drawn from its `ModelConfig` with plotly shapes and annotations.

One block per stack with "N = n x" (as in Vaswani et al., Figure 1), the sublayers in order, where
LayerNorm sits for Pre-LN vs Post-LN, residual arrows, and tensor shapes on the edges. Data units
are fixed (x from 0 to 10, one unit = 66 px at 700 px wide) and a figure is as wide and tall as its units
at a scale (`sized`), so text never outgrows its box.
"""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.config import ModelConfig, attention_params, ffn_params

DRAWING = "drawing"               # layout.meta.kind of these figures (explorer/figures/projector.py reads it)
PX_PER_UNIT = 66
# The smallest scale at which 14 px text (a projector's) still sits 3 px inside its boxes, measured in
# Chromium on every lesson's drawing and the default architecture (bench/README.md, "Diagrams on a projector").
MIN_PX_PER_UNIT = 58
X_RANGE = (0.0, 10.0)
BLOCK_X_RANGE = (2.65, 7.35)      # one column: its frame, residual lane and edge labels (a phone's width)
TITLE_PX, TITLE_LINE = 14, 18     # the title's text, and a line of it; a long title wraps at its " · "
BW, BH, LH = 3.2, 0.66, 0.42      # box width, two-line box height, one-line box height
GAP, R = 0.42, 0.17               # arrow length between boxes, radius of the residual "+"
EDGE_OUT = 0.35                   # arrow length outside a block frame, where the shape label sits
FONT = dict(family="Arial, sans-serif", size=13, color="#1f2430")
FILLS = dict(attention="#fde2c8", ffn="#d3e6f8", norm="#fff1b8", embed="#f7d6e0", pe="#dcefd6",
             head="#e4dcf4", note="#ffffff", block="#f3f4f7")
ACT_NAMES = dict(relu="ReLU", gelu="GELU", swiglu="SwiGLU")


class _Canvas:
    def __init__(self):
        self.shapes, self.annotations, self.hover = [], [], []

    def rect(self, x0, y0, x1, y1, name, fill, dash="solid", layer="above", radius=0.0):
        line = dict(color="#5b6070", width=1.2, dash=dash)
        if radius:  # rounded frame as an SVG path: plotly rects have no corner radius
            r = radius
            path = (f"M {x0 + r},{y0} L {x1 - r},{y0} Q {x1},{y0} {x1},{y0 + r} L {x1},{y1 - r} "
                    f"Q {x1},{y1} {x1 - r},{y1} L {x0 + r},{y1} Q {x0},{y1} {x0},{y1 - r} "
                    f"L {x0},{y0 + r} Q {x0},{y0} {x0 + r},{y0} Z")
            self.shapes.append(dict(type="path", path=path, name=name, fillcolor=fill, line=line, layer=layer))
        else:
            self.shapes.append(dict(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, name=name, fillcolor=fill,
                                    line=line, layer=layer))

    def text(self, x, y, text, size=13, color=FONT["color"], **kw):
        self.annotations.append(dict(x=x, y=y, xref="x", yref="y", text=text, showarrow=False,
                                     font=dict(FONT, size=size, color=color), **kw))

    def arrow(self, x0, y0, x1, y1):
        self.annotations.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y",
                                     text="", showarrow=True, arrowhead=2, arrowsize=1.1, arrowwidth=1.5,
                                     arrowcolor="#3a3f4b"))

    def line(self, points, name="wire"):
        path = "M " + " L ".join(f"{x},{y}" for x, y in points)
        self.shapes.append(dict(type="path", path=path, name=name, line=dict(color="#3a3f4b", width=1.5)))


class _Column:
    """Stacks elements bottom to top at x = cx, joining each to the one below with an arrow."""

    def __init__(self, canvas: _Canvas, cx: float, lane: int):
        self.c, self.cx, self.lane = canvas, cx, lane  # lane: -1 residuals on the left, +1 right
        self.top = 0.0
        self.pos: dict[str, tuple[float, float]] = {}

    def label(self, text):
        self.c.text(self.cx, 0.15, text, size=12)
        self.top = 0.3

    def _advance(self, gap, edge=None, edge_y=None):
        y0 = self.top + gap
        self.c.arrow(self.cx, self.top, self.cx, y0)
        if edge:
            y = edge_y if edge_y is not None else self.top + gap / 2
            self.c.text(self.cx + 0.1, y, edge, size=12, xanchor="left", color="#555b6a")
        return y0

    def box(self, role, title, detail="", fill="#ffffff", hover="", gap=GAP, edge=None, edge_y=None,
            dash="solid"):
        y0 = self._advance(gap, edge, edge_y)
        h = BH if detail else LH
        self.c.rect(self.cx - BW / 2, y0, self.cx + BW / 2, y0 + h, role, fill, dash=dash)
        body = f"<b>{title}</b>" + (f"<br>{detail}" if detail else "")
        self.c.text(self.cx, y0 + h / 2, f"<i>{body}</i>" if dash != "solid" else body)
        self.c.hover.append((self.cx, y0 + h / 2, hover or title))
        self.top, self.pos[role] = y0 + h, (y0, y0 + h)

    def plus(self):
        y0 = self._advance(GAP * 0.7)
        self.c.shapes.append(dict(type="circle", x0=self.cx - R, y0=y0, x1=self.cx + R, y1=y0 + 2 * R,
                                  name="add", fillcolor="#ffffff", line=dict(color="#3a3f4b", width=1.5)))
        self.c.text(self.cx, y0 + R, "+", size=15)
        self.top = y0 + 2 * R
        return y0 + R

    def residual(self, branch_y, merge_y, half_width):
        lane_x = self.cx + self.lane * (BW / 2 + 0.3)
        self.c.line([(self.cx, branch_y), (lane_x, branch_y), (lane_x, merge_y)], name="residual")
        self.c.arrow(lane_x, merge_y, self.cx + self.lane * half_width, merge_y)
        self.c.shapes.append(dict(type="circle", x0=self.cx - 0.05, y0=branch_y - 0.05, x1=self.cx + 0.05,
                                  y1=branch_y + 0.05, name="branch", fillcolor="#3a3f4b", line_width=0))

    def block(self, name, n_layers, sublayers, norm, d_model, shape, residual=True):
        """One Transformer layer framed, `sublayers` = [(role, title, detail, hover)], each wrapped
        in a residual (unless `residual` is False): Pre-LN puts LayerNorm before it, Post-LN "Add & Norm" after it."""
        frame_y0 = self.top + EDGE_OUT
        for i, (role, title, detail, hover) in enumerate(sublayers):
            gap = EDGE_OUT + 0.6 if i == 0 else GAP
            branch_y = self.top + gap - (0.3 if i == 0 else GAP / 2)
            edge = dict(edge=shape, edge_y=self.top + EDGE_OUT / 2) if i == 0 else {}
            fill = FILLS["ffn"] if role == "ffn" else FILLS["attention"]
            if norm == "pre":
                self.box("norm:layernorm", "LayerNorm", fill=FILLS["norm"], gap=gap,
                         hover=f"LayerNorm: scale and shift, {2 * d_model:,} parameters", **edge)
                self.box(f"sublayer:{role}", title, detail, fill, hover)
                if residual:
                    self.residual(branch_y, self.plus(), R)
            elif residual:
                self.box(f"sublayer:{role}", title, detail, fill, hover, gap=gap, **edge)
                self.box("norm:addnorm", "Add & Norm", fill=FILLS["norm"],
                         hover=f"LayerNorm(x + sublayer(x)), {2 * d_model:,} parameters")
                merge = self.pos["norm:addnorm"]
                self.residual(branch_y, (merge[0] + merge[1]) / 2, BW / 2)
            else:  # no residual: nothing to add, the norm alone
                self.box(f"sublayer:{role}", title, detail, fill, hover, gap=gap, **edge)
                self.box("norm:layernorm", "LayerNorm", fill=FILLS["norm"],
                         hover=f"LayerNorm(sublayer(x)), no residual add, {2 * d_model:,} parameters")
        frame_y1 = self.top + 0.65
        x0, x1 = self.cx - BW / 2 - 0.55, self.cx + BW / 2 + 0.55
        self.c.rect(x0, frame_y0, x1, frame_y1, f"block:{name}", FILLS["block"], layer="below", radius=0.15)
        self.c.text(x0 + 0.15, frame_y1 - 0.22, f"<b>{name.capitalize()} layer</b>", xanchor="left")
        self.c.text(x1 - 0.15, frame_y1 - 0.22, f"N = {n_layers} ×", xanchor="right")
        self.pos[f"block:{name}"] = (frame_y0, frame_y1)
        self.top_of_frame = frame_y1


def _dims(cfg: ModelConfig, batch, seq_len):
    if seq_len is None:
        return (batch if batch is not None else "B"), "S", "T"
    s, t = seq_len if isinstance(seq_len, (tuple, list)) else (seq_len, seq_len)
    return (batch if batch is not None else 1), s, t


def _inputs(col: _Column, cfg: ModelConfig, vocab: int, b, t, tokens_text):
    d = cfg.d_model
    if vocab:
        col.label(f"{tokens_text} ({b}, {t})")
        col.box("input:embedding", "Token embedding", f"vocab {vocab:,} → {d:,}", FILLS["embed"],
                f"Token embedding: {vocab:,} × {d} = {vocab * d:,} parameters")
    else:
        col.label(f"input vectors ({b}, {t}, {d})")
        col.box("input:vectors", "Continuous inputs", f"width {d}, no embedding", FILLS["embed"])
    pe = cfg.pos_encoding
    if pe in ("sinusoidal", "learned"):
        title = "+ Sinusoidal positions" if pe == "sinusoidal" else "+ Learned positions"
        detail = "fixed sin/cos, 0 parameters" if pe == "sinusoidal" else f"{cfg.max_len:,} × {d:,} table"
        col.box("input:pe", title, detail, FILLS["pe"], f"Positional encoding ({pe}) added to embeddings")
    else:
        title, detail = {"rope": ("RoPE: no vector added", "rotates q, k inside attention"),
                         "alibi": ("ALiBi: no vector added", "a distance bias per head")}.get(
            pe, ("No positional encoding", "attention sees a bag of tokens"))
        col.box(f"note:{pe}", title, detail, FILLS["note"], title, dash="dot")


def _sublayers(cfg: ModelConfig, kind: str):
    d, h, act = cfg.d_model, cfg.n_heads, ACT_NAMES[cfg.activation]
    attn_hover = f"{h} heads of width {cfg.d_head}; {attention_params(d):,} parameters"
    self_attn = (("self-attention", "Multi-head self-attention", f"{h} heads × {cfg.d_head}", attn_hover)
                 if kind == "encoder" else
                 ("masked-self-attention", "Masked self-attention", f"{h} heads, causal mask", attn_hover))
    out = [self_attn]
    if kind == "cross":
        out.append(("cross-attention", "Cross-attention", "K, V from the encoder", attn_hover))
    out.append(("ffn", f"Feed-forward ({act})", f"{d:,} → {cfg.d_ff:,} → {d:,}",
                f"Position-wise {act} MLP; {ffn_params(cfg):,} parameters"))
    return out


def _stack(col: _Column, cfg: ModelConfig, kind: str, n_layers: int, shape: str):
    name = "encoder" if kind == "encoder" else "decoder"
    col.block(name, n_layers, _sublayers(cfg, kind), cfg.norm, cfg.d_model, shape, residual=cfg.residual == "add")
    exit_gap = col.top_of_frame - col.top + EDGE_OUT
    if cfg.norm == "pre":
        col.box("norm:final", "Final LayerNorm", fill=FILLS["norm"], gap=exit_gap, edge=shape,
                edge_y=col.top_of_frame + EDGE_OUT / 2, hover="Pre-LN stacks normalise once more at the top")
        return GAP, None
    return exit_gap, col.top_of_frame + EDGE_OUT / 2


def _lm_head(col: _Column, cfg: ModelConfig, gap, edge_y, b, t, shape):
    v, d = cfg.tgt_vocab_size, cfg.d_model
    tied = ", tied" if cfg.tie_embeddings else ""
    hover = "LM head: one logit per vocabulary token" + (", weights shared with the embedding" if tied else "")
    col.box("head:linear", "Linear → vocabulary", f"{d:,} → {v:,}{tied}", FILLS["head"], hover,
            gap=gap, edge=shape, edge_y=edge_y)
    col.box("head:softmax", "Softmax", fill=FILLS["head"], hover="Probabilities over the next token")
    col._advance(GAP)
    col.c.text(col.cx, col.top + GAP + 0.15, f"next-token probabilities ({b}, {t}, {v:,})", size=12)
    col.top += GAP + 0.3


def _classifier(col: _Column, cfg: ModelConfig, gap, edge_y, b, shape):
    d, k = cfg.d_model, cfg.n_classes
    col.box("head:pool", "Mean pooling", "average over positions", FILLS["head"],
            "Order-blind average of the sequence", gap=gap, edge=shape, edge_y=edge_y)
    col.box("head:classifier", "Classifier", f"Linear {d} → {k}", FILLS["head"],
            f"{d * k + k:,} parameters", edge=f"({b}, {d})")
    col._advance(GAP)
    col.c.text(col.cx, col.top + GAP + 0.15, f"class logits ({b}, {k})", size=12)
    col.top += GAP + 0.3


def _cross_wire(canvas: _Canvas, enc: _Column, dec: _Column, x_mid: float, shape: str):
    """Encoder output up, across the gap between the columns, into the cross-attention box."""
    y_up = max(enc.top, enc.top_of_frame) + 0.5
    y_cross = sum(dec.pos["sublayer:cross-attention"]) / 2
    canvas.line([(enc.cx, enc.top), (enc.cx, y_up), (x_mid, y_up), (x_mid, y_cross)], name="cross")
    canvas.arrow(x_mid, y_cross, dec.cx - BW / 2, y_cross)
    canvas.text(enc.cx - 0.1, y_up + 0.2, f"encoder output {shape}", size=12, xanchor="left")
    canvas.text(x_mid + 0.08, y_cross + 0.17, "K, V", size=12, xanchor="left")
    return y_up + 0.4


def block_diagram(cfg: ModelConfig, kind: str = "encoder", batch=None, seq_len=None) -> go.Figure:
    """One block of `cfg` alone ("encoder", "decoder" masked, or "cross" with cross-attention: its
    sublayers, LayerNorms and residual adds) or its "lm-head" (final LayerNorm, projection, softmax), at
    `architecture_diagram`'s scale but a fraction of its height, so a lesson shows it beside its text."""
    canvas = _Canvas()
    b, _, t = _dims(cfg, batch, seq_len)
    shape = f"({b}, {t}, {cfg.d_model})"
    col = _Column(canvas, 5.0, -1)
    if kind == "lm-head":
        col.label(f"x {shape}, from the last block")
        if cfg.norm == "pre":
            col.box("norm:final", "Final LayerNorm", fill=FILLS["norm"], edge=shape)
        _lm_head(col, cfg, GAP, None, b, t, shape)
        title = f"The output projection · d_model = {cfg.d_model:,} → {cfg.tgt_vocab_size:,} tokens"
        return _drawing(canvas, title, col.top + 0.2, BLOCK_X_RANGE)
    name = "encoder" if kind == "encoder" else "decoder"
    col.label(f"x {shape}, from the block below")
    n_layers = cfg.n_encoder_layers if kind == "encoder" else cfg.n_decoder_layers
    col.block(name, n_layers, _sublayers(cfg, kind), cfg.norm, cfg.d_model, shape, residual=cfg.residual == "add")
    col._advance(EDGE_OUT + col.top_of_frame - col.top, shape, col.top_of_frame + EDGE_OUT / 2)
    col.c.text(col.cx, col.top_of_frame + EDGE_OUT + 0.2, "to the next block", size=12)
    title = f"One {name} block · {cfg.norm.capitalize()}-LN · d_model = {cfg.d_model:,}"
    return _drawing(canvas, title, col.top_of_frame + EDGE_OUT + 0.45, BLOCK_X_RANGE)


def _wrapped(title: str, width_px: float) -> list[str]:
    """`title` in lines of at most `width_px` at TITLE_PX (0.5 em a character: Arial measured 0.44), broken
    between its " · " parts."""
    most = int(width_px / (0.5 * TITLE_PX))
    lines: list[str] = []
    for part in title.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= most:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines


def _drawing(canvas: _Canvas, title: str, y_max: float, x_range=X_RANGE) -> go.Figure:
    xs, ys, texts = zip(*canvas.hover)
    hover = go.Scatter(x=xs, y=ys, mode="markers", marker=dict(size=28, opacity=0), hovertext=texts,
                       hovertemplate="%{hovertext}<extra></extra>", showlegend=False)
    # constrain="domain": a first draw at another size (a busy phone) narrows the plot area, never widens the
    # ranges, which Plotly would keep once the size is right (the whole drawing shrunk, its text past its boxes).
    axis = dict(visible=False, showgrid=False, zeroline=False, fixedrange=True, constrain="domain")
    size = sized(dict(xaxis=dict(range=x_range), yaxis=dict(range=(-0.2, y_max)), meta=dict(title=title)))
    # One constructor call: update_layout on a built figure is slower (explorer/figures/layout.py, `figure`).
    return go.Figure(hover, layout=dict(
        size, shapes=canvas.shapes, annotations=canvas.annotations,
        title=dict(size["title"], x=0.0, xref="paper", xanchor="left", font=dict(size=TITLE_PX)),
        xaxis=dict(axis, range=list(x_range)),
        yaxis=dict(axis, range=[-0.2, y_max], scaleanchor="x", scaleratio=1), font=FONT,
        hoverlabel=dict(font_size=13, align="left"), plot_bgcolor="white", paper_bgcolor="white",
        datarevision=0))  # as figures.layout.figure: so Plotly sees Streamlit's copy of it as unchanged


def is_drawing(fig: go.Figure) -> bool:
    return (fig.layout.meta or {}).get("kind") == DRAWING


def sized(layout: dict, px_per_unit: float = PX_PER_UNIT, width_px: float = 0) -> dict:
    """A drawing's width, height, margins, title lines and `meta` at `px_per_unit`, at least `width_px`
    wide (more room for its title; the drawing itself centred): drawn at its own size, not stretched or
    squeezed to a column, its text keeps to its boxes. `layout` is the drawing's, or the ranges and meta."""
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    meta = dict(layout["meta"], kind=DRAWING, px_per_unit=px_per_unit)  # figures.projector reads them
    width = max(width_px, (x1 - x0) * px_per_unit + 40)
    lines = _wrapped(meta["title"], width - 40)
    margin = dict(l=20, r=20, t=32 + TITLE_LINE * len(lines), b=10)
    return dict(width=round(width), height=round((y1 - y0) * px_per_unit + margin["t"] + margin["b"]),
                margin=margin, title=dict(text="<br>".join(lines)), meta=meta)


def architecture_diagram(cfg: ModelConfig, batch=None, seq_len=None) -> go.Figure:
    """Block diagram of `cfg`. Shapes read "(B, S, d)" for source and "(B, T, d)" for target unless
    `seq_len` (an int, or (source, target)) and `batch` give numbers."""
    canvas = _Canvas()
    b, s, t = _dims(cfg, batch, seq_len)
    d = cfg.d_model
    top = 0.0
    if cfg.arch == "encoder-decoder":
        enc, dec = _Column(canvas, 2.5, -1), _Column(canvas, 7.5, +1)
        _inputs(enc, cfg, cfg.src_vocab_size, b, s, "source tokens")
        _inputs(dec, cfg, cfg.tgt_vocab_size, b, t, "target tokens, shifted right")
        gap, edge_y = _stack(enc, cfg, "encoder", cfg.n_encoder_layers, f"({b}, {s}, {d})")
        gap_d, edge_d = _stack(dec, cfg, "cross", cfg.n_decoder_layers, f"({b}, {t}, {d})")
        top = _cross_wire(canvas, enc, dec, 5.0, f"({b}, {s}, {d})")
        _lm_head(dec, cfg, gap_d, edge_d, b, t, f"({b}, {t}, {d})")
        columns = [enc, dec]
    else:
        col = _Column(canvas, 5.0, -1)
        enc_only = cfg.arch == "encoder"
        vocab = cfg.src_vocab_size if enc_only else cfg.tgt_vocab_size
        _inputs(col, cfg, vocab, b, t, "tokens")
        n = cfg.n_encoder_layers if enc_only else cfg.n_decoder_layers
        gap, edge_y = _stack(col, cfg, "encoder" if enc_only else "decoder", n, f"({b}, {t}, {d})")
        if enc_only:
            _classifier(col, cfg, gap, edge_y, b, f"({b}, {t}, {d})")
        else:
            _lm_head(col, cfg, gap, edge_y, b, t, f"({b}, {t}, {d})")
        columns = [col]
    y_max = max([top] + [c.top for c in columns]) + 0.2
    x_range = X_RANGE if cfg.arch == "encoder-decoder" else BLOCK_X_RANGE   # one column needs no more
    arch = {"encoder-decoder": "Encoder-decoder", "encoder": "Encoder classifier", "decoder": "Decoder LM"}
    pos = dict(sinusoidal="sinusoidal PE", learned="learned PE", rope="RoPE", alibi="ALiBi", none="no PE")
    title = (f"{arch[cfg.arch]} · {cfg.norm.capitalize()}-LN · d_model = {d:,} · {cfg.n_heads} heads · "
             f"{pos[cfg.pos_encoding]}")
    return _drawing(canvas, title, y_max, x_range)
