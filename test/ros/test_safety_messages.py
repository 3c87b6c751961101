"""The safety layer's typed messages (homiebot_msgs SafetyEvent, ApprovalRequest, ApprovalDecision,
Heartbeat): the conversions both ways, the refusal of messages that cannot be accepted, and approval
answered by a plain rclpy client that knows only homiebot_msgs (it never imports homiebot).

The approver runs with localhost-only discovery and a ROS_DOMAIN_ID of its own (30-39)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from homiebot_msgs.msg import ApprovalDecision, Heartbeat, KeyValue  # noqa: E402
from homiebot_msgs.msg import SafetyEvent as EventMsg  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402

from homiebot.core.contracts import Action, SafetyEvent, Subtask  # noqa: E402
from homiebot.ros.clients.foxglove import served_topics  # noqa: E402
from homiebot.ros.kit.safety import EVENTS_TOPIC, TopicApprover  # noqa: E402
from homiebot.ros.kit.watch import check_heartbeat  # noqa: E402
from homiebot.ros.messages.safety import (  # noqa: E402
    SAFETY_KINDS,
    decision_from_msg,
    decision_msg,
    event_from_msg,
    event_msg,
    request_msg,
)
from homiebot.ros.messages.wire import WireError  # noqa: E402
from homiebot.safety import approval  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)


def _constants(cls: type) -> set[Any]:
    return {getattr(cls, k) for k in dir(cls) if k.isupper() and k != "SLOT_TYPES"}


def test_the_event_kinds_are_the_contracts() -> None:
    assert _constants(EventMsg) - {EventMsg.NO_ROUND} == set(SAFETY_KINDS)
    assert EventMsg.NO_ROUND == -1
    assert _constants(ApprovalDecision) == {"approve", "reject", "edit"}
    assert served_topics()[EVENTS_TOPIC] == "homiebot_msgs/msg/SafetyEvent"


def test_a_safety_event_crosses_the_wire_both_ways() -> None:
    event = SafetyEvent(kind="keep_out", stamp=1_700_000_000.25, round=3, message="never the fridge", details={"rule": "no fridge"})
    msg = deserialize_message(serialize_message(event_msg(event, "/homiebot/world", 7)), EventMsg)
    assert (msg.origin, msg.episode, msg.kind, msg.round, msg.stamp.sec, msg.stamp.nanosec) == (
        "/homiebot/world", "7", "keep_out", 3, 1_700_000_000, 250_000_000)
    assert event_from_msg(msg) == event
    outside = SafetyEvent(kind="estop", stamp=5.0, details={"source": "topic"})
    msg = event_msg(outside, "/homiebot/task_manager", None)
    assert (msg.episode, msg.round) == ("", EventMsg.NO_ROUND)
    assert event_from_msg(msg) == outside
    assert event_msg(outside, "/x", "a1b2c3").episode == "a1b2c3"  # the task manager's submission id


@pytest.mark.parametrize("msg, why", [
    (EventMsg(kind="launch_missiles"), "unknown safety event kind 'launch_missiles'"),
    (EventMsg(kind="estop", round=-2), "round -2"),
])
def test_a_bad_safety_event_is_refused(msg: EventMsg, why: str) -> None:
    with pytest.raises(WireError, match=why):
        event_from_msg(msg)


def test_an_approval_request_and_its_decisions_are_typed() -> None:
    request = approval.ApprovalRequest(4, Subtask(action=Action.OPEN, target="fridge"), "RT-1-X", "hide the can")
    msg = request_msg("abc123", request, 60)
    assert (msg.id, msg.round, msg.subtask.action, msg.subtask.target, msg.model, msg.instruction, msg.timeout) == (
        "abc123", 4, "Open", "fridge", "RT-1-X", "hide the can", 60.0)
    edit = approval.Decision("edit", subtask=Subtask(action=Action.OPEN, target="drawer"))
    assert decision_msg("abc123", edit).subtask == "[Open, drawer]"
    assert decision_from_msg(decision_msg("abc123", edit)) == edit
    assert decision_from_msg(ApprovalDecision(id="abc123", decision="reject")) == approval.Decision("reject", "the operator rejected it")
    assert decision_from_msg(ApprovalDecision(id="abc123", decision="approve", reason="fine")).verdict == "approve"


@pytest.mark.parametrize("msg, why", [
    (ApprovalDecision(id="abc", decision="maybe"), "decision must be approve, reject or edit, not 'maybe'"),
    (ApprovalDecision(id="abc", decision="APPROVE"), "not 'APPROVE'"),
    (ApprovalDecision(id="abc", decision="edit", subtask="[Fly, moon]"), "an edit needs a subtask like"),
    (ApprovalDecision(id="abc", decision="edit"), "an edit needs a subtask like"),
    (ApprovalDecision(id="", decision="approve"), "needs an id"),
])
def test_a_bad_decision_is_refused(msg: ApprovalDecision, why: str) -> None:
    with pytest.raises(WireError, match=why):
        decision_from_msg(msg)


def test_a_heartbeat_must_name_its_node_and_instance() -> None:
    beat = Heartbeat(node="world", instance="f" * 32, pid=42)
    assert check_heartbeat(deserialize_message(serialize_message(beat), Heartbeat)) == beat
    for bad in (Heartbeat(instance="x", pid=1), Heartbeat(node="world", pid=1), Heartbeat(node="w" * 101, instance="x", pid=1),
                Heartbeat(node="world", instance="x", pid=1, host="h" * 101)):
        with pytest.raises(WireError):
            check_heartbeat(bad)
    assert KeyValue(key="k", value="v") in event_msg(SafetyEvent(kind="cancel", stamp=0.0, details={"k": "v"}), "/x").details


# ---- approval on the topics, answered by a client that imports rclpy and homiebot_msgs only --------

PLAIN_APPROVER = r'''
import json, sys, threading, time
import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from homiebot_msgs.msg import ApprovalDecision, ApprovalRequest

script = json.loads(sys.argv[1])  # per request, in order: the [decision, reason, subtask] answers to send, in that order
rclpy.init()
node = Node("plain_approver")
latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
seen = []

def on_request(msg):
    if all(s["id"] != msg.id for s in seen):
        seen.append({"id": msg.id, "round": msg.round, "action": msg.subtask.action, "target": msg.subtask.target,
                     "model": msg.model, "instruction": msg.instruction, "timeout": msg.timeout})

node.create_subscription(ApprovalRequest, "/homiebot/approval/request", on_request, latched)
pub = node.create_publisher(ApprovalDecision, "/homiebot/approval/response", 10)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
deadline = time.monotonic() + 300
while not stop.is_set() and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.1)
    # answered again and again: an answer sent before the asker matched this publisher is lost, and
    # the asker takes only the first answer to a request it waits for
    for ask, answers in zip(seen, script):
        for decision, reason, subtask in answers:
            pub.publish(ApprovalDecision(id=ask["id"], decision=decision, reason=reason, subtask=subtask))
print(json.dumps({"seen": seen, "homiebot_imported": any(m.split(".")[0] == "homiebot" for m in sys.modules)}), flush=True)
node.destroy_node()
rclpy.try_shutdown()
'''


class _Log:
    """A node's logger that also keeps the warnings and errors it is given."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.warnings: list[str] = []

    def warning(self, text: str, **kwargs: Any) -> None:
        self.warnings.append(text)
        self.real.warning(text, **kwargs)

    def error(self, text: str, **kwargs: Any) -> None:
        self.warnings.append(text)
        self.real.error(text, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _LoggedNode(Node):
    """A node whose logger keeps its warnings (``safe_callback`` logs a refused message there)."""

    def get_logger(self) -> Any:
        if "_kept_log" not in self.__dict__:
            self._kept_log = _Log(super().get_logger())
        return self._kept_log


@pytest.fixture
def approver(monkeypatch) -> Iterator[tuple[TopicApprover, _Log]]:
    monkeypatch.setenv("ROS_DOMAIN_ID", str(DOMAIN))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    context = Context()
    rclpy.init(context=context)
    node = _LoggedNode("approval_test", context=context, namespace="/homiebot")  # the graph's default namespace
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    asker = TopicApprover(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield asker, node.get_logger()
    finally:
        executor.shutdown()
        spinner.join(timeout=10)
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def _plain_client(script: list[list[list[str]]]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", PLAIN_APPROVER, json.dumps(script)], cwd="/", env=dict(os.environ),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(client: subprocess.Popen) -> dict:
    out, err = client.communicate(input="", timeout=60)
    assert client.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_a_plain_client_answers_approval_requests_typed(approver) -> None:
    asker, log = approver
    client = _plain_client([[["approve", "", ""]], [["edit", "", "[Open, drawer]"]], [["reject", "not now", ""]]])
    try:
        open_fridge = approval.ApprovalRequest(2, Subtask(action=Action.OPEN, target="fridge"), "RT-1-X", "hide the can")
        first = asker.decide(open_fridge, timeout=120)
        second = asker.decide(open_fridge, timeout=120)
        third = asker.decide(approval.ApprovalRequest(3, Subtask(action=Action.PICK, target="green_can"), "RT-1-X"), timeout=120)
    finally:
        report = _finish(client)
    assert first == approval.Decision("approve")
    assert second == approval.Decision("edit", subtask=Subtask(action=Action.OPEN, target="drawer"))
    assert third == approval.Decision("reject", "not now")
    assert not report["homiebot_imported"]
    seen = report["seen"]
    assert [(s["round"], s["action"], s["target"], s["model"]) for s in seen] == [
        (2, "Open", "fridge", "RT-1-X"), (2, "Open", "fridge", "RT-1-X"), (3, "Pick", "green_can", "RT-1-X")]
    assert seen[0]["instruction"] == "hide the can" and seen[0]["timeout"] == 120.0
    assert log.warnings == []


def test_a_garbage_decision_is_refused_with_a_warning_and_does_not_approve(approver) -> None:
    asker, log = approver
    # the garbage goes first each time; the reject after it is what decides
    client = _plain_client([[["maybe", "", ""], ["edit", "", "[Fly, moon]"], ["reject", "checked by hand", ""]]])
    try:
        decision = asker.decide(approval.ApprovalRequest(1, Subtask(action=Action.OPEN, target="fridge"), "RT-1-X"), timeout=120)
    finally:
        _finish(client)
    assert decision == approval.Decision("reject", "checked by hand")
    assert any("/homiebot/approval/response" in w and "not 'maybe'" in w for w in log.warnings), log.warnings
    assert any("an edit needs a subtask like [Open, drawer]" in w for w in log.warnings), log.warnings


OPERATOR = r'''
import io, sys
from homiebot.ros.clients.operator import approve_loop
sys.exit(approve_loop(io.StringIO("maybe later\ne [Open, drawer]\n"), count=1))
'''


def test_homiebot_approve_answers_with_a_typed_edit(approver) -> None:
    asker, log = approver
    operator = subprocess.Popen([sys.executable, "-c", OPERATOR], cwd="/", env=dict(os.environ), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    try:
        decision = asker.decide(approval.ApprovalRequest(2, Subtask(action=Action.OPEN, target="fridge"), "RT-1-X"), timeout=120)
    finally:
        out, err = operator.communicate(timeout=60)
    assert operator.returncode == 0, err[-3000:]
    assert decision == approval.Decision("edit", subtask=Subtask(action=Action.OPEN, target="drawer"))
    assert "round 2: [Open, fridge] with RT-1-X" in out and "answer a, r <reason> or e [Action, target]" in out
    assert log.warnings == []
