"""MJCF fragment of the Fetch-like robot: base, torso, head with four cameras, arm in carry pose.

The root body ``robot`` sits at the world origin and carries three joints, applied in order:
slide ``robot__x`` (world x), slide ``robot__y`` (world y), hinge ``robot__yaw`` (about world z).
Their qpos values are therefore exactly ``(x, y, yaw)`` of ``HomeState.robot``.

The head cameras sit at the head centre ``(0, 0, CAMERA_HEIGHT)`` in the robot frame. The torso
and head geoms are in ``SELF_HIDDEN_GROUP``; the renderer hides that group in the robot's own
views so the cameras never look at the inside of the head or at a torso filling the bottom of the
image. The base and the arm (gripper at ``GRIPPER_OFFSET``) stay visible, as on a real robot.
"""

from __future__ import annotations

import math

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
SELF_HIDDEN_GROUP = 3  # MuJoCo hides geom groups 3..5 by default; the renderer hides it explicitly too

_BODY_RGBA = "0.85 0.85 0.83 1"
_DARK_RGBA = "0.22 0.22 0.24 1"
_ARM_RGBA = "0.35 0.36 0.40 1"
BASE_HEIGHT = 0.35


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
    """Arm links from a shoulder on the right of the torso, swung in from the side so that only the
    gripper (fingers pointing forward, centred on GRIPPER_OFFSET) sits in the middle of the front view."""
    gx, gy, gz = GRIPPER_OFFSET
    shoulder = (0.06, gy - 0.17, 0.74)
    elbow = (0.24, gy - 0.26, 0.80)
    palm = (gx - 0.07, gy, gz)
    wrist = (palm[0] - 0.03, gy - 0.07, gz - 0.02)
    finger_len, gap = 0.10, 0.05
    parts = [
        f'<geom name="robot/shoulder" type="sphere" size="0.055" pos="{_v(*shoulder)}" rgba="{_DARK_RGBA}"/>',
        f'<geom name="robot/upper_arm" type="capsule" size="0.04" fromto="{_v(*shoulder, *elbow)}" rgba="{_ARM_RGBA}"/>',
        f'<geom name="robot/elbow" type="sphere" size="0.042" pos="{_v(*elbow)}" rgba="{_DARK_RGBA}"/>',
        f'<geom name="robot/forearm" type="capsule" size="0.03" fromto="{_v(*elbow, *wrist)}" rgba="{_ARM_RGBA}"/>',
        f'<geom name="robot/wrist" type="capsule" size="0.022" fromto="{_v(*wrist, *palm)}" rgba="{_DARK_RGBA}"/>',
        f'<geom name="robot/palm" type="box" size="{_v(0.015, gap + 0.012, 0.022)}" pos="{_v(*palm)}" rgba="{_DARK_RGBA}"/>',
    ]
    for side, sign in (("l", 1.0), ("r", -1.0)):
        parts.append(
            f'<geom name="robot/finger_{side}" type="box" size="{_v(finger_len / 2, 0.007, 0.012)}" '
            f'pos="{_v(palm[0] + 0.015 + finger_len / 2, gy + sign * gap, gz)}" rgba="{_DARK_RGBA}"/>'
        )
    return "\n".join(parts)


def _cameras(fovy: float) -> str:
    lines = []
    for view in VIEWS:
        right, up = camera_axes(view)
        lines.append(f'<camera name="{view}" pos="0 0 0" xyaxes="{_v(*right, *up)}" fovy="{fovy:.6g}"/>')
    return "\n".join(lines)


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
<geom name="robot/head" type="box" size="0.1 0.13 0.08" rgba="{_BODY_RGBA}" {hidden}/>
{_cameras(fovy)}
</body>
</body>"""
