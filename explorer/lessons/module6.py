"""The Haskell module as a lesson: positions, the pre-norm block, residual connections, the output
projection and a tiny language model's guesses at the next character."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from explorer.analysis.views import output_distribution
from explorer.config import ModelConfig, param_count
from explorer.evaluation import evaluate
from explorer.experiments import Result
from explorer.experiments.residuals import MARGIN
from explorer.figures.architecture import block_diagram, param_breakdown
from explorer.figures.outputs import output_heatmap
from explorer.lessons import facts
from explorer.lessons.base import Control, Lesson, Question, Reveal, Step, View, result_figure
from explorer.store.checkpoints import load_pretrained
from explorer.tasks import TASK_PRESETS, make_task

NORM = Control("norm", "LayerNorm", ("pre", "post"), "pre", "Pre-LN: x + f(LayerNorm(x)); Post-LN: LayerNorm(x + f(x))")
LM = "char-lm"   # the shipped tiny language model


@lru_cache(maxsize=1)
def tiny_lm():
    """The shipped character model and its task (read-only: every lesson visitor shares it)."""
    model, _ = load_pretrained(LM)
    return model.eval(), make_task(TASK_PRESETS[LM])


def block_view(values: dict) -> View:
    model, _ = tiny_lm()
    cfg = ModelConfig(**{**model.cfg.to_dict(), "norm": values.get("norm", "pre")})
    return View(block_diagram(cfg, "decoder"), "One block of the tiny language model of the last steps: "
                "LayerNorm, self-attention with a causal mask, a residual add; LayerNorm, the feed-forward "
                "network, a residual add. Its two blocks are alike.")


def residuals(result: Result | None) -> Reveal:
    """Choices: 0 about as well, 1 clearly worse and near letter-frequency guessing, 2 better without."""
    if result is None or not result.evidence:
        return Reveal("No result yet: run the experiment.")
    worse, nearly = result.evidence[0], result.evidence[1]
    if result.partial or worse.holds is None or (worse.holds and nearly.holds is None):
        correct = ()
    elif worse.holds:
        correct = (1,) if nearly.holds else ()
    else:
        correct = (2,) if worse.estimate < -MARGIN else (0,)
    deep, plain = worse.conditions[1], worse.conditions[0]
    text = (f"Without residuals the validation loss is **{worse.estimate:+.2f} nats** against the same stack with "
            f"them (95% interval {worse.interval[0]:+.2f} to {worse.interval[1]:+.2f}, {worse.n[0]} seeds). ")
    text += ("It ends next to the loss of guessing each character from its frequency alone: the deep stack "
             "without x + f(x) learns almost nothing from the context, as the module says." if correct == (1,)
             else "The measurement does not decide this at this budget, so no choice is marked right."
             if not correct else "Here the module's claim does not hold.")
    return Reveal(text, correct, view=View(result_figure(result.figures[0]) if result.figures else None,
                                           f"Validation loss of {deep} and {plain}, and of a shallow stack "
                                           "without residuals; the marker is the letter-frequency baseline."),
                  verdict=result.verdict)


def lm_cfg() -> ModelConfig:
    return tiny_lm()[0].cfg


def projection_share(_result=None) -> Reveal:
    parts = param_count(lm_cfg())
    share = 100 * parts["output"] / parts["total"]
    cfg = lm_cfg()
    return Reveal(f"The projection is a {cfg.d_model} × {cfg.tgt_vocab_size} matrix plus a bias: "
                  f"**{parts['output']:,}** of **{parts['total']:,}** parameters, **{share:.1f}%**. In a real LM "
                  "with 50,000 tokens it is far larger, which is why GPT-2 ties it to the embedding table.",
                  value=round(share, 1), view=View(param_breakdown(parts, "The tiny LM's parameters by part")))


def projection_view(values: dict) -> View:
    cfg = lm_cfg()
    return View(block_diagram(cfg, "lm-head"), f"After the last block every position's {cfg.d_model}-number vector "
                f"is multiplied by one matrix to give {cfg.tgt_vocab_size} scores, one per character: the logits.")


def _sample(index: int = 3) -> tuple[np.ndarray, list[str], list[int]]:
    model, task = tiny_lm()
    batch = next(iter(task.iter_val(8)))
    ids = [int(t) for t in batch.tgt_in[index].tolist()]
    probs = output_distribution(model, task, ids)                       # (T, V)
    return probs, task.tokens(ids), [int(t) for t in batch.tgt_out[index].tolist()]


def text_view(values: dict) -> View:
    """The question's material: the held-out text it reads (its guesses come with the reveal)."""
    _, labels, _ = _sample()
    return View(None, "A window of held-out text, one character at a time: at every position the model guesses "
                "the next character.", table=pd.DataFrame({"text it reads": ["".join(labels)]}))


