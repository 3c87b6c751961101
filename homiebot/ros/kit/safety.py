"""The safety layer on the graph: e-stop, cancel, safety events and approval over ROS 2.

| name | type | who | what |
| --- | --- | --- | --- |
| ``/homiebot/estop`` | std_msgs/Bool, TRANSIENT_LOCAL | anyone | ``true`` engages, ``false`` releases (late joiners get the last state) |
| ``/homiebot/estop/engage``, ``/homiebot/estop/release`` | std_srvs/Trigger | task manager | the same, as services |
| ``/homiebot/cancel`` | std_msgs/String | anyone | a submission id, or empty for the running episode |
| ``/homiebot/safety`` | homiebot_msgs/SafetyEvent | every node with a safety state | stamp, origin, episode, kind, round, message, details |
| ``/homiebot/approval/request`` | homiebot_msgs/ApprovalRequest, TRANSIENT_LOCAL | task manager | id, round, subtask, model, instruction, timeout |
| ``/homiebot/approval/response`` | homiebot_msgs/ApprovalDecision | an operator | id, decision (approve, reject, edit), reason, subtask (an edit's, as text) |

Every process that moves the robot (the executor node, where skills run; the world node, which explores
before a mapped task and runs the skills that act on its map) or decides when to (the task manager) keeps its own ``SafetyState`` in step with these topics, so an e-stop reaches the robot
even when the task manager is gone. Messages that cannot be accepted (an unknown event kind or
decision, an edit whose subtask cannot be read) are dropped with a warning; ``homiebot.ros.messages.safety``
converts between the messages and homiebot's types.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from homiebot_msgs.msg import ApprovalDecision as DecisionMsg
from homiebot_msgs.msg import ApprovalRequest as RequestMsg
from homiebot_msgs.msg import SafetyEvent as EventMsg
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from homiebot.core.contracts import SafetyEvent
from homiebot.ros.messages.safety import decision_from_msg, event_from_msg, event_msg, request_msg
from homiebot.ros.messages.wire import WireError, safe_callback
from homiebot.safety.approval import ApprovalRequest, Approver, Decision
from homiebot.safety.state import Deadman, SafetyState

ESTOP_TOPIC = "estop"
CANCEL_TOPIC = "cancel"
CANCELLED_TOPIC = "safety/cancelled"  # the task manager's word that an episode is cancelled (episode number)
EVENTS_TOPIC = "safety"
APPROVAL_REQUEST = "approval/request"
APPROVAL_RESPONSE = "approval/response"
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
EVENTS_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


class SafetyLink:
    """Keeps a ``SafetyState`` in step with the e-stop topic and publishes its events.

    ``authority`` (the task manager) records e-stop events and serves the Trigger services; other
    nodes apply the e-stop silently, so each e-stop appears once in a record."""

    def __init__(self, node: Node, state: SafetyState, authority: bool = False, episode: Callable[[], Any] | None = None,
                 heartbeat: float | None = None) -> None:
        """``heartbeat`` (seconds): deadman mode, the e-stop engages when the e-stop topic falls silent."""
        self.node, self.state, self.authority = node, state, authority
        self.origin = node.get_fully_qualified_name()
        self.episode = episode or (lambda: None)
        self.events_pub = node.create_publisher(EventMsg, EVENTS_TOPIC, EVENTS_QOS)
        self.estop_pub = node.create_publisher(Bool, ESTOP_TOPIC, LATCHED)
        node.create_subscription(Bool, ESTOP_TOPIC, safe_callback(node, ESTOP_TOPIC, self._on_estop), LATCHED)
        state.listeners.append(self._publish)
        self.deadman: Deadman | None = None
        if heartbeat:
            self.deadman = Deadman(heartbeat)
            node.create_timer(min(0.1, heartbeat / 4), self._check_heartbeat)
        if authority:
            node.create_service(Trigger, "estop/engage", self._engage_service)
            node.create_service(Trigger, "estop/release", self._release_service)

    def _check_heartbeat(self) -> None:
        if self.deadman is not None and self.deadman.expired():
            self.state.engage_estop("heartbeat lost", record=self.authority)

    def _on_estop(self, msg: Bool) -> None:
        if not isinstance(msg.data, bool):
            raise WireError("the e-stop message must be a Bool")
        if self.deadman is not None:
            self.deadman.beat()
        if msg.data:
            self.state.engage_estop("topic", record=self.authority)
        else:
            self.state.release_estop("topic", record=self.authority)

    def _engage_service(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.estop_pub.publish(Bool(data=True))  # the topic is the truth: every node hears it
        self.state.engage_estop("service", record=self.authority)
        response.success, response.message = True, "e-stop engaged"
        return response

    def _release_service(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.estop_pub.publish(Bool(data=False))
        self.state.release_estop("service", record=self.authority)
        response.success, response.message = True, "e-stop released"
        return response

    def _publish(self, event: SafetyEvent) -> None:
        self.events_pub.publish(event_msg(event, self.origin, self.episode()))

    def hear_others(self, into: Callable[[SafetyEvent], None]) -> None:
        """Pass events other nodes publish to ``into`` (the task manager merges them into its record)."""

        def on_event(msg: EventMsg) -> None:
            if msg.origin != self.origin:
                into(event_from_msg(msg))

        self.node.create_subscription(EventMsg, EVENTS_TOPIC, safe_callback(self.node, EVENTS_TOPIC, on_event), EVENTS_QOS)


class TopicApprover(Approver):
    """Asks on ``/homiebot/approval/request`` and waits for the answer on ``/homiebot/approval/response``."""

    def __init__(self, node: Node) -> None:
        self.pub = node.create_publisher(RequestMsg, APPROVAL_REQUEST, LATCHED)
        self._answers: dict[str, Decision] = {}
        self._asked: set[str] = set()  # the requests waiting for an answer
        self._cond = threading.Condition()
        node.create_subscription(DecisionMsg, APPROVAL_RESPONSE, safe_callback(node, APPROVAL_RESPONSE, self._on_response), 10)

    def _on_response(self, msg: DecisionMsg) -> None:
        decision = decision_from_msg(msg)
        with self._cond:
            if msg.id in self._asked:  # the first answer to a waiting request stands; others are not ours, or late
                self._asked.discard(msg.id)
                self._answers[msg.id] = decision
                self._cond.notify_all()

    def decide(self, request: ApprovalRequest, timeout: float) -> Decision:
        rid = uuid.uuid4().hex[:12]
        with self._cond:
            self._asked.add(rid)
        self.pub.publish(request_msg(rid, request, timeout))
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._asked.discard(rid)
                    return Decision("reject", f"nobody approved it within {timeout:.0f} s", timed_out=True)
                self._cond.wait(min(left, 0.5))
            return self._answers.pop(rid)


__all__ = ["APPROVAL_REQUEST", "APPROVAL_RESPONSE", "CANCELLED_TOPIC", "CANCEL_TOPIC", "ESTOP_TOPIC", "EVENTS_TOPIC",
           "LATCHED", "SafetyLink", "TopicApprover"]
