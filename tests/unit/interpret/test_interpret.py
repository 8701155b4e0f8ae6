"""explorer.interpret: head ablation, logit lens, activation patching, embedding geometry, heads over training,
and its CLI."""

import json

import numpy as np
import pytest
import torch

from explorer.analysis.views import attention_for, best_head, match_scores, single_threaded
from explorer.cli import main
from explorer.figures.interpret import ablation_heatmap, lens_heatmap
from explorer.inspect import capture
from explorer.interpret import (
    Part,
    ablate,
    cosine,
    embedding_geometry,
    every_head,
    heads_grid,
    heads_over_training,
    knocked_out,
    logit_lens,
    make_pair,
    metrics,
    parts,
    patch,
    patched_logits,
    pca,
    val_means,
)
from explorer.interpret.parts import example_inputs, head_columns, module
from explorer.model import build_model
from explorer.store.checkpoints import load_pretrained
from explorer.store.runs import save_run
from explorer.store.snapshots import load_snapshots
from explorer.tasks import BOS, TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps
from tests.export_run import save_tiny_run

one_thread_metrics = single_threaded(metrics)   # as ablate runs: torch's threads only slow tiny models down
SMALL = dict(d_model=16, n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=32)
TASKS = {  # kind -> a small task of that kind
    "seq2seq": TaskConfig("reversal", n_symbols=6, min_len=3, max_len=5, n_train=60, n_val=24),
    "classify": TaskConfig("order", n_symbols=4, min_len=6, max_len=6, n_train=60, n_val=24),
    "lm": TaskConfig("char-lm", min_len=12, max_len=12, n_train=60, n_val=24),
}


@pytest.fixture(scope="module", params=list(TASKS))
def small(request):
    task = make_task(TASKS[request.param])
    return build_model(task.model_config(**SMALL), seed=1).eval(), task


@pytest.fixture(scope="module")
def reversal_fast():
    model, meta = load_pretrained("reversal-fast")
    return model, make_task(TaskConfig.from_dict(meta["task"]))


def _logits(model, task, index=0):
    with torch.inference_mode():
        return model(*example_inputs(task, index).args)


# ------------------------------------------------------------------------------------ ablation
def test_ablating_a_head_removes_exactly_its_contribution_and_no_other_heads(small):
    model, task = small
    part = next(p for p in parts(model) if p.head == 1 and p.layer == 1)
    sub, args = module(model, part), example_inputs(task, 0).args
    seen = {}

    def keep(_mod, inp, _out):
        seen.setdefault("x", inp[0])
    hook = sub.out_proj.register_forward_hook(keep)
    try:
        with torch.inference_mode(), capture(model) as before:
            model(*args)
        x = seen.pop("x")
        with knocked_out(model, part), torch.inference_mode(), capture(model) as after:
            model(*args)
            y_knocked = sub.out_proj(x)
    finally:
        hook.remove()
    cols = head_columns(model, part)
    with torch.inference_mode():
        contribution = x[..., cols] @ sub.out_proj.weight[:, cols].T
        assert torch.allclose(sub.out_proj(x) - y_knocked, contribution, atol=1e-6)
    # every head of the knocked-out sublayer, and everything before it, attends exactly as before
    assert torch.equal(before.attention[part.kind][1], after.attention[part.kind][1])
    assert torch.equal(before.attention[part.kind][0], after.attention[part.kind][0])
    assert torch.equal(_logits(model, task), _logits(model, task))   # the weights came back


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_a_head_already_zero_is_unchanged_by_ablating_it(small, mode):
    model, task = small
    part = next(p for p in parts(model) if p.head == 0)
    with torch.no_grad():
        module(model, part).out_proj.weight[:, head_columns(model, part)] = 0.0
    before = _logits(model, task)
    with knocked_out(model, part, mode, val_means(model, task) if mode == "mean" else None):
        assert torch.equal(_logits(model, task), before)
    table = ablate(model, task, mode=mode, which=[part, Part(part.kind, part.layer)])
    assert table.loc[0, ["exact_drop", "token_acc_drop", "loss_rise"]].abs().max() < 1e-6
    assert table.loc[1, "loss_rise"] != 0   # the whole sublayer does matter


