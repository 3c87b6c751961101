"""Typed ROS 2 services between the nodes: a server whose handler may wait for topics, and a blocking client.

Every homiebot service response carries ``error_code`` (0: none) and ``error_msg``, as Nav2's results
do. A handler fills the rest of the response; an exception it raises becomes the error code its class
is mapped to, so a caller always gets an answer it can read (never a lost request).

Handlers run in an executor thread of their own (a reentrant callback group, the nodes spin in a
multi-threaded executor), because they wait for the round's data on topics that the same node
subscribes to. ``ServiceCaller.call`` blocks its thread (never the executor's) until the answer, a
timeout, or an ``abort`` (the task manager aborts calls to a node that died, and every call when it
stops).
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from homiebot.ros.kit.executors import inline

NONE = 0
MAX_ERROR_CHARS = 2000
SHUTTING_DOWN = "the node is shutting down"
RESEND_FIRST = 1.0  # s without an answer before an idempotent request is sent again (doubling after)


class ServiceError(RuntimeError):
    """A call failed: the node answered with an error code, or it was aborted (``code`` is None then)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class NodeDown(ServiceError):
    """The node that serves a call is not there to answer it: no server is discovered, or it is not active
    (lifecycle). A graph error, not the served component's: a planner's round is not its F1."""


INACTIVE_TEXT = "is not active (lifecycle)"  # in what an inactive node's servers answer (``inactive``)


class ServiceCancelled(ServiceError):
    """The user cancelled the episode while the call was in flight; the episode ends ``cancelled``."""

    termination = "cancelled"


class ServiceInterrupted(ServiceError):
    """The caller's process is stopping; an episode ended by it is ``interrupted``, not an error."""

    termination = "interrupted"


class ServiceTimeout(TimeoutError):
    """No answer in time: the node is down, or still being discovered, or busy."""


@dataclass(frozen=True)
class ErrorMapping:
    """An exception class a handler may raise, the response's error code for it, and whether the node logs
    it as its own failure (with a traceback) or leaves it to the caller (one debug line)."""

    error: type[BaseException]
    code: int
    own_failure: bool = False


_SERVERS: list[TypedServer] = []
_CALLERS: list[_Caller] = []
_PAUSED: set[int] = set()  # ids of the nodes whose servers refuse calls (a lifecycle node not active)
_IN_FLIGHT: dict[int, int] = {}  # node id -> calls its servers are answering now
_FLIGHT = threading.Condition()


def pause(node: Node) -> None:
    """The node's servers refuse calls (``inactive``) until ``resume``."""
    _PAUSED.add(id(node))


def resume(node: Node) -> None:
    _PAUSED.discard(id(node))


def serving(node: Node) -> bool:
    """Whether the node's servers take calls (false while a lifecycle node is not active)."""
    return id(node) not in _PAUSED


def wait_idle(node: Node, timeout: float) -> bool:
    """Until none of the node's servers is answering a call (false if that takes longer than ``timeout`` s)."""
    with _FLIGHT:
        return _FLIGHT.wait_for(lambda: not _IN_FLIGHT.get(id(node)), timeout)


def inactive(node: Node) -> str:
    """What a server of an inactive node answers."""
    name = node.get_fully_qualified_name()
    return f"{name} {INACTIVE_TEXT}; activate it, e.g. `ros2 lifecycle set {name} activate`"


class TypedServer:
    """Serve ``srv_type`` at ``name`` with ``handler(request) -> response`` (a filled ``srv_type.Response``)."""

    def __init__(self, node: Node, srv_type: Any, name: str, handler: Callable[[Any], Any],
                 errors: Sequence[ErrorMapping], failed: int) -> None:
        self.node, self.name, self.handler = node, name, handler
        self.errors, self.failed, self.srv_type = tuple(errors), failed, srv_type
        self.closing = False
        self.service = node.create_service(srv_type, name, self._serve, callback_group=ReentrantCallbackGroup())
        _SERVERS.append(self)

    def _serve(self, request: Any, response: Any) -> Any:
        if self.closing:
            return self._error(response, self.failed, SHUTTING_DOWN)
        if not serving(self.node):
            return self._error(response, self.failed, inactive(self.node))
        key = id(self.node)
        with _FLIGHT:
            _IN_FLIGHT[key] = _IN_FLIGHT.get(key, 0) + 1
        try:
            return self._answer(request, response)
        finally:
            with _FLIGHT:
                _IN_FLIGHT[key] -= 1
                _FLIGHT.notify_all()

    def _answer(self, request: Any, response: Any) -> Any:
        try:
            answer = self.handler(request)
        except Exception as err:
            mapping = next((m for m in self.errors if isinstance(err, m.error)), None)
            if mapping is None or mapping.own_failure:
                if not self.closing and not getattr(err, "termination", None) == "interrupted":
                    self.node.get_logger().error(f"{self.name} failed: {type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}")
            else:
                self.node.get_logger().debug(f"{self.name} refused: {err}")
            return self._error(response, self.failed if mapping is None else mapping.code, f"{type(err).__name__}: {err}")
        answer.error_code = NONE
        return answer

    @staticmethod
    def _error(response: Any, code: int, message: str) -> Any:
        response.error_code, response.error_msg = code, message[:MAX_ERROR_CHARS]
        return response


