"""The answers of the chapter lesson's experiment questions, read from an experiment's Result: which
choices the evidence supports, or none when it decides nothing."""

from __future__ import annotations

from explorer.analysis.evidence import Claim, weigh
from explorer.experiments import Result
from explorer.lessons.base import Reveal, SeedCheck, View, result_figure

INCONCLUSIVE = "The measurement does not decide this question at this budget, so no choice is marked right."
NONE_OF_THEM, MOST, SOME = "almost none (under 10%)", "most of them (over 50%)", "some (10-50%)"
PE_TYPES_CHOICES = (NONE_OF_THEM, SOME, MOST)


def _figure(result: Result, index: int):
    return result_figure(result.figures[index]) if len(result.figures) > index else None


def _evidence(result: Result, metric: str, condition: str):
    return next((e for e in result.evidence if e.metric == metric and e.conditions[0] == condition), None)


def _decided(result: Result, holds: bool | None, yes: tuple[int, ...], no: tuple[int, ...]) -> tuple[int, ...]:
    """The choices one claim's outcome supports; none for a partial run or an undecided claim."""
    if result.partial or holds is None:
        return ()
    return yes if holds else no


def label_smoothing(result: Result | None) -> Reveal:
    """Choices: 0 more diffuse (higher entropy), 1 about the same, 2 more confident (lower entropy)."""
    if result is None:
        return Reveal("No result yet: run the experiment.")
    e = _evidence(result, "entropy (nats)", "eps=0.1")
    holds = None if e is None else e.holds
    correct = _decided(result, holds, (0,), (1, 2) if e is None or e.interval[1] >= 0 else (2,))
    text = ("Trained with eps = 0.1, the model's output distribution on held-out examples has a **higher "
            "entropy** than with hard targets: it is more diffuse, as the chapter says." if correct == (0,) else
            INCONCLUSIVE if not correct else "Label smoothing did **not** raise the output entropy here.")
    return Reveal(text, correct, view=View(_figure(result, 1), "Output entropy on 10 held-out examples, mean ± "
                                           "std over seeds; the diamond is the entropy of the smoothed target."),
                  verdict=result.verdict)


def alignment(result: Result | None) -> Reveal:
    """Choices: 0 the first decoder layer, 1 the last decoder layer, 2 both alike.
    The layers are compared seed by seed (paired t on each layer's best head)."""
    if result is None:
        return Reveal("No result yet: run the experiment.")
    layers = sorted({c for c in result.table["condition"] if c.endswith("(best head)")})
    if len(layers) < 2:   # one decoder layer (a tiny budget): nothing to compare
        return Reveal("This model has a single decoder layer, so there is nothing to compare. " + INCONCLUSIVE,
                      view=View(_figure(result, 0)), verdict=result.verdict)
    first, last = layers[0], layers[-1]
    e = weigh(Claim(f"{last} aligns more than {first}", "agreement", last, first, paired=True, unit="%"),
              result.samples)
    low, high = e.interval
    correct = _decided(result, e.holds, (1,), (0,))
    text = (f"Over {e.n[0]} seeds, the last layer's best head beats the first layer's by {100 * e.estimate:.0f} "
            f"points (95% interval {100 * low:.0f} to {100 * high:.0f}, paired t). ")
    text += ("The alignment sits in the **last** decoder layer: its best head puts most of its weight on the "
             "source token it is about to copy, the first layer's does not." if correct == (1,) else
             "The first layer aligns more." if correct == (0,) else INCONCLUSIVE)
    return Reveal(text, correct, view=View(_figure(result, 0), "Cross-attention of the first seed's model on a "
                                           "held-out example: rows are decoder layers, columns heads."),
                  verdict=result.verdict)


