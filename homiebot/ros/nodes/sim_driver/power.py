"""The simulated robot's motor power and stance: with ``sim.needs_power`` the base moves only once powered on
and standing, as Spot's."""

from __future__ import annotations


class Power:
    """Whether the motors are powered and the robot stands (both at start for a robot that needs no power-on)."""

    def __init__(self, needs_power: bool) -> None:
        self.powered = self.standing = not needs_power
        self.estopped = False  # the operator's E-Stop is engaged: power stays off (power_on is refused)

    @property
    def can_move(self) -> bool:
        """Whether commands move the robot."""
        return self.powered and self.standing

    def cut(self) -> None:
        """Motor power off (power_off, a gentle E-Stop): the robot sits down too."""
        self.powered = self.standing = False
