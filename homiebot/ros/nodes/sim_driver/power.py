"""The simulated robot's motor power, stance and E-Stops: with ``sim.needs_power`` the base moves only once powered
on and standing, as Spot's. Two E-Stop endpoints can cut power: the operator's (a tablet or an E-Stop client,
registered at start-up) and, once the driver's ``estop/*`` services were called, the driver's own."""

from __future__ import annotations

DRIVER_ESTOP_NAME = "ros_spot"  # spot_wrapper's SPOT_CLIENT_NAME: the name of the endpoint its resetEStop registers


class Power:
    """Whether the motors are powered and the robot stands (both at start for a robot that needs no power-on)."""

    def __init__(self, needs_power: bool) -> None:
        self.powered = self.standing = not needs_power
        self.operator_estop = False  # the operator's E-Stop is engaged: power stays off (power_on is refused)
        self.driver_endpoint = False  # the driver registered its own endpoint (estop/*): the operator's was removed
        self.driver_estop = False  # the driver's endpoint asserts a stop

    @property
    def estopped(self) -> bool:
        """Whether an E-Stop endpoint holds the motors off."""
        return self.operator_estop or self.driver_estop

    @property
    def can_move(self) -> bool:
        """Whether commands move the robot."""
        return self.powered and self.standing

    def cut(self) -> None:
        """Motor power off (power_off, an E-Stop): the robot sits down too."""
        self.powered = self.standing = False

    def driver_stop(self) -> None:
        """The driver's ``estop/gentle`` (spot_wrapper ``assertEStop(severe=False)``): without an endpoint of its
        own it first makes one the robot's sole E-Stop (``resetEStop`` -> ``force_simple_setup``), which removes the
        operator's; then the robot settles and power is cut, until ``estop/release``."""
        self.driver_endpoint = self.driver_estop = True
        self.operator_estop = False  # that endpoint is no longer in the robot's E-Stop configuration
        self.cut()


__all__ = ["DRIVER_ESTOP_NAME", "Power"]