class OrderedActionClient(ActionClient):
    """An ActionClient that can be used from any thread: rclpy's registers a request only after sending it,
    so a response handled meanwhile by the executor's thread was dropped ("Ignoring unexpected goal
    response") and its future never completed. Sending and registering hold a lock that the handling of
    responses waits for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._sending = threading.Lock()
        super().__init__(*args, **kwargs)

    def send_goal_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._sending:
            return super().send_goal_async(*args, **kwargs)

    def _get_result_async(self, goal_handle: Any) -> Any:
        with self._sending:
            return super()._get_result_async(goal_handle)

    def _cancel_goal_async(self, goal_handle: Any) -> Any:
        with self._sending:
            return super()._cancel_goal_async(goal_handle)

    async def execute(self, taken_data: Any) -> None:
        with self._sending:  # a request being sent is registered before its response is looked up
            pass
        await super().execute(taken_data)


class _Caller:
    """What blocking callers share: abort and resume, and waits that an abort ends."""

    def __init__(self, node: Node, name: str, who: str) -> None:
        """``who``: the serving node's role, for messages ("the planner node did not answer ...")."""
        self.node, self.name, self.who = node, name, who
        self.resolved = node.resolve_service_name(name)  # under the graph's namespace
        self._lock = threading.Lock()
        self._waiting: set[threading.Event] = set()
        self._aborted: str | None = None
        self._abort_kind: type[ServiceError] | None = None  # what an abort raises, when not a plain ServiceError
        _CALLERS.append(self)

    @property
    def connected(self) -> bool:
        """A server is discovered (its request reader and reply writer)."""
        return self._ready()

    def _service(self) -> str:
        """The service whose servers are this call's servers."""
        return self.resolved

    def servers(self) -> list[str]:
        """The nodes serving this call, by name, when discovery sees more than one server (else none are named).
        One per call is what the graph expects; several names are a node left serving beside its replacement.
        One name seen twice is a node restarted after a kill: discovery keeps the dead process's endpoints until
        its lease runs out."""
        service = self._service()
        if self.node.count_services(service) < 2:
            return []
        found = set()
        for name, ns in self.node.get_node_names_and_namespaces():
            try:
                served = self.node.get_service_names_and_types_by_node(name, ns)
            except Exception:  # the node went away meanwhile (rclpy raises its own NodeNameNonExistentError)
                continue
            if any(s == service for s, _ in served):
                found.add(f"{ns.rstrip('/')}/{name}")
        return sorted(found)

    def abort(self, reason: str, interrupted: bool = False, cancelled: bool = False) -> None:
        """Fail every call waiting now, and every later one until ``resume()`` (ServiceInterrupted if
        ``interrupted``, ServiceCancelled if ``cancelled``); an action's goal in flight is cancelled."""
        with self._lock:
            self._aborted, self._abort_kind = reason, ServiceInterrupted if interrupted else ServiceCancelled if cancelled else None
            waiting = list(self._waiting)
        for done in waiting:
            done.set()

    def resume(self) -> None:
        """Accept calls again after ``abort``."""
        with self._lock:
            self._aborted = None

    def _raise_if_aborted(self) -> None:
        if self._aborted is not None:
            raise (self._abort_kind or ServiceError)(self._aborted)

    def _ready(self) -> bool:
        raise NotImplementedError

    def verify(self, timeout: float) -> None:
        """Until a server is discovered (ServiceTimeout after ``timeout`` s; an abort ends the wait)."""
        self._wait_ready(time.monotonic() + timeout, "a call", timeout)

    def _wait_ready(self, deadline: float, what: str, timeout: float) -> None:
        while not self._ready():
            self._raise_if_aborted()
            if not self.node.context.ok():  # a stop signal before the node spins (rclpy's handler shut the context down)
                raise ServiceInterrupted(SHUTTING_DOWN)
            if time.monotonic() >= deadline:
                raise ServiceTimeout(f"the {self.who} node did not answer {what} within {timeout:g} s (no {self.resolved} server)")
            time.sleep(0.02)

    def _await(self, future: Any, deadline: float, what: str, timeout: float, again: Callable[[], Any] | None = None,
               interval: float = 0.0) -> Any:
        """The result of an rclpy future; ServiceTimeout at ``deadline``, the abort's error when aborted. ``again``: sends
        the request once more and returns its future, called each time no answer came within ``interval`` s
        (doubling); the first answer to any copy counts."""
        done = threading.Event()
        with self._lock:
            self._waiting.add(done)
            if self._aborted is not None:
                done.set()
        futures = [future]
        future.add_done_callback(inline(lambda _: done.set()))  # woken by the thread that completes it
        resend_at = time.monotonic() + interval
        try:
            while not done.wait(max(0.0, min(deadline, resend_at if again else deadline) - time.monotonic())):
                now = time.monotonic()
                if now >= deadline:
                    raise ServiceTimeout(f"the {self.who} node did not answer {what} within {timeout:g} s")
                if again is not None and now >= resend_at:  # the answer may be lost: a new server not yet matched to our reader
                    futures.append(again())
                    futures[-1].add_done_callback(inline(lambda _: done.set()))
                    interval *= 2
                    resend_at = now + interval
            answered = [f for f in futures if f.done()]
            if not answered:  # woken by an abort
                self._raise_if_aborted()
            return answered[0].result()
        finally:
            with self._lock:
                self._waiting.discard(done)


