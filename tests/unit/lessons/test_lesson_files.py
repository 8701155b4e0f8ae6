"""Lessons written as TOML files: the issue's example opens by its id and reveals the teacher's answer,
every error is one line `FILE:LINE: ...` at the right line, shipped lessons export and load back the same,
uploads keep their owner, a broken file is skipped, and a file's text fetches and follows nothing."""

import os
from pathlib import Path

import pytest

from explorer.lessons import LESSONS, all_lessons, find_lesson, folder
from explorer.lessons.files import MAX_BYTES, LessonFileError, parse_lesson
from explorer.lessons.named_views import PAGE_VIEWS, VIEWS
from explorer.lessons.shipped_parts import MEASURES, STEP_VIEWS, part_name
from explorer.lessons.writer import lesson_toml
from explorer.quoting import md_prose

EXAMPLE = Path(__file__).resolve().parent / "files" / "pe-basics.toml"
HEAD = 'id = "mine"\ntitle = "Mine"\n'


@pytest.fixture(autouse=True)
def lessons_dir(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "lessons"
    monkeypatch.setenv(folder.ENV, str(path))
    return path


def test_the_example_checks_opens_by_its_id_and_reveals_the_teachers_answer(lessons_dir):
    lesson = parse_lesson(EXAMPLE.read_bytes(), "pe-basics.toml")
    assert (len(lesson.steps), sum(s.question is not None for s in lesson.steps)) == (2, 1)
    lessons_dir.mkdir()
    (lessons_dir / "pe-basics.toml").write_bytes(EXAMPLE.read_bytes())
    found = find_lesson("pe-basics")
    assert found is not None and list(all_lessons())[:len(LESSONS)] == list(LESSONS)
    view = found.steps[0].view({})
    assert view.figure is not None and "d_model 64" in view.figure.layout.title.text
    assert found.steps[0].try_it({}) == ("positional", {"pe_type": "sinusoidal", "pe_d_model": "64",
                                                        "pe_positions": "100", "pe_base": "10000", "pe_heads": "8"})
    q = found.steps[1].question
    reveal = q.reveal(None)
    assert q.experiment is None and reveal.correct == (0,) and "the low indices" in reveal.answer
    assert q.right(0, reveal) and not q.right(1, reveal)


def test_a_number_question_with_the_teachers_answer():
    text = HEAD + ('[[steps]]\ntitle = "s"\n[steps.question]\nprompt = "How many?"\nnumber = [0, 100, 1]\n'
                   'answer = 42\nunit = "%"\ntolerance = 0.05\n')
    q = parse_lesson(text).steps[0].question
    assert q.number == (0.0, 100.0, 1.0) and q.reveal(None).value == 42 and q.close_enough(43, 42)


def test_a_measured_question_reuses_a_shipped_reveal_with_its_own_words():
    name = part_name(LESSONS["ch2"], LESSONS["ch2"].steps[1])
    text = HEAD + (f'[[steps]]\ntitle = "s"\nview = "positional"\n[steps.question]\nprompt = "Where?"\n'
                   f'choices = ["a", "b", "c"]\nmeasure = "{name}"\n')
    q = parse_lesson(text).steps[0].question
    assert q.choices == ("a", "b", "c") and q.reveal is LESSONS["ch2"].steps[1].question.reveal


def _line(text: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if "#!" in line)


STEP = '[[steps]]\ntitle = "s"\n'
ERRORS = {   # what is wrong -> a file whose `#!` line is where the message must point
    "TOML syntax": HEAD + STEP + 'text = "unterminated #!\n',
    "unknown top-level key": HEAD + 'colour = "red" #!\n' + STEP,
    "unknown step key": HEAD + STEP + STEP + 'picture = "x" #!\n',
    "unknown question key": HEAD + STEP + '[steps.question]\nprompt = "p"\nchoices = ["a", "b"]\nanswer = 0\n'
                                          'hint = "h" #!\n',
    "unknown parameter": HEAD + STEP + 'view = "positional"\n[steps.params]\nd_model = 64\ncolour = 1 #!\n',
    "parameter out of range": HEAD + STEP + STEP + 'view = "positional"\n[steps.params]\nd_model = 9999 #!\n',
    "unknown view": HEAD + STEP + 'view = "nowhere" #!\n',
    "missing id": 'title = "t" #!\n' + STEP,
    "missing title": 'id = "x" #!\n' + STEP,
    "missing steps": HEAD.replace('"mine"', '"mine" #!'),
    "a shipped id": 'id = "ch2" #!\ntitle = "t"\n' + STEP,
    "a bad id": 'id = "Not A Slug" #!\ntitle = "t"\n' + STEP,
    "answer out of range": HEAD + STEP + '[steps.question]\nprompt = "p"\nchoices = ["a", "b"]\nanswer = 2 #!\n',
    "number without a range": HEAD + STEP + '[steps.question] #!\nprompt = "p"\nanswer = 3\n',
    "neither answer nor measure": HEAD + STEP + STEP + '[steps.question] #!\nprompt = "p"\nchoices = ["a", "b"]\n',
    "both answer and measure": HEAD + STEP + '[steps.question]\nprompt = "p"\nchoices = ["a", "b"]\nanswer = 0\n'
                                            'measure = "x" #!\n',
    "six choices": HEAD + STEP + '[steps.question]\nprompt = "p"\nchoices = ["a", "b", "c", "d", "e", "f"] #!\n'
                                 'answer = 0\n',
    "a measure's choices miscounted": HEAD + STEP + '[steps.question]\nprompt = "p"\nchoices = ["a", "b"] #!\n'
                                      f'measure = "{next(n for n, m in MEASURES.items() if len(m.choices) == 3)}"\n',
    "an unknown measure": HEAD + STEP + '[steps.question]\nprompt = "p"\nmeasure = "ch2/nothing" #!\n',
}


@pytest.mark.parametrize("kind", ERRORS)
def test_every_error_is_one_line_at_its_line(kind):
    text = ERRORS[kind]
    with pytest.raises(LessonFileError) as e:
        parse_lesson(text, "f.toml")
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"f.toml:{_line(text)}: "), message
    assert "(" in message   # what is valid


