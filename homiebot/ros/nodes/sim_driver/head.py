"""A profile's head (Fetch's ``head_controller/point_head``): a PointHead action server turning the pan and tilt
that aim the head at the target (base frame) within their limits, reached at the goal's ``max_velocity`` (and
no sooner than ``min_duration``); the head camera renders the home's view the pan faces."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from rclpy.task import Future

from homiebot.robots.profile import RobotProfile
from homiebot.ros.nodes.sim_driver.chains import CameraChains
from homiebot.ros.nodes.sim_driver.goals import GoalNotes
from homiebot.ros.nodes.sim_driver.numbers import finite

MAX_SPEED = 1.57  # rad/s: the joints' velocity limit
SIDEWAYS = math.pi / 4  # a pan past this renders the home's side view


class SimHead:
    """The head's chain (``chain``: None when the profile has no head the simulation can turn) and its running goal."""

    def __init__(self, node: Any, profile: RobotProfile, chains: CameraChains, seconds: Callable[[], float],
                 goals: GoalNotes, counters: dict[str, int]) -> None:
        self.node, self.profile, self.chains = node, profile, chains
        self._seconds, self.goals, self._lock, self.counters = seconds, goals, goals.lock, counters
        # (joints, speed, earliest end, result, goal handle)
        self._running: tuple[dict[str, float], float, float, Future, Any] | None = None
        head = profile.head
        self.chain = chains.mounts[head.camera].chain if head is not None and head.camera in chains.mounts else None
        if head is not None and (self.chain is None or {head.pan_joint, head.tilt_joint} - set(chains.extra)):
            node.get_logger().warning(f"head: camera '{head.camera}' needs a chain with {head.pan_joint} and {head.tilt_joint} "
                                      f"to be turned in simulation; {head.point.name} is not served")
            self.chain = None

    @property
    def running(self) -> bool:
        """Whether a PointHead goal runs."""
        return self._running is not None

    def serve(self, group: Any) -> Any:
        """The PointHead action server, for a head the simulation can turn (else None)."""
        if self.profile.head is None or self.chain is None:
            return None
        from control_msgs.action import PointHead
        from rclpy.action import ActionServer

        return ActionServer(self.node, PointHead, self.profile.topic(self.profile.head.point.name), self.execute, callback_group=group)

    def aim(self, target: np.ndarray) -> tuple[dict[str, float], float]:
        """The head's pan and tilt (within their limits) aiming it at ``target`` (base frame), and the
        angle by which it misses when the limits cut them."""
        head, chain = self.profile.head, self.chain
        assert head is not None and chain is not None
        names = chain.names
        ip, it = names.index(head.pan_joint), names.index(head.tilt_joint)
        q = self.chains.values(chain)
        q[ip] = q[it] = 0.0
        d = target - chain.joint_origins(q)[ip]
        pan = math.atan2(d[1], d[0])
        q[ip] = float(np.clip(pan, chain.lower[ip], chain.upper[ip]))
        d = target - chain.joint_origins(q)[it]
        tilt = math.atan2(-d[2], math.hypot(d[0], d[1]))  # about +y: positive looks down
        q[it] = float(np.clip(tilt, chain.lower[it], chain.upper[it]))
        error = abs(math.remainder(pan - q[ip], 2 * math.pi)) + abs(tilt - q[it])
        return {head.pan_joint: float(q[ip]), head.tilt_joint: float(q[it])}, error

    async def execute(self, handle: Any) -> Any:
        """Run a PointHead goal: the head turns to aim at the target; a new goal preempts it."""
        from control_msgs.action import PointHead

        result = PointHead.Result()
        goal, p = handle.request, self.profile
        point = goal.target.point
        frame = goal.target.header.frame_id
        if frame not in ("", p.base_frame) or not finite(point.x, point.y, point.z, goal.max_velocity):
            self.node.get_logger().error(f"point_head: a target in '{frame}' with ({point.x}, {point.y}, {point.z}): "
                                         f"give finite coordinates in {p.base_frame} (the simulation has no tf)")
            self.goals.refuse(handle)
            return result
        joints, error = self.aim(np.array([point.x, point.y, point.z]))
        speed = min(float(goal.max_velocity), MAX_SPEED) if goal.max_velocity > 0 else MAX_SPEED
        done = Future()
        with self._lock:
            self.counters["head_goals"] += 1
            if self._running is not None:  # a new goal preempts the running one
                self.end(False)
            earliest = self._seconds() + goal.min_duration.sec + goal.min_duration.nanosec * 1e-9
            self._running = (joints, speed, earliest, done, handle)
            self.goals.note(handle, ended=False)
        reached = await done
        feedback = PointHead.Feedback()
        feedback.pointing_angle_error = float(error)  # how far the limits keep it from the target
        handle.publish_feedback(feedback)
        if reached:
            handle.succeed()
        else:
            handle.abort()
        return result

    def advance(self, dt: float, now: float) -> None:
        """Turn the head towards its goal for ``dt`` seconds at the goal's speed (under the lock; ``now``: the driver's clock)."""
        assert self._running is not None
        joints, speed, earliest, _, _ = self._running
        extra = self.chains.extra
        for name, goal in joints.items():
            here = extra[name]
            extra[name] = here + float(np.clip(goal - here, -speed * dt, speed * dt))
        if all(abs(extra[n] - v) < 1e-9 for n, v in joints.items()) and now >= earliest:
            self.end(True)

    def end(self, reached: bool) -> None:
        """End the running goal (under the lock)."""
        assert self._running is not None
        done, handle = self._running[3], self._running[4]
        self._running = None
        self.goals.note(handle, ended=True)
        done.set_result(reached)

    def restart(self) -> None:
        """The home restarted (under the lock): the running goal fails (the chains bring the head to the front)."""
        if self._running is not None:
            self.end(False)

    def view(self, camera: str) -> str:
        """The home's view a camera renders: a head camera's follows the pan."""
        head = self.profile.head
        if head is not None and camera == head.camera and self.chain is not None:
            pan = self.chains.extra[head.pan_joint]
            if pan > SIDEWAYS:
                return "left"
            if pan < -SIDEWAYS:
                return "right"
        return self.profile.sim.views[camera]
