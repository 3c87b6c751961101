"""The JSON wire form of policy observations and commands, and the scripted policy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from homiebot.skills.policy import DiscreteMove, EndEffectorDelta, Move, PolicyObservation, Waypoints
from homiebot.skills.policy_wire import (
    WireError,
    decode_commands,
    decode_observation,
    encode_commands,
    encode_observation,
)
from homiebot.skills.remote_policy import default_service, server_command, service_slug
from homiebot.skills.scripted import ScriptedPolicy


def test_observations_round_trip_exactly_through_json() -> None:
    rng = np.random.default_rng(0)
    obs = PolicyObservation(rgb=rng.integers(0, 255, (6, 8, 3), dtype=np.uint8), instruction="pick the can",
                            depth=rng.random((6, 8)).astype(np.float32), goal_mask=rng.random((6, 8)) > 0.5, step=3)
    back = decode_observation(json.loads(json.dumps(encode_observation(obs))))
    assert back.rgb.dtype == np.uint8 and np.array_equal(back.rgb, obs.rgb)
    assert back.depth.dtype == np.float32 and np.array_equal(back.depth, obs.depth)
    assert back.goal_mask.dtype == bool and np.array_equal(back.goal_mask, obs.goal_mask)
    assert back.goal_image is None and back.instruction == "pick the can" and back.step == 3
    listed = decode_observation({"rgb": obs.rgb.tolist()})  # plain lists are accepted too
    assert np.array_equal(listed.rgb, obs.rgb)
    with pytest.raises(WireError, match="'rgb' must be an image"):
        decode_observation({"rgb": None})


def test_commands_round_trip_and_bad_ones_are_refused() -> None:
    cmds = [Waypoints(np.array([[0.1, 0.0], [0.2, 0.05]]), np.array([0.0, 0.1])), DiscreteMove(Move.TURN_LEFT),
            EndEffectorDelta(np.array([0.01, 0, 0]), np.array([0, 0, 0.1]), 1.0, terminate=True)]
    back = decode_commands(json.loads(json.dumps(encode_commands(cmds))))
    assert np.allclose(back[0].points, cmds[0].points) and np.allclose(back[0].yaw, cmds[0].yaw)
    assert back[1] == DiscreteMove(Move.TURN_LEFT)
    assert back[2].gripper == 1.0 and back[2].terminate and np.allclose(back[2].rotation, [0, 0, 0.1])
    with pytest.raises(WireError, match="unknown command kind"):
        decode_commands([{"kind": "teleport"}])
    with pytest.raises(WireError, match="bad command"):
        decode_commands([{"kind": "ee", "translation": [0, 0], "rotation": [0, 0, 0], "gripper": 0}])


def test_scripted_policy_plays_its_commands_then_stops() -> None:
    p = ScriptedPolicy([{"kind": "discrete", "move": "forward"}], chunk=2)
    obs = PolicyObservation(rgb=np.zeros((2, 2, 3), np.uint8))
    assert p.act(obs) == [DiscreteMove(Move.FORWARD), DiscreteMove(Move.STOP)]
    p.reset()
    looping = ScriptedPolicy([{"kind": "discrete", "move": "forward"}], repeat=True, chunk=3)
    assert looping.act(obs) == [DiscreteMove(Move.FORWARD)] * 3


def test_server_names_and_command_line() -> None:
    assert service_slug("RT-1-X") == "rt_1_x" and default_service("NoMaD") == "policy/nomad"
    cmd = server_command("/venv/bin/python", "policy_octo", "octo", {"checkpoint": "it's/here"}, "policy/octo")
    assert cmd[:3] == ["/venv/bin/python", "-m", "homiebot.ros.nodes.policy_server"]
    assert "policy_params:='{\"checkpoint\": \"it''s/here\"}'" in cmd  # a YAML string: ROS keeps the JSON as text
