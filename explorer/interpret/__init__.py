"""Looking deeper than attention: which parts of a model matter, what each layer already knows, and how
its heads grew. No Streamlit; usable from a notebook, the CLI (`python -m explorer interpret ...`) and the
app's "Inside the model" page.

    from explorer.interpret import ablate, logit_lens, make_pair, patch, embedding_geometry
    from explorer.store.subject import load_model
    model, task = load_model("reversal-fast")          # a shipped model or a saved run
    table = ablate(model, task, mode="zero")           # DataFrame: kind, layer, head, exact, token_acc, loss, drops
    table.attrs["baseline"]                            # the intact model's metrics
    heads_grid(table, "cross")                         # layer x head of exact_drop
    lens = logit_lens(model, task, example=3)          # lens.probs (L, T, V), lens.p_correct (L, T), lens.records()
    pair = make_pair(task, example=3, position=0)      # one source token changed
    patch(model, task, pair)                           # DataFrame: what, kind, layer, index, logit_diff, restored
    embedding_geometry(model, task, k=3)               # name -> Projection(coords, explained, labels, cosine)
    heads_over_training("my-run")                      # DataFrame: step, kind, layer, head, entropy, match

Ablation knocks a head out by zeroing its slice of the output projection's input (its columns of
`out_proj.weight`), or replacing it by its mean over the validation split (mode="mean"); a whole attention
sublayer or an FFN the same way at its last linear layer. Kinds: "enc_self", "dec_self", "cross" (attention,
as `explorer.inspect.ATTENTION_KINDS`), "enc_ffn", "dec_ffn" (see `parts`).
Figures: `explorer.figures.interpret`.
"""

from explorer.interpret.ablation import COLUMNS as ABLATION_COLUMNS
from explorer.interpret.ablation import METRICS, MODES, ablate, heads_grid, knocked_out, metrics, val_means, without
from explorer.interpret.geometry import Projection, cosine, embedding_geometry, pca
from explorer.interpret.lens import Lens, lens_of, logit_lens
from explorer.interpret.over_training import heads_over_training, specialised_at
from explorer.interpret.parts import FFN_KINDS, Part, parts
from explorer.interpret.patching import Pair, every_head, grid, make_pair, patch, patched_logits

__all__ = ["ABLATION_COLUMNS", "FFN_KINDS", "Lens", "METRICS", "MODES", "Pair", "Part", "Projection", "ablate",
           "cosine", "embedding_geometry", "every_head", "grid", "heads_grid", "heads_over_training", "knocked_out",
           "lens_of", "logit_lens", "make_pair", "metrics", "parts", "patch", "patched_logits", "pca",
           "specialised_at", "val_means", "without"]
