"""Typed forms of a served policy's observations, commands and camera (homiebot_msgs PolicyAct,
PolicyCommand, PolicyCamera, DescribePolicy): the policy server and ``RemotePolicy`` both use these."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from homiebot_msgs.msg import KeyValue, PolicyCamera, PolicyCommand
from homiebot_msgs.srv import PolicyAct
from sensor_msgs.msg import Image

from homiebot.core.camera_geometry import TrainingCamera
from homiebot.policies.base import Command, DiscreteMove, EndEffectorDelta, Move, PolicyObservation, Velocity, Waypoints
from homiebot.ros.messages.common import image_pixels

ENCODINGS = {"rgb8": (np.uint8, 3), "32FC1": (np.float32, 1), "mono8": (np.uint8, 1)}


class PolicyMessageError(ValueError):
    """A request or reply whose fields cannot be read (the message says which)."""


def image_msg(array: np.ndarray | None, encoding: str) -> Image:
    """An array as an Image of ``encoding``; None gives the empty (0 x 0) image that means absent."""
    msg = Image(encoding=encoding)
    if array is None:
        return msg
    dtype, channels = ENCODINGS[encoding]
    a = np.ascontiguousarray(array, dtype=dtype)
    msg.height, msg.width = int(a.shape[0]), int(a.shape[1])
    msg.step = msg.width * channels * a.itemsize
    msg.data = a.tobytes()
    return msg


def image_array(msg: Image, encoding: str, field: str) -> np.ndarray | None:
    """The pixels of an Image that must be of ``encoding``; None for the empty image."""
    if msg.height == 0 and msg.width == 0:
        return None
    dtype, channels = ENCODINGS[encoding]
    try:
        pixels = image_pixels(msg, encoding, dtype, channels, field)
    except ValueError as err:
        raise PolicyMessageError(str(err)) from None
    return pixels if channels > 1 else pixels.copy()


def act_request(obs: PolicyObservation) -> PolicyAct.Request:
    """A policy step's request from an observation (``extras`` must be JSON-safe)."""
    mask = None if obs.goal_mask is None else np.asarray(obs.goal_mask).astype(np.uint8)
    try:
        extras = [KeyValue(key=str(k), value=json.dumps(v)) for k, v in obs.extras.items()]
    except TypeError as err:
        raise PolicyMessageError(f"extras must be JSON-safe to reach a policy server: {err}") from None
    return PolicyAct.Request(rgb=image_msg(obs.rgb, "rgb8"), depth=image_msg(obs.depth, "32FC1"),
                             goal_image=image_msg(obs.goal_image, "rgb8"), goal_mask=image_msg(mask, "mono8"),
                             instruction=obs.instruction, step=int(obs.step), extras=extras)


def observation_of(req: PolicyAct.Request) -> PolicyObservation:
    """The observation a step's request carries (PolicyMessageError names a field that cannot be read)."""
    rgb = image_array(req.rgb, "rgb8", "rgb")
    if rgb is None:
        raise PolicyMessageError("rgb: an observation needs an image")
    mask = image_array(req.goal_mask, "mono8", "goal_mask")
    extras: dict[str, Any] = {}
    for kv in req.extras:
        try:
            extras[kv.key] = json.loads(kv.value)
        except ValueError:
            raise PolicyMessageError(f"extras: the value of '{kv.key[:40]}' is not JSON") from None
    return PolicyObservation(rgb=rgb, instruction=req.instruction, depth=image_array(req.depth, "32FC1", "depth"),
                             goal_image=image_array(req.goal_image, "rgb8", "goal_image"),
                             goal_mask=None if mask is None else mask.astype(bool), step=int(req.step), extras=extras)


def command_msg(cmd: Command) -> PolicyCommand:
    """One policy command, typed."""
    if isinstance(cmd, Waypoints):
        yaw = [] if cmd.yaw is None else np.asarray(cmd.yaw, dtype=float).reshape(-1).tolist()
        return PolicyCommand(kind=PolicyCommand.WAYPOINTS, points=np.asarray(cmd.points, dtype=float).reshape(-1).tolist(), yaw=yaw)
    if isinstance(cmd, DiscreteMove):
        return PolicyCommand(kind=PolicyCommand.DISCRETE, move=Move(cmd.move).value)
    if isinstance(cmd, EndEffectorDelta):
        return PolicyCommand(kind=PolicyCommand.END_EFFECTOR, translation=np.asarray(cmd.translation, dtype=float).reshape(3),
                             rotation=np.asarray(cmd.rotation, dtype=float).reshape(3), gripper=float(cmd.gripper),
                             terminate=bool(cmd.terminate))
    if isinstance(cmd, Velocity):
        return PolicyCommand(kind=PolicyCommand.VELOCITY, linear=float(cmd.linear), angular=float(cmd.angular))
    raise PolicyMessageError(f"not a policy command: {type(cmd).__name__}")


def command_of(msg: PolicyCommand) -> Command:
    """The command a PolicyCommand carries (PolicyMessageError when its fields do not fit its kind)."""
    values = [*msg.points, *msg.yaw, *msg.translation, *msg.rotation, msg.gripper, msg.linear, msg.angular]
    if not np.isfinite(np.asarray(values, dtype=float)).all():
        raise PolicyMessageError(f"a command of kind {msg.kind} with values that are not finite")
    if msg.kind == PolicyCommand.WAYPOINTS:
        points = np.asarray(msg.points, dtype=float)
        if points.size == 0 or points.size % 2 or (len(msg.yaw) and len(msg.yaw) != points.size // 2):
            raise PolicyMessageError(f"waypoints: {points.size} coordinates and {len(msg.yaw)} headings (x, y pairs, one heading each or none)")
        return Waypoints(points.reshape(-1, 2), np.asarray(msg.yaw, dtype=float) if len(msg.yaw) else None)
    if msg.kind == PolicyCommand.DISCRETE:
        try:
            return DiscreteMove(Move(msg.move))
        except ValueError:
            raise PolicyMessageError(f"unknown move '{msg.move[:20]}'; known: {', '.join(m.value for m in Move)}") from None
    if msg.kind == PolicyCommand.END_EFFECTOR:
        return EndEffectorDelta(np.asarray(msg.translation, dtype=float), np.asarray(msg.rotation, dtype=float), float(msg.gripper),
                                bool(msg.terminate))
    if msg.kind == PolicyCommand.VELOCITY:
        return Velocity(float(msg.linear), float(msg.angular))
    raise PolicyMessageError(f"unknown command kind {msg.kind} (WAYPOINTS=0, DISCRETE=1, END_EFFECTOR=2, VELOCITY=3)")


def camera_msg(camera: TrainingCamera) -> PolicyCamera:
    """A training camera, typed."""
    capture = camera.capture_size or (0, 0)
    return PolicyCamera(height=camera.height, width=camera.width, hfov_deg=float(camera.hfov_deg), input_height=camera.input_size[0],
                        input_width=camera.input_size[1], resize=camera.resize, capture_height=capture[0], capture_width=capture[1],
                        note=camera.note)


def camera_of(msg: PolicyCamera) -> TrainingCamera:
    """The training camera a PolicyCamera describes (PolicyMessageError when it is not one)."""
    try:
        return TrainingCamera(height=msg.height, width=msg.width, hfov_deg=msg.hfov_deg, input_size=(msg.input_height, msg.input_width),
                              resize=msg.resize, capture_size=(msg.capture_height, msg.capture_width) if msg.capture_height else None,
                              note=msg.note)
    except ValueError as err:
        raise PolicyMessageError(f"camera: {err}") from None
