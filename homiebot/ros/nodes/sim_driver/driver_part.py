"""The driver's own process apart from its state publisher, as spot_ros2 runs them (``spot_ros2`` serves the
commands and Trigger services, ``spot_state_publisher`` the odometry and status): a simulator-only service
``/homiebot/sim/driver_node`` (std_srvs/SetBool) stops the driver's node (false: it answers nothing from then on,
as a killed or hung ``spot_ros2`` whose odometry still flows) or starts a new one (true: a restarted driver, new
endpoints under the same name, serving at once). While the node is gone ``cmd_vel`` reaches nobody (it is the
driver's subscription) and the base stops. The robot of a driver that went away has lost its lease holder: by
the time a new driver serves, it sat and powered off (Spot's lost-comms behaviour), so a restarted driver must be
brought up again. Offered for a profile whose driver serves on a node of its own (``estop_registration``)."""

from __future__ import annotations

import threading
from typing import Any

from std_srvs.srv import SetBool

from homiebot.ros.nodes.sim_driver.base import SimBase
from homiebot.ros.nodes.sim_driver.estop import EStopRegistration
from homiebot.ros.nodes.sim_driver.power import Power
from homiebot.ros.nodes.sim_driver.triggers import DriverTriggers

DRIVER_NODE = "/homiebot/sim/driver_node"


class DriverPart:
    """Stops and restarts the driver's node (``estop.node``) while the streams go on."""

    def __init__(self, services_node: Any, estop: EStopRegistration, triggers: DriverTriggers, power: Power, base: SimBase,
                 lock: threading.Lock) -> None:
        self.estop, self.triggers, self.power, self.base, self._lock = estop, triggers, power, base, lock
        self.running = True
        if estop.profile.estop_registration is not None:
            services_node.create_service(SetBool, DRIVER_NODE, self.on_request)

    def on_request(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        """false: the driver's node stops answering; true: a new one starts and serves."""
        if request.data:
            node = self.estop.restart()
            self.triggers.serve(node)
            with self._lock:  # its robot lost its lease holder meanwhile: it sat and powered off
                self.triggers.lease.lost()
                self.power.cut()
                self.base.accepting = True
            self.estop.serve()
            self.running = True
            response.message = f"a new {node.get_fully_qualified_name()} serves"
        else:
            self.estop.halt()
            with self._lock:  # cmd_vel goes to the driver's node: it reaches nobody now
                self.base.stop()
                self.base.accepting = False
            self.running = False
            response.message = "the driver's node answers nothing now (its odometry goes on)"
        response.success = True
        return response


__all__ = ["DRIVER_NODE", "DriverPart"]