def test_mean_ablation_replaces_a_head_by_its_validation_mean(small):
    model, task = small
    part = next(p for p in parts(model) if p.head == 1)
    means = val_means(model, task)
    sub, cols = module(model, part), head_columns(model, part)
    x = torch.randn(3, 5, sub.out_proj.in_features)
    with torch.no_grad():
        kept = x.clone()
        kept[..., cols] = means[part.kind, part.layer][0][cols]
        want = sub.out_proj(kept)
        with knocked_out(model, part, "mean", means):
            assert torch.allclose(sub.out_proj(x), want, atol=1e-5)


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_ablate_gives_what_each_knock_out_gives_alone_for_every_part(small, mode):
    """ablate replays what lies upstream of each part from the intact pass; knocked_out + metrics run it all."""
    model, task = small
    means = val_means(model, task) if mode == "mean" else None
    table = ablate(model, task, mode=mode)
    assert table.attrs["baseline"] == one_thread_metrics(model, task)
    for i, part in enumerate(parts(model)):
        with knocked_out(model, part, mode, means):
            alone = one_thread_metrics(model, task)
        assert table.loc[i, ["exact", "token_acc", "loss"]].to_dict() == alone, part
    assert table["loss_rise"].ne(0).sum() > len(table) // 2     # the knock-outs were not the intact pass replayed


def test_ablate_leaves_the_model_as_it_was_with_post_norm_and_rope():
    task = make_task(TASKS["seq2seq"])
    model = build_model(task.model_config(**SMALL, norm="post", pos_encoding="rope"), seed=2).eval()
    before = _logits(model, task)
    table = ablate(model, task)
    for i, part in enumerate(parts(model)):
        with knocked_out(model, part):
            assert table.loc[i, ["exact", "token_acc", "loss"]].to_dict() == one_thread_metrics(model, task), part
    assert not [m for m in model.modules() if "forward" in vars(m)]     # no tapes left on the caller's model
    assert torch.equal(_logits(model, task), before)


def test_ablation_table_has_every_part_and_the_shipped_reversal_needs_cross_attention(reversal_fast):
    model, task = reversal_fast
    which = [Part("cross", 1, 0), Part("cross", 1, 1), Part("cross", 1), Part("enc_ffn", 0)]
    table = ablate(model, task, n=100, which=which)
    assert table.attrs["baseline"]["exact"] == pytest.approx(1.0)
    assert list(table["head"].astype(object).where(table["head"].notna(), None)) == [0, 1, None, None]
    assert table.loc[2, "exact"] < 0.1          # no cross-attention, no reversal
    # the point: on example 0 the head that draws the anti-diagonal best (L1 H1) is not the one whose
    # removal hurts most (L1 H0)
    src, tgt = task.example("val", 0)
    view = attention_for(model, task, src, (BOS, *tgt))
    assert best_head(match_scores(view.patterns["cross"], view.expected["cross"]))[:2] == (1, 1)
    assert table.loc[0, "exact_drop"] > table.loc[1, "exact_drop"] > 0
    grid = heads_grid(table, "cross")
    assert list(grid.columns) == [0, 1] and grid.loc[1, 0] == table.loc[0, "exact_drop"]


def test_every_part_is_listed_once(small):
    model, task = small
    labels = [p.label for p in parts(model)]
    assert len(labels) == len(set(labels))
    n_attention = {"seq2seq": 6, "classify": 2, "lm": 2}[task.kind]   # sublayers of the small models
    assert sum(p.head is None and not p.kind.endswith("ffn") for p in parts(model)) == n_attention
    with pytest.raises(ValueError, match="has no cross"):
        module(model, Part("cross", 5))


# -------------------------------------------------------------------------------------- lens
@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("kind", list(TASKS))
def test_the_last_layer_of_the_lens_is_the_model_output(kind, norm):
    task = make_task(TASKS[kind])
    model = build_model(task.model_config(**SMALL, norm=norm), seed=2).eval()
    lens = logit_lens(model, task, example=3)
    assert np.abs(lens.probs[-1] - lens.output).max() < 1e-5
    assert lens.probs.shape[0] == 2 and lens.p_correct.shape == lens.probs.shape[:2]
    assert np.allclose(lens.probs.sum(-1), 1.0, atol=1e-5)
    rec = lens.records(k=2)
    assert [r["layer"] for r in rec] == [0, 1] and len(rec[0]["top"]) == len(lens.rows)
    assert rec[1]["p_correct"][0] == pytest.approx(float(lens.p_correct[1, 0]), abs=1e-4)


