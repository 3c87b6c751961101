"""A lift (Fetch's torso) as its joint-trajectory controller serves it, for the sim driver.

robot_controllers' FollowJointTrajectoryController takes a trajectory for the lift's one joint and
moves it there; this does the same to a simulated value: ``goal`` checks a trajectory (its joint
names, a final point with one finite position within the joint's limits) and says where and in how
long, ``start`` begins the motion and ``advance`` moves the value for a tick, no faster than the
joint's velocity limit and no faster than the trajectory asks.
"""

from __future__ import annotations

import math
from typing import Any

from homiebot.robots.profile import RobotProfile


class SimLift:
    """One prismatic lift joint, moved towards a goal tick by tick (see the module doc)."""

    def __init__(self, joint: str, lower: float, upper: float, max_velocity: float, value: float) -> None:
        self.joint, self.lower, self.upper, self.max_velocity = joint, lower, upper, max_velocity
        self.value = float(value)
        self.target: float | None = None
        self.speed = max_velocity

    @classmethod
    def of(cls, profile: RobotProfile) -> SimLift | None:
        """The profile's torso (None without one), starting at the table's held value."""
        torso = profile.torso
        if torso is None or profile.kinematics is None:
            return None
        joint = next(j for j in profile.kinematics.joints if j.name == torso.joint)
        assert joint.limits is not None and joint.value is not None  # the profile checked it
        return cls(torso.joint, joint.limits[0], joint.limits[1], torso.max_velocity, joint.value)

    def goal(self, trajectory: Any) -> tuple[float, float]:
        """(target, seconds) of a trajectory_msgs/JointTrajectory for this joint; ValueError saying what is wrong."""
        names = list(trajectory.joint_names)
        if names != [self.joint]:
            raise ValueError(f"the trajectory's joints {names} are not the lift's [{self.joint}]")
        if not trajectory.points:
            raise ValueError("a trajectory without points")
        last = trajectory.points[-1]
        if len(last.positions) != 1 or not math.isfinite(last.positions[0]):
            raise ValueError("the final point needs one finite position")
        target = float(last.positions[0])
        if not self.lower - 1e-6 <= target <= self.upper + 1e-6:
            raise ValueError(f"the final point {target} is outside the joint limits of {self.joint} [{self.lower}, {self.upper}]")
        return min(max(target, self.lower), self.upper), last.time_from_start.sec + last.time_from_start.nanosec * 1e-9

    def start(self, target: float, seconds: float) -> None:
        """Move to ``target``, arriving after ``seconds`` or as soon as the velocity limit allows."""
        distance = abs(target - self.value)
        self.target = target
        self.speed = min(self.max_velocity, distance / seconds) if seconds > 0 and distance > 0 else self.max_velocity

    def advance(self, dt: float) -> bool:
        """Move for ``dt`` seconds; True when the target was reached (the motion then ends)."""
        if self.target is None:
            return False
        step = self.speed * dt
        left = self.target - self.value
        if abs(left) <= step + 1e-12:
            self.value, self.target = self.target, None
            return True
        self.value += math.copysign(step, left)
        return False


__all__ = ["SimLift"]
