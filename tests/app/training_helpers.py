"""Driving the Train, Gradients and Runs pages under AppTest, for the tests of those pages and of the
pages that train (own data, ownership, experiments, lessons): open the Train page with a tiny model,
click, find a chart, save a small run.

AppTest never fires `run_every` by itself: `poll_until` reruns the app until the job gets there. Every
job a test starts is stopped and joined in the `jobs` fixture (tests/app/conftest.py): a torch thread
alive at interpreter exit aborts the process.
"""

import time

from explorer.config import ModelConfig
from explorer.jobs.training import TrainingJob
from explorer.model import build_model
from explorer.store import runs
from explorer.tasks import make_task
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps
from tests.app.helpers import assert_ok, figures, open_app
from ui import owner, train_settings, training_job
from ui.state import RUNS_EXPORT

TRAIN, GRADIENTS, RUNS = "pages/train.py", "pages/gradients.py", "pages/runs.py"
ME = "a-visitors-own-token-0123456789"  # this AppTest's cookie, as a browser would send it
TINY = {"cfg_d_model": 16, "cfg_n_heads": 2, "cfg_d_ff": 32, "cfg_n_encoder_layers": 1, "cfg_n_decoder_layers": 1,
        train_settings.TRAIN_BATCH: 16, train_settings.TRAIN_WARMUP: 5}


def open_train(steps: int, **state):
    return open_app(TRAIN, state={**TINY, train_settings.TRAIN_STEPS: steps, **state})


def poll_until(at, done, timeout: float = 90.0):
    """Rerun the app (what the fragments' run_every does in a browser) until done() holds."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the job did not get there in time"
        time.sleep(0.2)
        at.run()
        assert_ok(at)
    at.run()
    assert_ok(at)
    return at


def chart(at, key: str) -> dict:
    return next(f for el, f in zip(at.get("plotly_chart"), figures(at)) if el.proto.id.endswith(key))


def trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


def job_of(at) -> TrainingJob:
    return at.session_state[training_job.JOB]


def click(at, key: str):
    at.button(key=key).click().run()
    assert_ok(at)
    return at


def pick_for_export(at, name: str):
    """The Runs page's run to export, resume, annotate or delete."""
    at.selectbox(key=RUNS_EXPORT).set_value(name).run()
    assert_ok(at)
    return at


def saved_run(name: str, norm: str, steps: int = 8, owner_token: str | None = None, task: str = "copy",
              extra: dict | None = None) -> str:
    task = make_task(task)
    cfg = task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32,
                                        norm=norm))
    model, train_cfg = build_model(cfg, seed=0), TrainConfig(steps=steps, batch_size=4, eval_every=4, eval_examples=8)
    state = new_state(model, task, train_cfg)
    list(train_steps(model, task, train_cfg, state))
    return runs.save_run(name, model, task.cfg, train_cfg, state.history, state=state, extra=extra,
                         owner=owner.id_of(owner_token) if owner_token else None).name
