"""A planar robot and a world around it, implementing the robot interface with no simulator.

It integrates base velocities exactly and renders a flat grey image: enough to prove that skills
drive nothing but ``homiebot.core.robot.Robot`` and judge attempts without privileged truth.
"""

from __future__ import annotations

import math

import numpy as np

from homiebot.core.contracts import Observation, Pose2D
from homiebot.core.errors import Entity
from homiebot.core.robot import (
    BasePose,
    CameraFrame,
    CameraInfo,
    Capabilities,
    MotionReport,
    Robot,
    RobotLimits,
    RobotUnavailable,
)
from homiebot.core.world import World


class PlanarRobot(Robot):
    """A base with one front camera; ``fail_after`` commands it stops answering (a driver gone)."""

    name = "planar"

    def __init__(self, fail_after: int | None = None) -> None:
        self.pose = BasePose(0.0, 0.0, 0.0)
        self.commands: list[tuple[str, float, float, float]] = []
        self.stopped = 0
        self.fail_after = fail_after

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(cameras=("front",))

    @property
    def limits(self) -> RobotLimits:
        return RobotLimits(max_linear=0.5, max_angular=1.0)

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        h, w = size or (48, 64)
        return CameraInfo(camera, h, w, (w / 2, w / 2, (w - 1) / 2, (h - 1) / 2), np.eye(4))

    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        info = self.camera_info(camera, size)
        return CameraFrame(np.full((info.height, info.width, 3), 128, np.uint8), info, self.pose.stamp)

    def odometry(self) -> BasePose:
        return self.pose

    def drive(self, linear: float, angular: float, duration: float) -> MotionReport:
        if self.fail_after is not None and len(self.commands) >= self.fail_after:
            raise RobotUnavailable("the planar robot's driver stopped answering")
        v = float(np.clip(linear, -self.limits.max_linear, self.limits.max_linear))
        w = float(np.clip(angular, -self.limits.max_angular, self.limits.max_angular))
        self.commands.append(("drive", v, w, duration))
        p = self.pose
        mid = p.yaw + 0.5 * w * duration
        self.pose = BasePose(p.x + v * duration * math.cos(mid), p.y + v * duration * math.sin(mid), p.yaw + w * duration,
                             p.stamp + duration)
        return MotionReport(distance=abs(v) * duration, duration=duration)

    def stop(self) -> None:
        self.stopped += 1


class PlanarBelief:
    """A belief with one named point ("marker" at (2, 0)) and the robot's distance to it."""

    def __init__(self, robot: PlanarRobot) -> None:
        self.robot = robot
        self.places = {"marker": (2.0, 0.0)}

    def names(self) -> list[str]:
        return list(self.places)

    def lookup(self, name: str) -> Entity | None:
        return Entity(name, "receptacle") if name in self.places else None

    def held_object(self) -> str | None:
        return None

    def distance_to(self, name: str) -> float:
        x, y = self.places[name]
        return max(0.0, math.hypot(x - self.robot.pose.x, y - self.robot.pose.y) - 0.1)

    def enclosing_container(self, obj: str) -> str | None:
        return None


class PlanarWorld(World):
    """A world around a ``PlanarRobot``: no ground truth, attempts judged by the robot's signals."""

    name = "planar"

    def __init__(self, robot: PlanarRobot | None = None) -> None:
        self._robot = robot or PlanarRobot()
        self._belief = PlanarBelief(self._robot)

    def own_robot(self) -> PlanarRobot:
        return self._robot

    @property
    def belief(self) -> PlanarBelief:
        return self._belief

    def reset(self) -> None:
        self._robot.pose = BasePose(0.0, 0.0, 0.0)

    def observe(self, round_index: int) -> Observation:
        p = self._robot.pose
        return Observation(round=round_index, views={}, pose=Pose2D(x=p.x, y=p.y, yaw=p.yaw), inventory=[])
