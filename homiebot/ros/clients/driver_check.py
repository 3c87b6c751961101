"""What a robot driver must serve for the bridge (``homiebot.ros.clients.robot.Ros2Robot``) to start, and a check
of the ROS graph for it: the world node names what is missing in one line instead of every node
reporting ready and the first command timing out.

A driver that serves only once the robot has an operator's E-Stop registered (the profile's
``estop_registration``: spot_ros2) shows its services in the graph from the start but answers none of
them until then; ``driver_answers`` asks its node for its parameter names (no effect on the robot) to
tell, and ``describe_no_estop`` says what to do.
"""

from __future__ import annotations

import os
import time

from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from homiebot.robots.profile import NO_ESTOP, RobotProfile

RESEND = 2.0  # s between two asks of a driver that does not answer (a request sent before discovery is lost)


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
    takes a moment), by kind; empty when the driver is there. When the graph shows everything but the
    driver waits for an E-Stop and does not answer within the profile's ``estop_registration.wait``, its
    start-up services are given as ``unanswered``."""
    wanted = driver_interfaces(profile)
    deadline = time.monotonic() + wait
    while True:
        services = {name for name, _ in node.get_service_names_and_types()}
        missing = {"topics": [t for t in wanted["topics"] if node.count_publishers(t) == 0],
                   "subscribers": [t for t in wanted["subscribers"] if node.count_subscribers(t) == 0],
                   "services": [s for s in wanted["services"] if s not in services],
                   "actions": [a for a in wanted["actions"] if f"{a}/_action/send_goal" not in services]}
        missing = {kind: names for kind, names in missing.items() if names}
        if missing and time.monotonic() < deadline:
            time.sleep(0.1)
            continue
        if not missing and profile.estop_registration is not None and not driver_answers(profile, profile.estop_registration.wait):
            return {"unanswered": wanted["services"]}
        return missing


def driver_answers(profile: RobotProfile, wait: float) -> bool:
    """Whether the driver's node answers within ``wait`` seconds (its ``list_parameters`` service, which changes
    nothing); always true for a driver that does not wait for an E-Stop. Asks from a node and executor of its
    own, so that it works from any thread, the caller's node spinning or not."""
    name = profile.driver_node()
    if name is None:
        return True
    from rcl_interfaces.srv import ListParameters

    node = Node(f"homiebot_driver_probe_{os.getpid()}_{time.monotonic_ns() % 100000}", use_global_arguments=False)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        client = node.create_client(ListParameters, f"{name}/list_parameters")
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not client.service_is_ready():
                executor.spin_once(timeout_sec=0.1)
                continue
            future = client.call_async(ListParameters.Request(depth=1))
            end = min(deadline, time.monotonic() + RESEND)
            while not future.done() and time.monotonic() < end:
                executor.spin_once(timeout_sec=0.05)
            if future.done():
                return True
            client.remove_pending_request(future)
        return False
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()


def describe_no_estop(profile: RobotProfile) -> str:
    """One line: the driver is there but answers none of its services, most likely for want of a registered E-Stop."""
    services = ", ".join(profile.topic(profile.services[role].name) for role in profile.startup)
    wait = profile.estop_registration.wait if profile.estop_registration is not None else 0.0
    return (f"the {profile.robot} robot driver ({profile.driver_node()}) answers none of its services ({services}) "
            f"within {wait:.0f} s: {NO_ESTOP}")


def describe_missing_driver(profile: RobotProfile, missing: dict[str, list[str]], domain: str, simulated: str | None = None) -> str:
    """One line: the robot's driver is not (fully) running, what of it is missing, and what to do
    (``simulated``: a run configuration of the same graph against the simulated home)."""
    if "unanswered" in missing:  # the driver is there, but serves nothing
        return f"{describe_no_estop(profile)} (ROS_DOMAIN_ID={domain}), then `homiebot up` again"
    parts = {"topics": "nothing publishes {}", "subscribers": "nothing subscribes to {}", "services": "no service {}",
             "actions": "no action server {}"}
    what = "; ".join(parts[kind].format(", ".join(names)) for kind, names in missing.items())
    instead = f" (or use {simulated} to run against the simulated home)" if simulated else ""
    return (f"the {profile.robot} robot driver is not running on ROS_DOMAIN_ID={domain} ({what}): start the driver first, "
            f"with the same ROS_DOMAIN_ID{instead}, then `homiebot up` again")


__all__ = ["describe_missing_driver", "describe_no_estop", "driver_answers", "driver_interfaces", "missing_driver_interfaces"]
