"""Request/response with progress, cancel and timeout, over two std_msgs/String topics per service.

A server named ``executor`` listens on ``/homiebot/executor/request`` and answers on
``/homiebot/executor/reply``. Every message is JSON with a request ``id``:

* request  ``{"id", "method", "params"}``  or  ``{"id", "cancel": true}``
* reply    ``{"id", "kind": "progress", "data"}`` (any number), then one
           ``{"id", "kind": "result", "data"}`` or ``{"id", "kind": "error", "message"}``

What is left of the graph's first protocol: the policy server and the sim driver's expert still serve
through it; the world, the planner, the detector, the executor and the recorder serve typed
``homiebot_msgs`` services and actions instead (``homiebot/ros/services.py``, ``homiebot/ros/world_link.py``).

Discovery is not symmetric: a client can see a server's subscription before the server's side has
matched the client, and a request sent then is lost. So a client's first call to a server (and its
first call after a timeout, or once another server process has appeared) is preceded by ``_ping``
requests, repeated until one is answered; a server answers them at once, without a handler.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import rclpy
from pydantic import ValidationError
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String

from homiebot.ros.messages import RELIABLE  # noqa: F401  (re-exported: the sim driver and the robot bridge import it here)
from homiebot.ros.wire import (
    LOG_EVERY,
    RpcReply,
    RpcRequest,
    WireError,
    describe,
    message_limit,
    read_json,
    readable_id,
    safe_callback,
)

PING = "_ping"  # answered by every server itself; proves that requests and replies get through
RELEASE = "_release"  # ends the caller's episode session (see RpcServer)



class RpcError(RuntimeError):
    """The remote handler failed; the message is the remote error, ``remote_type`` its exception class name."""

    def __init__(self, message: str, remote_type: str | None = None) -> None:
        super().__init__(message)
        self.remote_type = remote_type


class RpcInterrupted(RpcError):
    """The caller's process is stopping; an episode ended by it is ``interrupted``, not an error."""

    termination = "interrupted"


class RpcTimeout(TimeoutError):
    """No result arrived in time (the remote node may be down)."""


class Cancelled(Exception):
    """Raised inside a handler when its request was cancelled."""


class BadRequest(ValueError):
    """Raised by a handler whose parameters are missing or malformed: the caller gets the message, the
    node logs one warning line (a hostile or broken client is not the node's failure)."""


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
_SERVERS: list[RpcServer] = []  # every server and client of this process, to be shut down in order
_CLIENTS: list[RpcClient] = []
SHUTTING_DOWN = "the node is shutting down"

EXCLUSIVE = ("reset",)  # methods that start an episode: refused while another client's episode runs
LEASE = 30.0  # seconds an episode session outlives the last request of its owner
MAX_ACTIVE = 32  # concurrent handler threads per server; more requests are answered "busy"