def test_a_file_over_the_size_cap_is_refused_unread():
    with pytest.raises(LessonFileError, match=r"^big.toml:1: .*at most 65,536"):
        parse_lesson(b"#" * (MAX_BYTES + 1), "big.toml")


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_a_shipped_lesson_exports_and_loads_back_the_same(lesson_id):
    shipped = LESSONS[lesson_id]
    back = parse_lesson(lesson_toml(shipped, f"{lesson_id}-copy"), "export.toml")
    assert len(back.steps) == len(shipped.steps)
    for a, b in zip(shipped.steps, back.steps):
        assert (a.title, a.text, a.controls) == (b.title, b.text, b.controls)
        assert a.view is b.view and a.try_it is b.try_it
        assert (a.question is None) == (b.question is None)
        if a.question is not None:
            qa, qb = a.question, b.question
            assert qa.reveal is qb.reveal
            assert (qa.prompt, qa.choices, qa.number, qa.unit, qa.experiment, qa.params) == \
                   (qb.prompt, qb.choices, qb.number, qb.unit, qb.experiment, qb.params)


def test_named_parts_are_unique_and_stable():
    names = [part_name(lesson, s) for lesson in LESSONS.values() for s in lesson.steps]
    assert len(names) == len(set(names)) == len(STEP_VIEWS)
    assert set(MEASURES) <= set(STEP_VIEWS) and not set(PAGE_VIEWS) & set(STEP_VIEWS)
    assert "ch2/pre-ln-and-post-ln" in MEASURES   # a file that names it keeps working: titles are links
    assert set(PAGE_VIEWS) >= {"architecture", "positional", "attention", "outputs", "gradients", "inside"}


def test_every_numeric_parameter_has_a_range_and_its_default_is_valid():
    for view in VIEWS.values():
        for p in view.params:
            assert p.options or (p.low is not None and p.high is not None), (view.name, p.name)
            assert p.check(p.default) == p.default


def test_a_page_views_parameters_accept_the_pages_own_link_keys():
    assert VIEWS["positional"].resolve({"pe_d_model": 32})["d_model"] == 32
    with pytest.raises(ValueError, match="RoPE"):
        VIEWS["positional"].resolve({"encoding": "rope", "d_model": 33})
    with pytest.raises(ValueError, match="divisible"):
        VIEWS["architecture"].resolve({"d_model": 100, "n_heads": 8})


def test_an_upload_keeps_its_owner_and_another_owner_is_refused(lessons_dir):
    folder.save_lesson(EXAMPLE.read_bytes(), "alice")
    assert folder.owns("pe-basics", "alice") and "alice" not in (lessons_dir / "pe-basics.owner").read_text()
    with pytest.raises(ValueError, match="^lesson pe-basics belongs to someone else: pick another id$"):
        folder.save_lesson(EXAMPLE.read_bytes(), "bob")
    changed = EXAMPLE.read_text().replace("Positions in a Transformer", "Positions, again")
    folder.save_lesson(changed.encode(), "alice")   # the owner replaces their own
    assert find_lesson("pe-basics").title == "Positions, again"
    with pytest.raises(LessonFileError):
        folder.save_lesson(changed.replace("answer = 0", "answer = 9").encode(), "alice")
    assert find_lesson("pe-basics").title == "Positions, again"   # a refused upload keeps the previous version
    assert not [p for p in lessons_dir.iterdir() if p.name.endswith(".tmp")]


def test_a_broken_file_is_skipped_and_its_error_kept(lessons_dir):
    lessons_dir.mkdir()
    (lessons_dir / "good.toml").write_bytes(EXAMPLE.read_bytes())
    (lessons_dir / "broken.toml").write_text(HEAD + STEP + 'view = "nowhere"\n')
    assert "pe-basics" in all_lessons() and "mine" not in all_lessons()
    assert folder.file_problems()["broken.toml"].startswith("broken.toml:5: unknown view 'nowhere'")
    (lessons_dir / "broken.toml").write_text(HEAD + STEP)   # fixed: read again on its new size and time
    os.utime(lessons_dir / "broken.toml", ns=(1, 1))
    assert "mine" in all_lessons() and not folder.file_problems()


def test_images_links_and_html_in_a_files_text_are_made_inert():
    text = HEAD + ('[[steps]]\ntitle = "s"\ntext = "See ![a cat](https://evil.example/c.png) and [this](https://x.org) '
                   'or <https://y.org>; <img src=x onerror=alert(1)>"\n')
    shown = parse_lesson(text).steps[0].text
    assert "![" not in shown and "](" not in shown and "\\<https" in shown   # an autolink escaped
    assert "a cat" in shown and "this (https:\u200b//x.org)" in shown        # no bare URL autolinks either
    assert md_prose("*kept* $$x^2$$ `code`") == "*kept* $$x^2$$ `code`"   # the rest of markdown stays
