"""The driver's own settings that homiebot's promises depend on, read from its node's parameters at bring-up.

spot_ros2's ``start_estop`` (spot_ros2.py, ``declare_parameter("start_estop", False)``): with ``true`` the driver
registers an E-Stop endpoint of its own and does not wait for the operator's, and its ``claim`` / ``power_on``
(which homiebot calls at start-up) then run under the driver's E-Stop: homiebot's promise never to take E-Stop
authority from the operator holds only with ``false``. A driver that exposes the parameter as true is refused at
start-up with one line; one that does not expose it (or does not answer in time) is not judged.
"""

from __future__ import annotations

import time
from typing import Any

from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters
from rclpy.node import Node

from homiebot.robots.profile import RobotProfile

START_ESTOP = "start_estop"


def driver_parameters(node: Node, profile: RobotProfile, names: list[str], timeout: float) -> dict[str, Any]:
    """The driver node's parameters of ``names`` that it has (bool, int, float or str values), asked through its
    ``get_parameters`` service from ``node`` (spun by its owner); {} when it has no such node or no answer comes."""
    driver = profile.driver_node()
    if driver is None:
        return {}
    client = node.create_client(GetParameters, f"{driver}/get_parameters")
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            return {}
        future = client.call_async(GetParameters.Request(names=names))
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not future.done() or future.result() is None:
            client.remove_pending_request(future)
            return {}
        values: dict[str, Any] = {}
        for name, value in zip(names, future.result().values):
            kind = value.type
            if kind == ParameterType.PARAMETER_BOOL:
                values[name] = bool(value.bool_value)
            elif kind == ParameterType.PARAMETER_INTEGER:
                values[name] = int(value.integer_value)
            elif kind == ParameterType.PARAMETER_DOUBLE:
                values[name] = float(value.double_value)
            elif kind == ParameterType.PARAMETER_STRING:
                values[name] = str(value.string_value)
        return values
    finally:
        node.destroy_client(client)


def start_estop_problem(node: Node, profile: RobotProfile, timeout: float) -> str | None:
    """One line when the driver runs with ``start_estop: true``; None when false, or not told."""
    if driver_parameters(node, profile, [START_ESTOP], timeout).get(START_ESTOP) is not True:
        return None
    return (f"{profile.robot}: its driver ({profile.driver_node()}) runs with start_estop: true, so it registers an "
            "E-Stop of its own and homiebot's claim and power_on would act under it, not under the operator's: "
            "restart the driver with start_estop: false (its default; docs/robots.md, bring-up checklist)")


__all__ = ["START_ESTOP", "driver_parameters", "start_estop_problem"]
