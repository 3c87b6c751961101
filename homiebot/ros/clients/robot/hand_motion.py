"""The limits the bridge keeps a command within, and an end-effector delta cut to them."""

from __future__ import annotations

import numpy as np

from homiebot.core.robot import RobotLimits
from homiebot.robots.profile import RobotProfile

EE_YAW_RATE = 1.0  # rad/s an end-effector command may turn the hand


def bridge_limits(profile: RobotProfile) -> RobotLimits:
    """The profile's limits as the Robot interface gives them."""
    lim = profile.limits
    return RobotLimits(lim.max_linear, lim.max_angular, lim.max_ee_speed, EE_YAW_RATE, lim.workspace_min, lim.workspace_max)


def limited_step(translation: np.ndarray, rotation: np.ndarray | None, duration: float,
                 limits: RobotLimits) -> tuple[np.ndarray, float, bool]:
    """A base-frame end-effector delta within the speed limits for ``duration``: (translation, yaw turn,
    whether either was cut)."""
    t = np.asarray(translation, dtype=float).reshape(3)
    step = limits.max_ee_speed * duration
    norm = float(np.linalg.norm(t))
    clipped = norm > step
    if clipped:
        t = t * (step / norm)
    turn = float(np.asarray(rotation, dtype=float).reshape(3)[2]) if rotation is not None else 0.0
    yaw_step = limits.max_ee_yaw_rate * duration
    clipped = clipped or abs(turn) > yaw_step
    return t, float(np.clip(turn, -yaw_step, yaw_step)), clipped


__all__ = ["EE_YAW_RATE", "bridge_limits", "limited_step"]