class ServiceCaller(_Caller):
    """A blocking client of one typed service (the node must be spun in another thread)."""

    def __init__(self, node: Node, srv_type: Any, name: str, who: str) -> None:
        super().__init__(node, name, who)
        self._client = node.create_client(srv_type, name, callback_group=ReentrantCallbackGroup())
        self._slowest = 0.0  # s, the longest an answer took

    def _ready(self) -> bool:
        return self._client.service_is_ready()

    def call(self, request: Any, timeout: float, what: str = "", idempotent: bool = False) -> Any:
        """The response to ``request``; ServiceError when it carries an error code, ServiceTimeout when none
        comes within ``timeout`` s. ``idempotent`` (a query, or a request that does the same done twice): sent
        again while no answer comes, since a server's first answers are lost until its reply writer has matched
        this client's reader (Fast DDS), which the client cannot see."""
        what = what or f"'{self.name.rsplit('/', 1)[-1]}'"
        self._raise_if_aborted()
        deadline = time.monotonic() + timeout
        self._wait_ready(deadline, what, timeout)
        copies = [self._client.call_async(request)]

        def again() -> Any:
            copies.append(self._client.call_async(request))
            return copies[-1]

        sent = time.monotonic()
        try:  # resent after a few times the slowest answer seen, so that a slow server is not flooded
            response = self._await(copies[0], deadline, what, timeout, again=again if idempotent else None,
                                   interval=max(RESEND_FIRST, 3 * self._slowest))
            self._slowest = max(self._slowest, time.monotonic() - sent)
        finally:
            for future in copies:
                if not future.done():
                    self._client.remove_pending_request(future)
        if response is None:
            raise ServiceError(f"the {self.who} node's {what} was cancelled")
        return _checked(response, self.who)


class ActionCaller(_Caller):
    """A blocking client of one action: send a goal, wait for its result; cancel it on a timeout or an abort."""

    def __init__(self, node: Node, action_type: Any, name: str, who: str) -> None:
        super().__init__(node, name, who)
        self._client = OrderedActionClient(node, action_type, name, callback_group=ReentrantCallbackGroup())

    def _ready(self) -> bool:
        return self._client.server_is_ready()

    def _service(self) -> str:
        return f"{self.resolved}/_action/send_goal"

    def run(self, goal: Any, timeout: float, what: str = "", on_feedback: Callable[[Any], None] | None = None) -> Any:
        """The goal's result; ServiceError when it was rejected or its result carries an error code,
        ServiceTimeout (the goal cancelled) when it does not end within ``timeout`` s."""
        what = what or f"'{self.name.rsplit('/', 1)[-1]}'"
        self._raise_if_aborted()
        deadline = time.monotonic() + timeout
        self._wait_ready(deadline, what, timeout)
        feedback = (lambda msg: on_feedback(msg.feedback)) if on_feedback else None
        handle = self._await(self._client.send_goal_async(goal, feedback_callback=feedback), deadline, what, timeout)
        if handle is None or not handle.accepted:
            raise ServiceError(f"the {self.who} node rejected {what}")
        try:
            wrapped = self._await(handle.get_result_async(), deadline, what, timeout)
        except BaseException:
            handle.cancel_goal_async()  # a timeout, an abort or a stop: the goal must not run on unwatched
            raise
        return _checked(wrapped.result, self.who)


def _checked(response: Any, who: str) -> Any:
    """A response or result without an error code, else ServiceError."""
    if response.error_code != NONE:
        down = INACTIVE_TEXT in response.error_msg
        raise (NodeDown if down else ServiceError)(f"{who}: {response.error_msg}", int(response.error_code))
    return response


def begin_shutdown(nodes: Sequence[Node]) -> None:
    """The process is stopping: these nodes' servers refuse new calls, their callers fail now (interrupted)."""
    mine = {id(n) for n in nodes}
    for server in [s for s in _SERVERS if id(s.node) in mine]:
        server.closing = True
        _SERVERS.remove(server)
    for caller in [c for c in _CALLERS if id(c.node) in mine]:
        caller.abort(SHUTTING_DOWN, interrupted=True)
        _CALLERS.remove(caller)
