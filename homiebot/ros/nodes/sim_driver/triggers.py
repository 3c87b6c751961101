"""The driver's own Trigger services (the profile's services and gripper open / close), behaving as on the robot:
with ``sim.needs_power`` the base refuses to move until ``power_on`` and ``stand`` ran; ``sit`` and ``power_off``
cut that again. As spot_ros2 through spot_wrapper: ``claim`` is refused while another client holds the lease;
``estop/gentle`` makes the driver's endpoint the robot's only E-Stop (the operator's is removed) and cuts power
until ``estop/release``; ``arm_stow`` / ``arm_unstow`` power on and stand first and answer when the motion ended."""

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
from homiebot.ros.nodes.sim_driver.lease import SimLease
from homiebot.ros.nodes.sim_driver.power import Power

TRIGGER = "std_srvs/srv/Trigger"


class DriverTriggers:
    """The Trigger services on ``node`` (the driver's), each doing to the parts what the robot's does."""

    def __init__(self, node: Any, profile: RobotProfile, power: Power, base: SimBase, arm: SimArm, gripper: SimGripper,
                 lock: threading.Lock, counters: dict[str, int], lease: SimLease | None = None, real_time: bool = True) -> None:
        self.profile, self.power, self.base, self.arm, self.gripper = profile, power, base, arm, gripper
        self._lock, self.counters = lock, counters
        self.lease = lease or SimLease()
        self.real_time = real_time  # in lock-step a motion's time passes only in steps: the arm's services answer at once
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
                motion = self.arm.motion_seconds if role in ("arm_stow", "arm_unstow") and response.success else 0.0
            if motion and self.real_time:
                time.sleep(motion)  # the service answers once the arm arrived (spot_wrapper: block_until_arm_arrives)
            return response

        return handle

    def run(self, role: str) -> tuple[bool, str]:
        """What a Trigger service does on the simulated robot (as on the real one), under the lock."""
        if role == "power_on":
            if self.power.estopped:
                return False, "the robot is E-Stopped: the operator must release the E-Stop first"
            self.power.powered = True
            return True, "powered on"
        if role == "power_off":
            self.power.cut()
            self.base.stop()
            return True, "powered off"
        if role == "estop_gentle":  # SpotWrapper.assertEStop(severe=False): resetEStop if it has no endpoint, settle, cut
            self.power.driver_stop()
            self.base.stop()
            return True, "Success"
        if role == "estop_release":  # SpotWrapper.disengageEStop: its keep-alive allows motor power again
            if not self.power.driver_endpoint:
                return False, "Exception while attempting to disengage estop 'NoneType' object has no attribute 'allow'"
            self.power.driver_estop = False
            return True, "Success"
        if role == "claim":
            return self.lease.claim()
        if role == "release":
            return self.lease.release()
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
        if role in ("arm_stow", "arm_unstow"):
            if problem := self._power_and_stand():
                return False, problem
            return self.arm.stow() if role == "arm_stow" else self.arm.unstow()
        return True, f"{role}: done"  # nothing to simulate

    def _power_and_stand(self) -> str:
        """What the arm's services do first (spot_wrapper ``ensure_arm_power_and_stand``): power on and stand; why
        they cannot, or ""."""
        if not self.power.powered:
            if self.power.estopped:
                return ("Exception occured while Spot or its arm were trying to power on: the robot is E-Stopped "
                        "(the E-Stop must be released first)")
            self.power.powered = True
        self.power.standing = True
        return ""
