"""The per-round messages carry exactly what the world's own objects say: an observation, a belief snapshot,
a semantic map's summary and the simulator's state survive the trip through homiebot_msgs and CDR bytes."""

from __future__ import annotations

import json
import math

import pytest
from homiebot_msgs.msg import Belief, BeliefEntity, RoundObservation, SemanticMap, SimState
from rclpy.serialization import deserialize_message, serialize_message

from homiebot.config import RunConfig
from homiebot.core.errors import SnapshotBelief, take_snapshot
from homiebot.core.tasks import load_task
from homiebot.ros.messages.round import (
    belief_msg,
    dynamic_of,
    labelled_map_msg,
    labels_of,
    people_of,
    pose_of,
    round_observation_msg,
    semantic_map_msg,
    sim_state_msg,
    snapshot_of,
    summary_of,
)
from homiebot.runtime import build_world, scene_for

DEMO = "config/tasks/demo.yaml"
AT = {"episode": 3, "round_index": 2, "stamp_ns": 1_700_000_000_123_456_789}


def wire(msg):
    """The message as another process receives it."""
    return deserialize_message(serialize_message(msg), type(msg))


@pytest.fixture(scope="module")
def oracle_world():
    world = build_world(RunConfig.model_validate({"world": {"name": "embedded_home", "params": {"width": 64, "height": 64}}}),
                        scene_for(load_task(DEMO)))
    yield world
    world.close()


@pytest.fixture(scope="module")
def mapped_world():
    cfg = RunConfig.model_validate({"perception": {"mode": "mapped", "detector": {"name": "sim_truth"}}, "world": {"name": "embedded_home", "params": {"width": 128, "height": 128}}})
    world = build_world(cfg, scene_for(load_task(DEMO)))
    for r in (1, 2):  # an instance is confirmed on its second sighting
        world.observe(r)
    yield world
    world.close()


def test_an_observation_keeps_pose_labels_inventory_and_people(oracle_world) -> None:
    obs = oracle_world.observe(2)
    msg = wire(round_observation_msg(obs, episode=3, stamp_ns=AT["stamp_ns"], kinds=["image", "depth"], path_length=1.25,
                                     mapped=False, map_text=None))
    assert isinstance(msg, RoundObservation) and (msg.episode, msg.round, list(msg.kinds)) == (3, 2, ["image", "depth"])
    pose = pose_of(msg)  # a geometry_msgs/Pose on the wire: the heading through a quaternion, to the last bits
    assert (pose.x, pose.y) == (obs.pose.x, obs.pose.y) and pose.yaw == pytest.approx(obs.pose.yaw, abs=1e-12)
    assert labels_of(msg) == obs.labels and people_of(msg) == obs.people
    assert list(msg.inventory) == obs.inventory and msg.path_length == 1.25
    assert msg.header.stamp.sec == 1_700_000_000 and msg.header.stamp.nanosec == 123_456_789 and msg.header.frame_id == "map"
    assert not msg.has_map_text
    with_text = round_observation_msg(obs, episode=3, stamp_ns=1, kinds=[], path_length=0.0, mapped=True, map_text="")
    assert with_text.has_map_text and with_text.mapped  # an empty map text still belongs in the prompt


def test_a_belief_snapshot_comes_back_equal_and_answers_the_same(oracle_world) -> None:
    snapshot = take_snapshot(oracle_world.belief)
    msg = wire(belief_msg(snapshot, resolves=False, **AT))
    assert isinstance(msg, Belief) and snapshot_of(msg) == snapshot
    back, here = SnapshotBelief(snapshot_of(msg)), SnapshotBelief(snapshot)
    for name in here.names():
        assert back.lookup(name) == here.lookup(name) and back.distance_to(name) == here.distance_to(name)
    assert back.held_object() == here.held_object()


def test_unknown_open_state_and_unreachable_distance_survive() -> None:
    snapshot = {"held": "cup_1", "entities": {
        "drawer_1": {"kind": "receptacle", "articulated": True, "is_open": None, "relation": None, "distance": math.inf, "container": None},
        "cup_1": {"kind": "object", "articulated": False, "is_open": False, "relation": "held", "distance": 0.0, "container": "drawer_1"}}}
    msg = wire(belief_msg(snapshot, resolves=True, **AT))
    assert msg.entities[0].is_open == BeliefEntity.OPEN_UNKNOWN and msg.resolves
    assert snapshot_of(msg) == snapshot


def test_a_semantic_map_summary_comes_back_equal(mapped_world) -> None:
    summary = mapped_world.map_summary()
    assert summary["instances"] and summary["rooms"]  # a real map, not an empty one
    msg = wire(semantic_map_msg(summary, episode=1, round_index=summary["round"], stamp_ns=5))  # the round the map last saw
    assert isinstance(msg, SemanticMap) and msg.mapped and msg.has_robot
    assert summary_of(msg) == json.loads(json.dumps(summary))  # tuples as lists, as a planner reads them


def test_a_summary_with_a_wrong_shape_is_refused_with_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="position needs 3 numbers"):
        semantic_map_msg({"instances": [{"id": "a", "label": "cup", "position": [1.0, 2.0]}]}, **AT)


def test_oracle_labels_make_a_map_without_positions() -> None:
    msg = wire(labelled_map_msg({"apple_1": ("apple", 1, 3)}, **AT))
    assert not msg.mapped and [(i.id, i.label, i.first_seen, i.last_seen) for i in msg.instances] == [("apple_1", "apple", 1, 3)]


def test_the_simulators_state_is_json_and_garbage_is_refused(oracle_world) -> None:
    dynamic = oracle_world.ground_truth().dynamic()
    assert dynamic_of(wire(sim_state_msg(dynamic, **AT))) == json.loads(json.dumps(dynamic))
    for text in ("", "[1]", "{"):
        with pytest.raises(ValueError):
            dynamic_of(SimState(dynamic=text))
