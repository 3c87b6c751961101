"""The sim driver node: its parameters and entry point (the ``homiebot_sim_driver`` console script)."""

from __future__ import annotations

from homiebot.ros.kit.common import NodeDef, Param
from homiebot.ros.kit.process import run_node
from homiebot.ros.nodes.sim_driver.driver import SimDriver
from homiebot.ros.nodes.sim_driver.estop import _estop_check
from homiebot.ros.nodes.sim_driver.upstream import _cmd_duration_check

PARAMS = (Param("robot", "spot", "robot profile: a name in config/robots or a YAML file"),
          Param("scene", "0", "the home: a seed (an integer) or a scene YAML file", types=(int,)),
          Param("camera_size", "", "publish every camera at HEIGHTxWIDTH (empty: each camera's own resolution)"),
          Param("estop_registered_after", "", "for a driver that waits for an operator's E-Stop (the profile's "
                "estop_registration): seconds until the simulated operator registers one; 'never' or a negative "
                "number: never; empty: the profile's sim.estop_registered_after", _estop_check, types=(float, int)),
          Param("rgb_cameras", True, "as spot_ros2's parameter (a profile with sim.driver: spot_ros2): true, its default, "
                "publishes every camera as bgr8; false publishes the body cameras as mono8 (a greyscale Spot)"),
          Param("cmd_duration", "", "seconds one cmd_vel moves the base (empty: the emulated driver's default, spot_ros2's "
                "0.125, or the profile's cmd_vel_timeout)", _cmd_duration_check, types=(float, int)),
          Param("lease_held_by", "", "the name of another client holding the robot's lease (an operator's tablet): the "
                "driver's claim is refused, as spot_wrapper's; empty: the lease is free"),
          Param("lockstep", False, "simulated time advances only on `step` calls (reproducible episodes) and is published on /clock"))

NODE = NodeDef("sim_driver", SimDriver, PARAMS, managed=False)  # as the real drivers: no lifecycle services


def main(args: list[str] | None = None) -> int:
    """Run the sim driver node until it is stopped; its exit status."""
    return run_node(NODE, args)
