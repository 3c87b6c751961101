"""Notice within seconds that a node of the graph has died, hangs or has been replaced, from its heartbeats.

Every homiebot node publishes a ``homiebot_msgs/Heartbeat`` (node, instance, pid, host) on ``heartbeat`` under the graph's
namespace twice a second (``homiebot.ros.kit.common``). During an episode the task manager watches the nodes that were
beating when it began: one beating with a new instance is a new process that has lost the episode's state, one
saying it is not active (a lifecycle deactivate or cleanup) answers nothing the episode needs, and one that falls
silent has died or hangs. Silence alone is judged after ``timeout`` seconds; for a node on this machine its
process decides (``local_process``): one that ended is named at once, a stopped one after ``timeout``, and one
that still runs only after ``hang_timeout``, since a busy machine, or Fast DDS holding an interpreter while a
peer dies, silences a live node for seconds. Either way the episode cannot go on, and waiting for a call's own
timeout (up to minutes for a planner) would leave the user guessing.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from homiebot_msgs.msg import Heartbeat
from rclpy.node import Node

from homiebot.ros.kit.common import HEARTBEAT_QOS, HEARTBEAT_TOPIC
from homiebot.ros.kit.local_process import GONE, RUNNING, STOPPED, LocalProcess, host_id
from homiebot.ros.messages.wire import WireError, safe_callback

CHECK_EVERY = 0.2  # seconds between two looks at the heartbeats
MAX_NAME_CHARS = 100  # longest node name or instance a heartbeat may carry
NODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # a ROS node name (no namespace)
NOT_SAID, ACTIVE = 0, 3  # a heartbeat's lifecycle state (lifecycle_msgs/State ids): 0 from a sender that does not say
STATE_LABELS = {1: "unconfigured", 2: "inactive", 4: "finalized"}
SEEN_EVERY = 0.5  # seconds between two looks at discovery for the heartbeat's publishers
STRANGER_GRACE = 2.0  # seconds a name heard but not discovered is dropped without a log line


def check_heartbeat(msg: Heartbeat) -> Heartbeat:
    """The heartbeat itself when it names a node and an instance (WireError otherwise)."""
    for field in ("node", "instance"):
        value = getattr(msg, field)
        if not value or len(value) > MAX_NAME_CHARS:
            raise WireError(f"a heartbeat's {field} must have 1 to {MAX_NAME_CHARS} characters")
    if len(msg.host) > MAX_NAME_CHARS:
        raise WireError(f"a heartbeat's host must have at most {MAX_NAME_CHARS} characters")
    if not NODE_NAME.match(msg.node):
        raise WireError(f"a heartbeat's node must be a ROS node name, not {msg.node[:24]!r}")
    return msg


@dataclass
class _Beat:
    """The last heartbeat heard from one node."""

    instance: str
    pid: int
    heard: float  # time.monotonic() when heard
    state: int  # lifecycle state id
    process: LocalProcess | None  # its process, when it runs on this machine

    def live(self, now: float, timeout: float) -> bool:
        """Heard within ``timeout`` s, and its process has not ended (a node killed a moment ago is not alive)."""
        return now - self.heard < timeout and (self.process is None or self.process.state() != GONE)


class NodeWatch:
    """Heartbeats of every node; calls ``on_lost(node, reason)`` when a watched node is lost (once per
    episode, or once per node for ``optional`` nodes, after which ``lost`` stays None). ``hang_timeout``: how
    long a node of this machine whose process still runs may be silent (``timeout`` at least)."""

    def __init__(self, node: Node, timeout: float, on_lost: Callable[[str, str], None], optional: frozenset[str] = frozenset(),
                 belongs: Callable[[str], bool] = lambda name: True, hang_timeout: float | None = None) -> None:
        self.timeout = timeout
        self.hang_timeout = max(timeout, hang_timeout or timeout)
        self.host = host_id()
        self.optional = optional  # nodes an episode can do without: their loss is reported, the episode goes on
        # the nodes the graph starts: only these are waited for when silent, and watched during an episode
        self.belongs = belongs
        self.on_lost = on_lost
        self.node = node
        self.me = node.get_name()
        self._publishers: tuple[float, frozenset[str]] = (0.0, frozenset())  # (when looked, heartbeat publishers in our namespace)
        self._strangers: dict[str, float] = {}  # names heard but not discovered -> when first heard
        self.lost: str | None = None
        self._beats: dict[str, _Beat] = {}  # node -> its last heartbeat
        self._watched: dict[str, str] | None = None  # node -> instance when the episode began
        self._skipped: set[str] = set()  # nodes last heard not active when the episode began
        self._lock = threading.Lock()
        self._stop = threading.Event()
        node.create_subscription(Heartbeat, HEARTBEAT_TOPIC, safe_callback(node, HEARTBEAT_TOPIC, self._on_beat), HEARTBEAT_QOS)
        threading.Thread(target=self._loop, daemon=True).start()

    def _on_beat(self, msg: Heartbeat) -> None:
        beat = check_heartbeat(msg)
        if not self._publishes(beat.node):
            now = time.monotonic()
            if len(self._strangers) > MAX_NAME_CHARS:
                self._strangers.clear()
            first = self._strangers.setdefault(beat.node, now)
            if now - first < STRANGER_GRACE:  # discovery may show a new node a moment after its first beat: dropped quietly
                return
            raise WireError(f"a heartbeat for node {beat.node!r}, which does not publish heartbeats under "
                            f"{self.node.get_namespace()} (a forgery, or a node of another graph): ignored")
        self._strangers.pop(beat.node, None)
        with self._lock:
            last = self._beats.get(beat.node)
            if last is not None and last.instance == beat.instance and last.pid == beat.pid:
                process = last.process
            else:  # a new process: looked up once (its start time tells a reused pid later)
                process = LocalProcess(beat.pid) if self.host and beat.host == self.host else None
            self._beats[beat.node] = _Beat(beat.instance, beat.pid, time.monotonic(), int(beat.state), process)
            if beat.node in self._skipped and int(beat.state) in (NOT_SAID, ACTIVE) and self._watched is not None:
                self._skipped.discard(beat.node)  # its replacement, heard only now: watched from here on
                self._watched[beat.node] = beat.instance

    def _publishes(self, name: str) -> bool:
        """Whether discovery shows a node of this name in this node's namespace publishing heartbeats (looked up
        again at most every SEEN_EVERY s, when the name is not among those seen last)."""
        looked, names = self._publishers
        if name in names:
            return True
        now = time.monotonic()
        if now - looked < SEEN_EVERY:
            return False
        namespace = self.node.get_namespace()
        topic = self.node.resolve_topic_name(HEARTBEAT_TOPIC)
        names = frozenset(i.node_name for i in self.node.get_publishers_info_by_topic(topic) if i.node_namespace == namespace)
        self._publishers = (now, names)
        return name in names

    def alive(self) -> dict[str, int]:
        """Nodes heard within ``timeout`` seconds -> their pid."""
        now = time.monotonic()
        with self._lock:
            return {n: b.pid for n, b in self._beats.items() if b.live(now, self.timeout)}

    def missing(self) -> list[str]:
        """Nodes of the graph heard from before (this one aside) that are silent now: dead, or not back yet. A
        silent node that the graph does not start (``belongs``: another program's, one that came and went) is
        forgotten."""
        now = time.monotonic()
        with self._lock:
            silent = [n for n, b in self._beats.items() if not b.live(now, self.timeout) and n != self.me]
            for name in silent:
                if not self.belongs(name):
                    del self._beats[name]
            return sorted(n for n in silent if self.belongs(n))

    def instances(self) -> dict[str, str]:
        """Node of the graph -> the instance last heard (a restart changes it)."""
        with self._lock:
            return {n: b.instance for n, b in self._beats.items() if self.belongs(n)}

    def begin(self) -> None:
        """Watch the nodes heard lately (this one aside) until ``end``: one whose process ended since it was waited for
        (``missing``) is watched too, and named at once."""
        now = time.monotonic()
        with self._lock:
            self.lost = None
            alive = {n: (b.instance, b.state) for n, b in self._beats.items()
                     if now - b.heard < self.timeout and n != self.me and self.belongs(n)}
            # a node last heard not active (one taken out of service and stopped, its replacement not heard yet) is
            # watched once it beats active; its calls meanwhile say for themselves that it is not active
            self._watched = {n: inst for n, (inst, state) in alive.items() if state in (NOT_SAID, ACTIVE)}
            self._skipped = {n for n in alive if n not in self._watched}

    def end(self) -> None:
        with self._lock:
            self._watched = None
            self._skipped = set()

    def stop(self) -> None:
        self._stop.set()

    def _verdict(self) -> tuple[str, str] | None:
        """(node, reason) for a watched node replaced, not active, whose process ended, or silent too long while
        others were heard (when every node seems silent, it is this process that lags behind its messages). Of
        several silent nodes the one silent longest is named: the death of one can hold up another's messages."""
        now = time.monotonic()
        silent = []
        for name, instance in (self._watched or {}).items():
            beat = self._beats[name]
            consequence = "its work in this episode is lost" if name in self.optional else "the episode cannot go on"
            if beat.instance != instance:
                return name, f"the {name} node was restarted mid-episode (new process, pid {beat.pid}); {consequence}"
            if beat.state not in (NOT_SAID, ACTIVE):
                return name, (f"the {name} node is not active (lifecycle state: {STATE_LABELS.get(beat.state, beat.state)}): taken out "
                              f"of service mid-episode; {consequence}")
            process = beat.process.state() if beat.process is not None else None
            if process == GONE:
                return name, f"the {name} node died: its process (pid {beat.pid}) has ended; {consequence}"
            others = max((b.heard for n, b in self._beats.items() if n != name), default=now)
            quiet = min(now, others) - beat.heard
            if quiet > (self.hang_timeout if process == RUNNING else self.timeout):
                why = {RUNNING: f"its process, pid {beat.pid}, runs but is silent: it hangs",
                       STOPPED: f"its process, pid {beat.pid}, is stopped"}.get(process or "", "it died or hangs")
                silent.append((beat.heard, name, why))
        if not silent:
            return None
        heard, name, why = min(silent)
        also = [n for _, n, _ in sorted(silent)[1:]]
        return name, (f"the {name} node stopped: no heartbeat for {now - heard:.1f} s ({why})"
                      + (f"; also silent: {', '.join(also)}" if also else ""))

    def _loop(self) -> None:
        while not self._stop.wait(CHECK_EVERY):
            with self._lock:
                if self._watched is None or self.lost is not None:
                    continue
                verdict = self._verdict()
                if verdict is not None:
                    self._watched.pop(verdict[0], None)  # reported once
                    if verdict[0] not in self.optional:
                        self.lost = verdict[1]
            if verdict is not None:
                self.on_lost(*verdict)


def endpoints(node: Node, names: set[str]) -> set[tuple[str, str, str]]:
    """(kind, topic, node) for every publisher and subscription of the named nodes under this node's namespace
    (the graph's), as this node's discovery sees them: a restarted node is back on its data topics once its are
    all here."""
    seen = set()
    prefix, heartbeat = node.get_namespace().rstrip("/") + "/", node.resolve_topic_name(HEARTBEAT_TOPIC)
    for topic, _ in node.get_topic_names_and_types():
        if not topic.startswith(prefix) or topic == heartbeat:
            continue
        seen |= {("pub", topic, i.node_name) for i in node.get_publishers_info_by_topic(topic) if i.node_name in names}
        seen |= {("sub", topic, i.node_name) for i in node.get_subscriptions_info_by_topic(topic) if i.node_name in names}
    return seen