class RpcServer:
    """Serves named methods; each request runs in its own thread so long calls can be cancelled.

    When client and server live in the same process (``homiebot up --compose``), calls skip the
    middleware and run the handler directly; request and reply are still published, marked
    ``"local": true``, so that they can be watched and recorded.

    Requests are validated (``homiebot.ros.wire.RpcRequest``, at most ``max_message_bytes``); one that
    fails gets an error reply when its id can be read and is dropped otherwise. A client that names
    itself (``owner``) and calls an ``exclusive`` method holds a session: while it lasts (until
    ``_release`` or ``LEASE`` seconds after its owner's last request), ``exclusive`` calls from anyone
    else are refused, so that nobody resets the world under a running episode.
    """

    def __init__(self, node: Node, service: str, handlers: dict[str, Handler], exclusive: tuple[str, ...] = EXCLUSIVE,
                 lease: float = LEASE, expected: tuple[type[Exception], ...] = ()) -> None:
        """``expected``: exceptions that are the caller's to fix (logged as one warning line, no traceback)."""
        self.node = node
        self.expected = expected
        self.service = service
        self.handlers = handlers
        self.exclusive = frozenset(exclusive)
        self.lease = lease
        self.instance = uuid.uuid4().hex  # tells clients when this server has been replaced by another process
        self.limit = message_limit(node)
        _LOCAL[service] = self
        _SERVERS.append(self)
        self._active: dict[str, CallContext] = {}
        self._threads: set[threading.Thread] = set()
        self._session: tuple[str, float] | None = None  # (owner, time of its last request)
        self._lock = threading.Lock()
        self._closing = self._closed = False  # closing: shutting down, handlers failing because of it are not news
        self._pub = node.create_publisher(String, f"/homiebot/{service}/reply", RELIABLE)
        topic = f"/homiebot/{service}/request"
        node.create_subscription(String, topic, safe_callback(node, topic, self._on_request), RELIABLE,
                                 callback_group=ReentrantCallbackGroup())

    def close(self, grace: float = 2.0) -> None:
        """Stop serving: cancel running calls, wait up to ``grace`` s for their threads, publish no more.

        Called before the node is destroyed, so that no handler thread touches a destroyed publisher."""
        self.begin_close()
        with self._lock:
            threads = list(self._threads)
        deadline = time.monotonic() + grace
        for t in threads:
            if t is not threading.current_thread() and t.ident is not None:  # registered threads start a moment later
                t.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._closed = True

    def begin_close(self) -> None:
        """Take no new calls and ask the running ones to stop (they may still finish and answer)."""
        if _LOCAL.get(self.service) is self:
            del _LOCAL[self.service]
        self._closing = True
        with self._lock:
            for ctx in self._active.values():
                ctx._cancelled.set()

    def _send(self, payload: dict) -> None:
        with self._lock:  # held while publishing: close() cannot complete in between
            if self._closed:
                return
            try:
                self._pub.publish(String(data=json.dumps(payload)))
            except Exception:  # the context was shut down under us (a signal): nobody can hear it anyway
                if rclpy.ok(context=self.node.context):
                    raise

    def _refusal(self, method: str, owner: str | None) -> str | None:
        """Why this call is out of turn (None: it may run); renews or opens its owner's session."""
        now = time.monotonic()
        with self._lock:
            held = self._session if self._session and now - self._session[1] < self.lease else None
            if owner is not None and (held is None or held[0] == owner):
                if held is not None or method in self.exclusive:
                    self._session = (owner, now)
                return None
            if method in self.exclusive and held is not None:
                return (f"refused: '{method}' is out of turn: the {self.service} node is serving an episode of "
                        f"{held[0]} (try again when it has ended)")
            return None

    def _release(self, owner: str | None) -> None:
        with self._lock:
            if self._session and self._session[0] == owner:
                self._session = None

    def _on_request(self, msg: String) -> None:
        try:
            value = read_json(msg.data, self.limit)
            req = RpcRequest.model_validate(value)
        except (WireError, ValidationError) as err:
            problem = describe(err) if isinstance(err, ValidationError) else str(err)
            rid = readable_id(value) if isinstance(err, ValidationError) else None
            self.node.get_logger().warning(f"{self.service}: rejected a request: {problem}", throttle_duration_sec=LOG_EVERY)
            if rid is not None:
                self._send({"id": rid, "kind": "error", "message": f"invalid request: {problem}"})
            return
        rid = req.id
        if self._closing:
            return  # shutting down: the caller's timeout or its own shutdown ends the call
        if req.local:
            return  # already being served by a direct call in this process
        if req.cancel:
            with self._lock:
                ctx = self._active.get(rid)
            if ctx:
                ctx._cancelled.set()
            return
        method = req.method
        if method == PING:
            self._refusal(PING, req.owner)  # a ping of the session's owner keeps the session
            self._send({"id": rid, "kind": "result", "data": {"service": self.service, "instance": self.instance}})
            return
        if method == RELEASE:
            self._release(req.owner)
            self._send({"id": rid, "kind": "result", "data": None})
            return
        if method not in self.handlers:
            self._send({"id": rid, "kind": "error", "message": f"unknown method '{method}'; known: {sorted(self.handlers)}"})
            return
        if refusal := self._refusal(method, req.owner):
            self._send({"id": rid, "kind": "error", "message": refusal})
            return
        ctx = CallContext(rid, lambda data: self._send({"id": rid, "kind": "progress", "data": data}))
        with self._lock:
            if rid in self._active:  # a resend of a call still running: its answer will come (a second run would queue behind it)
                return
            if self._closed or len(self._active) >= MAX_ACTIVE:
                busy = True
            else:
                busy = False
                self._active[rid] = ctx
                thread = threading.Thread(target=self._run, args=(method, req.params, ctx), daemon=True)
                self._threads.add(thread)
        if busy:
            self._send({"id": rid, "kind": "error", "message": f"busy: the {self.service} node is serving {MAX_ACTIVE} calls"})
            return
        thread.start()

    def call_local(self, request: dict, on_progress: Callable[[Any], None] | None, timeout: float) -> Any:
        """Serve a request from this process directly (same semantics as over the topics)."""
        rid, method = request["id"], request["method"]
        if method in (PING, RELEASE):
            if method == RELEASE:
                self._release(request.get("owner"))
            return {"service": self.service, "instance": self.instance} if method == PING else None
        if method not in self.handlers:
            raise RpcError(f"{self.service}.{method}: unknown method; known: {sorted(self.handlers)}")
        if problem := self._refusal(method, request.get("owner")):
            raise RpcError(f"{self.service}.{method}: {problem}")
        ctx = CallContext(rid, on_progress or (lambda data: None))
        box: list = []

        def run() -> None:
            try:
                box.append(("result", self.handlers[method](request.get("params") or {}, ctx)))
            except Cancelled:
                box.append(("error", "cancelled"))
            except Exception as err:
                self._log_failure(method, err)
                box.append(("error", f"{type(err).__name__}: {err}"))
                box.append(type(err).__name__)

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
            self._start_tracked(after)
        if kind == "error":
            raise RpcError(f"{self.service}.{method}: {value}", box[1] if len(box) > 1 else None)
        return value

    def _log_failure(self, method: str, err: Exception) -> None:
        """A handler's failure in the node's log (called in its except block, for the traceback)."""
        if isinstance(err, self.expected):  # the caller reports it (the task manager's log line says it once)
            self.node.get_logger().debug(f"{method} refused: {err}")
        else:
            self.node.get_logger().error(f"{method} failed: {err}\n{traceback.format_exc(limit=5)}")

    def _start_tracked(self, target: Callable[[], None]) -> None:
        def run() -> None:
            try:
                target()
            except Exception as err:
                if not self._closing:
                    self.node.get_logger().error(f"{self.service}: {type(err).__name__}: {err}")
            finally:
                with self._lock:
                    self._threads.discard(threading.current_thread())

        thread = threading.Thread(target=run, daemon=True)
        with self._lock:
            if self._closed:
                return
            self._threads.add(thread)
        thread.start()

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
        except BadRequest as err:
            self.node.get_logger().warning(f"{self.service}: refused a '{method}' request: {err}")
            self._send({"id": ctx.request_id, "kind": "error", "message": f"BadRequest: {err}"[:2000], "type": "BadRequest"})
        except Exception as err:  # the handler's failure is reported to the caller, the node lives on
            if not (self._closing or isinstance(err, RpcInterrupted)):
                self._log_failure(method, err)
            self._send({"id": ctx.request_id, "kind": "error", "message": f"{type(err).__name__}: {err}"[:2000], "type": type(err).__name__})
        finally:
            with self._lock:
                self._active.pop(ctx.request_id, None)
                self._threads.discard(threading.current_thread())


