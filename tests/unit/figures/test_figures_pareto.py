"""The Pareto front's figure: every complete trial at its first two metrics, the front's points carrying
their trial numbers (what a click picks), a log axis for a parameter count, visitor text quoted."""

from explorer.figures.pareto import pareto_front


def _row(number, exact, params, state="COMPLETE", **extra):
    return {"number": number, "state": state, "params": {"lr": 1e-3, **extra},
            "values": {"val_exact": exact, "params": params}}


def test_the_front_carries_its_trial_numbers_and_the_rest_are_drawn_apart():
    rows = [_row(0, 0.5, 100.0), _row(1, 0.9, 300.0), _row(2, 0.4, 200.0), _row(3, None, 50.0, state="FAIL")]
    fig = pareto_front(rows, ["val_exact", "params"], [0, 1])
    others, front = fig.data
    assert front.name == "Pareto front" and list(front.customdata) == [0, 1] and list(front.x) == [100.0, 300.0]
    assert list(others.customdata) == [2] and list(others.y) == [0.4]     # the failed trial is not drawn
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "linear"
    assert fig.layout.title.text == "Pareto front: val_exact against params"


def test_a_visitors_text_in_a_trial_is_shown_as_text():
    fig = pareto_front([_row(0, 0.5, 10.0, norm="<b>x</b>")], ["val_exact", "params"], [0])
    assert "<b>x</b>" not in fig.data[1].text[0]