def decoding(result: Result | None) -> Reveal:
    """Choices: 0 beam at least as accurate as greedy, 1 greedy more accurate than beam."""
    if result is None:
        return Reveal("No result yet: run the experiment.")
    e = _evidence(result, "exact match", next((c for c in result.table["condition"] if c.startswith("beam")),
                                               "beam"))
    correct = _decided(result, None if e is None else e.holds, (0,), (1,))
    text = ("Beam search's exact match is at least greedy's (within one point)." if correct == (0,) else
            "Greedy decoding beat beam search here." if correct == (1,) else
            INCONCLUSIVE + " Both decoders read the same trained models; on a task this easy they mostly "
            "agree, and the per-seed differences are too small and too few to call.")
    return Reveal(text, correct, view=View(_figure(result, 0), "Exact match of both decoders on the same held-"
                                           "out rows while training."), verdict=result.verdict)


def pe_types(result: Result | None) -> Reveal:
    """Choices: PE_TYPES_CHOICES, by the share of longer sequences reversed exactly."""
    if result is None:
        return Reveal("No result yet: run the experiment.")
    e = _evidence(result, "exact (longer)", "sinusoidal")
    if e is None or result.partial or e.holds is None:
        picked = None
    elif e.holds:
        picked = MOST
    else:
        low, high = e.interval
        picked = NONE_OF_THEM if high < 0.1 else SOME if low > 0.1 else None
    correct = () if picked is None else (PE_TYPES_CHOICES.index(picked),)
    n = result.params.get("max_len", 8)
    mean = "not measured" if e is None else f"{100 * e.estimate:.0f}%"
    text = (f"Trained on lengths {result.params.get('min_len', 4)}-{n}, the sinusoidal model reverses "
            f"**{mean}** of the sequences of lengths {n + 1}-{2 * n} exactly. ")
    text += {MOST: "It generalises, as the chapter says.",
             NONE_OF_THEM: "It does not: being *defined* at every position is not the same as having *learned* "
                           "what to do there.",
             SOME: "Some, but far from most."}.get(picked, INCONCLUSIVE)
    check = None
    if picked in (NONE_OF_THEM, SOME):
        check = SeedCheck("the chapter (its section on positions and its summary): sinusoidal PE \"generalises "
                          "to unseen lengths\".",
                          f"on reversal, trained at lengths up to {n}, exact match on lengths {n + 1}-{2 * n}: "
                          f"{mean} (see the verdict).",
                          "the measurement, for this task and budget: the formula gives every position a vector, "
                          "but nothing in training taught the model what a vector it never saw means. The "
                          "chapter's own wording elsewhere is the careful one: \"can in principle\".")
    return Reveal(text, correct, view=View(_figure(result, 1), "Exact match on the longer, never-seen lengths, "
                                           "per encoding (mean ± std over seeds).", check=check),
                  verdict=result.verdict)


def pre_post_ln(result: Result | None) -> Reveal:
    """Choices: 0 Pre-LN trains and Post-LN stalls, 1 the reverse, 2 both train. Read from part (b) of the
    experiment: Post-LN's final loss clearly higher, and Pre-LN not behind on accuracy."""
    if result is None:
        return Reveal("No result yet: run the experiment.")
    loss = _evidence(result, "final training loss", "Post-LN")
    acc = _evidence(result, "final accuracy", "Pre-LN")
    decided = None if loss is None or acc is None or loss.holds is None or acc.holds is None else (
        loss.holds and acc.holds)
    correct = () if result.partial or not decided else (0,)
    init = _evidence(result, "max/min grad norm (parameters)", "Post-LN")
    at_init = ("" if init is None else "At initialisation (part a) the spread across depth is "
               + ("not decided over these seeds. " if init.holds is None else
                  "larger for Post-LN. " if init.holds else "not larger for Post-LN. "))
    text = at_init + ("Trained (part b), the Pre-LN stacks learn the task while every Post-LN stack stays at "
                      "chance, its loss stuck near ln 2: without a warmup the post-norm stack does not get going."
                      if correct else INCONCLUSIVE)
    return Reveal(text, correct, view=View(_figure(result, 4), "Every run's training loss, Pre-LN and Post-LN, "
                                           "10 blocks, lr 0.01, no warmup."), verdict=result.verdict)
