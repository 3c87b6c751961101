"""Worlds the agent acts in: the embedded MuJoCo home, and bridges to other simulators and robots."""

from homiebot.core.world import World

__all__ = ["World"]
