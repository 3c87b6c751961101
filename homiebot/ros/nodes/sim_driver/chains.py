"""The joints of the cameras on chains, as the robot's ``joint_states`` carry them: for a pose-goal arm with a
kinematic table (Spot) the table's joints solved (IK) for where the home's hand is, so that the bridge's
forward kinematics of them puts the hand camera at the hand; the other chains' joints (a head's pan and tilt)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from homiebot.robots.kinematics import Unreachable
from homiebot.robots.profile import RobotProfile

NEAR_M = 0.01  # a posture whose tool is this close to the home's hand shows it as well as an exact one
RESOLVE_S = 0.05  # in real time at most 20 solves a second while the hand moves (tracked from the last posture: 2-3 ms)


class CameraChains:
    """The camera mounts, the joints of chains other than the arm's (``extra``, by table name: a head's, moved
    by its goals) and, for a pose-goal arm, its table (``hand_table``). ``kinematics``: a trajectory arm's table
    (its joints and held joints are published by it), or None."""

    def __init__(self, node: Any, profile: RobotProfile, robot: Any, kinematics: Any, lockstep: bool) -> None:
        self.node, self.profile, self.robot, self.kinematics, self.lockstep = node, profile, robot, kinematics, lockstep
        p = profile
        self.mounts = {cam: m for cam in p.cameras if (m := p.camera_mount(cam)) is not None}
        # a pose-goal arm with a table (Spot): joint_states carry the table's joints solved for the home's hand
        arm_camera = any(c.chain == "arm" for c in p.cameras.values())
        self.hand_table = p.kinematics.build() if kinematics is None and arm_camera and p.kinematics is not None else None
        self._hand: tuple[np.ndarray, float, np.ndarray] | None = None  # (hand position, yaw, the table's joints for it)
        self._hand_solved = 0.0  # when it was last solved (monotonic)
        held = {j.name for j in kinematics.joints if j.value is not None} if kinematics is not None else set()
        arms = set(kinematics.names if kinematics is not None else self.hand_table.names if self.hand_table is not None else [])
        self.extra: dict[str, float] = {}
        for mount in self.mounts.values():
            for j in mount.chain.active:
                if j.name not in held | arms:
                    self.extra[j.name] = float(np.clip(0.0, j.lower, j.upper))
        self._extra_start = dict(self.extra)

    def values(self, chain: Any) -> np.ndarray:
        """A chain's joints (table order) as the driver publishes them."""
        kinematics = self.kinematics
        held = {j.name: float(j.value) for j in kinematics.joints if j.value is not None} if kinematics is not None else {}
        return np.array([self.extra.get(n, held.get(n, 0.0)) for n in chain.names])

    def hand_joints(self) -> np.ndarray:
        """The arm table's joints for where the home's hand is (solved when it moved, from the last solution)."""
        assert self.hand_table is not None
        here, yaw = self.robot.gripper_pose()
        if self._hand is not None and float(np.abs(self._hand[0] - here).max()) < 1e-6 and abs(self._hand[1] - yaw) < 1e-6:
            return self._hand[2]
        now = time.monotonic()
        if self._hand is not None and not self.lockstep and now - self._hand_solved < RESOLVE_S:
            return self._hand[2]
        self._hand_solved = now
        seed = self._hand[2] if self._hand is not None else None
        target = here - np.array([0.0, 0.0, self.profile.base_height])  # the table starts at the driver's base frame
        # tracked from the last posture (a few exact steps, milliseconds); no spread postures: a second of solving
        # under load starves the odometry a bridge watches
        try:
            q = self.hand_table.inverse(target, yaw, seed=seed, spread=False, near=NEAR_M, track=True)
        except Unreachable as err:
            self.node.get_logger().warning(f"joint_states: the home's hand is out of the table's reach: {err}", throttle_duration_sec=10.0)
            q = seed if seed is not None else self.hand_table.rest.copy()
        self._hand = (here.copy(), yaw, q)
        return q

    def restart(self) -> None:
        """The chains back to their start (a head to the front); the hand is solved afresh (under the lock)."""
        self.extra, self._hand = dict(self._extra_start), None
