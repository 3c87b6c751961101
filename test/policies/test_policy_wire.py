"""The JSON form of policy commands, and the scripted policy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from homiebot.policies.base import DiscreteMove, EndEffectorDelta, Move, PolicyObservation, Waypoints
from homiebot.policies.scripted import ScriptedPolicy
from homiebot.policies.wire import WireError, decode_commands, encode_commands
from homiebot.ros.clients.remote_policy import server_command
from homiebot.ros.messages.policy_names import default_service, service_slug


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
