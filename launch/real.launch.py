"""Launch the homiebot graph against a real robot (or another simulator).

    ros2 launch homiebot real.launch.py config:=/path/robot.yaml [planner:=openai] [out_dir:=runs] [record_bag:=false] [namespace:=robot1]
    ros2 launch homiebot real.launch.py robot:=spot                   # config/robot_spot.yaml (the robot's driver runs)
    ros2 launch homiebot real.launch.py robot:=spot sim_driver:=true  # config/robots/spot_sim.yaml (+ the sim driver)

``robot:=<name>`` picks the shipped run configuration of that robot: ``config/robot_<name>.yaml``, or
with ``sim_driver:=true`` ``config/robots/<name>_sim.yaml`` (the same graph plus the sim driver node,
which serves the embedded home under the robot's driver names). The config's ``world`` names the bridge plugin (registered under the ``homiebot.worlds`` entry
points) that the world node hosts; the other nodes are the same as in simulation. Discovery is not
limited to this machine, so that nodes on a GPU server and on the robot find each other.
"""

import os

from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from homiebot.core.resources import robot_config
from homiebot.ros.bringup.graph import graph
from homiebot.ros.kit.names import namespace
from launch import LaunchDescription

RESPAWN_DELAY = 1.0  # seconds before a node that died is started again


def _share() -> str:
    """Where config/ is: share/homiebot once installed (launch/ sits next to it), the repository root in a checkout."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _nodes(context, *args, **kwargs):
    config = LaunchConfiguration("config").perform(context)
    robot = LaunchConfiguration("robot").perform(context)
    sim_driver = LaunchConfiguration("sim_driver").perform(context).lower() in ("true", "1", "yes")
    if not config and robot:
        config = robot_config(robot, sim_driver, os.path.join(_share(), "config"))
    if not config:
        raise RuntimeError("real.launch.py needs robot:=spot|fetch [sim_driver:=true] or config:=/path/to/robot.yaml")
    record_bag = LaunchConfiguration("record_bag").perform(context).lower() in ("true", "1", "yes")
    return [
        Node(package="homiebot", executable=spec.executable, name=spec.name, namespace=spec.namespace, parameters=[spec.parameters],
             remappings=list(spec.remappings.items()), output="screen",
             respawn=True, respawn_delay=RESPAWN_DELAY,  # as `homiebot up` does; the task manager fails the episode in flight
             prefix=spec.python)  # a policy server runs its console script with its own environment's interpreter
        for spec in graph(config, LaunchConfiguration("planner").perform(context),
                          os.path.abspath(LaunchConfiguration("out_dir").perform(context)), record_bag=record_bag,
                          namespace=namespace(LaunchConfiguration("namespace").perform(context)))
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value="", description="run configuration YAML with the robot's world"),
        DeclareLaunchArgument("robot", default_value="", description="a shipped robot (spot, fetch) instead of config"),
        DeclareLaunchArgument("sim_driver", default_value="false", description="with robot: run against the sim driver"),
        DeclareLaunchArgument("planner", default_value="", description="planner backend (empty: the config's)"),
        DeclareLaunchArgument("out_dir", default_value="runs", description="where episode records are written"),
        DeclareLaunchArgument("record_bag", default_value="true", description="run the recorder node: an MCAP bag per episode"),
        DeclareLaunchArgument("namespace", default_value="homiebot", description="where the graph's nodes and names live"),
        OpaqueFunction(function=_nodes),
    ])
