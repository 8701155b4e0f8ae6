"""Lessons in Chromium: a lesson walked with the → key from its link, one question locked and
revealed (nothing of the answer on the page before the lock), and a step's shot at 1280x720."""

import pytest

from explorer.lessons import LESSONS
from tests.browser.helpers import GROWN, MEASURE, PROJECTOR, SHOTS, TIMEOUT_MS, wait_rendered

pytestmark = pytest.mark.browser
STEP_LABEL = "[data-testid=stMain] .st-key-lesson_nav b"   # "Step X of N"


def wait_step(page, k: int, n: int) -> None:
    page.wait_for_function(f"""() => [...document.querySelectorAll('{STEP_LABEL}')]
        .some(b => b.innerText === 'Step {k} of {n}')""", timeout=TIMEOUT_MS)
    wait_rendered(page)


def test_a_lesson_walks_from_its_link_with_the_arrow_keys(server, chromium):
    """Alone, outside presenter view: → to the end, ← back one (every lesson is walked in a room, in
    presenter view, by test_browser_lesson_screens.py, with Page Down and → in turn)."""
    lesson_id = "ch2"
    lesson, errors = LESSONS[lesson_id], []
    n = len(lesson.steps)
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{server}/lessons?lesson={lesson_id}&step=1")
        wait_rendered(page)
        for k in range(1, n + 1):
            wait_step(page, k, n)
            assert page.locator("[data-testid=stMain] h1").first.inner_text() == lesson.steps[k - 1].title
            assert page.locator("[data-testid=stException]").count() == 0
            assert f"step={k}" in page.url
            if k < n:
                page.locator("[data-testid=stMain] h1").first.click()   # focus on the page, not a widget
                page.keyboard.press("ArrowRight")
        if n > 1:
            page.keyboard.press("ArrowLeft")
            wait_step(page, n - 1, n)
        assert not errors, errors
    finally:
        page.close()


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
