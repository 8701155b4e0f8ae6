"""The session's start, `init_state()`, and the widget keys of the pages that have no glue module of
their own (Architecture, Positional encoding, Gradients, Runs).

A shared link's values are adopted before any widget exists: the config and the training settings are
read on pages that do not draw them, and every number is checked against its widget's range.
"""

from __future__ import annotations

from ui import model_config, models, search_params, train_settings
from ui.links import adopt_from_url, number_specs

# Positional encoding page (bound to the URL)
PE_TYPE, PE_D_MODEL, PE_POSITIONS, PE_BASE = "pe_type", "pe_d_model", "pe_positions", "pe_base"
PE_STACK = "pe_stack"             # encoder or decoder table, for a model with two learned tables
PE_HEADS = "pe_heads"             # ALiBi: heads, whose slopes 2^(-8h/H) depend on how many there are
# Architecture page
ARCH_BATCH, ARCH_SEQ = "arch_batch", "arch_seq"
# Gradients page: the at-initialisation study and the two runs compared over training
GRAD_LAYERS, GRAD_D_MODEL, GRAD_SEED, GRAD_WHAT = "grad_layers", "grad_d_model", "grad_seed", "grad_what"
GRAD_RUN_A, GRAD_RUN_B = "grad_run_a", "grad_run_b"
# Runs page: the table's selection, the curves shown, the run waiting for a delete confirmation
RUNS_TABLE, RUNS_METRICS, RUNS_ONLY_DIFF = "runs_table", "runs_metrics", "runs_only_diff"
RUNS_EXPORT, RUNS_DELETE, RUNS_ERROR = "runs_export", "_runs_delete", "_runs_error"

PAGE_NUMBERS = {  # key -> (min, max, default) of these pages' number widgets
    PE_D_MODEL: (2, 512, 64), PE_POSITIONS: (2, 512, 100), PE_HEADS: (1, 64, 8), ARCH_BATCH: (1, 4096, 32),
    ARCH_SEQ: (1, 8192, 64), GRAD_LAYERS: (2, 48, 12), GRAD_SEED: (0, 9999, 0)}


def init_state() -> None:
    """Create the session's containers once and adopt the widget values a shared link carries."""
    models.init_models()
    adopt_from_url([*model_config.url_specs(), *number_specs(PAGE_NUMBERS), *number_specs(train_settings.NUMBERS),
                    *number_specs(search_params.NUMBERS)])
