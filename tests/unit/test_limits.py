"""One set of limits (explorer/limits.py): the caps refuse a value over them by name, before any budget is
probed; the budget refuses what would not fit; a search is held to them by its space's tops and its largest
trial; the job class refuses as the Train page does."""

from __future__ import annotations

import pytest

from explorer import limits
from explorer.config import ModelConfig
from explorer.jobs import budget
from explorer.jobs.training import TrainingJob
from explorer.limits import CAPS, check_run, check_search, check_search_work, check_values
from explorer.model import build_model
from explorer.search.space import parse_space
from explorer.tasks import make_task
from explorer.train_config import TrainConfig


@pytest.fixture(scope="module")
def task():
    return make_task("copy")


def test_a_value_over_its_cap_is_named_and_one_at_the_cap_passes():
    check_values(dict(CAPS))                                   # every cap itself is allowed
    check_values({"lr": 1e9, "seed": 10**9, "pos_encoding": "rope"})   # fields without a cap pass
    with pytest.raises(ValueError, match="d_model=513 is over the limit of this machine: d_model may be at most 512"):
        check_values({"d_model": 513})
    with pytest.raises(ValueError, match="n_layers=13 .* at most 12"):        # a search's depth, by its alias
        check_values({"n_layers": 13})
    with pytest.raises(ValueError, match="heads=32 .* at most 16"):           # a tuple, value by value
        check_values({"heads": (1, 32)}, {"heads": "n_heads"})


def test_check_run_refuses_a_cap_before_probing_and_the_budget_after(task, monkeypatch):
    probed = []
    monkeypatch.setattr(budget, "_PROBES", {})   # the probes taken here stay here
    monkeypatch.setattr(budget, "_measure", lambda *a: probed.append(a) or budget.Probe(1e-3, 1e-3, 1e-3))
    huge = task.model_config(ModelConfig(d_model=999_999, n_heads=1))        # a config is data: nothing allocated
    with pytest.raises(ValueError, match="d_model=999,999 is over the limit"):
        check_run(huge, TrainConfig(), task)
    with pytest.raises(ValueError, match="steps=100,001 is over the limit"):
        check_run(task.model_config(ModelConfig(d_model=16, n_heads=2)), TrainConfig(steps=100_001), task)
    assert not probed
    slow = budget.Probe(1.0, 0.0, 0.0)   # a second a step: 1,000 steps are 17 min, over the 10 min
    monkeypatch.setattr(budget, "_measure", lambda *a: slow)
    with pytest.raises(ValueError, match="over the 10 min limit; reduce steps to 600 or fewer"):
        check_run(task.model_config(ModelConfig(d_model=8, n_heads=2, d_ff=16)), TrainConfig(steps=1_000), task)


def test_an_encoder_only_models_unbuilt_decoder_depth_is_not_capped():
    order = make_task("order")
    cfg = order.model_config(ModelConfig(d_model=8, n_heads=2, d_ff=16, n_encoder_layers=1, n_decoder_layers=99))
    assert not cfg.uses_decoder
    check_values({n: getattr(cfg, n) for n in CAPS if hasattr(cfg, n) and limits._used(cfg, n)})  # noqa: SLF001


def test_a_search_is_held_to_its_spaces_tops_and_its_largest_trial(task):
    built = []

    def configs(params):
        built.append(params)
        cfg = task.model_config(ModelConfig(d_model=int(params.get("d_model", 16)), n_heads=2, d_ff=32))
        return task, cfg, TrainConfig(steps=int(params.get("steps", 10)), batch_size=8, eval_examples=8)

    with pytest.raises(ValueError, match="d_model=1,024 is over the limit"):
        check_search(parse_space(["d_model=16,1024", "lr=1e-4:1e-2:log"]), {"steps": 10}, configs)
    with pytest.raises(ValueError, match="steps=200,000 is over"):          # a fixed setting too
        check_search(parse_space(["d_model=16,32"]), {"steps": 200_000}, configs)
    assert not built                                                        # refused before any trial is built
    space = parse_space(["d_model=16,512", "steps=10:100000", "norm=pre,post"])
    with pytest.raises(ValueError, match=r"the largest trial this search can make \(d_model=512, steps=100000\) "
                                         r"is refused: .*over the 10 min limit"):
        check_search(space, {}, configs)
    assert built == [{"d_model": 512, "steps": 100_000}]                   # each numeric dimension at its top


def test_the_search_pages_work_counts_the_spaces_largest_steps():
    check_search_work(8, 200, parse_space(["lr=1e-4:1e-2:log"]))
    with pytest.raises(ValueError, match=r"8 trials x 100,000 steps is more than one search may take here "
                                         r"\(24,000 steps\)"):
        check_search_work(8, 200, parse_space(["steps=50000:100000"]))
    with pytest.raises(ValueError, match="d_model=1,024 is over the limit"):
        check_search_work(1, 10, parse_space(["d_model=1024"]))


def test_the_job_class_refuses_over_a_cap_at_start_and_at_resume(task, monkeypatch):
    deep = build_model(task.model_config(ModelConfig(d_model=8, n_heads=2, d_ff=16, n_encoder_layers=13,
                                                     n_decoder_layers=1)), seed=0)
    job = TrainingJob(deep, task, TrainConfig(steps=2, batch_size=4, eval_every=0, eval_examples=4))
    with pytest.raises(ValueError, match="n_encoder_layers=13 is over the limit"):
        job.start()
    assert job.status == "idle" and not job.alive
    small = build_model(task.model_config(ModelConfig(d_model=8, n_heads=2, d_ff=16, n_encoder_layers=1,
                                                      n_decoder_layers=1)), seed=0)
    job = TrainingJob(small, task, TrainConfig(steps=2, batch_size=4, eval_every=0, eval_examples=4))
    job.start()
    assert job.join(60) and job.status == "finished"
    with pytest.raises(ValueError, match="steps=100,001 is over the limit"):   # the steps this resume trains
        job.resume(extra_steps=100_001)
    assert job.train_cfg.steps == 2 and job.status == "finished"


def test_the_largest_trial_takes_fewer_heads_when_the_most_do_not_divide_the_widest_d_model(task):
    built = []

    def configs(params):
        built.append(params)
        cfg = task.model_config(ModelConfig(d_model=params["d_model"], n_heads=params["n_heads"], d_ff=32))
        return task, cfg, TrainConfig(steps=100_000, batch_size=8)

    with pytest.raises(ValueError, match=r"\(d_model=512, n_heads=1\) is refused: .*over the 10 min limit"):
        check_search(parse_space(["d_model=16,512", "n_heads=1,3"]), {}, configs)
    assert built == [{"d_model": 512, "n_heads": 3}, {"d_model": 512, "n_heads": 1}]
    check_search(parse_space(["d_model=15,35", "n_heads=2,4"]), {}, configs)   # no top trial exists: they fail
