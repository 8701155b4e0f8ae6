"""Every file written in the runs folder arrives whole (temp file + rename): several servers share the folder
(README, "A course on several servers"), so a reader elsewhere sees the old file or the new one."""

import os
import threading
from pathlib import Path

import pytest

from explorer.experiments import load_result, save_csv
from explorer.lessons import LESSONS
from explorer.lessons.folder import lessons_dir, save_lesson
from explorer.lessons.writer import lesson_toml
from explorer.model import build_model
from explorer.store import atomic, runs
from explorer.tasks import make_task
from explorer.training import new_state, train_steps
from tests.unit.helpers import MODEL, TASK, TRAIN

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def renamed(monkeypatch) -> set[Path]:
    """The files os.replace put in place from now on."""
    seen, real = set(), os.replace

    def recording(src, dst, *args, **kwargs):
        seen.add(Path(dst))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", recording)
    return seen


def files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


def test_every_file_of_a_saved_run_is_renamed_into_place(renamed):
    task = make_task(TASK)
    model = build_model(task.model_config(MODEL), seed=TRAIN.seed)
    train = TRAIN.replace(snapshot_every=4, steps=8)
    state = new_state(model, task, train)
    for _ in train_steps(model, task, train, state):
        pass
    info = runs.save_run("whole", model, task.cfg, train, state.history, state=state)
    folder = runs.run_folder(info.name)
    names = {p.name for p in files(folder)}
    assert {"meta.json", "model.safetensors", "metrics.csv", "resume.safetensors", "resume.json",
            "snapshots.safetensors"} <= names, names   # the run writes every kind of file it has
    assert files(folder) <= renamed, sorted(p.name for p in files(folder) - renamed)
    runs.claim_run(info.name, "someone")   # bookkeeping later replaces meta.json whole too
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]   # no temp file left behind


def test_an_experiments_csv_and_a_lesson_file_are_renamed_into_place(renamed, tmp_path):
    shipped = next((ROOT / "pretrained" / "experiments" / "heads").glob("*/result.json")).parent
    result = load_result(shipped)
    out = tmp_path / "experiment"
    written = save_csv(result, out)
    assert set(written) == files(out) and files(out) <= renamed
    save_lesson(lesson_toml(LESSONS["ch2"], "ch2-copy").encode(), "owner-id", "ch2-copy.toml")
    assert files(lessons_dir()) and files(lessons_dir()) <= renamed


def test_an_interrupted_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "meta.json"
    atomic.write_text(target, "old")

    def crash(path):
        assert path.read_text() == "new"   # written in full beside the target; now the machine "dies"
        raise OSError("power cut")

    monkeypatch.setattr(atomic, "sync", crash)
    with pytest.raises(OSError, match="power cut"):
        atomic.write_text(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["meta.json"]


def test_two_writers_of_one_file_never_mix_and_a_reader_sees_one_whole(tmp_path):
    """Two servers saving the same file at once: each write has its own temp name, so the file is always
    one writer's whole text."""
    target, texts = tmp_path / "shared.json", ["a" * 50_000, "b" * 70_000]
    atomic.write_text(target, texts[0])
    seen, done = set(), threading.Event()

    def write(text):
        for _ in range(40):
            atomic.write_text(target, text)

    def read():
        while not done.is_set():
            seen.add(target.read_text())

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(t,)) for t in texts]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    done.set()
    reader.join()
    assert seen <= set(texts) and target.read_text() in texts
    assert [p.name for p in tmp_path.iterdir()] == ["shared.json"]
