"""`python -m explorer lessons check FILE` and `lessons export ID`: a lesson file checked as the app checks
an upload (one line and exit 2 when wrong), and every shipped lesson exported into a file that checks."""

from pathlib import Path

import pytest

from explorer.cli import main
from explorer.lessons import LESSONS
from tests.system.helpers import explorer

EXAMPLE = Path(__file__).resolve().parent.parent / "unit" / "lessons" / "files" / "pe-basics.toml"


def test_check_counts_the_steps_and_questions_of_a_good_file(tmp_path):
    out = explorer(["lessons", "check", str(EXAMPLE)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2 steps, 1 questions"


def test_check_says_a_bad_files_line_in_one_line_and_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("d_model = 64", "d_model = 4096"))
    out = explorer(["lessons", "check", str(bad)], tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"{bad}:10: d_model = 4096 is not valid")


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_every_shipped_lesson_exports_into_a_file_that_checks(lesson_id, tmp_path, capsys):
    target = tmp_path / f"{lesson_id}.toml"
    assert main(["lessons", "export", lesson_id, "--out", str(target)]) == 0
    capsys.readouterr()
    assert main(["lessons", "check", str(target)]) == 0
    steps = LESSONS[lesson_id].steps
    assert capsys.readouterr().out.strip() == \
           f"{len(steps)} steps, {sum(s.question is not None for s in steps)} questions"


def test_an_unknown_lesson_or_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["lessons", "export", "nope"]) == 2
    assert "no shipped lesson 'nope'; choose one of ch2, lesson46, module6" in capsys.readouterr().err
    assert main(["lessons", "check", str(tmp_path / "missing.toml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_lessons_without_an_action_still_lists_the_questions(capsys):
    assert main(["lessons", "--only", "module6"]) == 0
    assert "module6 step" in capsys.readouterr().out
