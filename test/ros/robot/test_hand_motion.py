"""An end-effector delta cut to the bridge's limits."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.robot import RobotLimits  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.hand_motion import EE_YAW_RATE, bridge_limits, limited_step  # noqa: E402


def test_the_limits_are_the_profiles_with_the_bridges_yaw_rate():
    profile = load_profile("spot")
    lim = bridge_limits(profile)
    assert (lim.max_linear, lim.max_angular, lim.max_ee_speed) == (profile.limits.max_linear, profile.limits.max_angular,
                                                                    profile.limits.max_ee_speed)
    assert lim.max_ee_yaw_rate == EE_YAW_RATE and lim.workspace_min == profile.limits.workspace_min


def test_a_step_within_the_limits_is_kept():
    t, turn, clipped = limited_step(np.array([0.01, 0.0, 0.0]), np.array([0.0, 0.0, 0.05]), 0.5, RobotLimits(max_ee_speed=0.2, max_ee_yaw_rate=1.0))
    assert np.allclose(t, [0.01, 0.0, 0.0]) and turn == pytest.approx(0.05) and not clipped


def test_a_fast_step_is_cut_along_its_direction():
    t, turn, clipped = limited_step(np.array([0.3, 0.4, 0.0]), None, 0.5, RobotLimits(max_ee_speed=0.2, max_ee_yaw_rate=1.0))
    assert np.allclose(t, [0.06, 0.08, 0.0]) and turn == 0.0 and clipped


def test_a_fast_turn_is_cut():
    _, turn, clipped = limited_step(np.zeros(3), np.array([0.3, 0.0, -math.pi]), 0.5, RobotLimits(max_ee_yaw_rate=1.0))
    assert turn == pytest.approx(-0.5) and clipped