class RpcClient:
    """Calls a remote service and waits for its result (the node must be spun in another thread).

    ``owner``: a name sent with every request, which makes the client's episode calls exclusive on
    the server (see ``RpcServer``)."""

    def __init__(self, node: Node, service: str, owner: str | None = None) -> None:
        self.service = service
        self.owner = owner
        self._node = node
        self._pending: dict[str, tuple[threading.Event, list, Callable[[Any], None] | None]] = {}
        self._lock = threading.Lock()
        self._aborted: str | None = None
        self._interrupted = False
        self._pub = node.create_publisher(String, f"/homiebot/{service}/request", RELIABLE)
        self._reply_topic = f"/homiebot/{service}/reply"
        self._limit = message_limit(node)
        node.create_subscription(String, self._reply_topic, safe_callback(node, self._reply_topic, self._on_reply), RELIABLE,
                                 callback_group=ReentrantCallbackGroup())
        self._verified_for: frozenset | None = None  # the servers (reply writers) present when a ping was last answered
        self.instance: str | None = None  # the server instance that answered the last ping
        _CLIENTS.append(self)

    def abort(self, reason: str, interrupted: bool = False) -> None:
        """Fail every call waiting now, and every later one until ``resume()``, with RpcError(reason)
        (RpcInterrupted if ``interrupted``)."""
        with self._lock:
            self._aborted = reason
            self._interrupted = interrupted
            entries = list(self._pending.values())
        for done, box, _ in entries:
            box.insert(0, self._abort_reply())
            done.set()

    def _abort_reply(self) -> dict:
        return {"kind": "error", "message": self._aborted, "aborted": True, "interrupted": self._interrupted}

    def _raise_aborted(self, rep: dict) -> None:
        raise (RpcInterrupted if rep.get("interrupted") else RpcError)(rep["message"])

    def resume(self) -> None:
        """Accept calls again after ``abort``."""
        with self._lock:
            self._aborted = None

    def release(self) -> None:
        """End this client's episode session on the server (no answer awaited: a lost release expires)."""
        self._publish({"id": uuid.uuid4().hex, "method": RELEASE, "params": {}})

    def _publish(self, payload: dict) -> None:
        if self.owner is not None:
            payload = {**payload, "owner": self.owner}
        try:
            self._pub.publish(String(data=json.dumps(payload)))
        except Exception:  # shut down under us: the call fails through its timeout or abort
            if rclpy.ok(context=self._node.context):
                raise

    @property
    def connected(self) -> bool:
        """True once a server subscribes to our requests and its replies are seen: discovery goes
        both ways, and a reply published before its way back is known would be lost."""
        return self._pub.get_subscription_count() > 0 and self._node.count_publishers(self._reply_topic) > 0

    def _on_reply(self, msg: String) -> None:
        value = read_json(msg.data, self._limit)
        if not isinstance(value, dict) or readable_id(value) is None:
            raise WireError("a reply is a JSON object with an id")
        with self._lock:
            entry = self._pending.get(str(value["id"]))
        if entry is None:
            return  # another client's call, or a late answer
        try:
            rep = RpcReply.model_validate(value).model_dump()
        except ValidationError as err:
            raise WireError(describe(err)) from None
        done, box, on_progress = entry
        if rep.get("kind") == "progress":
            if on_progress:
                on_progress(rep.get("data"))
            return
        if not box:
            box.append(rep)
        done.set()

    def call(self, method: str, params: dict | None = None, timeout: float = 30.0,
             on_progress: Callable[[Any], None] | None = None, resend: float | None = None) -> Any:
        """Send a request and block until its result; RpcTimeout after ``timeout`` seconds (then cancel).

        ``resend``: for idempotent methods, send the request again every ``resend`` seconds until an
        answer comes, which rides over a server that has just (re)started and is still being discovered.
        """
        rid = uuid.uuid4().hex
        if self._aborted is not None:
            self._raise_aborted(self._abort_reply())
        local = _LOCAL.get(self.service)
        if local is not None:
            payload = {"id": rid, "method": method, "params": params or {}, "local": True}
            self._publish(payload)  # for the record; servers ignore local requests
            if self.owner is not None:
                payload["owner"] = self.owner
            return local.call_local(payload, on_progress, timeout)
        deadline = time.monotonic() + timeout
        self._verify(deadline, method, timeout)
        rep = self._exchange(method, params or {}, deadline, resend, method, timeout, on_progress)
        if rep.get("aborted"):
            self._raise_aborted(rep)
        if rep.get("kind") == "error":
            raise RpcError(f"{self.service}.{method}: {rep.get('message')}", rep.get("type") if isinstance(rep.get("type"), str) else None)
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
        # nobody listens yet: wait, then ping; an abort ends the wait (the server may have stopped with
        # this process, and waiting out the deadline would outlast the time left to save the record)
        while not self.connected and self._aborted is None and time.monotonic() < deadline:
            time.sleep(0.02)
        servers = self._servers()
        if force or servers != self._verified_for:
            rep = self._exchange(PING, {}, deadline, resend=0.25, what=what, timeout=timeout)
            if rep.get("aborted"):
                self._raise_aborted(rep)
            self.instance = (rep.get("data") or {}).get("instance")
            self._verified_for = servers

    def _exchange(self, method: str, params: dict, deadline: float, resend: float | None, what: str, timeout: float,
                  on_progress: Callable[[Any], None] | None = None) -> dict:
        """Publish one request (again every ``resend`` seconds) and wait for its result until ``deadline``."""
        rid = uuid.uuid4().hex
        done, box = threading.Event(), cast(list[Any], [])
        with self._lock:
            self._pending[rid] = (done, box, on_progress)
            if self._aborted is not None:
                box.append(self._abort_reply())
                done.set()
        request = {"id": rid, "method": method, "params": params}
        try:
            self._publish(request)
            while not done.wait(min(resend or timeout, max(0.0, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    self._publish({"id": rid, "cancel": True})
                    self._verified_for = None  # the server may be gone; check the way to its successor
                    raise RpcTimeout(f"the {self.service} node did not answer '{what}' within {timeout:g} s")
                self._publish(request)
        finally:
            with self._lock:
                self._pending.pop(rid, None)
        return box[0]


def shut_down(nodes: list[Node], components: list[object], grace: float = 1.5) -> None:
    """Stop the RPC side of these nodes in an order free of use-after-destroy races (the caller has told the
    components that the process stops, ``interrupt()``):

    1. servers take no new calls and ask running handlers to stop;
    2. calls waiting for other nodes fail (RpcInterrupted), so that handlers and the task manager's
       episode end now; recorder calls are spared, so that an episode's bag is still closed;
    3. handler threads get up to ``grace`` s to finish, then servers publish no more;
    4. components close (``close()``: the task manager writes its record, the world releases its
       renderer), with no handler left to use what they release;
    5. the remaining calls fail."""
    mine = {id(n) for n in nodes}
    servers = [s for s in _SERVERS if id(s.node) in mine]
    clients = [c for c in _CLIENTS if id(c._node) in mine]
    for server in servers:
        server.begin_close()
    for client in clients:
        if client.service != "recorder":
            client.abort(SHUTTING_DOWN, interrupted=True)
    deadline = time.monotonic() + grace
    for server in servers:
        server.close(max(0.0, deadline - time.monotonic()))
        _SERVERS.remove(server)
    for component in components:
        close = getattr(component, "close", None)
        if close:
            try:
                close()
            except Exception as err:  # one component's failure must not leave the others open
                print(f"homiebot: closing {type(component).__name__}: {type(err).__name__}: {err}", file=sys.stderr, flush=True)
    for client in clients:
        client.abort(SHUTTING_DOWN, interrupted=True)
        _CLIENTS.remove(client)
