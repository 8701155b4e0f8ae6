"""A student's tab without a browser: Streamlit's own websocket protocol, spoken as the frontend speaks it.

A classroom's students each bring a device; on one 2-core bench machine 30 Chromium renderers would take
the cores from the server they are meant to load (bench/README.md, "A class in one room under load").
This client costs the server exactly what a tab costs (the same websocket, the same reruns: the first
load with the link's query string, a fragment's timer rerun every `auto_rerun` interval, a widget's
rerun with the widget states) and costs the bench machine almost nothing, because it draws nothing.

    s = Student(url, token, "room=CODE"); s.start(); s.wait_rendered()
    s.titles["The pre-norm block"]   # Date.now()-style ms when that st.title arrived
    s.pick("lesson_choice", 1); s.click("lesson_lock"); s.result   # ms the lesson_result block arrived
"""

from __future__ import annotations

import os
import threading
import time

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.sync.client import connect

DEBUG = os.environ.get("ROOM_CLIENT_DEBUG")   # =1: print every message a client receives
COOKIE = "explorer_owner"   # ui/owner.py: a student's seat is this browser's token


def now_ms() -> float:
    return time.time() * 1000   # the same clock as the teacher page's Date.now(): one machine


class Student(threading.Thread):
    def __init__(self, url: str, token: str, query: str, page: str = "lessons", cookies: str = "") -> None:
        super().__init__(daemon=True, name=f"student-{token[:6]}")
        self.url, self.token, self.query, self.page = url, token, query, page
        self.cookies = f"{COOKIE}={token}" + (f"; {cookies}" if cookies else "")   # e.g. nginx's route cookie
        self.titles: dict[str, float] = {}      # st.title text -> when it first arrived
        self.result: float | None = None        # when a lesson_result block first arrived
        self.errors: list[str] = []             # exceptions the server sent, and a lost connection
        self.runs = 0                           # script runs finished (full and fragment)
        self.full_runs = 0                      # ... of which full runs (a widget's rerun is one)
        self._full = False                      # the run under way is a full run
        self._ids: dict[str, str] = {}          # widget key -> the id the server gave it
        self._values: dict[str, str] = {}       # widget id -> the option a radio holds
        self._options: dict[str, list[str]] = {}   # radio key -> its options' labels
        self._timers: dict[str, list[float]] = {}   # fragment id -> [interval s, next due (monotonic)]
        self._hash = ""                         # the page's script hash, sent with every rerun
        self._send_lock = threading.Lock()
        self._rendered = threading.Event()
        self._closing = threading.Event()
        self._ws = None

    # ----------------------------------------------------------------------------- sending
    def _rerun(self, fragment: str = "", trigger: str | None = None, auto: bool = False) -> None:
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string, rs.page_name, rs.page_script_hash = self.query, self.page, self._hash
        rs.fragment_id, rs.is_auto_rerun = fragment, auto
        rs.context_info.url = f"{self.url}/{self.page}?{self.query}"
        rs.context_info.timezone = "UTC"
        for wid, option in self._values.items():
            rs.widget_states.widgets.append(WidgetState(id=wid, string_value=option))
        if trigger is not None:
            rs.widget_states.widgets.append(WidgetState(id=trigger, trigger_value=True))
        with self._send_lock:
            self._ws.send(msg.SerializeToString())

    def pick(self, key: str, index: int) -> None:
        """Choose a radio's option: the frontend reruns the script with the new value."""
        self._values[self._ids[key]] = self._options[key][index]   # a radio's state is its label
        self._rerun()

    def click(self, key: str) -> None:
        self._rerun(trigger=self._ids[key])

    # ----------------------------------------------------------------------------- receiving
    def _read(self, data: bytes) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(data)
        kind = msg.WhichOneof("type")
        if DEBUG:
            print(f"{self.name} {time.time() % 100:.2f} {kind} {str(msg)[:100]!r}", flush=True)
        if kind == "new_session":
            if msg.new_session.page_script_hash:
                self._hash = msg.new_session.page_script_hash
            self._full = not msg.metadata.run.fragment_ids
            if self._full:   # as the frontend, a full run drops every fragment's timer
                self._timers.clear()
        elif kind == "navigation" and msg.navigation.page_script_hash:   # st.navigation names the page run
            self._hash = msg.navigation.page_script_hash
        elif kind == "auto_rerun":
            timer = self._timers.get(msg.auto_rerun.fragment_id)
            if timer is None or timer[0] != msg.auto_rerun.interval:   # as the frontend: same interval, same timer
                interval = msg.auto_rerun.interval
                self._timers[msg.auto_rerun.fragment_id] = [interval, time.monotonic() + interval]
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                self._timers.pop(fragment, None)
        elif kind == "script_finished":
            self.runs += 1
            self.full_runs += self._full
            if self.titles:
                self._rendered.set()
        elif kind == "delta":
            self._delta(msg.delta, data)

    def _delta(self, delta, data: bytes) -> None:
        if delta.WhichOneof("type") == "add_block":
            if self.result is None and b"lesson_result" in data:
                self.result = now_ms()
            return
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        which = element.WhichOneof("type")
        if which == "heading" and element.heading.tag == "h1":
            self.titles.setdefault(element.heading.body, now_ms())
        elif which == "alert" and DEBUG:
            print(f"{self.name} alert: {element.alert.body[:200]!r}", flush=True)
        elif which == "exception":
            self.errors.append(f"exception: {element.exception.message[:200]}")
        wid = getattr(getattr(element, which), "id", "")
        if wid.startswith("$$ID-"):
            key = wid.rsplit("-", 1)[1]
            self._ids[key] = wid
            if which == "radio":
                self._options[key] = list(element.radio.options)

    def run(self) -> None:
        host = self.url.split("//", 1)[1]
        try:
            with connect(f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], origin=self.url,
                         additional_headers={"Cookie": self.cookies}, max_size=None) as ws:
                self._ws = ws
                self._rerun()
                while not self._closing.is_set():
                    due = min((t[1] for t in self._timers.values()), default=time.monotonic() + 0.25)
                    try:
                        self._read(ws.recv(timeout=max(0.0, min(due - time.monotonic(), 0.25))))
                    except TimeoutError:
                        pass
                    for fragment, timer in list(self._timers.items()):
                        if time.monotonic() >= timer[1]:
                            timer[1] = time.monotonic() + timer[0]
                            self._rerun(fragment=fragment, auto=True)
        except Exception as err:   # noqa: BLE001  a bench reports a lost student, it does not stop
            if not self._closing.is_set():
                self.errors.append(f"connection: {type(err).__name__}: {err}")

    # ----------------------------------------------------------------------------- control
    def wait_rendered(self, timeout: float) -> bool:
        return self._rendered.wait(timeout)

    def has(self, key: str) -> bool:
        return key in self._ids

    def close(self) -> None:
        self._closing.set()
        self.join(timeout=5)
