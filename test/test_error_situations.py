"""Every error code arises from a real situation in the embedded home, and the episode goes on."""

from __future__ import annotations

import pytest

from homiebot.core.contracts import ErrorCode

from .conftest import replay_config, run


def S(sub: str, model: str) -> str:
    return f"Analysis: scripted step\nSubtask: {sub}\nModel: {model}"


GO = "NoMaD"
HAND = "RT-1-X"


def codes(record):
    return [s.feedback.code for s in record.steps]


def test_format_and_grounding_errors_are_fed_back(demo_task):
    script = [
        "I would rather not answer in the format.",               # F1: nothing parseable
        S("[Fly, kitchen]", GO),                                   # F1: action not in list
        S("[Go to, kitchen]", "TeleportNet"),                      # F1: model not in list
        S("[Pick, green_can]", "NoMaD"),                           # F1: model cannot pick
        S("[Go to, unicorn]", GO),                                 # F2: hallucinated target
        S("[Go to, kitchen]", GO),                                 # the loop goes on and works
    ]
    rec = run(replay_config(script), demo_task)
    assert codes(rec)[:6] == [ErrorCode.F1, ErrorCode.F1, ErrorCode.F1, ErrorCode.F1, ErrorCode.F2, None]
    assert "[NoMaD, PixNav, octo, RT-1-X]" in rec.steps[2].feedback.message
    assert "RT-1-X" in rec.steps[3].feedback.message and "octo" in rec.steps[3].feedback.message
    assert rec.ended and rec.termination == "end"


def test_logical_and_distance_errors(demo_task):
    script = [
        S("[Put, green_can, fridge]", HAND),      # L2: hand empty
        S("[Open, brown_table]", "octo"),          # L4: a table has no door
        S("[Pick, green_can]", HAND),              # D1: the can is two rooms away
        S("[Go to, green_can]", "PixNav"),
        S("[Pick, green_can]", HAND),
        S("[Open, fridge]", "octo"),               # L1: hand full
        S("[Go to, fridge]", GO),
        S("[Put, green_can, fridge]", HAND),       # L3: fridge closed
        S("[Put, green_can, brown_table]", HAND),  # D1: table now far away
        S("[Put, green_can, kitchen_counter]", HAND),
        S("[Open, fridge]", "octo"),
        S("[Go to, kitchen_cabinet]", GO),
        S("[Pick, yellow_cereal_box]", HAND),      # L3: pick from a closed cabinet
    ]
    rec = run(replay_config(script), demo_task)
    got = codes(rec)
    assert got[:13] == [ErrorCode.L2, ErrorCode.L4, ErrorCode.D1, None, None, ErrorCode.L1, None, ErrorCode.L3,
                        ErrorCode.D1, None, None, None, ErrorCode.L3]
    assert rec.steps[7].feedback.message.endswith("you should open it first.")
    assert rec.ended


def test_too_close_after_navigation_overshoot(demo_task):
    profile = {"actions": {"Go to": {"overshoot": 1.0}}}
    script = [S("[Go to, fridge]", GO), S("[Open, fridge]", "octo")]
    rec = run(replay_config(script, profile=profile), demo_task)
    assert codes(rec)[:2] == [None, ErrorCode.D2]
    assert "too close" in rec.steps[1].feedback.message
    assert rec.ended


def test_execution_failure_after_three_attempts(demo_task):
    profile = {"actions": {"Pick": {"hard": 1.0}}}
    script = [S("[Go to, green_can]", "PixNav"), S("[Pick, green_can]", HAND), S("[Go to, kitchen]", GO)]
    rec = run(replay_config(script, profile=profile), demo_task)
    assert codes(rec)[:3] == [None, ErrorCode.E1, None]
    assert rec.steps[1].attempts == 3 and rec.steps[1].inventory_after == []
    assert "too difficult" in rec.steps[1].feedback.message


def test_dropped_object_updates_inventory_and_can_be_recovered(demo_task):
    profile = {"actions": {"Put": {"slip": 1.0, "drop": 1.0}}}
    script = [
        S("[Go to, green_can]", "PixNav"), S("[Pick, green_can]", HAND),
        S("[Put, green_can, brown_table]", HAND),        # E2: the can falls to the floor
        S("[Go to, green_can]", "PixNav"), S("[Pick, green_can]", HAND),
    ]
    rec = run(replay_config(script, profile=profile), demo_task)
    assert codes(rec)[:5] == [None, None, ErrorCode.E2, None, None]
    assert rec.steps[2].inventory_before == ["green_can"] and rec.steps[2].inventory_after == []
    assert "the object is missing" in rec.steps[2].feedback.message
    assert rec.steps[4].inventory_after == ["green_can"]


@pytest.mark.parametrize("bad", ["{not json", "```\n```", "Subtask: [Go to, fridge, kitchen, sofa]\nModel: NoMaD", "🤖" * 50])
def test_garbage_never_crashes_the_episode(demo_task, bad):
    rec = run(replay_config([bad, S("[End]", "None")]), demo_task)
    assert rec.steps[0].feedback.code is ErrorCode.F1 and rec.steps[0].output is None
    assert rec.ended and len(rec.steps) == 2
