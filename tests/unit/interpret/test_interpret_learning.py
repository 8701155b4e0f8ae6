"""How the issue-38 models learned, as data: induction and previous-token scores, the phase change's step,
the Fourier spectrum of embeddings."""

import numpy as np
import pandas as pd
import torch

from explorer.evaluation import AttentionSnapshot
from explorer.interpret.learning import (
    fourier_norms,
    grokking_curves,
    induction_over_training,
    induction_scores,
    key_frequencies,
    phase_change_step,
)
from explorer.store.checkpoints import load_pretrained
from explorer.tasks import TaskConfig, make_task


def _task():
    return make_task(TaskConfig("induction", n_symbols=10, min_len=4, max_len=4, n_train=20, n_val=5))


def test_a_perfect_induction_pattern_scores_one_and_a_previous_token_one_scores_zero():
    task = _task()
    T = task.val.tgt_in.size(1)                                  # 7: halves of 4
    induction, previous = np.zeros((2, 1, 1, T, T), np.float32)
    for q in range(T):
        previous[0, 0, q, max(q - 1, 0)] = 1.0
        induction[0, 0, q, q - 3 if q >= 4 else q] = 1.0          # the token after the earlier occurrence
    snaps = [AttentionSnapshot(1, "dec_self", previous, (), ()), AttentionSnapshot(2, "dec_self", induction, (), ())]
    table = induction_over_training(snaps, task).set_index("step")
    assert table.loc[1, "previous_token"] == 1.0 and table.loc[1, "induction"] == 0.0
    assert table.loc[2, "induction"] == 1.0 and table.loc[2, "previous_token"] == 0.0


def test_the_shipped_induction_model_has_induction_heads_in_its_second_layer_only():
    model, meta = load_pretrained("induction")
    table = induction_scores(model, make_task(TaskConfig.from_dict(meta["task"])), max_rows=64)
    best = table.groupby("layer")["induction"].max()
    assert best[1] >= 0.4 > best[0]
    assert table[table.layer == 0]["previous_token"].max() > 0.3    # the head it reads, one layer down


def test_the_phase_change_is_the_steepest_fall():
    history = pd.DataFrame({"step": [0, 100, 200, 300, 400], "repeat_loss": [3.5, 3.4, 3.3, 0.4, 0.1],
                            "loss": [1.0] * 5})
    assert phase_change_step(history) == 300


def test_a_pure_frequency_carries_all_the_norm():
    p, a = 13, torch.arange(13, dtype=torch.float64)
    emb = torch.stack([torch.cos(2 * torch.pi * 5 * a / p), torch.sin(2 * torch.pi * 5 * a / p),
                       0.1 * torch.cos(2 * torch.pi * 2 * a / p)], 1)
    norms = fourier_norms(emb, p)
    assert norms.shape == (7,) and abs(norms.sum() - 1) < 1e-9 and norms[5] > 0.99
    assert key_frequencies(norms) == [5] and key_frequencies(norms, share=0.999) == [2, 5]


def test_grokking_curves_join_the_weight_norms_by_step():
    history = pd.DataFrame({"step": [1, 2, 3], "token_acc": [0.1, 0.5, 1.0], "val_token_acc": [None, 0.2, None]})
    weights = {"steps": torch.tensor([1, 3]), "weight_norm": torch.tensor([10.0, 8.0])}
    frame = grokking_curves(history, weights)
    assert frame["weight_norm"].tolist()[::2] == [10.0, 8.0] and np.isnan(frame["weight_norm"][1])
