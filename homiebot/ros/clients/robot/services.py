"""``TriggerServices``: the profile's std_srvs/Trigger services (start-up, shut-down, e-stop, arm stow and
unstow, a gripper's open and close), called by role with a timeout."""

from __future__ import annotations

import time

from rclpy.node import Node
from std_srvs.srv import Trigger

from homiebot.core.robot import CommandCounters, RobotUnavailable, Unsupported
from homiebot.robots.profile import RobotProfile


class TriggerServices:
    """A client per Trigger service of the profile, by role (the gripper's as ``gripper_<role>``);
    ``timeouts`` is each one's answer timeout (the profile's own, else ``call_timeout``)."""

    def __init__(self, node: Node, profile: RobotProfile, call_timeout: float, counters: CommandCounters) -> None:
        self.profile, self.call_timeout, self.counters = profile, call_timeout, counters
        p = profile
        triggers = {role: i for role, i in {**p.services, **{f"gripper_{k}": v for k, v in p.gripper.items()}}.items()
                    if i.type == "std_srvs/srv/Trigger"}
        self.clients = {role: node.create_client(Trigger, p.topic(i.name)) for role, i in triggers.items()}
        self.timeouts = {role: i.timeout or call_timeout for role, i in triggers.items()}

    def __contains__(self, role: str) -> bool:
        return role in self.clients

    def call(self, role: str) -> str:
        """Call a Trigger service of the profile by role; RobotUnavailable when it fails or does not answer."""
        client = self.clients.get(role)
        if client is None:
            raise Unsupported(f"{self.profile.robot}'s profile has no service '{role}'")
        name, timeout = client.srv_name, self.timeouts[role]
        if not client.wait_for_service(timeout_sec=self.call_timeout):
            raise RobotUnavailable(f"{self.profile.robot}: the service {name} is not available")
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"{self.profile.robot}: {name} did not answer within {timeout:.0f} s")
            time.sleep(0.01)
        result = future.result()
        if not result.success:
            raise RobotUnavailable(f"{self.profile.robot}: {name} refused: {result.message}")
        self.counters.add(f"service:{role}")
        return str(result.message)


__all__ = ["TriggerServices"]
