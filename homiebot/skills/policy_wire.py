"""JSON forms of policy observations and commands, for policies served by another process.

Arrays travel as ``{"nd": dtype, "shape": [...], "b64": base64 of the C-ordered bytes}`` (exact and
compact); plain nested lists are accepted too. Commands travel as small tagged objects::

    {"kind": "waypoints", "points": [[x, y], ...], "yaw": [...] | null}
    {"kind": "discrete", "move": "forward"}
    {"kind": "ee", "translation": [x, y, z], "rotation": [r, p, y], "gripper": 0.0, "terminate": false}
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from homiebot.skills.policy import Command, DiscreteMove, EndEffectorDelta, Move, PolicyObservation, Velocity, Waypoints

ALLOWED_DTYPES = frozenset({"uint8", "bool", "int16", "int32", "int64", "float16", "float32", "float64"})


class WireError(ValueError):
    """A message that is not a valid observation or command."""


def encode_array(array: np.ndarray | None) -> dict | None:
    """An array as a JSON-safe dict (None stays None)."""
    if array is None:
        return None
    a = np.ascontiguousarray(array)
    if a.dtype.name not in ALLOWED_DTYPES:
        a = a.astype(np.float32)
    return {"nd": a.dtype.name, "shape": list(a.shape), "b64": base64.b64encode(a.tobytes()).decode("ascii")}


def decode_array(data: Any) -> np.ndarray | None:
    """The inverse of ``encode_array``; nested lists become float32 (or bool/uint8 as they are)."""
    if data is None:
        return None
    if isinstance(data, list):
        return np.asarray(data)
    if not isinstance(data, dict) or data.get("nd") not in ALLOWED_DTYPES:
        raise WireError(f"not an encoded array: {str(data)[:80]}")
    try:
        raw = base64.b64decode(data["b64"], validate=True)
        return np.frombuffer(raw, dtype=np.dtype(data["nd"])).reshape(tuple(int(n) for n in data["shape"])).copy()
    except (KeyError, ValueError, TypeError) as err:
        raise WireError(f"bad encoded array: {err}") from None


def encode_observation(obs: PolicyObservation) -> dict:
    """A ``PolicyObservation`` as JSON-safe data (``extras`` must already be JSON-safe)."""
    return {"rgb": encode_array(obs.rgb), "instruction": obs.instruction, "depth": encode_array(obs.depth),
            "goal_image": encode_array(obs.goal_image), "goal_mask": encode_array(obs.goal_mask), "step": int(obs.step),
            "extras": obs.extras}


def decode_observation(data: dict) -> PolicyObservation:
    """The inverse of ``encode_observation``."""
    if not isinstance(data, dict) or "rgb" not in data:
        raise WireError("an observation needs at least 'rgb'")
    rgb = decode_array(data["rgb"])
    if rgb is None:
        raise WireError("an observation's 'rgb' must be an image, not null")
    return PolicyObservation(rgb=rgb.astype(np.uint8, copy=False), instruction=str(data.get("instruction", "")),
                             depth=decode_array(data.get("depth")), goal_image=decode_array(data.get("goal_image")),
                             goal_mask=decode_array(data.get("goal_mask")), step=int(data.get("step", 0)),
                             extras=dict(data.get("extras") or {}))


def encode_command(cmd: Command) -> dict:
    """One command as JSON-safe data."""
    if isinstance(cmd, Waypoints):
        return {"kind": "waypoints", "points": np.asarray(cmd.points, dtype=float).tolist(),
                "yaw": None if cmd.yaw is None else np.asarray(cmd.yaw, dtype=float).tolist()}
    if isinstance(cmd, DiscreteMove):
        return {"kind": "discrete", "move": Move(cmd.move).value}
    if isinstance(cmd, EndEffectorDelta):
        return {"kind": "ee", "translation": np.asarray(cmd.translation, dtype=float).tolist(),
                "rotation": np.asarray(cmd.rotation, dtype=float).tolist(), "gripper": float(cmd.gripper),
                "terminate": bool(cmd.terminate)}
    if isinstance(cmd, Velocity):
        return {"kind": "velocity", "linear": float(cmd.linear), "angular": float(cmd.angular)}
    raise WireError(f"not a policy command: {type(cmd).__name__}")


def decode_command(data: dict) -> Command:
    """The inverse of ``encode_command``; malformed commands raise ``WireError``."""
    try:
        kind = data["kind"]
        if kind == "waypoints":
            points = np.asarray(data["points"], dtype=float).reshape(-1, 2)
            yaw = data.get("yaw")
            return Waypoints(points, None if yaw is None else np.asarray(yaw, dtype=float).reshape(-1))
        if kind == "discrete":
            return DiscreteMove(Move(data["move"]))
        if kind == "ee":
            return EndEffectorDelta(np.asarray(data["translation"], dtype=float).reshape(3),
                                    np.asarray(data["rotation"], dtype=float).reshape(3), float(data["gripper"]),
                                    bool(data.get("terminate", False)))
        if kind == "velocity":
            linear, angular = float(data["linear"]), float(data["angular"])
            if not (np.isfinite(linear) and np.isfinite(angular)):
                raise ValueError("velocity must be finite")
            return Velocity(linear, angular)
    except (KeyError, TypeError, ValueError) as err:
        raise WireError(f"bad command {str(data)[:80]}: {err}") from None
    raise WireError(f"unknown command kind {kind!r}; known: waypoints, discrete, ee, velocity")


def encode_commands(commands: list[Command]) -> list[dict]:
    return [encode_command(c) for c in commands]


def decode_commands(data: list) -> list[Command]:
    if not isinstance(data, list):
        raise WireError("commands must be a list")
    return [decode_command(d) for d in data]


__all__ = ["WireError", "decode_array", "decode_command", "decode_commands", "decode_observation", "encode_array",
           "encode_command", "encode_commands", "encode_observation"]
