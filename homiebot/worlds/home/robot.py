"""MJCF fragment of the Fetch-like robot: base, torso, tilting head with four cameras, jointed arm.

The root body ``robot`` sits at the world origin and carries three joints, applied in order:
slide ``robot__x`` (world x), slide ``robot__y`` (world y), hinge ``robot__yaw`` (about world z).
Their qpos values are therefore exactly ``(x, y, yaw)`` of ``HomeState.robot``.

The head cameras sit at the head centre ``(0, 0, CAMERA_HEIGHT)`` in the robot frame; the head
tilts about the robot's lateral axis (hinge ``robot__head_tilt``, positive = look up), so all four
cameras move with it. The torso and head geoms are in ``SELF_HIDDEN_GROUP``; the renderer hides
that group in the robot's own views so the cameras never look at the inside of the head or at a
torso filling the bottom of the image. The base and the arm stay visible, as on a real robot.

The arm is a lift carrying a planar (SCARA-like) chain mounted on the right of the torso: slide
``robot__arm_lift`` sets the height of the arm plane, hinges ``robot__shoulder``, ``robot__elbow``
and ``robot__wrist`` turn about the vertical, two finger slides open the gripper. Four joints give
exactly the end-effector position plus yaw; ``arm_fk``/``arm_ik`` solve them in closed form. The
default ``ArmPose.carry()`` puts the gripper centre at ``GRIPPER_OFFSET``, fingers forward.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from homiebot.worlds.home.catalog import (
    CAMERA_HEIGHT,
    CAMERA_PITCH_DEG,
    GRIPPER_OFFSET,
    ROBOT_HEIGHT,
    ROBOT_RADIUS,
    VIEW_YAW_DEG,
    VIEWS,
)

ROBOT_BODY = "robot"
ROBOT_JOINTS = ("robot__x", "robot__y", "robot__yaw")
HEAD_TILT_JOINT = "robot__head_tilt"
ARM_JOINTS = ("robot__arm_lift", "robot__shoulder", "robot__elbow", "robot__wrist")
FINGER_JOINTS = ("robot__finger_l", "robot__finger_r")
SELF_HIDDEN_GROUP = 3  # MuJoCo hides geom groups 3..5 by default; the renderer hides it explicitly too

_BODY_RGBA = "0.85 0.85 0.83 1"
_DARK_RGBA = "0.22 0.22 0.24 1"
_ARM_RGBA = "0.35 0.36 0.40 1"
BASE_HEIGHT = 0.35

# ---- arm geometry (robot frame, metres) -------------------------------------------------------
SHOULDER_XY = (0.06, -0.32)  # where the lift column stands, on the right of the torso
UPPER_ARM = 0.50
FOREARM = 0.50
HAND = 0.17  # wrist axis to gripper centre (the middle of the fingers)
LIFT_RANGE = (0.05, 1.35)  # height of the arm plane = height of the gripper centre
SHOULDER_RANGE = (-3.1, 3.1)
ELBOW_RANGE = (0.0, 3.05)  # the elbow only bends one way, so the elbow sits on the right
WRIST_RANGE = (-2.9, 2.9)
FINGER_LENGTH = 0.10
FINGER_THICKNESS = 0.014
FINGER_HEIGHT = 0.024
MAX_OPENING = 0.17  # inner gap between the fingers when fully open
_LINK_DROP = 0.07  # links hang this far below the arm plane (keeps them below the side cameras' horizon)
_PALM_BACK = 0.07  # palm centre behind the gripper centre
_FINGER_BACK = 0.005  # finger centres behind the gripper centre


def finger_offset(closedness: float) -> float:
    """Lateral offset of each finger's centre from the gripper axis for a closedness in [0, 1]."""
    c = min(max(closedness, 0.0), 1.0)
    return (1.0 - c) * MAX_OPENING / 2 + FINGER_THICKNESS / 2


