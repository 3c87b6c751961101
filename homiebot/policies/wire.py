"""JSON forms of policy commands: how a run config writes a scripted policy's commands and how the sim
driver's expert service answers. (A served policy's commands are typed: ``homiebot.ros.messages.policy``.)
Commands are small tagged objects::

    {"kind": "waypoints", "points": [[x, y], ...], "yaw": [...] | null}
    {"kind": "discrete", "move": "forward"}
    {"kind": "ee", "translation": [x, y, z], "rotation": [r, p, y], "gripper": 0.0, "terminate": false}
"""

from __future__ import annotations

import numpy as np

from homiebot.policies.base import Command, DiscreteMove, EndEffectorDelta, Move, Velocity, Waypoints


class WireError(ValueError):
    """A message that is not a valid command."""


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


__all__ = ["WireError", "decode_command", "decode_commands", "encode_command", "encode_commands"]
