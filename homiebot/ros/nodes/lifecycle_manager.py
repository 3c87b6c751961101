"""The lifecycle manager: brings the graph's nodes up in order and down in reverse, as Nav2's lifecycle manager does
(``homiebot up --lifecycle-manager``; the nodes then start unconfigured, with ``autostart: false``).

Serves ``lifecycle_manager/manage_nodes`` (``nav2_msgs/srv/ManageLifecycleNodes``: STARTUP, PAUSE, RESUME, RESET,
SHUTDOWN, CONFIGURE, CLEANUP) and ``lifecycle_manager/is_active`` (``std_srvs/Trigger``), with Nav2's parameters
``node_names`` (the order of bring-up), ``autostart`` (bring them up once they answer) and ``bond_timeout``. Liveness is bond-style, from the
heartbeat every homiebot node publishes: a managed node silent for ``bond_timeout`` seconds makes the system
inactive (logged); when it comes back (a new process: ``homiebot up`` restarts it) it is brought to the state the
system is in.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from homiebot_msgs.msg import Heartbeat
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from nav2_msgs.srv import ManageLifecycleNodes
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_srvs.srv import Trigger

from homiebot.ros.kit.common import HEARTBEAT_QOS, HEARTBEAT_TOPIC, NodeDef, Param, positive
from homiebot.ros.kit.executors import inline
from homiebot.ros.kit.process import run_node
from homiebot.ros.messages.wire import safe_callback

CALL_TIMEOUT = 60.0  # s one transition may take (a planner loading its model configures for a while)
WAIT_FOR_NODES = 120.0  # s autostart waits for the managed nodes' lifecycle services
T = Transition
SHUTDOWN_FROM = {State.PRIMARY_STATE_UNCONFIGURED: T.TRANSITION_UNCONFIGURED_SHUTDOWN,
                 State.PRIMARY_STATE_INACTIVE: T.TRANSITION_INACTIVE_SHUTDOWN, State.PRIMARY_STATE_ACTIVE: T.TRANSITION_ACTIVE_SHUTDOWN}
# command -> (the order it goes in, the steps: from this state, take that transition)
R = ManageLifecycleNodes.Request
PLANS: dict[int, tuple[bool, dict[int, int]]] = {
    R.STARTUP: (True, {State.PRIMARY_STATE_UNCONFIGURED: T.TRANSITION_CONFIGURE, State.PRIMARY_STATE_INACTIVE: T.TRANSITION_ACTIVATE}),
    R.CONFIGURE: (True, {State.PRIMARY_STATE_UNCONFIGURED: T.TRANSITION_CONFIGURE}),
    R.RESUME: (True, {State.PRIMARY_STATE_INACTIVE: T.TRANSITION_ACTIVATE}),
    R.PAUSE: (False, {State.PRIMARY_STATE_ACTIVE: T.TRANSITION_DEACTIVATE}),
    R.CLEANUP: (False, {State.PRIMARY_STATE_INACTIVE: T.TRANSITION_CLEANUP}),
    R.RESET: (False, {State.PRIMARY_STATE_ACTIVE: T.TRANSITION_DEACTIVATE, State.PRIMARY_STATE_INACTIVE: T.TRANSITION_CLEANUP}),
    R.SHUTDOWN: (False, SHUTDOWN_FROM),
}
NAMES = {R.STARTUP: "startup", R.PAUSE: "pause", R.RESUME: "resume", R.RESET: "reset", R.SHUTDOWN: "shutdown",
         R.CONFIGURE: "configure", R.CLEANUP: "cleanup"}


class LifecycleManager:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node, self.names = node, list(params["node_names"])
        self.bond_timeout = params["bond_timeout"]
        group = ReentrantCallbackGroup()
        self.change = {n: node.create_client(ChangeState, f"{n}/change_state", callback_group=group) for n in self.names}
        self.get = {n: node.create_client(GetState, f"{n}/get_state", callback_group=group) for n in self.names}
        self.active = False  # what the system is meant to be: active after startup or resume
        self.up = False  # every managed node is active
        self._lock = threading.Lock()  # one command at a time
        self._beats: dict[str, tuple[str, float]] = {}  # node -> (instance, last heard)
        self._stop = threading.Event()
        node.create_service(ManageLifecycleNodes, "~/manage_nodes", self._manage, callback_group=group)
        node.create_service(Trigger, "~/is_active", self._is_active, callback_group=group)
        node.create_subscription(Heartbeat, HEARTBEAT_TOPIC, safe_callback(node, HEARTBEAT_TOPIC, self._beat), HEARTBEAT_QOS)
        autostart = bool(node.get_parameter("autostart").value)  # every graph node declares it; Nav2's meaning here
        threading.Thread(target=self._watch, args=(autostart,), daemon=True).start()

    def _manage(self, request: ManageLifecycleNodes.Request, response: ManageLifecycleNodes.Response) -> ManageLifecycleNodes.Response:
        response.success = self.command(int(request.command))
        return response

    def _is_active(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success = self.up
        response.message = "the managed nodes are active" if self.up else "the managed nodes are not all active"
        return response

    def command(self, command: int) -> bool:
        """Run one of ``ManageLifecycleNodes``' commands over the managed nodes; False (logged) at the first that fails."""
        if command not in PLANS:
            self.node.get_logger().error(f"manage_nodes: unknown command {command}; expected 0-6 (nav2_msgs/ManageLifecycleNodes)")
            return False
        forward, steps = PLANS[command]
        self.node.get_logger().info(f"{NAMES[command]}: begun")  # with 'done' or 'failed' after it, a hang shows in the log
        with self._lock:
            self.active = command in (R.STARTUP, R.RESUME)
            ok = all(self._bring(name, steps) for name in (self.names if forward else reversed(self.names)))
            self.up = ok and self.active
        self.node.get_logger().info(f"{NAMES[command]}: {'done' if ok else 'failed'} ({', '.join(self.names)})")
        return ok

    def _bring(self, name: str, steps: dict[int, int]) -> bool:
        """Take the node's transitions from its current state as long as ``steps`` has one for it."""
        for _ in range(len(steps) + 1):
            state = self._state(name)
            if state is None:
                return False
            if state not in steps:
                return True
            if not self._call(self.change[name], ChangeState.Request(transition=Transition(id=steps[state])), name):
                self.node.get_logger().error(f"{name}: transition {steps[state]} from state {state} failed")
                return False
        return True

    def _state(self, name: str) -> int | None:
        reply = self._call(self.get[name], GetState.Request(), name)
        return None if reply is None else int(reply.current_state.id)

    def _call(self, client: Any, request: Any, name: str) -> Any:
        if not client.wait_for_service(timeout_sec=CALL_TIMEOUT):
            self.node.get_logger().error(f"{name}: no lifecycle services within {CALL_TIMEOUT:g} s (is the node running?)")
            return None
        future = client.call_async(request)
        done = threading.Event()
        # inline: woken by the thread that takes the reply, not by a task that needs a free callback thread (the
        # manage_nodes calls waiting here hold some of the process's few)
        future.add_done_callback(inline(lambda _: done.set()))
        if not done.wait(CALL_TIMEOUT):
            client.remove_pending_request(future)
            self.node.get_logger().error(f"{name}: no answer within {CALL_TIMEOUT:g} s")
            return None
        result = future.result()
        return result if not isinstance(result, ChangeState.Response) or result.success else None

    def _beat(self, msg: Heartbeat) -> None:
        if msg.node in self.names:
            self._beats[msg.node] = (msg.instance, time.monotonic())

    def _watch(self, autostart: bool) -> None:
        """Autostart once every managed node answers, then keep the bonds: a silent node makes the system inactive,
        a node back with a new process is brought to the system's state."""
        if autostart:
            deadline = time.monotonic() + WAIT_FOR_NODES
            while not all(c.service_is_ready() for c in self.change.values()) and time.monotonic() < deadline:
                if self._stop.wait(0.2):
                    return
            self.command(R.STARTUP)
        seen: dict[str, str] = {}
        while not self._stop.wait(0.5):
            now = time.monotonic()
            for name, (instance, heard) in list(self._beats.items()):
                if now - heard > self.bond_timeout and self.up:
                    self.up = False
                    self.node.get_logger().error(f"bond with {name} broken: no heartbeat for {now - heard:.1f} s; the system is not active")
                if seen.get(name, instance) != instance and self.active:  # a new process of a managed node
                    self.up = False  # not all active until it is up again (a restart can beat the bond timeout)
                    self.node.get_logger().warning(f"{name} came back (a new process): bringing it up again")
                    self.command(R.STARTUP)
                seen[name] = instance

    def close(self) -> None:
        self._stop.set()


GRAPH_ORDER = ("world", "mapper", "planner", "detector", "executor", "recorder", "task_manager")  # the task manager comes up last

PARAMS = (Param("node_names", list(GRAPH_ORDER), "the managed nodes, in the order they come up (down in reverse)"),
          Param("bond_timeout", 4.0, "seconds without a managed node's heartbeat before the system counts as not active", positive))

NODE = NodeDef("lifecycle_manager", LifecycleManager, PARAMS, waiting_handlers=True, managed=False)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
