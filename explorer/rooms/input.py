"""What a room accepts before any SQL runs: a room code, a nickname, a seat or tab id, a lesson step,
a prediction. Each check raises RoomError with what is wrong and what to do (explorer/rooms/__init__.py uses them)."""

from __future__ import annotations

import math
import numbers
import re
import unicodedata

from explorer.rooms.db import RoomError

ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"   # no 0/O, 1/I/L, nor U (read as V): 30 symbols
CODE_LEN = 7
MAX_NICKNAME = 40
MAX_CHOICE = 100

_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
_LESSON = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_CODE = re.compile(f"[{ALPHABET}]{{{CODE_LEN}}}")


def normalise_code(text) -> str:
    """'abc-d efg' -> 'ABCDEFG'; RoomError if it cannot be a room code (checked before any SQL)."""
    code = re.sub(r"[\s-]+", "", text).upper() if isinstance(text, str) else ""
    if not _CODE.fullmatch(code):
        shown = text[:20] if isinstance(text, str) else type(text).__name__
        raise RoomError(f"{shown!r} is not a room code: a code is {CODE_LEN} letters and digits like "
                        f"{ALPHABET[8:12]}{ALPHABET[:3]}; check it with your teacher, or continue alone")
    return code


def sanitise_nickname(text) -> str:
    """Control, format (zero-width, bidi) and unassigned characters dropped, whitespace collapsed, cut
    to MAX_NICKNAME. Markup stays as literal text: render it as plain text."""
    text = str(text or "")[: MAX_NICKNAME * 8]   # bound the work before looking at characters
    text = "".join(" " if c.isspace() else c for c in text if c.isspace() or unicodedata.category(c)[0] != "C")
    return " ".join(text.split())[:MAX_NICKNAME].strip()


def checked_token(value) -> str:
    """A member id or a teacher tab id, as `new_id()` makes them."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise RoomError("this browser's id in the link is malformed: reopen the link without it to get a new one")
    return value


def checked_where(lesson, step) -> tuple[str, int]:
    if not isinstance(lesson, str) or not _LESSON.fullmatch(lesson):
        raise RoomError(f"lesson={str(lesson)[:20]!r} is not a lesson id: use letters, digits, '.', '_' or '-'")
    if isinstance(step, bool) or not isinstance(step, numbers.Integral) or not 0 <= step < 1000:
        raise RoomError(f"step={str(step)[:20]!r} is not a step: use a whole number from 0 to 999")
    return lesson, int(step)


def checked_value(value) -> tuple[float, bool]:
    """(value, is_choice): an int is a choice index, a float a number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise RoomError(f"{str(value)[:20]!r} is not a prediction: pick a choice or type a number")
    if isinstance(value, numbers.Integral):
        if not 0 <= value < MAX_CHOICE:
            raise RoomError(f"choice {value} does not exist: pick one of the choices shown")
        return float(value), True
    if not math.isfinite(value) or abs(value) > 1e12:
        raise RoomError(f"{value!r} is not a usable number: type a finite number")
    return float(value), False