# ---------------------------------------------------------------------------------- patching
@pytest.mark.parametrize("kind", ["seq2seq", "lm"])
def test_patching_every_head_from_the_clean_run_restores_its_output(kind):
    task = make_task(TASKS[kind])
    model = build_model(task.model_config(**SMALL), seed=3).eval()
    pair = make_pair(task, example=2)
    assert pair.clean.args[0].tolist() != pair.corrupt.args[0].tolist()
    clean, patched = patched_logits(model, task, pair, every_head(model))
    _, untouched = patched_logits(model, task, pair, [])
    assert (clean[pair.row] - untouched[pair.row]).abs().max() > 1e-4    # the corruption matters
    assert (clean[pair.row] - patched[pair.row]).abs().max() < 1e-5


def test_patch_table_restores_all_from_the_last_residual_and_nothing_when_empty(reversal_fast):
    model, task = reversal_fast
    pair = make_pair(task, example=1, position=2)
    table = patch(model, task, pair)
    assert table.attrs["clean"] > 0 > table.attrs["corrupt"]           # the model follows the changed digit
    last = table[(table["what"] == "resid") & (table["kind"] == "decoder") & (table["layer"] == 1)]
    assert last.set_index("index").loc[pair.row, "restored"] == pytest.approx(1.0, abs=1e-5)
    heads = table[(table["what"] == "head")]
    assert len(heads) == 3 * 2 * 4 and heads["restored"].max() < 1.0
    assert table.attrs["row"] == len(task.example("val", 1)[0]) - 1 - 2   # reversal: the mirrored position


def test_a_classifier_pair_swaps_a_and_b():
    task = make_task(TASKS["classify"])
    pair = make_pair(task, example=0)
    assert pair.clean.correct != pair.corrupt.correct
    assert sorted(pair.clean.args[0][0].tolist()) == sorted(pair.corrupt.args[0][0].tolist())


# ---------------------------------------------------------------------------------- geometry
def test_pca_of_a_rank_two_table_recovers_it():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(12, 2)) @ rng.normal(size=(2, 9)) + rng.normal(size=9)
    coords, explained = pca(table, 2)
    assert explained.sum() == pytest.approx(1.0)
    centred = table - table.mean(0)
    dist = np.linalg.norm(centred[:, None] - centred[None], axis=-1)
    assert np.allclose(np.linalg.norm(coords[:, None] - coords[None], axis=-1), dist, atol=1e-9)
    with pytest.raises(ValueError, match="k=10"):
        pca(table, 10)


def test_cosine_and_the_model_tables(small):
    model, task = small
    cos = cosine(np.array([[1.0, 0.0], [0.0, 0.0], [-2.0, 0.0]]))
    assert cos[0, 0] == 1.0 and cos[0, 1] == 0.0 and cos[0, 2] == -1.0
    geo = embedding_geometry(model, task, k=3)
    tokens = geo["encoder tokens" if task.kind == "seq2seq" else "tokens"]
    assert tokens.coords.shape[1] == 3 and len(tokens.labels) == len(tokens.coords)
    assert np.allclose(np.diag(tokens.cosine), 1.0)


# ------------------------------------------------------------------------------ over training
def test_heads_over_training_from_a_saved_runs_snapshots():
    task = make_task(TASKS["seq2seq"])
    model = build_model(task.model_config(**SMALL), seed=0)
    cfg = TrainConfig(steps=12, batch_size=16, snapshot_every=4, eval_every=0)
    state = new_state(model, task, cfg)
    history = list(train_steps(model, task, cfg, state))
    info = save_run("heads", model, task.cfg, cfg, history)
    snaps = [r.snapshot for r in history if r.snapshot is not None]
    saved = load_snapshots(info.path)
    assert [s.step for s in saved] == [s.step for s in snaps] == [4, 8, 12]
    assert np.allclose(saved[-1].pattern, snaps[-1].pattern, atol=1e-3)
    table = heads_over_training(info.name)
    assert len(table) == 3 * 2 * 2 and set(table["step"]) == {4, 8, 12}
    last = table[table["step"] == 12].set_index(["layer", "head"])["match"].to_numpy().reshape(2, 2)
    want = task.expected_cross_attention(task.example("val", 0)[0])
    assert np.allclose(last, match_scores(snaps[-1].pattern, want), atol=1e-3)
    assert (table["entropy"] <= table.attrs["uniform"] + 1e-3).all()


