"""How models learn (issue 38) as a lesson: induction heads forming in a phase change, and grokking. Every answer is
measured: on the shipped models `induction`, `induction-1l` and `modular-add` (their histories and replays), and by
the experiment `grokking` for the run without weight decay."""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from explorer.experiments import Result
from explorer.figures.learning import fourier_spectrum, grokking_curves, induction_over_training
from explorer.interpret.learning import how_it_learned, induction_scores
from explorer.lessons.base import Lesson, Question, Reveal, Step, View, result_figure
from explorer.store.checkpoints import load_pretrained
from explorer.tasks import TaskConfig, make_task

UNDECIDED = " The measurement does not decide this, so no choice is marked."


@lru_cache(maxsize=4)
def _seen(name: str) -> dict:
    return how_it_learned(name)


@lru_cache(maxsize=2)
def _best_by_layer(name: str) -> pd.Series:
    model, meta = load_pretrained(name)
    return induction_scores(model, make_task(TaskConfig.from_dict(meta["task"]))).groupby("layer")["induction"].max()


def _induction_task():
    _, meta = load_pretrained("induction")
    return make_task(TaskConfig.from_dict(meta["task"]))


def sequence_view(values: dict) -> View:
    task = _induction_task()
    half = int(task.halves(task.val)[0])
    tokens = task.tokens(task.val.tgt_in[0, :2 * half - 1].tolist() + task.val.tgt_out[0, 2 * half - 2:2 * half - 1]
                         .tolist())
    return View(None, "One training sequence: random tokens, then the same tokens again in the same order. The "
                "model reads it left to right and guesses every next token.",
                table=pd.DataFrame({"first half": tokens[:half], "second half": tokens[half:]}))


def second_half(_result=None) -> Reveal:
    """Choices: 0 falls steadily from the start, 1 stays as high as the first half's, 2 flat for a while, then one
    sharp drop."""
    seen = _seen("induction")
    curve = seen["history"][["step", "repeat_loss"]].dropna()
    start, end, step = float(curve["repeat_loss"].iloc[0]), float(curve["repeat_loss"].iloc[-1]), seen["phase_step"]
    before = float(curve[curve["step"] <= step - 80]["repeat_loss"].iloc[-1]) if (curve["step"] <= step - 80).any() \
        else start
    after = float(curve[curve["step"] >= step + 80]["repeat_loss"].iloc[0])
    bend = before > 0.5 * start and after < 0.25 * start
    correct = (2,) if bend else ()
    text = (f"The loss on the second half starts at **{start:.2f} nats**, is still **{before:.2f}** 80 steps before "
            f"step {step}, **{after:.2f}** 80 steps after it and **{end:.2f}** at the end: ")
    text += ("a plateau, then one bend, the phase change Olsson et al. saw when induction heads form." if bend
             else "no single bend at this budget." + UNDECIDED)
    return Reveal(text, correct, view=View(induction_over_training(seen["heads"], seen["history"],
                                                                   title="Each head's induction score over training"),
                                           "Dotted: the first layer's heads. Black: the loss on the repeated half."))


def layers_view(values: dict) -> View:
    return View(None, "Two twins: the same task, data and recipe, with two layers or with one.",
                table=pd.DataFrame({"model": ["induction", "induction-1l"], "layers": ["two", "one"]}))


def which_layer(_result=None) -> Reveal:
    """Choices: 0 the first layer, 1 the second layer, 2 both about equally."""
    two, one = _best_by_layer("induction"), _best_by_layer("induction-1l")
    correct = (1,) if two.iloc[1] >= 0.4 > two.iloc[0] else (0,) if two.iloc[0] >= 0.4 > two.iloc[1] else ()
    text = (f"The best head's induction score (attention from a repeated token to the token after its earlier "
            f"occurrence): first layer **{two.iloc[0]:.2f}**, second layer **{two.iloc[1]:.2f}**; the one-layer twin's "
            f"best head **{one.iloc[0]:.2f}**. ")
    text += ("An induction head needs a head below it that wrote, at each position, which token came before: one "
             "layer has nothing to read." if correct else UNDECIDED.strip())
    return Reveal(text, correct)


