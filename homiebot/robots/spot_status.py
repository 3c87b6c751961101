"""Spot's status as spot_ros2 publishes it, read by the bridge and written by the sim driver.

spot_ros2's state publisher (node ``spot_state_publisher``) sends, under the driver's namespace
(spot_driver/src/robot_state/state_middleware_handle.cpp at bdee4a4; QoS reliable, transient local, depth 1):

* ``status/estop``: ``spot_msgs/msg/EStopStateArray``, every E-Stop endpoint and whether it stops the robot
  (``STATE_ESTOPPED``): an operator's E-Stop cuts motor power and the robot refuses commands until released;
* ``status/power_states``: ``spot_msgs/msg/PowerState``, ``motor_power_state`` (OFF, ON, POWERING_ON ...);
* ``status/behavior_faults``: ``spot_msgs/msg/BehaviorFaultState``, active faults (a fall) that stop the
  robot's behaviour until cleared.

The types are built from ``interfaces/spot_msgs`` by ``tools/build_interfaces.py``. ``stop_reason`` says in one
line which of them stops the robot, or None.
"""

from __future__ import annotations

from typing import Any

from homiebot.robots.built import built_module

STATUS_TYPES = {"estop": "spot_msgs/msg/EStopStateArray", "power": "spot_msgs/msg/PowerState",
                "faults": "spot_msgs/msg/BehaviorFaultState"}
# the constants of spot_msgs' definitions (interfaces/spot_msgs/msg)
ESTOPPED = 1  # EStopState.STATE_ESTOPPED
NOT_ESTOPPED = 2  # EStopState.STATE_NOT_ESTOPPED
ESTOP_KINDS = {0: "", 1: "hardware ", 2: "software "}
POWER_NAMES = {0: "unknown", 1: "off", 2: "on", 3: "powering on", 4: "powering off", 5: "in error"}
POWER_OFF, POWER_ON, POWER_ERROR = 1, 2, 5
FAULT_CAUSES = {0: "unknown cause", 1: "a fall", 2: "hardware"}
FAULT_STATUS = {0: "", 1: ", clearable", 2: ", not clearable"}


def status_type(role: str, robot: str) -> Any:
    """The message class of a status role (estop, power, faults), or RobotUnavailable saying how to build it."""
    package, _, name = STATUS_TYPES[role].partition("/msg/")
    return getattr(built_module(f"{package}.msg", robot, f"reads {STATUS_TYPES[role]}"), name)


def engaged_estops(msg: Any) -> list[str]:
    """The E-Stops of an EStopStateArray that stop the robot now, each as "<kind> E-Stop '<name>'"."""
    return [f"{ESTOP_KINDS.get(int(e.type), '')}E-Stop '{e.name}'" for e in msg.estop_states if int(e.state) == ESTOPPED]


def stop_reason(estop: Any | None, power: Any | None, faults: Any | None, powered_expected: bool) -> str | None:
    """Which status stops the robot, in one line (None: none does): an engaged E-Stop first (it also cuts
    power), then an active behaviour fault, then motor power off or in error where ``powered_expected`` (the
    power message is newer than the bridge's last power-on)."""
    if estop is not None and (engaged := engaged_estops(estop)):
        return f"stopped by the operator's {', '.join(engaged)} (motor power cut; release it to go on)"
    if faults is not None and len(faults.faults):
        listed = ", ".join(f"{f.behavior_fault_id} ({FAULT_CAUSES.get(int(f.cause), 'unknown cause')}"
                           f"{FAULT_STATUS.get(int(f.status), '')})" for f in faults.faults)
        return f"stopped by behavior fault {listed}"
    if power is not None and powered_expected and int(power.motor_power_state) in (POWER_OFF, POWER_ERROR):
        return f"motor power is {POWER_NAMES[int(power.motor_power_state)]} (lost since start-up)"
    return None


__all__ = ["ESTOPPED", "NOT_ESTOPPED", "POWER_ERROR", "POWER_OFF", "POWER_ON", "STATUS_TYPES", "engaged_estops",
           "status_type", "stop_reason"]
