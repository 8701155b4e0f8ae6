"""One training run inside a Ray actor on a cluster's worker: the actor's side of explorer/jobs/ray_training.py.

The actor trains in a thread of its own (one CPU, one torch thread) and answers its driver between steps:

    poll(since, checkpoint_step)   the records from `since` on, status and message, a newer checkpoint if any
    describe()                     the run's configs, name and owner, and this worker ("host:pid"): how a
                                   restarted app server rebuilds the job that follows it
    stop()                         end after the current step (the run keeps what it learned)
    final()                        the weights and what resuming needs, once the run has ended

Nothing here saves anything: the driver saves the run to the runs folder, as a local run saves itself, so no
worker needs that folder. A run no driver polled for `orphan_s` stops as a local run no tab watches does; an
ended run nobody collected for KEEP_S ends its process. Plain data in and out, pickled by Ray.
"""

from __future__ import annotations

import os
import threading
import time

import torch

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.search.worker import ONE_THREAD, worker_id
from explorer.store.resume import restore_state, state_payload
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps

CHECKPOINT_S = 2.0     # a worker that dies loses at most this much training: the driver keeps the last checkpoint
KEEP_S = 3600.0        # an ended run waits this long for a driver to collect it, then its process exits
SPEC_KEYS = ("model_cfg", "task_cfg", "train_cfg", "name", "owner")


class RunActor:
    """The actor's class (ray.remote wraps it in explorer/jobs/ray_training.py). `spec`: the SPEC_KEYS, the
    driver's `payload` (explorer.store.resume.state_payload), its `history` so far and `orphan_s`."""

    def __init__(self, spec: dict) -> None:
        os.environ.update(ONE_THREAD)   # as the search's workers: one thread for every pool a step could touch
        torch.set_num_threads(1)
        self.spec = {key: spec[key] for key in SPEC_KEYS}
        self.task = make_task(TaskConfig.from_dict(spec["task_cfg"]))
        self.cfg = TrainConfig.from_dict(spec["train_cfg"])
        self.state = new_state(build_model(ModelConfig.from_dict(spec["model_cfg"])), self.task, self.cfg)
        restore_state(self.state, spec["payload"])
        self.state.history = list(spec["history"])
        self.orphan_s = float(spec["orphan_s"])
        self._lock, self._stop, self._ended, self._collected = (threading.Lock(), threading.Event(),
                                                                 threading.Event(), threading.Event())
        self._status, self._message, self._seen = "running", "", time.monotonic()
        self._checkpoint, self._final = state_payload(self.state), None
        threading.Thread(target=self._train, name="ray-train", daemon=True).start()

    def _train(self) -> None:
        torch.set_num_threads(1)  # per OS thread
        state, outcome, last_checkpoint = self.state, None, time.monotonic()
        steps = train_steps(state.model, self.task, self.cfg, state)
        try:
            for rec in steps:
                if rec.stopped:
                    outcome = ("diverged", rec.stopped)
                    break
                now = time.monotonic()
                if now - self._seen > self.orphan_s:
                    outcome = ("stopped", f"stopped at step {state.step} of {self.cfg.steps}: no app server "
                                          f"followed the run for {self.orphan_s:.0f} s")
                    break
                if self._stop.is_set():
                    break
                if now - last_checkpoint >= CHECKPOINT_S:
                    checkpoint, last_checkpoint = state_payload(state), now
                    with self._lock:
                        self._checkpoint = checkpoint
        except Exception as exc:  # the driver shows the reason; a traceback stays in the worker's log
            outcome = ("failed", str(exc) or type(exc).__name__)
        finally:
            steps.close()
        if outcome is None:
            outcome = (("finished", f"finished {self.cfg.steps} steps") if state.step >= self.cfg.steps else
                       ("stopped", f"stopped at step {state.step} of {self.cfg.steps}"))
        final = state_payload(state)
        with self._lock:
            self._final, self._checkpoint = final, final
            self._status, self._message = outcome
        self._ended.set()
        if self._collected.wait(KEEP_S):
            time.sleep(60.0)  # its driver ends it now; should that driver die first, this process ends itself
        os._exit(0)  # collected, or nobody came for it: the worker's CPU goes back to the cluster

    def poll(self, since: int, checkpoint_step: int) -> dict:
        """What the driver has not seen yet. Polling is also what keeps the run from being orphaned."""
        self._seen = time.monotonic()
        with self._lock:
            records = self.state.history[since:]
            checkpoint = self._checkpoint if self._checkpoint["step"] > checkpoint_step else None
            return {"records": records, "status": self._status, "message": self._message,
                    "checkpoint": checkpoint, "ended": self._ended.is_set()}

    def describe(self) -> dict:
        return {**self.spec, "worker": worker_id()}

    def stop(self) -> None:
        self._stop.set()

    def final(self) -> dict:
        """The ended run's weights and resume state (waits up to a minute for the run to end)."""
        if not self._ended.wait(60.0):
            raise RuntimeError("the run did not end within a minute of being asked")
        self._collected.set()
        with self._lock:
            return self._final


__all__ = ["CHECKPOINT_S", "KEEP_S", "SPEC_KEYS", "RunActor"]
