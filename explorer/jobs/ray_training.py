"""A training run on a Ray cluster (`EXPLORER_RAY_ADDRESS`, or the CLI's `--ray ADDRESS`), followed from here.

    job = new_job(model, task, train_cfg, name=..., owner=...)   # a RayTrainingJob when the address is set
    job.start(); job.stop(); job.resume(200)                     # as any TrainingJob
    RayTrainingJob.attach(address, owner)                        # the owner's run still training on the cluster

The run trains in a Ray actor (explorer/jobs/ray_actor.py: one CPU, one torch thread) and this job, in its
thread, asks it every POLL_S for the steps it has not seen (curves, gradient norms, attention snapshots: the
same records a local run appends), so a page reads the job exactly as it reads a local one. It takes no slot
of this server: the cluster's CPUs are the queue. Stop reaches the actor at once. At the end the job fetches
the weights and what resuming needs and saves the run here, as a local run does (owned, resumable). The
actor of an app's run is detached and named after its owner (`actor_name`), so when the app server restarts,
the owner's reopened page finds it by the owner cookie alone and follows it again. A worker that dies leaves
the run saved from its last checkpoint (at most CHECKPOINT_S old), "interrupted" and resumable from there.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from explorer.config import ModelConfig
from explorer.jobs.owned import GRACE_S, owned_jobs
from explorer.jobs.ray_actor import RunActor
from explorer.jobs.training import TrainingJob
from explorer.model import build_model
from explorer.search.ray_cluster import ENV_ADDRESS, RayUnavailable, acquire, release
from explorer.search.worker import worker_id
from explorer.store.resume import restore_state, state_payload
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig

log = logging.getLogger(__name__)

NAMESPACE = "explorer"        # named actors are found by name within one Ray namespace
POLL_S = 0.25                 # the driver's questions to its actor: the page polls the job every 0.5 s
CALL_TIMEOUT_S = 30.0         # an answer slower than this means the worker is lost
ORPHAN_S = max(GRACE_S, 60.0)  # an app server's restart takes seconds; a run nobody follows for this long stops
RETRY_S = 30.0                # a cluster that did not answer a lookup is not asked again before this


def address() -> str | None:
    """The app's Ray cluster (EXPLORER_RAY_ADDRESS), or None: runs train in this server's slots."""
    return os.environ.get(ENV_ADDRESS, "").strip() or None


def actor_name(owner: str) -> str:
    """The app's one run of an owner on the cluster (one training job per owner, as explorer.jobs.owned)."""
    return f"train-{owner}"


def _remote(ray):
    return ray.remote(num_cpus=1, max_concurrency=4, max_restarts=0)(RunActor)


