"""A class in one room under load: 1 teacher and N students on one server while 2 training jobs run.

    python bench/room_load.py [--students 30] [--browsers 2] [--rounds 3] [--no-training] [--train-steps 12000]

One `streamlit run app.py` on a loopback port (runs in a temp dir). The teacher, `--browsers` of the
students and two classmates training (`train?train_steps=...`, the two slots) are headless Chromium
contexts; the other students are `bench/room_client.py` tabs, which cost the server what a tab costs
and the bench almost nothing (31 renderers on these 2 cores starved the server). A seat is an owner cookie.

Each round: the teacher opens a fresh room on module6 step 1 (`teach=1`), every student opens
`lessons?room=CODE` and is rendered; the teacher clicks Next (step 2, a 3-choice question computed without
experiments); then every student locks a choice, the teacher's count reaches "N of N predicted", and the
teacher clicks Reveal. Measured per student, on one clock (`Date.now()`: everything is on this machine):
- follow: from the teacher's click on Next to the new step's title on the student's page (a browser:
  painted, two animation frames after the DOM change; a protocol student: its delta received);
- reveal: from the teacher's click on Reveal to the answer (`lesson_result`) there, the same way.
A fresh room each round because a reveal is final: a room shows a revealed step revealed for good.

Also printed: the teacher's own page, the server's peak RSS and threads (with children, /proc, 4 Hz),
Chromium's PSS, each window's CPU seconds (server, browser), the load, page errors, the wall time.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from bench.room_client import Student  # noqa: E402
from tests.browser.conftest import CHROMIUM_ARGS  # noqa: E402
from tests.browser.helpers import TIMEOUT_MS, Peak, process_family, server_pid, streamlit_server  # noqa: E402  # noqa: E402
from tests.browser.helpers import wait_rendered as settle  # noqa: E402

LESSON, FIRST, QUESTION = "module6", 1, 2     # step 2 of module6: a 3-choice question, no experiment
VIEWPORT = {"width": 1280, "height": 800}
WAIT_S = 90.0                                 # a student who has not followed by then counts as missed
# Every page records, on the shared clock, when each main title first showed and when the revealed answer
# did: the DOM change, then two frames later (painted). Installed before the page's own scripts run.
RECORDER = """(() => {
  window.__titles = {}; window.__result = null;
  const seen = (set) => { const t = {dom: Date.now(), painted: null}; set(t);
    requestAnimationFrame(() => requestAnimationFrame(() => { t.painted = Date.now(); })); };
  const look = () => {
    const h = document.querySelector('[data-testid=stMain] h1');
    if (h && !(h.textContent in window.__titles)) seen(t => { window.__titles[h.textContent] = t; });
    if (window.__result === null && document.querySelector('.st-key-lesson_result'))
      seen(t => { window.__result = t; });
  };
  document.addEventListener('DOMContentLoaded', () => new MutationObserver(look).observe(
    document.documentElement, {childList: true, subtree: true, characterData: true}));
})();"""
CLICKED = "b => b.addEventListener('click', () => { window.__clicked = Date.now(); }, {capture: true, once: true})"


# ------------------------------------------------------------------------------------------ processes
def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of these processes so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])   # utime, stime
    return total / ticks


def pss_mb(pids: list[int]) -> int:
    """Proportional set size: Chromium's processes share much of their memory, which RSS counts in each."""
    kb = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    kb += int(line.split()[1])
        except OSError:
            continue
    return kb // 1024


class Clocks:
    """CPU seconds of the server's family and of everything else this script started (Chromium)."""

    def __init__(self, server: int) -> None:
        self.server = server

    def split(self) -> tuple[list[int], list[int]]:
        server = set(process_family(self.server))
        return sorted(server), [p for p in process_family(os.getpid()) if p not in server and p != os.getpid()]

    def now(self) -> tuple[float, float]:
        server, browser = self.split()
        return cpu_s(server), cpu_s(browser)


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


# ------------------------------------------------------------------------------------------ pages
class People:
    def __init__(self, browser) -> None:
        self.browser, self.errors = browser, []

    def page(self, name: str):
        context = self.browser.new_context(viewport=VIEWPORT)
        context.add_init_script(RECORDER)
        page = context.new_page()
        page.on("pageerror", lambda err: self.errors.append(f"{name}: uncaught: {str(err)[:300]}"))
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(
            f"{name}: console: {msg.text[:300]} ({msg.location.get('url', '')[:120]})"))
        page.on("crash", lambda _page: self.errors.append(f"{name}: renderer crashed"))
        return page


def exceptions(pages) -> int:
    return sum(p.locator("[data-testid=stException]").count() for p in pages)


