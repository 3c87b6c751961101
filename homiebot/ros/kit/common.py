"""What every homiebot node shares: start-up with declared, validated parameters, and spinning."""

from __future__ import annotations

import atexit
import faulthandler
import logging
import math
import os
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import rclpy
from homiebot_msgs.msg import Heartbeat
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy_impl
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from homiebot.config import ConfigError, RunConfig, load_config
from homiebot.ros.kit import services
from homiebot.ros.kit.dds_profile import use_profile
from homiebot.ros.kit.executors import PoolExecutor

if TYPE_CHECKING:
    from homiebot.ros.kit.lifecycle import GraphNode


class ParameterError(ValueError):
    """A node parameter with a wrong type or value; the node exits with this message."""


class CannotRun(RuntimeError):
    """Something outside the graph that a node needs is missing (a robot driver): the node says what
    in one line and exits with status 3, which stops ``homiebot up`` (a restart would not help)."""


CANNOT_RUN = 3  # exit status of a node that raised CannotRun
FINALIZE_LIMIT = 1.0  # seconds a stopping process gives the middleware to free its entities (see _finalize_within)


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    description: str
    check: Callable[[Any], str | None] | None = None  # returns an error text, or None if fine
    types: tuple[type, ...] = ()  # other accepted types than the default's (``-p scene:=0`` gives an integer)


def positive(value: Any) -> str | None:
    return None if value > 0 else "must be greater than 0"


COMMON = (Param("config", "", "run configuration YAML (empty: built-in defaults)"),)
EXECUTOR_THREADS = 3  # callbacks of a process at once: typed service handlers that wait, and the topics they wait for
HEARTBEAT_TOPIC = "/homiebot/heartbeat"
HEARTBEAT_PERIOD = 0.5  # seconds between two heartbeats of a node
HEARTBEAT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