class RayTrainingJob(TrainingJob):
    """A TrainingJob whose steps run in a Ray actor. `detached` (the app's runs): the actor outlives this
    process and is named after the owner; otherwise (the CLI) it ends with this process."""

    pooled = False
    waiting = "waiting for a CPU on the Ray cluster"

    def __init__(self, model, task, train_cfg: TrainConfig, name: str | None = None, on_update=None,
                 owner: str | None = None, ray_address: str | None = None, detached: bool = True,
                 saves: bool = True) -> None:
        super().__init__(model, task, train_cfg.replace(threads=1), name=name, on_update=on_update, owner=owner)
        self.address, self.detached, self.saves = ray_address or address(), detached, saves
        if not self.address:
            raise ValueError(f"a run on a Ray cluster needs an address: set {ENV_ADDRESS} or give --ray")
        self._ray = self._actor = self._worker = None
        self._interrupted = False

    worker = property(lambda self: self._get("_worker"), doc='"host:pid" of the worker training the run, once known')
    interrupted = property(lambda self: self._get("_interrupted"), doc="whether its worker died")

    @classmethod
    def attach(cls, ray_address: str, owner: str) -> RayTrainingJob | None:
        """A job following the owner's run still on the cluster (after this server restarted), already
        polling it; None when the owner has none there. RayUnavailable when the cluster does not answer."""
        ray = acquire(ray_address)
        try:
            actor = ray.get_actor(actor_name(owner), namespace=NAMESPACE)
            spec = ray.get(actor.describe.remote(), timeout=CALL_TIMEOUT_S)
            # the curve so far, before the page that follows draws it (the checkpoint comes with the first poll)
            records = ray.get(actor.poll.remote(0, 1 << 62), timeout=CALL_TIMEOUT_S)["records"]
        except Exception:  # no such actor, or it died a moment ago: nothing to follow
            release(ray)
            return None
        task = make_task(TaskConfig.from_dict(spec["task_cfg"]))
        model = build_model(ModelConfig.from_dict(spec["model_cfg"]))
        job = cls(model, task, TrainConfig.from_dict(spec["train_cfg"]), name=spec["name"], owner=spec["owner"],
                  ray_address=ray_address)
        job._ray, job._actor, job._worker = ray, actor, spec["worker"]   # the connection passes to the job
        for rec in records:
            job._append(rec)
        job._launch()
        return job

    def stop(self, wait: bool = False, timeout: float = 5.0) -> bool:
        actor = self._get("_actor")
        if actor is not None:
            try:
                actor.stop.remote()   # at once, not at the next poll: the worker ends after its step
            except Exception:
                log.warning("asking the actor of %r to stop failed", self.name, exc_info=True)
        return super().stop(wait, timeout)

    # -- the worker ----------------------------------------------------------------------------
    def _launched(self) -> tuple[str, str]:
        if self._actor is not None:
            return "running", f"following run {self.name!r} on the Ray cluster"
        self._worker, self._interrupted = None, False   # a new actor (a start, a resume): its own worker and fate
        return "queued", f"connecting to the Ray cluster at {self.address}"

    def _work(self) -> tuple[str, str]:
        self._began = time.monotonic()   # this segment's wall time, as TrainingJob._work keeps it
        # RayUnavailable names the address (within 10 s): the job fails with that message
        ray, self._ray = self._ray or acquire(self.address), None
        if self.detached:
            hold(self.address)
        try:
            actor = self._actor or self._create(ray)
            if self._worker is None and not self._started(ray, actor):
                ray.kill(actor)
                return "stopped", f"stopped while {self.waiting}"
            return self._follow(ray, actor)
        finally:
            with self._lock:
                self._actor = None   # ended, killed or lost: a resume starts another
            release(ray)

    def _create(self, ray):
        spec = {"model_cfg": self.model.cfg.to_dict(), "task_cfg": self.task.cfg.to_dict(),
                "train_cfg": self.train_cfg.to_dict(), "name": self.name, "owner": self.owner,
                "payload": state_payload(self.state), "history": list(self.state.history), "orphan_s": ORPHAN_S}
        options = {}
        if self.detached and self.owner:
            options = {"name": actor_name(self.owner), "namespace": NAMESPACE, "lifetime": "detached"}
            self._retire(ray, options["name"])
        actor = _remote(ray).options(**options).remote(spec)
        with self._lock:
            self._actor, self._message = actor, self.waiting
        return actor

    def _started(self, ray, actor) -> bool:
        """Wait (queued) until the cluster has a CPU for the actor and it answers; False on a stop."""
        ref = actor.describe.remote()
        while not ray.wait([ref], timeout=POLL_S)[0]:
            if self._stop.is_set():
                return False
        worker = ray.get(ref)["worker"]   # an actor that failed to start raises its reason here
        with self._lock:
            self._worker, self._status, self._message = worker, "running", ""
        return True

    def _retire(self, ray, name: str) -> None:
        """An ended run of the owner's still holding the name (collected, or never to be): end it."""
        try:
            old = ray.get_actor(name, namespace=NAMESPACE)
        except ValueError:
            return
        try:
            ended = ray.get(old.poll.remote(1 << 62, 1 << 62), timeout=CALL_TIMEOUT_S)["ended"]
        except Exception:
            ended = True   # dead or lost: nothing to keep
        if not ended:
            raise RuntimeError("a run of yours is still training on the cluster: stop it first")
        ray.kill(old)

    def _follow(self, ray, actor) -> tuple[str, str]:
        """Take the actor's records as they come until it ends; then its weights. A dead worker: the last checkpoint."""
        checkpoint = None
        with self._lock:
            self._window.clear()
            self._window.append((time.monotonic(), self.state.step))
        while True:
            try:
                reply = ray.get(actor.poll.remote(len(self._history), checkpoint["step"] if checkpoint else -1),
                                timeout=CALL_TIMEOUT_S)
            except Exception as exc:  # the worker died (killed, out of memory, its node lost)
                return self._lost(checkpoint, exc)
            for rec in reply["records"]:   # as a local run appends its own
                self._append(rec)
            if reply["checkpoint"] is not None:
                checkpoint = reply["checkpoint"]
            if self._stop.is_set():
                actor.stop.remote()
            if reply["ended"]:
                break
            time.sleep(POLL_S)
        try:
            final = ray.get(actor.final.remote(), timeout=CALL_TIMEOUT_S)
        except Exception as exc:
            return self._lost(checkpoint, exc)
        self._restore(final, to_checkpoint=False)
        ray.kill(actor)   # collected: its CPU goes back to the cluster
        return reply["status"], reply["message"]

    def _restore(self, payload: dict, to_checkpoint: bool = True) -> None:
        """This job's model and state become the worker's; `to_checkpoint`: the steps past it are dropped."""
        restore_state(self.state, payload)
        step = payload["step"]
        with self._lock:
            if to_checkpoint:
                self._history = [r for r in self._history if r.step <= step and r.stopped is None]
                self._snapshots = [r.snapshot for r in self._history if r.snapshot is not None]
                self._step = step
            self.state.history = list(self._history)   # a diverged run's last record too, as train_steps keeps it
        self.model.eval()

    def _lost(self, checkpoint: dict | None, exc: Exception) -> tuple[str, str]:
        log.warning("the worker of run %r was lost: %s", self.name, exc)
        with self._lock:
            self._interrupted = True
        if checkpoint is None:
            raise RuntimeError(f"the Ray worker training this run died before its first checkpoint ({exc})")
        self._restore(checkpoint)
        return "stopped", (f"interrupted: the Ray worker {self._worker or ''} died; the run is kept as of step "
                           f"{checkpoint['step']:,}, where Resume continues it")

    def _save_message(self, outcome: str, reason: str) -> str:
        return super()._save_message(outcome, reason) if self.saves else reason   # the CLI saves its own

    def _extra(self, outcome: str) -> dict:
        return {**super()._extra(outcome), "interrupted": self._interrupted, "driver": worker_id(),
                "worker": self.worker}


