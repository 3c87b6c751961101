"""The driver's own Trigger services (the profile's services and gripper open / close), behaving as on the robot:
with ``sim.needs_power`` the base refuses to move until ``power_on`` and ``stand`` ran; ``estop/gentle`` cuts
power; ``sit`` and ``power_off`` too."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from std_srvs.srv import Trigger

from homiebot.robots.profile import RobotProfile
from homiebot.ros.nodes.sim_driver.arm import SimArm
from homiebot.ros.nodes.sim_driver.base import SimBase
from homiebot.ros.nodes.sim_driver.gripper import SimGripper
from homiebot.ros.nodes.sim_driver.power import Power

TRIGGER = "std_srvs/srv/Trigger"


class DriverTriggers:
    """The Trigger services on ``node`` (the driver's), each doing to the parts what the robot's does."""

    def __init__(self, node: Any, profile: RobotProfile, power: Power, base: SimBase, arm: SimArm, gripper: SimGripper,
                 lock: threading.Lock, counters: dict[str, int]) -> None:
        self.profile, self.power, self.base, self.arm, self.gripper = profile, power, base, arm, gripper
        self._lock, self.counters = lock, counters
        self.serve(node)

    def serve(self, node: Any) -> None:
        """Create the Trigger services on ``node`` (again on a restarted driver's node)."""
        profile = self.profile
        for role, iface in {**profile.services, **{f"gripper_{k}": v for k, v in profile.gripper.items()}}.items():
            if iface.type == TRIGGER:
                node.create_service(Trigger, profile.topic(iface.name), self.handler(role))

    def handler(self, role: str) -> Callable[[Trigger.Request, Trigger.Response], Trigger.Response]:
        """The service callback of ``role``."""
        def handle(request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            if role == "power_on" and not self.power.powered and not self.power.estopped:
                time.sleep(self.profile.sim.power_on_seconds)  # the motors take time to power (the streams go on)
            with self._lock:
                self.counters["services"] += 1
                response.success, response.message = self.run(role)
            return response

        return handle

    def run(self, role: str) -> tuple[bool, str]:
        """What a Trigger service does on the simulated robot (as on the real one), under the lock."""
        if role == "power_on":
            if self.power.estopped:
                return False, "the robot is E-Stopped: the operator must release the E-Stop first"
            self.power.powered = True
            return True, "powered on"
        if role in ("power_off", "estop_gentle"):
            self.power.cut()
            self.base.stop()
            return True, "motor power cut" if role == "estop_gentle" else "powered off"
        if role == "stand":
            if not self.power.powered:
                return False, "the robot is not powered on: call power_on first"
            self.power.standing = True
            return True, "standing"
        if role == "sit":
            self.power.standing = False
            self.base.stop()
            return True, "sitting"
        if role == "stop":
            self.base.stop()
            return True, "stopped"
        if role == "gripper_open":
            return self.gripper.open()
        if role == "gripper_close":
            return self.gripper.close()
        if role == "arm_stow":
            return self.arm.stow()
        if role == "arm_unstow":
            return self.arm.unstow()
        return True, f"{role}: done"  # claim, release, estop_release: nothing to simulate