def predictions_view(values: dict) -> View:
    probs, labels, targets = _sample()
    _, task = tiny_lm()
    labels = [f"{i} {c}" for i, c in enumerate(labels)]
    return View(output_heatmap(probs, labels, task.tokens(range(len(task.vocab))), top_k=5,
                               title="Next character, at every position of held-out text", targets=targets),
                "Each row: the model has read up to this character; the colours are its probabilities for the "
                "next one, outlined where the text really goes on. Five most likely per row.")


def top1(_result=None) -> Reveal:
    model, task = tiny_lm()
    acc = evaluate(model, task, max_examples=256)["val_exact"]
    band = min(int(acc * 4), 3)
    return Reveal(f"On {256} held-out windows of the text (the last 10%, never trained on), its most likely "
                  f"next character is right **{acc:.0%}** of the time. With {len(task.vocab)} characters, "
                  f"chance would be about {1 / len(task.vocab):.0%}; always guessing a space, about 17%.",
                  correct=(band,), value=None, view=predictions_view({}))


LESSON = Lesson(
    "module6", "A tiny language model", "the Haskell module",
    "Positions, the pre-norm block, residual connections and the output projection, ending at a small "
    "model that guesses the next character.",
    (
        Step("Order is invisible to attention",
             "Attention compares tokens by content only: *the dog bites man* and *man bites the dog* give the "
             "same set of comparisons. So each position gets a vector of its own, added to its token's "
             "embedding:\n\n$$PE_{(pos,\\,2i)} = \\sin(pos / 10000^{2i/d_{model}}),\\quad "
             "PE_{(pos,\\,2i+1)} = \\cos(pos / 10000^{2i/d_{model}})$$",
             facts.pe_view, (facts.D_MODEL, facts.POSITIONS), try_it=facts.pe_try_it),
        Step("Which dimensions change fastest?",
             "The module says the low dimensions change slowly and the high ones quickly. Look at the heatmap "
             "of the previous step, or think about the formula: dimension pair i turns at frequency "
             "1/10000^(2i/d_model).",
             facts.pe_view, (facts.D_MODEL,),
             Question("In the sinusoidal table, which dimensions change fastest from one position to the next?",
                      lambda _r: facts.fastest_dimensions(64),
                      choices=facts.FASTEST_CHOICES), try_it=facts.pe_try_it),
        Step("The pre-norm block",
             "A block normalises its input, lets every position attend to the ones before it, and adds the "
             "result back; then it normalises again, runs a small two-layer network at each position and adds "
             "that back:\n\n$$h = x + \\mathrm{Attention}(\\mathrm{LN}(x)),\\quad "
             "out = h + \\mathrm{FFN}(\\mathrm{LN}(h))$$\n\nSwitch to "
             "Post-LN to see where the original paper put the norms instead.",
             block_view, (NORM,)),
        Step("Residual connections",
             "Each sublayer's output is *added* to its input, x + f(x), so the sum passes every block on a path "
             "with no weights in the way, forward and backward. The module says that without these skips, "
             "stacks deeper than about ten layers barely train. The experiment trains 12-block language models "
             "on this text with and without them (5 seeds, the same steps).",
             block_view, (NORM,),
             Question("Without residual connections, how does a 12-block language model train?", residuals,
                      choices=("about as well as with them", "clearly worse: barely better than guessing "
                               "letters by their frequency", "better than with them"), experiment="residuals"),
             try_it=lambda v: ("experiments", {"exp_name": "residuals"})),
        Step("The output projection",
             "Blocks keep the shape of their input, so the last one still gives one vector per position. One "
             "linear layer turns each vector into a score per character, and a softmax into probabilities.",
             projection_view, (),
             Question("What share of this tiny LM's parameters is the output projection?",
                      projection_share, number=(0.0, 100.0, 0.5), unit="%")),
        Step("What the tiny LM predicts",
             "This model was trained for a minute on a short English text, one character at a time, with the "
             "blocks above. Here it reads text it has never seen.",
             text_view, (),
             Question("How often is its most likely next character the right one on unseen text?",
                      top1, choices=("under 25%", "25 to 50%", "50 to 75%", "over 75%"))),
    ))