_HELD: list = []            # the app server's connection, kept for its life: connecting takes seconds
_FAILED_AT = [-RETRY_S]      # when the cluster last did not answer a lookup
_LOCK = threading.Lock()


def hold(ray_address: str) -> None:
    """Keep this process connected (the app server): its next runs start without connecting again."""
    with _LOCK:
        if not _HELD:
            _HELD.append(acquire(ray_address))


def let_go() -> None:
    """Drop the connection `hold` kept (a test that stops its cluster)."""
    with _LOCK:
        while _HELD:
            release(_HELD.pop())


def follow(owner: str):
    """The owner's training job: the one this server has, else their run still training on the app's cluster
    (the server restarted under it), followed and registered from now on; None when there is neither. A
    cluster that does not answer counts as none, and is asked again after RETRY_S (no page waits on it twice)."""
    jobs = owned_jobs()
    ray_address = address()
    with _LOCK:
        known = jobs.job(owner, "train")
        if known is not None or ray_address is None or time.monotonic() - _FAILED_AT[0] < RETRY_S:
            return known
        try:
            job = RayTrainingJob.attach(ray_address, owner)
        except RayUnavailable:
            _FAILED_AT[0] = time.monotonic()
            return None
        if job is not None:
            jobs.register(owner, "train", job)
        return job


def new_job(model, task, train_cfg: TrainConfig, name: str | None = None, owner: str | None = None):
    """A run of the app: on the Ray cluster when EXPLORER_RAY_ADDRESS is set, else in this server's slots."""
    if address() is None:
        return TrainingJob(model, task, train_cfg, name=name, owner=owner)
    return RayTrainingJob(model, task, train_cfg, name=name, owner=owner)


def job_from_run(name: str, owner: str | None = None):
    """A saved run continued as the app's job: on the cluster when EXPLORER_RAY_ADDRESS is set."""
    return (TrainingJob if address() is None else RayTrainingJob).from_run(name, owner=owner)


__all__ = ["NAMESPACE", "ORPHAN_S", "POLL_S", "RETRY_S", "RayTrainingJob", "RayUnavailable", "actor_name",
           "address", "follow", "hold", "job_from_run", "let_go", "new_job"]
