"""The arm's end-effector goal: a pose goal (``arm_pose_commands``, PoseStamped in the base frame) or the hand's
pose of a joint trajectory, approached at the end-effector speed limit; ``arm_stow`` and ``arm_unstow``."""

from __future__ import annotations

import math
import threading
from typing import Any, NamedTuple

import numpy as np
from geometry_msgs.msg import PoseStamped

from homiebot.robots.profile import RobotProfile
from homiebot.ros.messages.wire import WireError, safe_callback
from homiebot.ros.nodes.sim_driver.numbers import finite

REACHED_M, REACHED_RAD = 0.005, 0.01  # a goal this close is there
MAX_MOTION_S = 5.0  # a stow or unstow takes at most this long (the joints move together; a long way is not slower)
LIMITED = "the step was limited"  # the home's note of a step cut to the speed limit, which the approach is on purpose


class ArmMotion(NamedTuple):
    """One tick's approach of the goal: where the hand was before it and what stopped it ("" when nothing did)."""

    before: np.ndarray
    before_yaw: float
    message: str


class SimArm:
    """The end-effector goal (``goal``: position and yaw in the home's frame) and the home's arm reaching for it."""

    def __init__(self, node: Any, profile: RobotProfile, robot: Any, lock: threading.Lock, counters: dict[str, int]) -> None:
        self.profile, self.robot, self._lock, self.counters = profile, robot, lock, counters
        self.goal: tuple[np.ndarray, float] | None = None
        self.motion_seconds = 0.0  # how long the last stow or unstow takes on the robot (the hand's way at its speed limit)
        if "pose" in profile.arm:
            node.create_subscription(PoseStamped, pose := profile.topic(profile.arm["pose"].name), safe_callback(node, pose, self.on_pose), 10)

    def on_pose(self, msg: PoseStamped) -> None:
        """A pose goal in the base frame: the hand goes there."""
        pos = msg.pose.position
        if not finite(pos.x, pos.y, pos.z):
            raise WireError("arm pose with a non-finite position")
        with self._lock:
            self.counters["arm_goals"] += 1  # counted even when refused: a lock-step step waits for it
            if msg.header.frame_id != self.profile.base_frame:
                # spot_ros2 passes header.frame_id to the SDK as the reference frame (spot_ros2.py, arm_pose_cmd_callback:
                # ref_frame=data.header.frame_id); the simulation knows only the base frame (it has no tf)
                raise WireError(f"arm pose in frame '{msg.header.frame_id[:40]}': the driver passes it to the robot as the "
                                f"reference frame; the simulation knows only '{self.profile.base_frame}' (the goal is dropped)")
            q = msg.pose.orientation
            yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
            self.goal = (np.array([pos.x, pos.y, pos.z + self.profile.base_height]), yaw)  # the home's frame is on the floor

    def stop(self) -> None:
        """Drop the goal: the hand stays where it is (under the lock)."""
        self.goal = None

    def stow(self) -> tuple[bool, str]:
        """The arm stowed; any goal dropped (under the lock)."""
        before = self.robot.gripper_pose()[0]
        self.robot.stow()
        self.goal = None
        self._timed(before)
        return True, "arm stowed"

    def unstow(self) -> tuple[bool, str]:
        """The hand to the profile's ready pose in front of the body (what the bridge's estimate starts from)."""
        self.goal = None
        before = self.robot.gripper_pose()[0]
        report = self.robot.ready(self.profile.arm_ready)
        if report.clipped:
            return False, report.message
        self._timed(before)
        return True, "arm ready"

    def _timed(self, before: np.ndarray) -> None:
        """Note how long the motion from ``before`` to where the hand is now takes at the end-effector speed limit."""
        way = float(np.linalg.norm(np.asarray(self.robot.gripper_pose()[0]) - np.asarray(before)))
        self.motion_seconds = min(way / self.profile.limits.max_ee_speed, MAX_MOTION_S)

    def advance(self, dt: float, joint_space: bool) -> ArmMotion:
        """Approach the goal for ``dt`` seconds (under the lock; there is one). ``joint_space``: the goal is a joint
        trajectory's, whose far goals the home's arm may reach by its own joint-space motion."""
        assert self.goal is not None
        here, here_yaw = self.robot.gripper_pose()
        step, turn = self.goal[0] - here, math.remainder(self.goal[1] - here_yaw, 2 * math.pi)
        message = ""
        if float(np.linalg.norm(step)) < REACHED_M and abs(turn) < REACHED_RAD:
            self.goal = None
        else:
            said = self.robot.move_end_effector(step, [0.0, 0.0, turn], dt).message.split("; ")
            # the goal is approached at the speed limit on purpose: only the other reasons say why the arm stopped
            message = "; ".join(m for m in said if m and not m.startswith(LIMITED))
            if "out of the arm's reach" in message and joint_space and float(np.linalg.norm(step)) > 0.05:
                # a joint trajectory does not move the hand on a straight line, which may cross the body:
                # far goals the home's arm reaches are reached by its own joint-space motion
                if not self.robot.ready(tuple(self.goal[0])).clipped:
                    message = ""
        return ArmMotion(here, here_yaw, message)
