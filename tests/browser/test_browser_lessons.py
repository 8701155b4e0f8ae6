"""Lessons in Chromium: one question locked and revealed (nothing of the answer on the page before the
lock), and its shot at 1280x720. Walked in test_browser_accessibility.py, axe on each step on the way: a lesson
with the → key from its link, every step's number and title checked (plain walk), and a few steps fitting
the projector in large type (presenter walk, lesson_screens.PRESENTED)."""

import pytest

from explorer.lessons import LESSONS
from tests.browser.helpers import SHOTS, TIMEOUT_MS, wait_rendered

pytestmark = pytest.mark.browser


def test_a_question_shows_its_answer_only_after_the_lock(server, chromium):
    lesson_id, k = next((lesson.id, k) for lesson in LESSONS.values() for k, s in enumerate(lesson.steps, 1)
                        if s.question is not None and s.question.experiment is None and s.question.choices)
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(f"{server}/lessons?lesson={lesson_id}&step={k}")
        wait_rendered(page)
        result = page.locator(".st-key-lesson_result")
        assert result.count() == 0 and page.locator(".st-key-lesson_reveal button").is_disabled()
        page.locator(".st-key-lesson_choice [role=radiogroup] label").first.click()
        wait_rendered(page)
        page.locator(".st-key-lesson_lock button").click()
        wait_rendered(page)
        assert result.count() == 0   # locked, not yet revealed
        page.locator(".st-key-lesson_reveal button").click()
        result.wait_for(timeout=TIMEOUT_MS)
        wait_rendered(page)
        text = result.inner_text()
        assert "You predicted" in text and "Measured" in text
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"lesson-{lesson_id}-{k}-revealed-1280x720.png"))
    finally:
        page.close()
