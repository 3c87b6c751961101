"""Everyday phrasing around a request does not change what the heuristic planner does: emoji, dashes,
sign-offs and "hey robot" are ignored; "go / come / walk over to X" is a task; a thing that is not in
the home is reported by name after a complete search; every End says why."""

from __future__ import annotations

import json

import pytest

from homiebot.core.contracts import Action
from homiebot.core.tasks import ObjectAt
from homiebot.planners.instructions import GoTo, parse_instruction
from homiebot.planners.phrasing import tidy
from homiebot.planners.understanding import understand
from homiebot.runtime import run_episode

from .test_heuristic import heuristic_config, task

PLAIN = "put the green can in the fridge"
WRAPPED = [
    f"{PLAIN} — thanks", f"{PLAIN} – ta", f"{PLAIN} 🙏", f"{PLAIN} 😊 thanks!", f"{PLAIN}!!", f"{PLAIN} please :)",
    f"{PLAIN} thx", f"{PLAIN} cheers", f"{PLAIN}, cheers mate", f"{PLAIN}... ty xx", f"{PLAIN} ❤️",
    f"hey robot, could you {PLAIN}?", f"hey, could you {PLAIN}", f"Hey Robot! {PLAIN.capitalize()} pls 👍",
    "could u put the green can in the fridge", f"{PLAIN} - thank you so much!",
]


@pytest.mark.parametrize("text", WRAPPED)
def test_wrapping_does_not_change_the_reading(text):
    u = understand(text, None)
    assert u.statement() == "move green can -> fridge" and not u.unsure, (u.statement(), u.unsure)


@pytest.mark.parametrize("text", [PLAIN, "could you bring the white mug to the brown table, please?", "keep 2 mugs on the desk",
                                  "i'm so thirsty... could you bring me something to drink? i'm at the white desk",
                                  "put the pasta box on the table", "put the green_can on the shelf"])
def test_plain_requests_are_left_as_they_are(text):
    assert tidy(text) == text


@pytest.mark.parametrize("text, place", [
    ("go to the brown table", "brown table"), ("come to the kitchen", "kitchen"), ("walk over to the fridge", "fridge"),
    ("head to the kitchen", "kitchen"), ("hey robot, could you go to the living room? thanks 🙏", "living room"),
    ("navigate to the green can", "green can"), ("come over to the sofa pls", "sofa"),
])
def test_going_somewhere_is_a_goal(text, place):
    assert understand(text, None).plan.goals == [GoTo(place)]
    assert parse_instruction(text).goals == [GoTo(place)]


def test_going_somewhere_and_more_keeps_both():
    assert understand("go to the kitchen and open the fridge", None).statement() == "go to kitchen; open fridge"


def _analysis(step) -> str:
    return json.loads(step.raw_output)["analysis"]


def test_a_wrapped_request_is_solved():
    goal = [ObjectAt(object="green_can", receptacle="fridge")]
    record, _ = run_episode(heuristic_config(max_rounds=20), task("put the green can in the fridge — thanks 🙏", goal))
    assert record.ended and record.goal_satisfied
    assert "done" in _analysis(record.steps[-1])


@pytest.mark.parametrize("text, target, said", [("go to the brown table — thanks", "brown_table", "I am at the brown_table"),
                                                ("come to the kitchen", "kitchen", "I am in the kitchen")])
def test_going_to_a_place_ends_there(text, target, said):
    record, _ = run_episode(heuristic_config(max_rounds=10), task(text, []))
    subs = [s.subtask for s in record.steps]
    assert record.termination == "end" and subs[-1].action is Action.END
    assert subs[-2].text() == f"[Go to, {target}]"
    assert said in _analysis(record.steps[-1])


@pytest.mark.parametrize("text, said, seen", [
    ("put the teddy bear on the white bed", "I could not find the teddy bear anywhere in this home", None),
    ("put the green apple on the white bed", "I could not find the green apple anywhere in this home", "red_apple in the fridge"),
])
def test_a_missing_thing_is_reported_after_a_full_search(text, said, seen):
    record, _ = run_episode(heuristic_config(max_rounds=40), task(text, []))
    assert record.termination == "reported" and record.steps[-1].subtask.action is Action.END, record.termination
    why = _analysis(record.steps[-1])
    assert said in why and said in (record.error or "")
    if seen:
        assert f"I saw {seen}" in why
    opened = {s.subtask.target for s in record.steps if s.subtask and s.subtask.action is Action.OPEN and s.feedback.success}
    assert {"fridge", "kitchen_cabinet", "drawer", "bathroom_cabinet"} <= opened  # every container was looked into
    assert not any(s.subtask.action in (Action.PICK, Action.PUT) for s in record.steps[:-1])
