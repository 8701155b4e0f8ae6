"""The Train page with EXPLORER_RAY_ADDRESS naming an address where nothing answers: the run fails within
the connection's 10 s with a message naming the address, instead of waiting in a queue forever. (A real
cluster's runs on the page: tests/browser/test_browser_ray.py.)"""

import pytest

from explorer.jobs.ray_training import RayTrainingJob
from tests.app.training_helpers import click, job_of, open_train, poll_until
from tests.ray_head import free_port


def test_an_address_that_does_not_answer_fails_the_run_and_the_page_says_so(jobs, monkeypatch):
    pytest.importorskip("ray", reason="ray is in requirements-dev.txt")
    address = f"127.0.0.1:{free_port()}"   # nothing listens there
    monkeypatch.setenv("EXPLORER_RAY_ADDRESS", address)
    at = click(open_train(20), "train_start")
    job = job_of(at)
    assert isinstance(job, RayTrainingJob) and not job.pooled   # no slot of this server taken
    poll_until(at, lambda: job.ended, timeout=30)
    assert job.status == "failed"
    shown = " ".join(e.value for e in at.error)
    assert f"No Ray cluster answered at {address} within 10 s" in shown, shown
    assert not at.button(key="train_start").disabled   # the visitor may try again