def declare(node: Node, params: tuple[Param, ...]) -> dict[str, Any]:
    """Declare typed parameters with defaults, read them, and validate them (ParameterError). They are
    read once, at start-up, so they are declared read-only: a later ``set_parameters`` is refused with
    that reason instead of being accepted and ignored (pass new values with ``-p`` at start-up)."""
    values = {}
    for p in COMMON + params:
        descriptor = ParameterDescriptor(description=p.description, read_only=True, dynamic_typing=bool(p.types))
        try:
            node.declare_parameter(p.name, p.default, descriptor)
            value = node.get_parameter(p.name).value
        except Exception as err:  # rclpy raises its own type-mismatch exceptions
            raise ParameterError(f"parameter '{p.name}': {err} (expected {type(p.default).__name__}, default {p.default!r})") from None
        accepted = (type(p.default), *p.types)
        if p.types and (not isinstance(value, accepted) or isinstance(value, bool) and bool not in accepted):
            names = " or ".join(t.__name__ for t in accepted)
            raise ParameterError(f"parameter '{p.name}' = {value!r}: expected {names}, default {p.default!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ParameterError(f"parameter '{p.name}' = {value!r}: must be a finite number")
        if p.check and (problem := p.check(value)):
            raise ParameterError(f"parameter '{p.name}' = {value!r}: {problem}")
        values[p.name] = value
    return values


def run_config(path: str) -> RunConfig:
    try:
        return load_config(path or None)
    except ConfigError as err:
        raise ParameterError(str(err)) from None


@dataclass(frozen=True)
class NodeDef:
    """A node of the graph: its default name, the component it wraps, its parameters."""

    name: str
    build: Callable[[Node, dict[str, Any]], object]
    params: tuple[Param, ...] = ()
    # its typed service handlers wait for topic data: its process spins a multi-threaded executor
    waiting_handlers: bool = False
    # they wait only under some parameters (e.g. a config whose nodes call each other): params -> whether
    waiting_if: Callable[[dict[str, Any]], bool] | None = None
    # a lifecycle node with the standard lifecycle services (false: a stand-in for a driver that has none)
    managed: bool = True

    def waits(self, params: dict[str, Any]) -> bool:
        """Whether this node's handlers may wait for replies its own process must deliver (then it spins
        a multi-threaded executor); parameters it cannot read count as waiting (the safe side)."""
        if self.waiting_handlers or self.waiting_if is None:
            return self.waiting_handlers
        try:
            return self.waiting_if(params)
        except (ValueError, OSError):
            return True



class _Heartbeat:
    """Publish a ``homiebot_msgs/Heartbeat`` (node, instance, pid) every HEARTBEAT_PERIOD s from a thread of its own (not the
    executor, whose queue may be long under load): the task manager watches them to notice within
    seconds that a node has died or been replaced (a new process has a new instance)."""

    def __init__(self, node: Node) -> None:
        self.publisher = node.create_publisher(Heartbeat, HEARTBEAT_TOPIC, HEARTBEAT_QOS)
        self._beat = Heartbeat(node=node.get_name(), instance=uuid.uuid4().hex, pid=os.getpid())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                self.publisher.publish(self._beat)
            except Exception:  # the context is going away; close() follows
                return
            if self._stop.wait(HEARTBEAT_PERIOD):
                return

    def close(self) -> None:
        """Stop beating; returns once no publish can happen any more (before the node is destroyed)."""
        self._stop.set()
        self._thread.join()


class _Stop:
    """SIGINT and SIGTERM ask the spin loop to end; the shutdown then runs in order (see ``_spin``)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda signum, frame: self.event.set())


def _spin(nodes: list[GraphNode], threads: int = 1) -> None:
    """Spin until a stop signal, then shut down without use-after-destroy races: components first
    (the task manager finalises its episode), then every typed server refuses new calls and the calls
    waiting on other nodes fail, then the components close, then the executor, the nodes and the
    context, in that order (``_finalize_within``)."""
    stop = _Stop()
    # one thread: callbacks only queue work; more: a typed service's handler may wait for topic data that
    # this process's other callbacks deliver
    executor: Executor = SingleThreadedExecutor() if threads == 1 else PoolExecutor(threads)
    # often enough to see a stop signal (a shorter wait, 20 ms, cut the rounds' stalls on futures completed on
    # another thread, but then the Foxglove node sometimes forwarded no image of a whole episode)
    wake = 0.1
    beats = [_Heartbeat(node) for node in nodes]
    for node, beat in zip(nodes, beats, strict=True):
        node.keep(beat.publisher)  # the process's liveness: a lifecycle cleanup must not take it
    for node in nodes:
        executor.add_node(node)
        node.get_logger().info(f"{node.get_name()} node ready" if node.component is not None else
                               f"{node.get_name()} node waiting unconfigured for its lifecycle manager (autostart is false)")
    try:
        while not stop.event.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=wake)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except _rclpy_impl.RCLError:
        if rclpy.ok():  # not a stop signal racing the executor's wait: a real failure
            raise
    finally:
        for beat in beats:
            beat.close()
        components = [n.component for n in nodes if n.component is not None]
        stop_components(components, nodes)
        _finalize_within(FINALIZE_LIMIT, executor, nodes)


def _finalize_within(limit: float, executor: Executor, nodes: list[GraphNode]) -> None:
    """``_finalize``, or the end of the process after ``limit`` seconds (exit status 1). When the whole graph stops
    at once, Fast DDS sometimes stalls for seconds deleting one entity (waiting on another process's
    shared-memory port or its own event thread) while holding the GIL, so no Python timer could end it:
    faulthandler's watchdog is a C thread. What the process owns (records, bags, the robot's stop) is done by
    then (``stop_components``); a segment left behind is freed by ``homiebot up`` and the next start (``shm``)."""
    with open(os.devnull, "w") as quiet:
        faulthandler.dump_traceback_later(limit, exit=True, file=quiet)
        try:
            _finalize(executor, nodes)
        finally:
            faulthandler.cancel_dump_traceback_later()


def _finalize(executor: Executor, nodes: list[GraphNode]) -> None:
    """The executor, the nodes and the context, in that order: the last node's destruction frees the Fast DDS
    participant and its shared-memory segment."""
    executor.shutdown()
    for node in nodes:
        node.destroy_node()
    rclpy.try_shutdown()


def init(args: list[str] | None) -> None:
    """rclpy without its own signal handlers: a signal must not invalidate the context while handler
    threads still publish; ``_spin`` turns SIGINT/SIGTERM into an orderly shutdown instead."""
    if rclpy.ok():
        return  # already initialised in this process (a node and a bridge, say)
    use_profile(os.environ)  # before the first participant: a node started by ros2 launch or by hand gets it too
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)


def run_node(definition: NodeDef, args: list[str] | None = None) -> int:
    """One node in this process: parameters from the command line (``--ros-args -p k:=v``). Returns only
    when it cannot start (2: its parameters or config, 3: something it needs is missing); after a stop
    signal the process ends (``end_process``)."""
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    init(args if args is not None else sys.argv)
    return _run([(definition, definition.name, {})])


def run_composed(members: list[tuple[NodeDef, str, dict[str, Any]]]) -> int:
    """Several nodes in one process (name and parameters per node); calls between them skip the middleware.
    Returns only when one cannot start; after a stop signal the process ends (``end_process``)."""
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    init(None)
    return _run(members)


def _run(members: list[tuple[NodeDef, str, dict[str, Any]]]) -> int:
    """Make each member's lifecycle node; with ``autostart`` configure and activate it now. Returns the
    status of a node that cannot start; else spins until a stop signal and ends the process."""
    from homiebot.ros.kit.lifecycle import CONFIG_ERRORS, GraphNode  # it builds on this module

    nodes: list[GraphNode] = []
    name = ""
    try:
        for definition, name, params in members:
            node = GraphNode(definition, name, params)
            nodes.append(node)
            if node.autostart:
                if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                    raise node.error or RuntimeError(f"{name}: configure failed")
                node.trigger_activate()
    except CONFIG_ERRORS as err:
        print(f"homiebot {name}: error: {err}", file=sys.stderr, flush=True)
        for n in nodes:
            n.close_component()
            n.destroy_node()
        rclpy.try_shutdown()
        return CANNOT_RUN if isinstance(err, CannotRun) else 2
    _spin(nodes, EXECUTOR_THREADS if any(n.definition.waits(n.values) for n in nodes) else 1)
    end_process()


def end_process() -> NoReturn:
    """End a node's process once its orderly shutdown (``_spin``) has run: every file, bag and connection
    it owns is closed by then. The interpreter's own teardown (freeing torch, MuJoCo and a few thousand
    modules) would add 4-8 s on a loaded 2-core machine, past a service manager's stop deadline."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken pipe: nothing more can be said there
    os._exit(0)