def test_the_shipped_reversal_keeps_its_replayed_snapshots():
    table = heads_over_training("reversal-fast")
    steps = sorted(set(table["step"]))
    assert steps[0] == 20 and steps[-1] == 800 and len(table) == len(steps) * 2 * 4
    final = table[table["step"] == 800]
    assert final["match"].max() > 0.5 > table[table["step"] == 20]["match"].max()   # the anti-diagonal is learned


def test_heads_over_training_refuses_a_run_without_snapshots():
    task = make_task(TASKS["seq2seq"])
    model = build_model(task.model_config(**SMALL), seed=0)
    info = save_run("plain", model, task.cfg, TrainConfig(steps=1), [])
    with pytest.raises(ValueError, match="--snapshot-every"):
        heads_over_training(info.name)


# --------------------------------------------------------------------------------------- CLI
def test_cli_ablate_json_has_every_part_and_the_baseline(capsys):
    assert main(["interpret", "ablate", "--model", "reversal-fast", "--examples", "20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["baseline"]) >= {"exact", "loss"} and doc["mode"] == "zero" and doc["n"] == 20
    model, _ = load_pretrained("reversal-fast")
    assert [(a["kind"], a["layer"], a["head"]) for a in doc["ablations"]] == [
        (p.kind, p.layer, p.head) for p in parts(model)]
    assert all({"exact", "loss", "exact_drop"} <= set(a) for a in doc["ablations"])


def test_cli_lens_and_patch_json_fields(capsys):
    assert main(["interpret", "lens", "--model", "char-lm", "--example", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [layer["layer"] for layer in doc["layers"]] == [0, 1]
    assert all(len(layer["top"]) == len(layer["p_correct"]) == len(doc["rows"]) for layer in doc["layers"])
    assert main(["interpret", "patch", "--model", "reversal-fast", "--example", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"pair", "clean_logit_diff", "corrupt_logit_diff", "patches"} <= set(doc)
    assert {"what", "kind", "layer", "index", "restored"} <= set(doc["patches"][0])


@pytest.mark.parametrize("argv, says", [
    (["ablate", "--model", "no-such-model"], "no shipped model or saved run named 'no-such-model'"),
    (["lens", "--model", "reversal-fast", "--example", "9999"], "--example 9999 is out of range"),
    (["patch", "--model", "reversal-fast", "--position", "40"], "position=40 is out of range"),
    (["heads", "--model", "bare"], "run 'bare' recorded no attention snapshots"),
    (["snapshots", "--model", "no-such-run"], "'no-such-run' is not a shipped model"),
])
def test_cli_bad_input_is_one_line_and_exit_2(capsys, argv, says):
    save_tiny_run("bare", snapshot_every=0)
    assert main(["interpret", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_shipped_model_whose_training_was_not_replayed_says_how_to_replay_it(capsys, unreplayed):
    assert main(["interpret", "heads", "--model", "copy"]) == 2
    assert "'copy' is a shipped model whose training was not replayed; run python -m explorer interpret " \
           "snapshots --model copy" in capsys.readouterr().err


# ----------------------------------------------------------------------------------- figures
def test_ablation_heatmap_shows_the_table_and_reports_its_cells(reversal_fast):
    model, task = reversal_fast
    which = [Part("cross", layer, h) for layer in (0, 1) for h in (0, 1)] + [Part("cross", 1)]
    table = ablate(model, task, n=20, which=which)
    fig = ablation_heatmap(table, "cross")
    heat, cells = fig.data
    assert list(heat.x) == ["H0", "H1", "all"]
    assert heat.z[1][0] == table.loc[2, "exact_drop"] and np.isnan(heat.z[0][2])    # no whole L0 row was run
    assert heat.z[1][2] == table.loc[4, "exact_drop"]
    assert [list(c) for c in cells.customdata][:3] == [["cross", 0, 0], ["cross", 0, 1], ["cross", 0, -1]]


def test_lens_heatmap_writes_the_likeliest_token_in_each_cell():
    task = make_task(TASKS["lm"])
    model = build_model(task.model_config(**SMALL), seed=2).eval()
    lens = logit_lens(model, task, 0)
    top = np.array(lens.vocab, dtype=object)[lens.top(1)[..., 0]]
    fig = lens_heatmap(lens.p_correct, top, ["L0", "L1"], lens.rows)
    assert np.allclose(np.asarray(fig.data[0].z, dtype=float), lens.p_correct)
    assert fig.data[0].text[1][0] == lens.vocab[int(lens.top(1)[1, 0, 0])]
