"""Whom the server reruns when a room moves (ui/room_push.py `Followers`), without a server: a fake database
and a fake push. The pushes on a real server: tests/system/test_room_push.py."""

from explorer.rooms import DatabaseDown
from ui.room_push import RETRY_S, Followers, Watch


class FakeRooms:
    def __init__(self, versions: dict[str, int]) -> None:
        self.now, self.down, self.reads = dict(versions), False, 0

    def versions(self, codes):
        self.reads += 1
        if self.down:
            raise DatabaseDown("the rooms database could not be read (gone); try again in a moment")
        return {c: v for c, v in self.now.items() if c in codes}


def followers(gone=()):
    pushed = []

    def push(session, fragment, watch, again):
        pushed.append((session, fragment, again))
        return session not in gone

    return Followers(push), pushed


def watch(rooms, code, seen, session):
    return Watch(rooms, code, seen, f"step-{session}", f"poll-{session}", {})


def test_a_room_that_moved_reruns_its_students_steps_once_and_again_only_if_not_redrawn():
    rooms = FakeRooms({"AAAAAAA": 1, "BBBBBBB": 5})
    f, pushed = followers()
    f.watch("s1", watch(rooms, "AAAAAAA", 1, "s1"))
    f.watch("s2", watch(rooms, "AAAAAAA", 1, "s2"))
    f.watch("s3", watch(rooms, "BBBBBBB", 5, "s3"))
    assert f.tick(0.0) == 0 and pushed == []   # nothing moved: nothing runs
    rooms.now["AAAAAAA"] = 2
    assert f.tick(1.0) == 2 and sorted(pushed) == [("s1", "step-s1", False), ("s2", "step-s2", False)]
    assert f.tick(1.0 + RETRY_S / 2) == 0   # asked already
    f.watch("s1", watch(rooms, "AAAAAAA", 2, "s1"))   # s1's step redrawn with the new version; s2's push was lost
    assert f.tick(1.0 + RETRY_S) == 1 and pushed[-1] == ("s2", "step-s2", True)   # again: it may be on its way
    assert rooms.reads == 4   # one read a look for all three students


def test_a_closed_session_is_forgotten():
    rooms = FakeRooms({"AAAAAAA": 1})
    f, pushed = followers(gone={"s1"})
    f.watch("s1", watch(rooms, "AAAAAAA", 1, "s1"))
    f.watch("s2", watch(rooms, "AAAAAAA", 1, "s2"))
    rooms.now["AAAAAAA"] = 2
    f.tick(0.0)
    assert len(f) == 1
    assert f.tick(RETRY_S) == 1 and pushed[-1] == ("s2", "step-s2", True)


def test_an_ended_room_reruns_its_steps_and_a_database_outage_reruns_the_polls_once_each_way():
    rooms = FakeRooms({"AAAAAAA": 1})
    f, pushed = followers()
    f.watch("s1", watch(rooms, "AAAAAAA", 1, "s1"))
    rooms.down = True
    assert f.tick(0.0) == 1 and pushed == [("s1", "poll-s1", False)]   # its poll says "Reconnecting"
    assert f.tick(1.0) == 0   # still down: said already
    rooms.down = False
    assert f.tick(2.0) == 1 and pushed[-1] == ("s1", "poll-s1", False)   # the poll looks again and clears the note
    del rooms.now["AAAAAAA"]   # a room deleted (retention): the step says so
    assert f.tick(3.0) == 1 and pushed[-1] == ("s1", "step-s1", False)
