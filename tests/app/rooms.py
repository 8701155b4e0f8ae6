"""What the room tests under AppTest share: the question a room asks, a teacher's and a student's tab, and
reading what a tab shows."""

from streamlit.testing.v1 import AppTest

from tests.app.helpers import open_lesson
from ui import owner

QUESTION = ("module6", 2)   # "Which dimensions change fastest?": three choices, answered without training


tab = open_lesson   # each tab of a room is a tab on the Lessons page


def param(at: AppTest, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def texts(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.warning, *at.info, *at.title, *at.text])


def teacher(lesson_id: str = QUESTION[0], step: int = QUESTION[1]) -> tuple[AppTest, str]:
    at = tab({"lesson": lesson_id, "step": str(step), "teach": "1"})
    code = param(at, "room")
    assert code and param(at, "teach") is None                  # a reload opens no second room
    assert set(at.query_params) == {"lesson", "step", "room"}   # and no secret in the address
    assert f"Room **{code}**" in texts(at)
    return at, code


def browser(at: AppTest) -> str:
    """The owner token of the browser `at` runs in: another AppTest with it is another tab of that browser."""
    return at.session_state[owner.TOKEN]


def teaching_url(at: AppTest) -> dict:
    return {name: param(at, name) for name in at.query_params}


def in_popover(at: AppTest, key: str) -> str | None:
    """The label of the popover the element with `key` is drawn in (None: not in one)."""
    def walk(node, label):
        if getattr(node, "key", None) == key:
            return label
        proto = getattr(node, "proto", None)
        if type(node).__name__ == "Block" and proto is not None and proto.WhichOneof("type") == "popover":
            label = proto.popover.label
        for child in getattr(node, "children", {}).values():
            found = walk(child, label)
            if found is not None:
                return found
        return None
    return walk(at.main, None)


def count_text(at: AppTest) -> str:
    return next(c.value for c in at.caption if "predicted" in c.value or "in the room" in c.value)
