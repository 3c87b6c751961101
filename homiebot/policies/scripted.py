"""``ScriptedPolicy``: plays a fixed list of commands, for tests, demos and checking a control path.

Unlike the expert policies it needs no simulator truth, so it also runs inside a policy server
process. Example skill config::

    {name: policy_skill, model: NoMaD, params: {policy: scripted, policy_params:
        {commands: [{kind: waypoints, points: [[0.4, 0.0]]}], repeat: true, delay: 0.0}}}
"""

from __future__ import annotations

import time

import numpy as np

from homiebot.policies.base import Command, DiscreteMove, Move, Policy, PolicyObservation
from homiebot.policies.wire import decode_commands


class ScriptedPolicy(Policy):
    """Returns the scripted commands one per call (``chunk`` per call), then stops.

    ``commands`` use the wire form of ``homiebot.policies.wire``; ``repeat`` cycles through them
    forever; ``delay`` sleeps that many seconds in every ``act`` (a slow model); ``family``,
    ``image_size`` and ``rate_hz`` describe the model it stands in for.
    """

    def __init__(self, commands: list[dict], repeat: bool = False, delay: float = 0.0, chunk: int = 1,
                 family: str = "scripted", image_size: tuple[int, int] | list[int] = (32, 32), rate_hz: float = 4.0) -> None:
        self.commands: list[Command] = decode_commands(commands)
        if not self.commands:
            raise ValueError("a scripted policy needs at least one command")
        self.repeat, self.delay, self.chunk = bool(repeat), float(delay), max(1, int(chunk))
        self.family, self.image_size, self.rate_hz = family, (int(image_size[0]), int(image_size[1])), float(rate_hz)
        self.calls = 0
        self._next = 0

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self._next = 0

    def act(self, obs: PolicyObservation) -> list[Command]:
        self.calls += 1
        if self.delay > 0:
            time.sleep(self.delay)
        out: list[Command] = []
        for _ in range(self.chunk):
            if self._next >= len(self.commands):
                if not self.repeat:
                    out.append(DiscreteMove(Move.STOP))
                    break
                self._next = 0
            out.append(self.commands[self._next])
            self._next += 1
        return out


__all__ = ["ScriptedPolicy"]
