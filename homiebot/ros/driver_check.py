"""What a robot driver must serve for the bridge (``homiebot.ros.robot.Ros2Robot``) to start, and a check
of the ROS graph for it: the world node names what is missing in one line instead of every node
reporting ready and the first command timing out."""

from __future__ import annotations

import time

from rclpy.node import Node

from homiebot.robots.profile import RobotProfile


def driver_interfaces(profile: RobotProfile) -> dict[str, list[str]]:
    """What ``Ros2Robot.start`` needs of a running driver, by kind: the topics it publishes (odometry,
    camera images, joint states where joints place a camera or move the arm, the gripper's state), the topics it listens to
    (cmd_vel), its start-up services and its action servers."""
    p = profile
    published = [p.topic(p.odometry.name), *(p.topic(spec.image) for spec in p.cameras.values())]
    trajectory = "trajectory" in p.arm and "arm" not in p.unverified
    if p.joint_states is not None and (any(spec.chain for spec in p.cameras.values()) or trajectory):
        published.append(p.topic(p.joint_states.name))
    if p.gripper_state is not None and "gripper" not in p.unverified:
        published.append(p.topic(p.gripper_state.name))
    actions = [p.arm["trajectory"].name] if trajectory else []
    if "command" in p.gripper and "gripper" not in p.unverified:
        actions.append(p.gripper["command"].name)
    if p.head is not None and "head" not in p.unverified:
        actions.append(p.head.point.name)
    if p.torso is not None and "torso" not in p.unverified:
        actions.append(p.torso.trajectory.name)
    return {"topics": published, "subscribers": [p.topic(p.cmd_vel.name)],
            "services": [p.topic(p.services[role].name) for role in p.startup], "actions": [p.topic(name) for name in actions]}


def missing_driver_interfaces(node: Node, profile: RobotProfile, wait: float) -> dict[str, list[str]]:
    """Those of ``driver_interfaces`` that the ROS graph does not show within ``wait`` seconds (discovery
    takes a moment), by kind; empty when the driver is there."""
    wanted = driver_interfaces(profile)
    deadline = time.monotonic() + wait
    while True:
        services = {name for name, _ in node.get_service_names_and_types()}
        missing = {"topics": [t for t in wanted["topics"] if node.count_publishers(t) == 0],
                   "subscribers": [t for t in wanted["subscribers"] if node.count_subscribers(t) == 0],
                   "services": [s for s in wanted["services"] if s not in services],
                   "actions": [a for a in wanted["actions"] if f"{a}/_action/send_goal" not in services]}
        missing = {kind: names for kind, names in missing.items() if names}
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(0.1)


def describe_missing_driver(profile: RobotProfile, missing: dict[str, list[str]], domain: str, simulated: str | None = None) -> str:
    """One line: the robot's driver is not (fully) running, what of it is missing, and what to do
    (``simulated``: a run configuration of the same graph against the simulated home)."""
    parts = {"topics": "nothing publishes {}", "subscribers": "nothing subscribes to {}", "services": "no service {}",
             "actions": "no action server {}"}
    what = "; ".join(parts[kind].format(", ".join(names)) for kind, names in missing.items())
    instead = f" (or use {simulated} to run against the simulated home)" if simulated else ""
    return (f"the {profile.robot} robot driver is not running on ROS_DOMAIN_ID={domain} ({what}): start the driver first, "
            f"with the same ROS_DOMAIN_ID{instead}, then `homiebot up` again")


__all__ = ["describe_missing_driver", "driver_interfaces", "missing_driver_interfaces"]