# The carry look of the original static gripper: finger centres 5 cm off the axis.
CARRY_CLOSEDNESS = 1.0 - (0.05 - FINGER_THICKNESS / 2) / (MAX_OPENING / 2)


@dataclass(frozen=True)
class ArmPose:
    """Joint values of the arm: lift height (m), shoulder/elbow/wrist angles (rad), gripper closedness.

    ``gripper`` is the finger position (0 open, 1 fully closed); when the fingers hold an object they
    stop at its width, which the control records in ``gripper``.
    """

    lift: float
    shoulder: float
    elbow: float
    wrist: float
    gripper: float = CARRY_CLOSEDNESS

    @classmethod
    @functools.cache
    def carry(cls) -> ArmPose:
        """Gripper centre at ``GRIPPER_OFFSET``, fingers forward: the pose the robot drives around in."""
        pose = arm_ik(GRIPPER_OFFSET, 0.0)
        assert pose is not None
        return pose

    def with_gripper(self, closedness: float) -> ArmPose:
        return replace(self, gripper=min(max(closedness, 0.0), 1.0))

    def as_list(self) -> list[float]:
        return [self.lift, self.shoulder, self.elbow, self.wrist, self.gripper]


@dataclass(frozen=True)
class ArmFK:
    """Forward kinematics in the robot frame: joint positions, gripper centre and yaw."""

    shoulder: tuple[float, float, float]
    elbow: tuple[float, float, float]
    wrist: tuple[float, float, float]
    gripper: tuple[float, float, float]
    yaw: float


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def arm_fk(pose: ArmPose) -> ArmFK:
    """Where the arm's joints and gripper centre are for ``pose`` (robot frame)."""
    sx, sy = SHOULDER_XY
    z = pose.lift
    a1 = pose.shoulder
    a2 = a1 + pose.elbow
    a3 = a2 + pose.wrist
    ex, ey = sx + UPPER_ARM * math.cos(a1), sy + UPPER_ARM * math.sin(a1)
    wx, wy = ex + FOREARM * math.cos(a2), ey + FOREARM * math.sin(a2)
    gx, gy = wx + HAND * math.cos(a3), wy + HAND * math.sin(a3)
    return ArmFK((sx, sy, z), (ex, ey, z), (wx, wy, z), (gx, gy, z), _wrap(a3))


def _within(v: float, lo_hi: tuple[float, float]) -> bool:
    return lo_hi[0] - 1e-9 <= v <= lo_hi[1] + 1e-9


def arm_ik(gripper: tuple[float, float, float], yaw: float, closedness: float = CARRY_CLOSEDNESS) -> ArmPose | None:
    """Joint values that put the gripper centre at ``gripper`` (robot frame) pointing along ``yaw``;
    None if the target is outside the workspace or the joint limits."""
    gx, gy, gz = gripper
    if not _within(gz, LIFT_RANGE):
        return None
    wx, wy = gx - HAND * math.cos(yaw), gy - HAND * math.sin(yaw)
    dx, dy = wx - SHOULDER_XY[0], wy - SHOULDER_XY[1]
    d = math.hypot(dx, dy)
    if d > UPPER_ARM + FOREARM - 1e-6 or d < abs(UPPER_ARM - FOREARM) + 1e-6:
        return None
    cos_in = (UPPER_ARM**2 + d * d - FOREARM**2) / (2 * UPPER_ARM * d)
    shoulder = _wrap(math.atan2(dy, dx) - math.acos(min(max(cos_in, -1.0), 1.0)))
    cos_el = (UPPER_ARM**2 + FOREARM**2 - d * d) / (2 * UPPER_ARM * FOREARM)
    elbow = math.pi - math.acos(min(max(cos_el, -1.0), 1.0))
    wrist = _wrap(yaw - shoulder - elbow)
    if not (_within(shoulder, SHOULDER_RANGE) and _within(elbow, ELBOW_RANGE) and _within(wrist, WRIST_RANGE)):
        return None
    return ArmPose(gz, shoulder, elbow, wrist, min(max(closedness, 0.0), 1.0))


