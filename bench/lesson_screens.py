"""Every lesson step on a 1280x720 projector and a 390x844 phone: where the question's widgets are drawn
(top and bottom in px from the page's top) and screenshots to look at, in bench/results/lesson_screens/.

    python bench/lesson_screens.py [--url http://127.0.0.1:PORT] [--lessons ch2,lesson46] [--modes alone,room]

`alone`: one tab in presenter view (`&present=1`) locks and reveals every question. `room`: a teacher tab in
presenter view opens a room (`&teach=1`) with Show predictions on, a phone student follows, locks, and the
teacher reveals. Without --url the script starts its own server (the browser tests' harness).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright  # noqa: E402

from explorer.lessons import LESSONS  # noqa: E402
from tests.browser.conftest import CHROMIUM_ARGS  # noqa: E402
from tests.browser.helpers import streamlit_server, wait_rendered  # noqa: E402
from tests.browser.lesson_screens import PHONE, PROJECTOR, boxes, click, pick_first, says_step, scrolled, step_shown  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "lesson_screens"


KEY = "PageDown"   # what a presenter's clicker sends (--key)


def _next(page) -> None:
    page.locator("[data-testid=stMain] h1").first.click()   # focus on the page
    page.keyboard.press(KEY)


def _shot(page, name: str) -> None:
    page.screenshot(path=str(OUT / f"{name}.png"))


def _tall_shot(page, name: str) -> None:
    """A phone's whole step: the viewport as tall as the page (Streamlit scrolls inside its main element)."""
    size = page.viewport_size
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": min(max(height, size["height"]), 6000)})
    page.wait_for_timeout(700)
    _shot(page, name)
    page.set_viewport_size(size)


def _reveal(page, name: str) -> dict:
    """Reveal, wait for the answer, and return where everything is then."""
    click(page, "lesson_reveal")
    page.locator(".st-key-lesson_result").wait_for(timeout=120_000)
    wait_rendered(page)
    _shot(page, name)
    return boxes(page)


def alone(browser, url: str, lesson_id: str, rows: list) -> None:
    lesson = LESSONS[lesson_id]
    n = len(lesson.steps)
    page = browser.new_page(viewport=PROJECTOR)
    phone = browser.new_page(viewport=PHONE)
    try:
        page.goto(f"{url}/lessons?lesson={lesson_id}&step=1&present=1")
        for k in range(1, n + 1):
            step_shown(page, lesson.steps[k - 1].title)
            phone.goto(f"{url}/lessons?lesson={lesson_id}&step={k}")
            step_shown(phone, lesson.steps[k - 1].title)
            _tall_shot(phone, f"{lesson_id}-{k:02d}-phone")
            row = {"mode": "alone", "lesson": lesson_id, "step": k, "scroll": scrolled(page), "before": boxes(page)}
            _shot(page, f"{lesson_id}-{k:02d}-1280")
            if lesson.steps[k - 1].question is not None:
                pick_first(page)
                click(page, "lesson_lock")
                row["locked"] = boxes(page)
                _shot(page, f"{lesson_id}-{k:02d}-1280-locked")
                row["revealed"] = _reveal(page, f"{lesson_id}-{k:02d}-1280-revealed")
            rows.append(row)
            print(json.dumps(row), flush=True)
            if k < n:
                _next(page)
    finally:
        page.close()
        phone.close()


def room(browser, url: str, lesson_id: str, rows: list) -> None:
    lesson = LESSONS[lesson_id]
    n = len(lesson.steps)
    teacher = browser.new_context(viewport=PROJECTOR).new_page()
    student = browser.new_context(viewport=PHONE, has_touch=True).new_page()
    try:
        teacher.goto(f"{url}/lessons?lesson={lesson_id}&step=1&present=1&teach=1")
        teacher.locator(".st-key-room_code").wait_for(timeout=120_000)
        wait_rendered(teacher)
        code = teacher.locator(".st-key-room_code").inner_text().split()[-1]
        teacher.locator(".st-key-room_distribution label").click()
        wait_rendered(teacher)
        student.goto(f"{url}/lessons?room={code}")
        for k in range(1, n + 1):
            step_shown(teacher, lesson.steps[k - 1].title)
            step_shown(student, lesson.steps[k - 1].title)
            row = {"mode": "room", "lesson": lesson_id, "step": k, "scroll": scrolled(teacher),
                   "before": boxes(teacher), "student": boxes(student),
                   "student_says_step": says_step(student, k, n)}
            _shot(teacher, f"room-{lesson_id}-{k:02d}-1280")
            _shot(student, f"room-{lesson_id}-{k:02d}-phone")
            if lesson.steps[k - 1].question is not None:
                pick_first(student)
                click(student, "lesson_lock")
                teacher.locator('[class*="st-key-room_dist_"] .main-svg').first.wait_for(timeout=30_000)
                row["locked"] = boxes(teacher)
                _shot(teacher, f"room-{lesson_id}-{k:02d}-1280-locked")
                row["revealed"] = _reveal(teacher, f"room-{lesson_id}-{k:02d}-1280-revealed")
                student.locator(".st-key-lesson_result").wait_for(timeout=30_000)
                wait_rendered(student)
                _tall_shot(student, f"room-{lesson_id}-{k:02d}-phone-revealed")
            rows.append(row)
            print(json.dumps(row), flush=True)
            if k < n:
                _next(teacher)
    finally:
        teacher.context.close()
        student.context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument("--lessons", default=",".join(LESSONS))
    parser.add_argument("--modes", default="alone,room")
    parser.add_argument("--key", default=KEY, help="the key that moves to the next step")
    parser.add_argument("--out", default=str(OUT), help="the folder for the screenshots and boxes.json")
    args = parser.parse_args()
    globals().update(KEY=args.key, OUT=Path(args.out))
    rows: list = []
    OUT.mkdir(parents=True, exist_ok=True)
    serving = nullcontext(args.url) if args.url else streamlit_server(Path(tempfile.mkdtemp()))
    with serving as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            for mode in args.modes.split(","):
                for lesson_id in args.lessons.split(","):
                    {"alone": alone, "room": room}[mode](browser, url, lesson_id, rows)
        finally:
            browser.close()
    (OUT / "boxes.json").write_text(json.dumps(rows, indent=1))
    print(f"\n{'mode':6} {'step':12} {'scroll':>6} {'choice':>11} {'lock':>11} {'reveal (locked)':>16} "
          f"{'class chart':>12} {'result top':>10}")
    for r in rows:
        before, locked, done = r["before"], r.get("locked") or {}, r.get("revealed") or {}
        lock = before.get("lesson_lock") or (r.get("student") or {}).get("lesson_lock")
        print(f"{r['mode']:6} {r['lesson'] + ' ' + str(r['step']):12} {r['scroll']:6.0f} "
              f"{str(before.get('lesson_choice')):>11} {str(lock):>11} {str(locked.get('lesson_reveal')):>16} "
              f"{str(locked.get('room_dist')):>12} {str((done.get('lesson_result') or [None])[0]):>10}")


if __name__ == "__main__":
    main()
