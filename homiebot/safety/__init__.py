"""The safety layer: limits, watchdog, e-stop, cancel, keep-out rules and operator approval.

It sits between skills and the robot (``SafeRobot`` wraps any ``homiebot.core.robot.Robot``) and between
the error detector and the executor (``SafetyGate``), the same in simulation and on a robot. It is
on by default: velocity, acceleration and end-effector limits and the watchdog always apply;
keep-out rules and approval apply when configured (``safety:`` in the run config).
"""

from homiebot.safety.gate import SafetyGate
from homiebot.safety.robot import SafeRobot
from homiebot.safety.settings import KeepOutRule, SafetySettings
from homiebot.safety.state import SafetyState, Stopped

__all__ = ["KeepOutRule", "SafeRobot", "SafetyGate", "SafetySettings", "SafetyState", "Stopped"]