def stop_components(components: list[object], nodes: Sequence[Node]) -> None:
    """Stop components in order: each is told first that it is stopping (the task manager then skips its bag's
    stop), then the nodes' servers refuse new calls and their calls in flight fail, then each closes."""
    for component in components:
        interrupt = getattr(component, "interrupt", None)
        if interrupt:
            interrupt()
    services.begin_shutdown(nodes)
    _close(components)


def _close(components: list[object]) -> None:
    """Close each component (the task manager writes its record, the world releases its renderer);
    one component's failure must not leave the others open."""
    for component in components:
        close = getattr(component, "close", None)
        if close:
            try:
                close()
            except Exception as err:
                print(f"homiebot: closing {type(component).__name__}: {type(err).__name__}: {err}", file=sys.stderr, flush=True)


def spin_in_background(node: Node) -> tuple[SingleThreadedExecutor, threading.Thread]:
    """Spin a node in a daemon thread (for callers that block on service results)."""
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=_spin_quietly, args=(executor,), daemon=True)
    thread.start()
    atexit.register(_stop_background, executor, thread)  # a script that just ends must not abort (-6) in rcl's wait
    return executor, thread


def _spin_quietly(executor: SingleThreadedExecutor) -> None:
    try:
        executor.spin()
    except (ExternalShutdownException, _rclpy_impl.RCLError):
        pass  # the context went away under us: the process is ending


def _stop_background(executor: SingleThreadedExecutor, thread: threading.Thread) -> None:
    """At interpreter exit: stop a background executor before the runtime it waits in is torn down."""
    try:
        executor.shutdown(timeout_sec=2.0)
    except Exception:  # already shut down with its context
        pass
    thread.join(2.0)