def arm_reach_limits() -> tuple[float, float]:
    """Minimum and maximum distance from the shoulder axis to the wrist axis (plan view)."""
    return (abs(UPPER_ARM - FOREARM) + 1e-3, UPPER_ARM + FOREARM - 1e-3)


def _v(*values: float) -> str:
    return " ".join(f"{v:.9g}" for v in values)


def camera_axes(view: str) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """(right, up) unit vectors of a view's camera in the robot frame (MuJoCo camera ``xyaxes``)."""
    yaw = math.radians(VIEW_YAW_DEG[view])
    pitch = math.radians(CAMERA_PITCH_DEG)
    fwd = (math.cos(yaw) * math.cos(pitch), math.sin(yaw) * math.cos(pitch), math.sin(pitch))
    right = (math.sin(yaw), -math.cos(yaw), 0.0)
    up = (  # right x forward
        right[1] * fwd[2] - right[2] * fwd[1],
        right[2] * fwd[0] - right[0] * fwd[2],
        right[0] * fwd[1] - right[1] * fwd[0],
    )
    return right, up


def _arm() -> str:
    """The lift column and the jointed arm; joint values are written by the renderer's ``sync``."""
    sx, sy = SHOULDER_XY
    lo, hi = LIFT_RANGE
    palm = HAND - _PALM_BACK
    gap = 0.05
    fingers = "".join(
        f'<body name="robot/finger_{side}" pos="{_v(HAND - _FINGER_BACK, 0, 0)}">'
        f'<joint name="{joint}" type="slide" axis="0 {sign:g} 0" range="0 {MAX_OPENING:.6g}"/>'
        f'<geom name="robot/finger_{side}" type="box" size="{_v(FINGER_LENGTH / 2, FINGER_THICKNESS / 2, FINGER_HEIGHT / 2)}" '
        f'rgba="{_DARK_RGBA}"/></body>'
        for side, sign, joint in (("l", 1.0, FINGER_JOINTS[0]), ("r", -1.0, FINGER_JOINTS[1]))
    )
    drop = -_LINK_DROP
    return (
        f'<geom name="robot/column" type="box" size="0.03 0.03 {(0.9 - BASE_HEIGHT) / 2:.6g}" '
        f'pos="{_v(sx, sy, (0.9 + BASE_HEIGHT) / 2)}" rgba="{_ARM_RGBA}"/>'
        f'<body name="robot/arm_lift" pos="{_v(sx, sy, 0)}">'
        f'<joint name="{ARM_JOINTS[0]}" type="slide" axis="0 0 1" range="{_v(lo, hi)}"/>'
        f'<geom name="robot/carriage" type="box" size="0.045 0.045 0.04" pos="{_v(0, 0, drop)}" rgba="{_DARK_RGBA}"/>'
        f'<body name="robot/upper_arm">'
        f'<joint name="{ARM_JOINTS[1]}" type="hinge" axis="0 0 1" range="{_v(*SHOULDER_RANGE)}"/>'
        f'<geom name="robot/shoulder" type="cylinder" size="0.05 0.03" pos="{_v(0, 0, drop)}" rgba="{_DARK_RGBA}"/>'
        f'<geom name="robot/upper_arm" type="capsule" size="0.035" fromto="{_v(0, 0, drop, UPPER_ARM, 0, drop)}" rgba="{_ARM_RGBA}"/>'
        f'<body name="robot/forearm" pos="{_v(UPPER_ARM, 0, 0)}">'
        f'<joint name="{ARM_JOINTS[2]}" type="hinge" axis="0 0 1" range="{_v(*ELBOW_RANGE)}"/>'
        f'<geom name="robot/elbow" type="cylinder" size="0.04 0.03" pos="{_v(0, 0, drop)}" rgba="{_DARK_RGBA}"/>'
        f'<geom name="robot/forearm" type="capsule" size="0.03" fromto="{_v(0, 0, drop, FOREARM, 0, drop)}" rgba="{_ARM_RGBA}"/>'
        f'<body name="robot/hand" pos="{_v(FOREARM, 0, 0)}">'
        f'<joint name="{ARM_JOINTS[3]}" type="hinge" axis="0 0 1" range="{_v(*WRIST_RANGE)}"/>'
        f'<geom name="robot/wrist_riser" type="capsule" size="0.022" fromto="{_v(0, 0, drop, 0, 0, 0)}" rgba="{_DARK_RGBA}"/>'
        f'<geom name="robot/wrist" type="capsule" size="0.022" fromto="{_v(0, 0, 0, palm - 0.015, 0, 0)}" rgba="{_DARK_RGBA}"/>'
        f'<geom name="robot/palm" type="box" size="{_v(0.015, gap + 0.012, 0.022)}" pos="{_v(palm, 0, 0)}" rgba="{_DARK_RGBA}"/>'
        f"{fingers}</body></body></body></body>"
    )


