"""The Train page's own data under AppTest: an uploaded TSV or a pasted text is checked as it arrives,
a bad one is refused with its line and Train stays off, a good one trains and its run reopens with it."""

from explorer.store import runs
from tests.app.helpers import assert_ok
from tests.app.training_helpers import click, job_of, open_train, poll_until
from ui import models, own_data

PAIRS = "".join(f"{' '.join(w)}\t{' '.join(reversed(w))}\n"
                for w in (("a", "b", "c"), ("b", "c"), ("c", "a"), ("a", "a", "b"), ("b", "b"), ("c", "c", "c"),
                          ("a", "c"), ("b", "a", "c"), ("c", "b"), ("a", "b"), ("c", "a", "b"), ("b", "c", "a")))


def upload(at, data: bytes, name: str = "mine.tsv"):
    at.segmented_control(key=own_data.OWN_MODE).set_value(own_data.PAIRS).run()
    at.file_uploader(key=own_data.OWN_FILE).set_value((name, data, "text/tab-separated-values")).run()
    return at


def test_an_uploaded_tsv_trains_and_its_run_carries_the_data(jobs):
    at = upload(open_train(20), PAIRS.encode())
    assert any("12 pairs, 3 distinct tokens" in s.value for s in at.success), [s.value for s in at.success]
    assert at.button(key="train_recipe").disabled   # recipes are for the presets
    job = job_of(click(at, "train_start"))
    assert job.task.name == "pairs" and job.task.cfg.text == PAIRS
    poll_until(at, lambda: job.ended)
    assert job.status == "finished" and job.name.startswith("pairs-")
    model, task, *_ = runs.open_for_resume(job.name)   # reopened from the saved run alone
    assert task.cfg == job.task.cfg and task.vocab == job.task.vocab
    click(at, "train_use")   # every page opens on the run, its task rebuilt from the saved data
    for page in ("pages/attention.py", "pages/outputs.py", "pages/runs.py"):
        at.switch_page(page).run()
        assert_ok(at)
    assert at.session_state[models.SELECTED].task.name == "pairs"
    cells = [str(v) for df in at.dataframe for v in df.value.to_numpy().ravel()]
    assert any(f"({len(PAIRS)} characters)" in c for c in cells) and not any(PAIRS in c for c in cells)


def test_a_bad_file_is_refused_with_its_line_and_train_stays_off():
    bad = PAIRS.replace("c a\ta c", "c a a c", 1).encode()   # line 3 loses its tab
    at = upload(open_train(20), bad)
    assert any("line 3: no tab" in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="train_start").disabled
    at = upload(open_train(20), "é\tx\n".encode("latin-1") * 12)
    assert any("line 1: not UTF-8" in e.value for e in at.error)
    at.segmented_control(key=own_data.OWN_MODE).set_value(None).run()   # back to the preset
    assert not at.button(key="train_start").disabled and not at.error


def test_pasted_text_is_checked_and_becomes_a_character_task():
    at = open_train(20)
    at.segmented_control(key=own_data.OWN_MODE).set_value(own_data.TEXT).run()
    assert at.button(key="train_start").disabled and any("Paste a text first" in i.value for i in at.info)
    at.text_area(key=own_data.OWN_TEXT).set_value("too short").run()
    assert any("the text has 9 characters; the character LM needs 500" in e.value for e in at.error)
    at.text_area(key=own_data.OWN_TEXT).set_value("the quick brown fox jumps over a lazy dog. " * 20).run()
    assert any("860 characters, 28 distinct" in s.value for s in at.success), [s.value for s in at.success]
    assert not at.button(key="train_start").disabled
    assert any("Decoder-only LM · vocabulary of 31 tokens" in c.value for c in at.caption)
