"""The sim driver's ground truth survives the trip through homiebot_msgs/GroundTruth and CDR bytes, and an
unreadable message is refused with the field named."""

from __future__ import annotations

import json

import pytest
from homiebot_msgs.msg import GroundTruth
from rclpy.serialization import deserialize_message, serialize_message

from homiebot.config import RunConfig
from homiebot.core.errors import take_snapshot
from homiebot.core.tasks import load_task
from homiebot.ros.messages.truth import ground_truth_msg, truth_of
from homiebot.runtime import build_world, scene_for


def wire(msg: GroundTruth) -> GroundTruth:
    return deserialize_message(serialize_message(msg), GroundTruth)


@pytest.fixture(scope="module")
def truth() -> dict:
    """What the sim driver publishes, from a real home (as ``SimDriverNode._truth`` builds it)."""
    world = build_world(RunConfig.model_validate({"world": {"name": "embedded_home", "params": {"width": 64, "height": 64}}}),
                        scene_for(load_task("config/tasks/demo.yaml")))
    try:
        labels = {str(i): label.model_dump() for i, label in world.instance_labels().items()}
        # through JSON, as the dynamic state and the snapshot round-trip (tuples become lists)
        dynamic, belief = json.loads(json.dumps(world.state.dynamic())), json.loads(json.dumps(take_snapshot(world.belief)))
    finally:
        world.close()
    return {"robot": "spot", "stamp": 1_700_000_000_123_456_789, "dynamic": dynamic, "belief": belief, "powered": True,
            "standing": False, "labels": labels, "counters": {"cmd_vel": 12, "applied": 11, "timeouts": 0}}


def test_the_truth_comes_back_as_the_driver_had_it(truth) -> None:
    msg = wire(ground_truth_msg(truth))
    assert msg.robot == "spot" and msg.powered and not msg.standing
    assert {e.name for e in msg.belief.entities} == set(truth["belief"]["entities"])
    assert truth_of(msg) == truth


def test_a_held_object_and_unknown_door_states_keep_their_meaning(truth) -> None:
    entities = dict(truth["belief"]["entities"])
    name = next(n for n, e in entities.items() if e["kind"] == "object")
    entities[name] = {**entities[name], "relation": "held", "is_open": None, "container": None}
    held = {**truth, "belief": {"held": name, "entities": entities}}
    back = truth_of(wire(ground_truth_msg(held)))
    assert back["belief"]["held"] == name and back["belief"]["entities"][name]["is_open"] is None


@pytest.mark.parametrize(("field", "value", "says"), [("dynamic", "{not json", "GroundTruth.dynamic is not JSON"),
                                                       ("dynamic", "[1, 2]", "must be a JSON object")])
def test_an_unreadable_dynamic_state_is_refused_by_name(truth, field, value, says) -> None:
    msg = ground_truth_msg(truth)
    setattr(msg, field, value)
    with pytest.raises(ValueError, match=says):
        truth_of(msg)


def test_counters_that_are_not_integers_are_refused(truth) -> None:
    msg = ground_truth_msg(truth)
    msg.counters[0].value = "many"
    with pytest.raises(ValueError, match="counters must hold integers"):
        truth_of(msg)
