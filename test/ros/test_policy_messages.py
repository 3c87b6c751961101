"""A served policy's observations, commands and camera in homiebot_msgs: exact round trips, and
fields that do not fit refused with the field named (no ROS graph needed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")
from homiebot_msgs.msg import PolicyCommand  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402

from homiebot.policies.base import DiscreteMove, EndEffectorDelta, Move, PolicyObservation, Velocity, Waypoints  # noqa: E402
from homiebot.policies.training_cameras import NOMAD_CAMERA, RT1X_FRACTAL_CAMERA  # noqa: E402
from homiebot.ros.messages.policy import (  # noqa: E402
    PolicyMessageError,
    act_request,
    camera_msg,
    camera_of,
    command_msg,
    command_of,
    observation_of,
)


def test_an_observation_round_trips_exactly_through_cdr() -> None:
    rng = np.random.default_rng(0)
    obs = PolicyObservation(rgb=rng.integers(0, 255, (6, 8, 3), dtype=np.uint8), instruction="pick the can",
                            depth=rng.random((6, 8)).astype(np.float32), goal_mask=rng.random((6, 8)) > 0.5, step=3,
                            extras={"goal_xy": [1.5, -2.0], "room": "kitchen"})
    req = act_request(obs)
    back = observation_of(deserialize_message(serialize_message(req), type(req)))
    assert back.rgb.dtype == np.uint8 and np.array_equal(back.rgb, obs.rgb)
    assert back.depth.dtype == np.float32 and np.array_equal(back.depth, obs.depth)
    assert back.goal_mask.dtype == bool and np.array_equal(back.goal_mask, obs.goal_mask)
    assert back.goal_image is None and back.instruction == "pick the can" and back.step == 3
    assert back.extras == {"goal_xy": [1.5, -2.0], "room": "kitchen"}


def test_bad_fields_are_refused_naming_the_field() -> None:
    req = act_request(PolicyObservation(rgb=np.zeros((4, 4, 3), np.uint8), depth=np.ones((4, 4), np.float32)))
    req.depth.data = np.full(16, np.nan, np.float32).tobytes()
    with pytest.raises(PolicyMessageError, match="depth: values that are not finite"):
        observation_of(req)
    req = act_request(PolicyObservation(rgb=np.zeros((4, 4, 3), np.uint8)))
    req.rgb.step = 5
    with pytest.raises(PolicyMessageError, match="rgb: 4x4 rgb8 with step 5"):
        observation_of(req)
    with pytest.raises(PolicyMessageError, match="extras must be JSON-safe"):
        act_request(PolicyObservation(rgb=np.zeros((4, 4, 3), np.uint8), extras={"x": object()}))


def test_commands_and_cameras_round_trip_and_bad_commands_are_refused() -> None:
    commands = [Waypoints(np.array([[0.5, 0.0], [1.0, 0.2]]), np.array([0.0, 0.1])), Waypoints(np.array([[0.3, 0.1]])),
                DiscreteMove(Move.TURN_LEFT), EndEffectorDelta(np.array([0.01, 0.0, -0.02]), np.array([0.0, 0.1, 0.0]), 1.0, True),
                Velocity(0.2, -0.4)]
    for cmd in commands:
        back = command_of(deserialize_message(serialize_message(command_msg(cmd)), PolicyCommand))
        assert repr(back) == repr(cmd)
    for camera in (NOMAD_CAMERA, RT1X_FRACTAL_CAMERA):
        assert camera_of(camera_msg(camera)) == camera
    with pytest.raises(PolicyMessageError, match="unknown command kind 9"):
        command_of(PolicyCommand(kind=9))
    with pytest.raises(PolicyMessageError, match="waypoints: 3 coordinates"):
        command_of(PolicyCommand(kind=PolicyCommand.WAYPOINTS, points=[0.0, 1.0, 2.0]))
    with pytest.raises(PolicyMessageError, match="unknown move 'jump'"):
        command_of(PolicyCommand(kind=PolicyCommand.DISCRETE, move="jump"))
    with pytest.raises(PolicyMessageError, match="not finite"):
        command_of(PolicyCommand(kind=PolicyCommand.VELOCITY, linear=float("inf")))
