"""``DriverWatch`` alone: the driver's own node (spot_ros2) judged gone when it stops answering, a new process of
it brought up again, a failed bring-up tried again at the next command."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.robot import RobotUnavailable  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.driver_watch import PARAMETER_EVENTS, DriverWatch  # noqa: E402
from test.ros.robot.fakes import FakeLogger  # noqa: E402

PROFILE = load_profile("spot")


class GraphNode:
    """The parts of a node DriverWatch uses: a client and a timer it makes, and the graph's /parameter_events
    publishers (``endpoints``: (node name, namespace, gid))."""

    def __init__(self) -> None:
        self.endpoints: list[tuple[str, str, bytes]] = [("spot_ros2", "/spot", b"a"), ("other", "/", b"z")]
        self.clients: list[str] = []
        self.timers: list[tuple[float, Any]] = []
        self.logger = FakeLogger()

    def create_client(self, srv_type: Any, name: str) -> Any:
        self.clients.append(name)
        return SimpleNamespace(service_is_ready=lambda: False)

    def create_timer(self, period: float, callback: Any) -> Any:
        self.timers.append((period, callback))
        return SimpleNamespace(cancel=lambda: None)

    def get_publishers_info_by_topic(self, topic: str) -> list[Any]:
        assert topic == PARAMETER_EVENTS
        return [SimpleNamespace(node_name=n, node_namespace=ns, endpoint_gid=list(g)) for n, ns, g in self.endpoints]

    def get_logger(self) -> FakeLogger:
        return self.logger


def watched(bring_up: Any = lambda: None, stale_after: float = 0.05) -> tuple[DriverWatch, GraphNode]:
    node = GraphNode()
    watch = DriverWatch(node, PROFILE, bring_up, stale_after)  # type: ignore[arg-type]
    return watch, node


def test_nothing_is_asked_before_the_robot_is_brought_up_then_the_drivers_node_is():
    watch, node = watched()
    assert node.clients == [] and node.timers == []
    watch.check()  # not started: nothing to judge
    watch.watch()
    assert node.clients == ["/spot/spot_ros2/list_parameters"] and node.timers[0][0] == 0.25
    watch.check()  # it answered at bring-up


def test_a_node_that_stops_answering_is_gone_unless_this_bridges_own_call_is_in_flight():
    watch, _ = watched()
    watch.watch()
    time.sleep(0.1)  # silent for over 0.8 x stale_after, then as long again while check waits
    watch.busy(+1)
    watch.check()  # power_on may take seconds: meanwhile it need not answer
    watch.busy(-1)
    time.sleep(0.1)
    with pytest.raises(RobotUnavailable, match="driver node /spot/spot_ros2 has not answered for .* while its odometry flows"):
        watch.check()
    watch._on_answer(SimpleNamespace(cancelled=lambda: False, exception=lambda: None))  # it answers again
    watch.check()
    assert not watch.gone


def test_a_new_process_of_the_node_is_brought_up_and_a_failed_bring_up_tried_again():
    calls: list[str] = []
    fail = [True]

    def bring_up() -> None:
        calls.append("up")
        if fail[0]:
            raise RobotUnavailable("spot: /spot/power_on refused: the robot is E-Stopped")

    watch, node = watched(bring_up, stale_after=10.0)
    watch.watch()
    watch.check()
    assert calls == []
    node.endpoints = [("spot_ros2", "/spot", b"b")]  # a new process: new endpoints under the same name
    watch._looked = 0.0
    with pytest.raises(RobotUnavailable, match="restarted and could not be brought up again: .*E-Stopped"):
        watch.check()
    fail[0] = False
    watch._looked = 0.0
    watch.check()  # tried again at the next command
    assert calls == ["up", "up"] and "restarted; bringing it up again" in node.logger.lines[-1]
    watch._looked = 0.0
    watch.check()
    assert calls == ["up", "up"]  # brought up: no more