def open_room(teacher, url: str) -> str:
    teacher.goto(f"{url}/lessons?lesson={LESSON}&step={FIRST}&teach=1")
    teacher.wait_for_selector(".st-key-room_code", timeout=TIMEOUT_MS)
    settle(teacher)
    return teacher.locator(".st-key-room_code").inner_text().split("Room")[-1].strip()


def seat_students(pages, url: str, code: str, n_clients: int, batch: int = 6) -> list[Student]:
    """Students arrive a few at a time: 30 first loads at once on 2 cores time a navigation out."""
    for start in range(0, len(pages), batch):
        for page in pages[start:start + batch]:
            page.goto(f"{url}/lessons?room={code}", wait_until="commit", timeout=TIMEOUT_MS)
        for page in pages[start:start + batch]:
            try:
                settle(page)
            except PlaywrightTimeout:   # an overloaded machine: give it once more, and say so
                print(f"  a student's page not rendered within {TIMEOUT_MS / 1000:.0f} s; waiting again", flush=True)
                settle(page)
    clients = [Student(url, f"{code}-bench-student-{i:04d}", f"room={code}") for i in range(n_clients)]
    for start in range(0, n_clients, batch):
        for client in clients[start:start + batch]:
            client.start()
        for client in clients[start:start + batch]:
            if not client.wait_rendered(TIMEOUT_MS / 1000):
                print(f"  a protocol student not rendered within {TIMEOUT_MS / 1000:.0f} s", flush=True)
    return clients


def wait_count(teacher, text: str) -> float | None:
    """Seconds until the teacher's count says `text`; None (and what it says) after WAIT_S."""
    t0 = time.perf_counter()
    try:
        teacher.wait_for_function(f"() => document.querySelector('.st-key-room_count')?.textContent"
                                  f".includes({text!r})", timeout=WAIT_S * 1000)
    except PlaywrightTimeout:
        shown = teacher.locator(".st-key-room_count").all_inner_texts()
        print(f"  the count never said {text!r} within {WAIT_S:.0f} s: it says {shown}", flush=True)
        return None
    return time.perf_counter() - t0


def click(page, selector: str) -> int:
    """Click the button and return the click's Date.now() as the page saw it."""
    button = page.locator(f"{selector}:visible")   # :visible skips Streamlit's hidden twin
    button.evaluate(CLICKED)
    button.click()
    return page.evaluate("() => window.__clicked")


def collect(pages, read: str, clients: list[Student] = (), got=None) -> list[float | None]:
    """Each page's `read` (an expression giving {dom, painted} or null) and each client's `got(client)`,
    waited for up to WAIT_S in all; pages first, then clients."""
    deadline, out = time.monotonic() + WAIT_S, [None] * (len(pages) + len(clients))
    while time.monotonic() < deadline and any(v is None for v in out):
        for i, page in enumerate(pages):
            if out[i] is None:
                out[i] = page.evaluate(f"() => {{ const t = {read}; return t && t.painted; }}")
        for i, client in enumerate(clients, len(pages)):
            out[i] = got(client)
        time.sleep(0.2)
    for i, page in enumerate(pages):
        if out[i] is None:   # say what the page shows instead
            state = page.evaluate("() => [document.querySelector('[data-testid=stApp]')?.getAttribute("
                                  "'data-test-script-state'), document.querySelector('[data-testid=stMain] h1')"
                                  "?.textContent, Object.keys(window.__titles), window.__result]")
            main = page.locator("[data-testid=stMain]").inner_text()[:400].replace("\n", " | ")
            print(f"  MISSED page {i}: script {state[0]}, title {state[1]!r}, titles seen {state[2]}, "
                  f"result {state[3]}; it shows: {main}", flush=True)
    for i, client in enumerate(clients, len(pages)):
        if out[i] is None:
            print(f"  MISSED protocol student {i}: titles {list(client.titles)}, result {client.result}, "
                  f"runs {client.runs}, errors {client.errors[:2]}", flush=True)
    return out


def lock_clients(clients: list[Student]) -> None:
    """Each protocol student picks a choice, waits for that rerun, then locks it, as a hand on a phone."""
    for i, client in enumerate(clients):
        runs = client.full_runs
        client.pick("lesson_choice", i % 3)
        deadline = time.monotonic() + WAIT_S
        while client.full_runs == runs and time.monotonic() < deadline:
            time.sleep(0.05)
        client.click("lesson_lock")


