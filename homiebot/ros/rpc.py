"""Request/response with progress, cancel and timeout, over two std_msgs/String topics per service.

A server named ``executor`` listens on ``/homiebot/executor/request`` and answers on
``/homiebot/executor/reply``. Every message is JSON with a request ``id``:

* request  ``{"id", "method", "params"}``  or  ``{"id", "cancel": true}``
* reply    ``{"id", "kind": "progress", "data"}`` (any number), then one
           ``{"id", "kind": "result", "data"}`` or ``{"id", "kind": "error", "message"}``

Plain topics keep every exchange visible to ``ros2 topic echo`` and recordable in a bag, and work
with the ROS 2 wheels from PyPI, which cannot build custom action types.

Discovery is not symmetric: a client can see a server's subscription before the server's side has
matched the client, and a request sent then is lost. So a client's first call to a server (and its
first call after a timeout, or once another server process has appeared) is preceded by ``_ping``
requests, repeated until one is answered; a server answers them at once, without a handler.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

PING = "_ping"  # answered by every server itself; proves that requests and replies get through

RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                      durability=DurabilityPolicy.VOLATILE)


class RpcError(RuntimeError):
    """The remote handler failed; the message is the remote error."""


class RpcTimeout(TimeoutError):
    """No result arrived in time (the remote node may be down)."""


class Cancelled(Exception):
    """Raised inside a handler when its request was cancelled."""


@dataclass
class CallContext:
    """Given to handlers: publish progress, and check for cancellation."""

    request_id: str
    _progress: Callable[[Any], None]
    _cancelled: threading.Event = field(default_factory=threading.Event)

    def progress(self, data: Any) -> None:
        self._progress(data)

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def check_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled(self.request_id)


Handler = Callable[[dict, CallContext], Any]


@dataclass(frozen=True)
class ThenRun:
    """A handler result with work to do after the reply is on its way (e.g. publish big data)."""

    result: Any
    then: Callable[[], None]


_LOCAL: dict[str, RpcServer] = {}  # servers in this process (nodes composed into one process)


class RpcServer:
    """Serves named methods; each request runs in its own thread so long calls can be cancelled.

    When client and server live in the same process (``homiebot up --compose``), calls skip the
    middleware and run the handler directly; request and reply are still published, marked
    ``"local": true``, so that they can be watched and recorded.
    """

    def __init__(self, node: Node, service: str, handlers: dict[str, Handler]) -> None:
        self.node = node
        self.service = service
        self.handlers = handlers
        _LOCAL[service] = self
        self._active: dict[str, CallContext] = {}
        self._lock = threading.Lock()
        self._pub = node.create_publisher(String, f"/homiebot/{service}/reply", RELIABLE)
        node.create_subscription(String, f"/homiebot/{service}/request", self._on_request, RELIABLE,
                                 callback_group=ReentrantCallbackGroup())

    def close(self) -> None:
        """Stop serving calls made from this process directly (its topics go with its node)."""
        if _LOCAL.get(self.service) is self:
            del _LOCAL[self.service]

    def _send(self, payload: dict) -> None:
        self._pub.publish(String(data=json.dumps(payload)))

    def _on_request(self, msg: String) -> None:
        try:
            req = json.loads(msg.data)
            rid = str(req["id"])
        except (ValueError, KeyError, TypeError):
            self.node.get_logger().error(f"ignoring a malformed request: {msg.data[:200]}")
            return
        if req.get("local"):
            return  # already being served by a direct call in this process
        if req.get("cancel"):
            with self._lock:
                ctx = self._active.get(rid)
            if ctx:
                ctx._cancelled.set()
            return
        method = req.get("method")
        if method == PING:
            self._send({"id": rid, "kind": "result", "data": {"service": self.service}})
            return
        if method not in self.handlers:
            self._send({"id": rid, "kind": "error", "message": f"unknown method '{method}'; known: {sorted(self.handlers)}"})
            return
        ctx = CallContext(rid, lambda data: self._send({"id": rid, "kind": "progress", "data": data}))
        with self._lock:
            self._active[rid] = ctx
        threading.Thread(target=self._run, args=(method, req.get("params") or {}, ctx), daemon=True).start()

    def call_local(self, request: dict, on_progress: Callable[[Any], None] | None, timeout: float) -> Any:
        """Serve a request from this process directly (same semantics as over the topics)."""
        rid, method = request["id"], request["method"]
        if method not in self.handlers:
            raise RpcError(f"{self.service}.{method}: unknown method; known: {sorted(self.handlers)}")
        ctx = CallContext(rid, on_progress or (lambda data: None))
        box: list = []

        def run() -> None:
            try:
                box.append(("result", self.handlers[method](request.get("params") or {}, ctx)))
            except Cancelled:
                box.append(("error", "cancelled"))
            except Exception as err:
                self.node.get_logger().error(f"{method} failed: {err}\n{traceback.format_exc(limit=5)}")
                box.append(("error", f"{type(err).__name__}: {err}"))

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            ctx._cancelled.set()
            raise RpcTimeout(f"the {self.service} node did not answer '{method}' within {timeout:g} s")
        kind, value = box[0]
        after = None
        if kind == "result" and isinstance(value, ThenRun):
            value, after = value.result, value.then
        self._send({"id": rid, "kind": kind, "local": True, **({"data": value} if kind == "result" else {"message": value})})
        if after is not None:
            threading.Thread(target=after, daemon=True).start()
        if kind == "error":
            raise RpcError(f"{self.service}.{method}: {value}")
        return value

    def _run(self, method: str, params: dict, ctx: CallContext) -> None:
        try:
            result = self.handlers[method](params, ctx)
            after = None
            if isinstance(result, ThenRun):
                result, after = result.result, result.then
            self._send({"id": ctx.request_id, "kind": "result", "data": result})
            if after is not None:
                after()
        except Cancelled:
            self._send({"id": ctx.request_id, "kind": "error", "message": "cancelled"})
        except Exception as err:  # the handler's failure is reported to the caller, the node lives on
            self.node.get_logger().error(f"{method} failed: {err}\n{traceback.format_exc(limit=5)}")
            self._send({"id": ctx.request_id, "kind": "error", "message": f"{type(err).__name__}: {err}"})
        finally:
            with self._lock:
                self._active.pop(ctx.request_id, None)


class RpcClient:
    """Calls a remote service and waits for its result (the node must be spun in another thread)."""

    def __init__(self, node: Node, service: str) -> None:
        self.service = service
        self._node = node
        self._pending: dict[str, tuple[threading.Event, list, Callable[[Any], None] | None]] = {}
        self._lock = threading.Lock()
        self._pub = node.create_publisher(String, f"/homiebot/{service}/request", RELIABLE)
        self._reply_topic = f"/homiebot/{service}/reply"
        node.create_subscription(String, self._reply_topic, self._on_reply, RELIABLE, callback_group=ReentrantCallbackGroup())
        self._verified_for: frozenset | None = None  # the servers (reply writers) present when a ping was last answered

    @property
    def connected(self) -> bool:
        """True once a server subscribes to our requests and its replies are seen: discovery goes
        both ways, and a reply published before its way back is known would be lost."""
        return self._pub.get_subscription_count() > 0 and self._node.count_publishers(self._reply_topic) > 0

    def _on_reply(self, msg: String) -> None:
        try:
            rep = json.loads(msg.data)
        except ValueError:
            return
        with self._lock:
            entry = self._pending.get(str(rep.get("id")))
        if entry is None:
            return
        done, box, on_progress = entry
        if rep.get("kind") == "progress":
            if on_progress:
                on_progress(rep.get("data"))
            return
        box.append(rep)
        done.set()

    def call(self, method: str, params: dict | None = None, timeout: float = 30.0,
             on_progress: Callable[[Any], None] | None = None, resend: float | None = None) -> Any:
        """Send a request and block until its result; RpcTimeout after ``timeout`` seconds (then cancel).

        ``resend``: for idempotent methods, send the request again every ``resend`` seconds until an
        answer comes, which rides over a server that has just (re)started and is still being discovered.
        """
        rid = uuid.uuid4().hex
        local = _LOCAL.get(self.service)
        if local is not None:
            payload = {"id": rid, "method": method, "params": params or {}, "local": True}
            self._pub.publish(String(data=json.dumps(payload)))  # for the record; servers ignore local requests
            return local.call_local(payload, on_progress, timeout)
        deadline = time.monotonic() + timeout
        self._verify(deadline, method, timeout)
        rep = self._exchange(method, params or {}, deadline, resend, method, timeout, on_progress)
        if rep.get("kind") == "error":
            raise RpcError(f"{self.service}.{method}: {rep.get('message')}")
        return rep.get("data")

    def verify(self, timeout: float, force: bool = False) -> None:
        """Make sure that requests reach the server and replies come back (RpcTimeout if not).

        ``force``: ping even if nothing suggests a new server. A server process that has just
        replaced another may not be discovered yet while the old one still looks present; only an
        answered ping shows that calls get through."""
        self._verify(time.monotonic() + timeout, PING, timeout, force)

    def _servers(self) -> frozenset:
        """The processes answering on the reply topic (a restarted server is a new one)."""
        return frozenset(bytes(i.endpoint_gid) for i in self._node.get_publishers_info_by_topic(self._reply_topic))

    def _verify(self, deadline: float, what: str, timeout: float, force: bool = False) -> None:
        while not self.connected and time.monotonic() < deadline:  # nobody listens yet: wait, then ping
            time.sleep(0.02)
        servers = self._servers()
        if force or servers != self._verified_for:
            self._exchange(PING, {}, deadline, resend=0.25, what=what, timeout=timeout)
            self._verified_for = servers

    def _exchange(self, method: str, params: dict, deadline: float, resend: float | None, what: str, timeout: float,
                  on_progress: Callable[[Any], None] | None = None) -> dict:
        """Publish one request (again every ``resend`` seconds) and wait for its result until ``deadline``."""
        rid = uuid.uuid4().hex
        done, box = threading.Event(), []
        with self._lock:
            self._pending[rid] = (done, box, on_progress)
        request = String(data=json.dumps({"id": rid, "method": method, "params": params}))
        try:
            self._pub.publish(request)
            while not done.wait(min(resend or timeout, max(0.0, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    self._pub.publish(String(data=json.dumps({"id": rid, "cancel": True})))
                    self._verified_for = None  # the server may be gone; check the way to its successor
                    raise RpcTimeout(f"the {self.service} node did not answer '{what}' within {timeout:g} s")
                self._pub.publish(request)
        finally:
            with self._lock:
                self._pending.pop(rid, None)
        return box[0]
