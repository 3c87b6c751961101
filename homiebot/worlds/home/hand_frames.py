"""Frames of the embedded home's robot hand: robot <-> world points, the gripper's pose, door handles.

Shared by the arm and the gripper of ``control.HomeControl``; every function reads the state it is
given and changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from homiebot.worlds.home.catalog import DRAWER_TRAVEL
from homiebot.worlds.home.layout import Receptacle
from homiebot.worlds.home.mjcf import door_handle_local, drawer_handle_local
from homiebot.worlds.home.robot import arm_fk
from homiebot.worlds.home.state import HomeState


@dataclass
class Coupling:
    """A door or drawer joint held by the gripper."""

    receptacle: str
    kind: str  # "hinge" | "slide"


def gripper_pose(state: HomeState) -> tuple[np.ndarray, float]:
    """Gripper centre (robot frame, metres) and yaw (radians, robot frame)."""
    fk = arm_fk(state.arm)
    return np.array(fk.gripper), fk.yaw


def robot_to_world(state: HomeState, p: np.ndarray | tuple[float, float, float]) -> np.ndarray:
    """A robot-frame point in the world frame."""
    r = state.robot
    c, s = math.cos(r.yaw), math.sin(r.yaw)
    return np.array([r.x + c * p[0] - s * p[1], r.y + s * p[0] + c * p[1], p[2]])


def world_to_robot(state: HomeState, p: np.ndarray | tuple[float, float, float]) -> np.ndarray:
    """A world-frame point in the robot frame."""
    r = state.robot
    c, s = math.cos(r.yaw), math.sin(r.yaw)
    dx, dy = p[0] - r.x, p[1] - r.y
    return np.array([c * dx + s * dy, -s * dx + c * dy, p[2]])


def handle_in_robot(state: HomeState, rec: Receptacle, fraction: float) -> np.ndarray:
    """Robot-frame centre of a door handle or drawer knob when the joint is open by ``fraction``."""
    if rec.type.articulation == "hinge":
        lx, ly, z = door_handle_local(rec, fraction * math.pi / 2)
    else:
        lx, ly, z = drawer_handle_local(rec, fraction * DRAWER_TRAVEL)
    return world_to_robot(state, (*rec.to_world(lx, ly), z))
