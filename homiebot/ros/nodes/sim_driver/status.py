"""The robot's status as spot_ros2's state publisher sends it (the profile's ``status``: ``status/estop``,
``status/power_states``, ``status/behavior_faults``, spot_msgs; ``homiebot.robots.spot_status``), and the simulated
operator's E-Stop: ``/homiebot/sim/operator_estop`` (std_srvs/SetBool, simulator only) engages it (true: motor
power cut, the robot sits, power_on refused) or releases it (false: power stays off until power_on, as on Spot)."""

from __future__ import annotations

import threading
from typing import Any

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_srvs.srv import SetBool

from homiebot.core.robot import RobotUnavailable
from homiebot.robots.profile import RobotProfile
from homiebot.robots.spot_status import ESTOPPED, NOT_ESTOPPED, POWER_OFF, POWER_ON, status_type
from homiebot.ros.messages.common import stamp_of
from homiebot.ros.nodes.sim_driver.base import SimBase
from homiebot.ros.nodes.sim_driver.power import DRIVER_ESTOP_NAME, Power

OPERATOR_ESTOP = "/homiebot/sim/operator_estop"
ESTOP_NAME = "operator"  # the simulated operator's E-Stop endpoint (a tablet or an E-Stop client on a real Spot)
SOFTWARE = 2  # EStopState.TYPE_SOFTWARE
# as spot_ros2's publishers (middleware_handle_base.hpp, makePublisherQoS: depth 1, transient local, reliable)
STATUS_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


class SimStatus:
    """Publishes the profile's status topics (none without ``status``) and serves the operator's E-Stop."""

    def __init__(self, node: Any, services_node: Any, profile: RobotProfile, power: Power, base: SimBase,
                 lock: threading.Lock) -> None:
        self.profile, self.power, self.base, self._lock = profile, power, base, lock
        self.pubs: dict[str, tuple[Any, Any]] = {}
        for role, iface in profile.status.items():
            try:
                msg_type = status_type(role, profile.robot)
            except RobotUnavailable as err:  # spot_msgs not built here: the driver goes on without its status
                node.get_logger().warning(f"sim driver: {err}; {profile.topic(iface.name)} is not published")
                continue
            self.pubs[role] = (node.create_publisher(msg_type, profile.topic(iface.name), STATUS_QOS), msg_type)
        self.faults: list[tuple[int, int, int]] = []  # active behaviour faults: (id, cause, status)
        if self.pubs:
            services_node.create_service(SetBool, OPERATOR_ESTOP, self.on_operator_estop)

    def on_operator_estop(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        """The simulated operator presses (true) or releases (false) the E-Stop. After the driver's ``estop/*``
        replaced the robot's E-Stop configuration the operator's endpoint is gone from it: pressing does nothing."""
        with self._lock:
            if self.power.driver_endpoint:
                response.success = False
                response.message = ("the operator's E-Stop endpoint is no longer in the robot's E-Stop configuration: the "
                                    "driver's estop/* made its own endpoint the only one (force_simple_setup)")
                return response
            self.power.operator_estop = bool(request.data)
            if request.data:
                self.power.cut()
                self.base.stop()
        response.success, response.message = True, "E-Stop engaged: motor power cut" if request.data else "E-Stop released"
        return response

    def publish(self, stamp: int) -> None:
        """The status of the instant ``stamp`` (under the lock)."""
        if not self.pubs:
            return
        if "estop" in self.pubs:
            pub, cls = self.pubs["estop"]
            estop = cls()
            element = _element(cls, "estop_states")
            # the endpoints in the robot's E-Stop configuration: the operator's, or the driver's once it replaced it
            name, engaged = ((DRIVER_ESTOP_NAME, self.power.driver_estop) if self.power.driver_endpoint
                             else (ESTOP_NAME, self.power.operator_estop))
            state = element(name=name, type=SOFTWARE, state=ESTOPPED if engaged else NOT_ESTOPPED)
            state.header.stamp = stamp_of(stamp)
            estop.estop_states = [state]
            pub.publish(estop)
        if "power" in self.pubs:
            pub, cls = self.pubs["power"]
            msg = cls(motor_power_state=POWER_ON if self.power.powered else POWER_OFF, locomotion_charge_percentage=100.0)
            msg.header.stamp = stamp_of(stamp)
            pub.publish(msg)
        if "faults" in self.pubs:
            pub, cls = self.pubs["faults"]
            element = _element(cls, "faults")
            pub.publish(cls(faults=[element(behavior_fault_id=i, cause=c, status=s) for i, c, s in self.faults]))


def _element(cls: Any, field: str) -> Any:
    """The message class of a sequence field's elements (spot_msgs' EStopState, BehaviorFault)."""
    import importlib

    type_name = cls.get_fields_and_field_types()[field]  # e.g. "sequence<spot_msgs/EStopState>"
    package, _, name = type_name[len("sequence<"):-1].partition("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


__all__ = ["OPERATOR_ESTOP", "SimStatus"]
