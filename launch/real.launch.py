"""Launch the homiebot graph against a real robot (or another simulator).

    ros2 launch homiebot real.launch.py config:=/path/robot.yaml [planner:=openai] [out_dir:=runs] [record_bag:=false]

The config's ``world`` names the bridge plugin (registered under the ``homiebot.worlds`` entry
points) that the world node hosts; the other nodes are the same as in simulation. Discovery is not
limited to this machine, so that nodes on a GPU server and on the robot find each other.
"""

import os

from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from homiebot.ros.graph import graph
from launch import LaunchDescription

RESPAWN_DELAY = 1.0  # seconds before a node that died is started again


def _nodes(context, *args, **kwargs):
    config = LaunchConfiguration("config").perform(context)
    if not config:
        raise RuntimeError("real.launch.py needs config:=/path/to/robot.yaml naming the robot's world bridge")
    record_bag = LaunchConfiguration("record_bag").perform(context).lower() in ("true", "1", "yes")
    return [
        Node(package="homiebot", executable=spec.executable, name=spec.name, parameters=[spec.parameters],
             remappings=list(spec.remappings.items()), output="screen",
             respawn=True, respawn_delay=RESPAWN_DELAY,  # as `homiebot up` does; the task manager fails the episode in flight
             prefix=spec.python)  # a policy server runs its console script with its own environment's interpreter
        for spec in graph(config, LaunchConfiguration("planner").perform(context),
                          os.path.abspath(LaunchConfiguration("out_dir").perform(context)), record_bag=record_bag)
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value="", description="run configuration YAML with the robot's world"),
        DeclareLaunchArgument("planner", default_value="", description="planner backend (empty: the config's)"),
        DeclareLaunchArgument("out_dir", default_value="runs", description="where episode records are written"),
        DeclareLaunchArgument("record_bag", default_value="true", description="run the recorder node: an MCAP bag per episode"),
        OpaqueFunction(function=_nodes),
    ])
