"""The sim driver's clock and its notes of timed goals, alone: what a lock-step ``step`` counts on."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.nodes.sim_driver.clock import SimClock  # noqa: E402
from homiebot.ros.nodes.sim_driver.goals import KEPT, GoalNotes, goal_key  # noqa: E402
from test.worlds.sim_driver.fakes import FakeNode  # noqa: E402


class Handle:
    def __init__(self, n: int) -> None:
        self.goal_id = SimpleNamespace(uuid=n.to_bytes(16, "big"))
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True


def test_in_lock_step_time_moves_only_when_advanced_and_goes_out_on_clock() -> None:
    node = FakeNode()
    clock = SimClock(node, lockstep=True)
    assert clock.seconds() == 0.0 and clock.stamp_ns() == 0
    clock.advance(0.02)
    clock.publish(clock.stamp_ns())
    assert clock.sim_ns == 20_000_000 and clock.seconds() == pytest.approx(0.02)
    sent = node.publishers["/clock"].sent
    assert len(sent) == 1 and (sent[0].clock.sec, sent[0].clock.nanosec) == (0, 20_000_000)


def test_in_real_time_there_is_no_clock_topic() -> None:
    node = FakeNode()
    clock = SimClock(node, lockstep=False)
    clock.publish(clock.stamp_ns())
    assert node.publishers == {} and clock.stamp_ns() > 0


def test_goals_are_known_once_running_and_ended_once_noted_so() -> None:
    notes, handle = GoalNotes(threading.Lock()), Handle(7)
    key = goal_key(handle)
    assert key == (7).to_bytes(16, "big").hex() and not notes.known(key)
    notes.note(handle, ended=False)
    assert notes.known(key) and not notes.ended(key)
    notes.note(handle, ended=True)
    assert notes.ended(key)


def test_a_refused_goal_is_ended_at_once_and_aborted() -> None:
    notes, handle = GoalNotes(threading.Lock()), Handle(1)
    notes.refuse(handle)
    assert handle.aborted and notes.ended(goal_key(handle))


def test_only_the_newest_notes_are_kept() -> None:
    notes = GoalNotes(threading.Lock())
    for n in range(KEPT + 1):
        notes.note(Handle(n), ended=False)
    assert not notes.known(goal_key(Handle(0))) and notes.known(goal_key(Handle(KEPT)))
