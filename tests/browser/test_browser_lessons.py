"""Lessons in Chromium: one question locked and revealed (nothing of the answer on the page before the
lock), and a step's shot at 1280x720. A lesson walked with the → key from its link, every step's number and
title checked, is test_browser_accessibility.py's plain walk, axe on each step on the way."""

import pytest

from explorer.lessons import LESSONS
from tests.browser.helpers import GROWN, MEASURE, PROJECTOR, SHOTS, TIMEOUT_MS, wait_rendered

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


# A few steps on the projector: a heatmap, a line chart, a diagram, a bar chart with a question.
PRESENTED = [("ch2", 2), ("ch2", 3), ("module6", 3), ("lesson46", 5)]


@pytest.mark.parametrize("lesson_id, k", PRESENTED, ids=[f"{a}-{b}" for a, b in PRESENTED])
def test_a_step_on_the_projector_fits_one_screen_in_large_type(server, chromium, lesson_id, k):
    page, errors = chromium.new_page(viewport=PROJECTOR), []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{server}/lessons?lesson={lesson_id}&step={k}&present=1")
        wait_rendered(page)
        page.wait_for_timeout(500)
        got = page.evaluate(MEASURE)
        assert got["body"] >= 20 and got["modebars"] == 0 and not got["sidebar"] and not got["cut"], got
        chart = page.locator("[data-testid=stPlotlyChart]").first.bounding_box()
        assert chart["y"] + chart["height"] <= PROJECTOR["height"] + 1, chart   # the whole figure, unscrolled
        if page.locator(".xtick text").count():   # a diagram has no ticks: its text is sized to its boxes
            assert got["ticks"] >= 14, got
        assert not page.evaluate(GROWN) and not errors, errors
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"presenter-lesson-{lesson_id}-{k}-1280x720.png"))
    finally:
        page.close()
