"""The home's truth (``/homiebot/sim/ground_truth``, homiebot_msgs/GroundTruth: its moving state, its belief
snapshot, the instance labels, the driver's power and counters; see ``homiebot.robots.sim``): a
simulator-only topic for privileged components, as Gazebo publishes model states."""

from __future__ import annotations

from typing import Any

from homiebot_msgs.msg import GroundTruth

from homiebot.core.errors import take_snapshot
from homiebot.robots.sim import TRUTH_TOPIC
from homiebot.ros.messages.common import RELIABLE
from homiebot.ros.messages.truth import ground_truth_msg
from homiebot.ros.nodes.sim_driver.power import Power

GROUND_TRUTH_TOPIC = TRUTH_TOPIC


class TruthStream:
    """The truth publisher, and the truth of an instant (``labels``: the home's instance labels, by id)."""

    def __init__(self, node: Any, robot_name: str, world: Any, power: Power, counters: dict[str, int]) -> None:
        self.robot_name, self.world, self.power, self.counters = robot_name, world, power, counters
        self.publisher = node.create_publisher(GroundTruth, GROUND_TRUTH_TOPIC, RELIABLE)
        self.labels = {str(i): label.model_dump() for i, label in world.instance_labels().items()}

    def truth(self, stamp: int) -> dict[str, Any]:
        """The truth of the instant ``stamp`` (under the lock)."""
        return {"robot": self.robot_name, "stamp": stamp, "dynamic": self.world.state.dynamic(), "belief": take_snapshot(self.world.belief),
                "powered": self.power.powered, "standing": self.power.standing, "labels": self.labels, "counters": dict(self.counters)}

    def publish(self, stamp: int) -> None:
        """Publish the truth of the instant ``stamp`` (under the lock)."""
        self.publisher.publish(ground_truth_msg(self.truth(stamp)))