def one_round(teacher, pages, url: str, clocks: Clocks, title: str, n_clients: int) -> dict:
    code = open_room(teacher, url)
    clients = seat_students(pages, url, code, n_clients)
    n = len(pages) + n_clients
    wait_count(teacher, f"{n} student{'s' if n != 1 else ''} in the room")
    teacher.wait_for_timeout(2000)   # at rest, as a class waiting for the teacher
    before = clocks.now()
    clicked = click(teacher, ".st-key-lesson_next button")
    painted = collect(pages, f"window.__titles[{title!r}]", clients, lambda c: c.titles.get(title))
    mine = collect([teacher], f"window.__titles[{title!r}]")[0]
    after = clocks.now()
    follow = [None if t is None else (t - clicked) / 1000 for t in painted]
    follow_cpu = (after[0] - before[0], after[1] - before[1])
    for page in pages:
        settle(page)
    time.sleep(1.0)   # the protocol students' follow runs end
    lost = 0
    for i, page in enumerate(pages):   # the class picks its answers, then locks them
        page.locator(".st-key-lesson_choice [role=radiogroup] label").nth(i % 3).click()
    for i, page in enumerate(pages):
        lock = page.locator(".st-key-lesson_lock button:visible")
        for _ in range(5):   # a pick the page lost (Lock still disabled 10 s on) is picked again, and counted
            try:
                lock.click(timeout=10_000)
                break
            except PlaywrightTimeout:
                lost += 1
                checked = page.locator(".st-key-lesson_choice input:checked").count()
                print(f"  student {i}: Lock still disabled 10 s after the pick ({checked} choice checked); "
                      "picking again", flush=True)
                page.locator(".st-key-lesson_choice [role=radiogroup] label").nth(i % 3).click()
    lock_clients(clients)
    counted = wait_count(teacher, f"{n} of {n} predicted")
    settle(teacher)
    teacher.wait_for_timeout(1500)
    before = clocks.now()
    clicked_reveal = click(teacher, ".st-key-lesson_reveal button")
    shown = collect(pages, "window.__result", clients, lambda c: c.result)
    mine_reveal = collect([teacher], "window.__result")[0]
    after = clocks.now()
    errors = [f"protocol student: {e}" for c in clients for e in c.errors]
    for client in clients:
        client.close()
    return dict(code=code, follow=follow, teacher_follow=None if mine is None else (mine - clicked) / 1000,
                reveal=[None if t is None else (t - clicked_reveal) / 1000 for t in shown],
                teacher_reveal=None if mine_reveal is None else (mine_reveal - clicked_reveal) / 1000,
                follow_cpu=follow_cpu, reveal_cpu=(after[0] - before[0], after[1] - before[1]),
                counted=counted, lost=lost, load=load(), errors=errors, browsers=len(pages))