def addition_view(values: dict) -> View:
    _, meta = load_pretrained("modular-add")
    task = make_task(TaskConfig.from_dict(meta["task"]))
    rows = [" ".join(task.tokens(task.train.tgt_in[i].tolist() + task.train.tgt_out[i, -1:].tolist()))
            for i in range(4)]
    return View(None, f"Addition modulo p = {task.cfg.n_symbols}: half of all pairs train, all of them at every step "
                "(full batch), with strong weight decay; the other half is never seen.",
                table=pd.DataFrame({"training rows": rows}))


def when_validation(_result=None) -> Reveal:
    """Choices: 0 together with training accuracy, 1 a few hundred steps after, 2 over a thousand steps after."""
    curves = _seen("modular-add")["curves"]
    train = int(curves[curves["train_acc"] >= 0.99]["step"].iloc[0])
    val = curves[curves["val_acc"] >= 0.9]
    if val.empty:
        return Reveal("Validation accuracy never reached 90% within the budget." + UNDECIDED)
    gap = int(val["step"].iloc[0]) - train
    correct = (0,) if gap < 100 else (1,) if gap < 1000 else (2,)
    text = (f"Training accuracy is 99% at step **{train}**; validation accuracy passes 90% at step "
            f"**{int(val['step'].iloc[0])}**, {gap} steps later. Memorising comes first; the general rule (Power et "
            "al. 2022 called the late jump grokking) much later.")
    return Reveal(text, correct, view=View(grokking_curves(curves, title="Memorising, then generalising"),
                                           "Steps on a log axis; dotted: the weight norm."))


def no_decay(result: Result | None) -> Reveal:
    """Choices: 0 yes, as fast, 1 yes, later, 2 no, not within the same budget."""
    if result is None or not result.evidence:
        return Reveal("No result yet: run the experiment." + UNDECIDED)
    stays = result.evidence[-1]
    correct = (2,) if stays.holds and not result.partial else ()
    low, high = (100 * x for x in stays.interval)
    text = (f"Without weight decay the final validation accuracy is **{100 * stays.estimate:.1f}%** (95% interval "
            f"{low:.1f} to {high:.1f}%, {stays.n[0]} seeds, the same 2,000 steps). ")
    text += ("It memorises and stays there: Nanda et al. found weight decay pushes the model from the memorised "
             "table to the cheaper rule, a few Fourier frequencies." if correct else UNDECIDED.strip())
    spectrum = _seen("modular-add")["spectrum"]
    return Reveal(text, correct, verdict=result.verdict,
                  view=View(result_figure(result.figures[0]) if result.figures else
                            fourier_spectrum(spectrum, title="Which frequencies carry the embeddings"),
                            "Final validation accuracy over seeds, with and without weight decay."))


LESSON = Lesson(
    "learning", "How models learn", "issue 38: Olsson et al. 2022, Power et al. 2022, Nanda et al. 2023",
    "Induction heads forming in a phase change, and a model that memorises first and generalises much later.",
    (
        Step("A half, then the same half again",
             "The first half of each sequence is random, so no model can predict it. The second half repeats it: a "
             "model that finds the current token earlier on and copies the token after it predicts all of it.",
             sequence_view, (),
             Question("During training, what will the loss on the second half do?", second_half,
                      choices=("fall slowly and steadily from the start", "stay as high as the first half's",
                               "stay flat for a while, then drop in one bend"))),
        Step("Which layer holds the induction head?",
             "An induction head attends from a repeated token to the token that followed its earlier occurrence, "
             "and copies it. The induction score of a head is the share of its attention that goes there.",
             layers_view, (),
             Question("In the two-layer model, which layer holds the induction head?", which_layer,
                      choices=("the first layer", "the second layer", "both about equally"))),
        Step("Memorising and generalising",
             "A small model sees half of all sums a + b mod p at every step. It can memorise those pairs, or find "
             "the rule that also answers the other half.",
             addition_view, (),
             Question("When does validation accuracy pass 90%?", when_validation,
                      choices=("together with training accuracy", "a few hundred steps after training accuracy",
                               "over a thousand steps after training accuracy"))),
        Step("Without weight decay",
             "Weight decay shrinks every weight a little at each step. The experiment trains the same model on "
             "the same pairs with and without it, three seeds each.",
             addition_view, (),
             Question("Does it generalise without weight decay, in the same 2,000 steps?", no_decay,
                      choices=("yes, as fast", "yes, but later", "no, not within the same budget"),
                      experiment="grokking"),
             try_it=lambda v: ("experiments", {"exp_name": "grokking"})),
    ))