def _cameras(fovy: float) -> str:
    lines = []
    for view in VIEWS:
        right, up = camera_axes(view)
        lines.append(f'<camera name="{view}" pos="0 0 0" xyaxes="{_v(*right, *up)}" fovy="{fovy:.6g}"/>')
    return "\n".join(lines)


HEAD_TILT_RANGE = (-math.radians(30.0), math.radians(30.0))  # about the mount pitch CAMERA_PITCH_DEG


def robot_mjcf(fovy: float = 90.0) -> str:
    """The robot's ``<body>`` element (to be placed in ``<worldbody>``), cameras with ``fovy`` degrees."""
    torso_h = ROBOT_HEIGHT - BASE_HEIGHT
    neck_h = CAMERA_HEIGHT - 0.08 - ROBOT_HEIGHT
    hidden = f'group="{SELF_HIDDEN_GROUP}"'
    return f"""<body name="{ROBOT_BODY}" pos="0 0 0">
<joint name="{ROBOT_JOINTS[0]}" type="slide" axis="1 0 0" limited="false"/>
<joint name="{ROBOT_JOINTS[1]}" type="slide" axis="0 1 0" limited="false"/>
<joint name="{ROBOT_JOINTS[2]}" type="hinge" axis="0 0 1" limited="false"/>
<geom name="robot/bumper" type="cylinder" size="{_v(ROBOT_RADIUS, 0.03)}" pos="0 0 0.05" rgba="{_DARK_RGBA}"/>
<geom name="robot/base" type="cylinder" size="{_v(ROBOT_RADIUS - 0.005, (BASE_HEIGHT - 0.08) / 2)}" pos="{_v(0, 0, (BASE_HEIGHT + 0.08) / 2)}" rgba="{_BODY_RGBA}"/>
<geom name="robot/torso" type="box" size="{_v(0.13, 0.16, torso_h / 2)}" pos="{_v(-0.08, 0, BASE_HEIGHT + torso_h / 2)}" rgba="{_BODY_RGBA}" {hidden}/>
<geom name="robot/neck" type="cylinder" size="{_v(0.05, neck_h / 2)}" pos="{_v(0, 0, ROBOT_HEIGHT + neck_h / 2)}" rgba="{_DARK_RGBA}" {hidden}/>
{_arm()}
<body name="robot/head" pos="{_v(0, 0, CAMERA_HEIGHT)}">
<joint name="{HEAD_TILT_JOINT}" type="hinge" axis="0 -1 0" range="{_v(*HEAD_TILT_RANGE)}"/>
<geom name="robot/head" type="box" size="0.1 0.13 0.08" rgba="{_BODY_RGBA}" {hidden}/>
{_cameras(fovy)}
</body>
</body>"""
