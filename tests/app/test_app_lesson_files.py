"""The Lessons page with a teacher's lesson files under AppTest: a file lesson's card beside the shipped
ones, opened and answered as a shipped one, and an upload kept, or refused with its one line."""

from pathlib import Path

from explorer.lessons import folder
from tests.app.helpers import assert_ok, open_lesson
from ui import owner

EXAMPLE = Path(__file__).resolve().parent.parent / "unit" / "lessons" / "files" / "pe-basics.toml"


def _lessons_dir(runs_dir) -> Path:
    path = runs_dir / "lessons"
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_a_lesson_file_has_a_card_and_opens_like_a_shipped_lesson(runs_dir):
    (_lessons_dir(runs_dir) / "pe-basics.toml").write_bytes(EXAMPLE.read_bytes())
    at = open_lesson({})
    assert "Positions in a Transformer" in [s.value for s in at.subheader]
    at.button(key="lesson_open_pe-basics").click().run()
    assert_ok(at)
    assert at.title[0].value == "The sinusoidal table"
    assert at.get("plotly_chart"), "the named view draws its figure"
    at.button(key="lesson_next").click().run()
    assert at.title[0].value == "Which dimensions turn fastest?"
    at.radio(key="lesson_choice").set_value(0).run()
    at.button(key="lesson_lock").click().run()
    at.button(key="lesson_reveal").click().run()
    assert_ok(at)
    shown = {m.label: m.value for m in at.metric}
    assert shown["The answer"] == "the low indices" and shown["You predicted"] == "the low indices"


def test_an_upload_is_kept_and_a_bad_one_says_its_line_and_keeps_the_previous(runs_dir):
    at = open_lesson({})
    at.file_uploader(key="lesson_upload").set_value(("pe.toml", EXAMPLE.read_bytes(), "application/toml")).run()
    assert_ok(at)
    assert any("pe-basics" in s.value for s in at.success)
    assert "pe-basics" in folder.file_lessons()
    bad = EXAMPLE.read_text().replace("answer = 0", "answer = 7").encode()
    at.file_uploader(key="lesson_upload").set_value(("pe.toml", bad, "application/toml")).run()
    assert any("pe.toml:18:" in e.value and "answer" in e.value for e in at.error)
    assert folder.file_lessons()["pe-basics"].steps[1].question.reveal(None).correct == (0,)


def test_an_upload_may_not_replace_another_owners_lesson(runs_dir):
    folder.save_lesson(EXAMPLE.read_bytes(), owner.id_of("someone-else-entirely-0000"))
    at = open_lesson({})
    at.file_uploader(key="lesson_upload").set_value(("mine.toml", EXAMPLE.read_bytes(), "application/toml")).run()
    assert any("lesson pe-basics belongs to someone else: pick another id" in e.value for e in at.error)


def test_only_its_uploader_deletes_a_lesson_and_the_upload_is_not_saved_again(runs_dir):
    at = open_lesson({})
    at.file_uploader(key="lesson_upload").set_value(("pe.toml", EXAMPLE.read_bytes(), "application/toml")).run()
    other = open_lesson({}, token="o" * 30)
    assert not any(b.key == "lesson_delete_pe-basics" for b in other.button)   # not theirs: no Delete
    at.button(key="lesson_delete_pe-basics").click().run()
    assert_ok(at)
    assert "pe-basics" not in folder.file_lessons() and any("Deleted" in s.value for s in at.success)
    at.run()
    assert "pe-basics" not in folder.file_lessons()   # the file still in the uploader is not kept again