def train(page, url: str, steps: int, seed: int) -> int:
    """Start a run of `steps` on this Train page, or of as many as the page's 10-minute limit allows
    (explorer/jobs/budget.py: its probe of the step time depends on the load); returns the steps started."""
    page.goto(f"{url}/train?train_steps={steps}&train_seed={seed}")
    settle(page)
    start = page.locator(".st-key-train_start button:visible")
    if start.is_disabled():
        says = page.locator("[data-testid=stMain]").inner_text()
        fits = re.search(r"reduce steps to ([\d,]+) or fewer", says)
        if fits is None:
            raise SystemExit(f"the Train page refuses {steps} steps: {says[-600:]}")
        return train(page, url, int(fits.group(1).replace(",", "")) * 9 // 10, seed)
    start.click()
    page.wait_for_selector("[data-testid=stMain] [data-testid=stProgress]", timeout=TIMEOUT_MS)
    return steps


class Trainers:
    """Two sessions training on the server; a run that ends is followed by another (before a round)."""

    def __init__(self, people: People, url: str, steps: int, n: int) -> None:
        self.url, self.steps, self.seed = url, steps, 0
        self.pages = [people.page(f"trainer{i}") for i in range(n)]
        self.started = [self._start(page) for page in self.pages]

    def _start(self, page) -> int:
        self.seed += 1
        return train(page, self.url, self.steps, self.seed)

    def alive(self) -> list[bool]:
        return [p.locator("[data-testid=stMain] [data-testid=stProgress]").count() > 0 for p in self.pages]

    def keep_going(self) -> None:
        for page, alive in zip(self.pages, self.alive()):
            if not alive:
                self.started.append(self._start(page))


# ------------------------------------------------------------------------------------------ report
def summary(values: list[float | None]) -> str:
    got = sorted(v for v in values if v is not None)
    missed = len(values) - len(got)
    if not got:
        return f"none arrived ({missed} missed)"
    p95 = got[min(len(got) - 1, max(0, round(0.95 * len(got) + 0.5) - 1))]   # nearest rank
    within = sum(v <= 3.0 for v in got)
    return (f"p50 {statistics.median(got):.2f} s, p95 {p95:.2f} s, max {got[-1]:.2f} s, min {got[0]:.2f} s "
            f"(n={len(got)}, {within} within 3 s" + (f", {missed} MISSED" if missed else "") + ")")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--browsers", type=int, default=2, help="how many of the students are Chromium pages")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-training", action="store_true", help="no training jobs on the server")
    ap.add_argument("--train-steps", type=int, default=12_000,
                    help="each training job's length (it must outlast the bench)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from explorer.lessons import LESSONS

    steps = LESSONS[LESSON].steps
    title = steps[QUESTION - 1].title
    tmp = Path(tempfile.mkdtemp(prefix="explorer-room-bench-"))
    started, rounds, alive = time.perf_counter(), [], []
    print(f"cores={os.cpu_count()} load at start {load()}; {args.students} students, {args.rounds} rounds, "
          f"training {'off' if args.no_training else 'on'}", flush=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        people = People(browser)
        try:
            with streamlit_server(tmp) as url:
                pid = server_pid(url)
                clocks = Clocks(pid)
                with Peak(pid) as peak:
                    teacher = people.page("teacher")
                    open_room(teacher, url)   # the first page of a fresh server imports torch
                    trainers = Trainers(people, url, args.train_steps, 0 if args.no_training else 2)
                    n_pages = min(args.browsers, args.students)
                    students = [people.page(f"student{i}") for i in range(n_pages)]
                    browser_peak = 0
                    for r in range(args.rounds):
                        trainers.keep_going()
                        rounds.append(one_round(teacher, students, url, clocks, title, args.students - n_pages))
                        browser_peak = max(browser_peak, pss_mb(clocks.split()[1]))
                        got = rounds[-1]
                        got["training"] = trainers.alive()
                        print(f"round {r + 1}: room {got['code']}; follow {summary(got['follow'])}; reveal "
                              f"{summary(got['reveal'])}; load {got['load']}; training {got['training']}", flush=True)
                    alive = trainers.alive()
                    thrown = exceptions([teacher, *students, *trainers.pages])
                    errors = [*people.errors, *(e for r in rounds for e in r["errors"])]   # pages lose it later
                    browser.close()
        finally:
            browser.close()
            shutil.rmtree(tmp, ignore_errors=True)
    wall = time.perf_counter() - started
    follow = [t for r in rounds for t in r["follow"]]
    reveal = [t for r in rounds for t in r["reveal"]]
    jobs = "none" if args.no_training else f"2, still training at the end: {alive}; runs (steps) {trainers.started}"
    print(f"\n{args.students} students ({n_pages} in Chromium, the first of each list below), {args.rounds} rounds, "
          f"training jobs: {jobs}")
    print(f"follow (teacher's Next -> new step's title painted on a student's page): {summary(follow)}")
    print(f"reveal (teacher's Reveal -> the answer painted on a student's page): {summary(reveal)}")
    for name in ("follow", "reveal"):
        print(f"  {name} by round: " + "; ".join(
            f"p50 {statistics.median(v):.2f} max {max(v):.2f}" if (v := [t for t in r[name] if t is not None])
            else "none" for r in rounds))
        print(f"  {name}, the teacher's own page: " + ", ".join(
            "-" if r[f"teacher_{name}"] is None else f"{r[f'teacher_{name}']:.2f} s" for r in rounds))
        print(f"  {name} window CPU s (server, browser): " + ", ".join(
            f"({s:.1f}, {b:.1f})" for s, b in (r[f"{name}_cpu"] for r in rounds)))
    counted = ", ".join("-" if r["counted"] is None else f"{r['counted']:.1f}" for r in rounds)
    print(f"teacher's count reached 'N of N predicted' {counted} s after the last lock was clicked; picks lost "
          f"(Lock still disabled 10 s after a click on a choice, picked again): {[r['lost'] for r in rounds]}")
    print(f"server (and children): peak RSS {peak.rss_mb} MB, peak threads {peak.threads}; "
          f"Chromium peak PSS {browser_peak} MB")
    print(f"load average (1/5/15 min) after each round: {', '.join(r['load'] for r in rounds)}; at the end {load()}")
    # Streamlit's frontend first probes /<page>/_stcore/health and host-config (a 404) before the root's.
    probes = [e for e in errors if "404" in e and "/_stcore/" in e]
    errors = [e for e in errors if e not in probes]
    print(f"page errors: {len(errors)} (uncaught {sum(': uncaught: ' in e for e in errors)}); Streamlit exceptions "
          f"shown: {thrown}; besides, {len(probes)} 404s of the frontend's /lessons/_stcore/ probes")
    for err in sorted(set(errors))[:10]:
        print(f"  {err}")
    print(f"wall time {wall:.0f} s")


if __name__ == "__main__":
    main()
