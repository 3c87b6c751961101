"""Launch the homiebot graph with the embedded simulated home.

    ros2 launch homiebot sim.launch.py [config:=/path/sim.yaml] [planner:=heuristic] [out_dir:=runs] [record_bag:=false] [namespace:=robot1]

The nodes and their parameters come from ``homiebot.ros.bringup.graph`` (the same definition ``homiebot up``
uses). Discovery stays on this machine unless ROS_AUTOMATIC_DISCOVERY_RANGE is set otherwise.
"""

import os

from launch.actions import DeclareLaunchArgument, OpaqueFunction, SetEnvironmentVariable
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from homiebot.ros.bringup.graph import graph
from homiebot.ros.kit.names import namespace
from launch import LaunchDescription

RESPAWN_DELAY = 1.0  # seconds before a node that died is started again


def _nodes(context, *args, **kwargs):
    config = LaunchConfiguration("config").perform(context)
    planner = LaunchConfiguration("planner").perform(context)
    out_dir = LaunchConfiguration("out_dir").perform(context)
    record_bag = LaunchConfiguration("record_bag").perform(context).lower() in ("true", "1", "yes")
    return [
        Node(package="homiebot", executable=spec.executable, name=spec.name, namespace=spec.namespace, parameters=[spec.parameters],
             remappings=list(spec.remappings.items()), output="screen",
             respawn=True, respawn_delay=RESPAWN_DELAY,  # as `homiebot up` does; the task manager fails the episode in flight
             prefix=spec.python)  # a policy server runs its console script with its own environment's interpreter
        for spec in graph(config, planner, os.path.abspath(out_dir), record_bag=record_bag,
                          namespace=namespace(LaunchConfiguration("namespace").perform(context)))
    ]


def generate_launch_description():
    share = FindPackageShare("homiebot")
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=[share, "/config/sim.yaml"], description="run configuration YAML"),
        DeclareLaunchArgument("planner", default_value="", description="planner backend (empty: the config's)"),
        DeclareLaunchArgument("out_dir", default_value="runs", description="where episode records are written"),
        DeclareLaunchArgument("record_bag", default_value="true", description="run the recorder node: an MCAP bag per episode"),
        DeclareLaunchArgument("namespace", default_value="homiebot", description="where the graph's nodes and names live"),
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE", os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")),
        OpaqueFunction(function=_nodes),
    ])
