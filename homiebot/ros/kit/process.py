"""A node's process: one node or several composed, brought up, spun with a heartbeat, and ended in order.

Builds on the node kit's start-up (``common``) and the lifecycle node (``lifecycle``); every node's ``main``
calls ``run_node``.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
import threading
import uuid
from collections.abc import Sequence
from typing import Any, NoReturn

import rclpy
from homiebot_msgs.msg import Heartbeat
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy_impl
from rclpy.lifecycle import TransitionCallbackReturn

from homiebot.ros.kit.common import (
    CANNOT_RUN,
    EXECUTOR_THREADS,
    FINALIZE_LIMIT,
    HEARTBEAT_PERIOD,
    HEARTBEAT_QOS,
    HEARTBEAT_TOPIC,
    CannotRun,
    NodeDef,
    init,
    stop_components,
)
from homiebot.ros.kit.executors import PoolExecutor
from homiebot.ros.kit.lifecycle import CONFIG_ERRORS, GraphNode
from homiebot.ros.kit.local_process import host_id
from homiebot.ros.kit.names import set_process_namespace


class _Heartbeat:
    """Publish a ``homiebot_msgs/Heartbeat`` (node, instance, pid, host) every HEARTBEAT_PERIOD s from a thread of its own (not the
    executor, whose queue may be long under load): the task manager watches them to notice within
    seconds that a node has died or been replaced (a new process has a new instance)."""

    def __init__(self, node: GraphNode) -> None:
        self.node = node
        self.publisher = node.create_publisher(Heartbeat, HEARTBEAT_TOPIC, HEARTBEAT_QOS)
        self._beat = Heartbeat(node=node.get_name(), instance=uuid.uuid4().hex, pid=os.getpid(), host=host_id())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                self._beat.state = self.node.lifecycle_state()  # a node taken out of service says so at once
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
        node.keep_heartbeat(beat)  # the process's liveness: a lifecycle cleanup must not take it, a shutdown stops it
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


def run_node(definition: NodeDef, args: list[str] | None = None) -> int:
    """One node in this process: parameters from the command line (``--ros-args -p k:=v``). Returns only
    when it cannot start (2: its parameters or config, 3: something it needs is missing); after a stop
    signal the process ends (``end_process``)."""
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    init(args if args is not None else sys.argv)
    return _run([(definition, definition.name, {}, None)])


def run_composed(members: Sequence[tuple[NodeDef, str, dict[str, Any], str | None]], ros_args: Sequence[str] = ()) -> int:
    """Several nodes in one process (name, parameters and namespace per node; ``ros_args`` for all of them, such as
    a ``--params-file``); calls between them skip the middleware. Returns only when one cannot start; after a stop
    signal the process ends (``end_process``)."""
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    init(["homiebot_graph", "--ros-args", *ros_args] if ros_args else None)
    return _run(members)


def _run(members: Sequence[tuple[NodeDef, str, dict[str, Any], str | None]]) -> int:
    """Make each member's lifecycle node; with ``autostart`` configure and activate it now. Returns the
    status of a node that cannot start; else spins until a stop signal and ends the process."""
    nodes: list[GraphNode] = []
    name = ""
    try:
        for definition, name, params, namespace in members:
            node = GraphNode(definition, name, params, namespace)
            nodes.append(node)
            set_process_namespace(node.get_namespace())
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


