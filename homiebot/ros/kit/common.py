"""What every homiebot node shares: start-up with declared, validated parameters, and spinning."""

from __future__ import annotations

import atexit
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rclpy
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy_impl
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from homiebot.config import load_config
from homiebot.core.errors import ConfigError
from homiebot.ros.kit import services
from homiebot.ros.kit.config_params import Setting, SettingError, changed_settings, configuration, describe, settings
from homiebot.ros.kit.dds_profile import use_profile
from homiebot.ros.kit.shm import clean_stale


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


def a_file(value: str) -> str | None:
    """Empty, or a file that exists."""
    return None if not value or Path(value).is_file() else "cannot read config file: no such file"


COMMON = (Param("config", "", "run configuration YAML (empty: built-in defaults)", a_file),)
EXECUTOR_THREADS = 3  # callbacks of a process at once: typed service handlers that wait, and the topics they wait for
HEARTBEAT_TOPIC = "heartbeat"
HEARTBEAT_PERIOD = 0.5  # seconds between two heartbeats of a node
HEARTBEAT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


RUN_CONFIG = "run_config"  # the key of a node's built run configuration among its parameter values


class NodeParameters:
    """A node's declared parameters: its own (``Param``), and the run configuration's settings of the sections it
    reads (``config_params``). Values are read when the node is configured: a ``set_parameters`` is checked as
    at start-up (a bad value is refused with the reason) and takes effect at the next configure (cleanup, then
    configure)."""

    def __init__(self, node: Node, params: tuple[Param, ...], sections: tuple[str, ...] = ()) -> None:
        """Declare typed parameters with defaults (``-p``, a ``--params-file``) and validate them (ParameterError).
        A config file that cannot be read declares no settings: configuring then fails, saying why."""
        self.node, self.params, self.sections = node, COMMON + params, sections
        for p in self.params:
            descriptor = ParameterDescriptor(description=f"{p.description} (applies at the next configure)", dynamic_typing=bool(p.types))
            try:
                node.declare_parameter(p.name, p.default, descriptor)
            except Exception as err:  # rclpy raises its own type-mismatch exceptions
                raise ParameterError(f"parameter '{p.name}': {err} (expected {type(p.default).__name__}, default {p.default!r})") from None
        self.settings: dict[str, Setting] = {}
        if sections:
            self._declare_settings()
        node.add_on_set_parameters_callback(self._vet)

    def _declare_settings(self) -> None:
        try:
            cfg = load_config(self.read_own()["config"] or None)
        except (ConfigError, ParameterError):
            return
        for setting in settings(cfg, self.sections):
            description, constraints = describe(setting)
            # any type: the configuration's validation decides (``detector.far:=3`` is a fine float)
            self.node.declare_parameter(setting.name, setting.value, ParameterDescriptor(
                description=description, additional_constraints=constraints, dynamic_typing=True))
            self.settings[setting.name] = setting

    def read(self) -> dict[str, Any]:
        """The parameters' current values, validated (ParameterError names the first bad one); with the run
        configuration built (``RUN_CONFIG``) when the node reads one."""
        values = self.read_own()
        if self.sections:
            current = {name: self.node.get_parameter(name).value for name in self.settings}
            changed = changed_settings(current, self.settings)
            try:
                values[RUN_CONFIG] = configuration(values["config"], changed, self.settings)
            except SettingError as err:
                raise ParameterError(str(err)) from None
            if changed:  # the episode's record keeps the task manager's configuration: the log says what differs here
                said = ", ".join(f"{name}={value!r}" for name, value in sorted(changed.items()))
                self.node.get_logger().info(f"run configuration with parameters: {said}")
        return values

    def read_own(self) -> dict[str, Any]:
        """The values of the node's own parameters (not the configuration's), validated."""
        return {p.name: _checked(p, self.node.get_parameter(p.name).value) for p in self.params}

    def _vet(self, changed: list) -> SetParametersResult:
        """rclpy's check of a ``set_parameters``: refused with the reason when a value is not one its parameter
        takes, or would make the run configuration invalid."""
        known = {p.name: p for p in self.params}
        for parameter in changed:
            p = known.get(parameter.name)
            if p is None:
                continue  # rclpy's own (use_sim_time), ``autostart`` and the configuration's settings
            try:
                _checked(p, parameter.value)
            except ParameterError as err:
                return SetParametersResult(successful=False, reason=str(err))
        proposed = {parameter.name: parameter.value for parameter in changed}
        if self.sections and (set(proposed) & set(self.settings) or "config" in proposed):
            current = {name: self.node.get_parameter(name).value for name in self.settings}
            path = proposed.get("config", self.node.get_parameter("config").value)
            try:
                configuration(path, changed_settings({**current, **proposed}, self.settings), self.settings)
            except SettingError as err:
                return SetParametersResult(successful=False, reason=str(err))
        return SetParametersResult(successful=True)  # applied at the next configure (its descriptor says so)


def _checked(p: Param, value: Any) -> Any:
    """``value`` when it is one ``p`` accepts, else ParameterError saying why."""
    accepted = (type(p.default), *p.types)
    if not isinstance(value, accepted) or isinstance(value, bool) and bool not in accepted:
        names = " or ".join(t.__name__ for t in accepted)
        raise ParameterError(f"parameter '{p.name}' = {value!r}: expected {names}, default {p.default!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ParameterError(f"parameter '{p.name}' = {value!r}: must be a finite number")
    if p.check and (problem := p.check(value)):
        raise ParameterError(f"parameter '{p.name}' = {value!r}: {problem}")
    return value


@dataclass(frozen=True)
class NodeDef:
    """A node of the graph: its default name, the component it wraps, its parameters."""

    name: str
    build: Callable[[Node, dict[str, Any]], object]
    params: tuple[Param, ...] = ()
    # the run configuration's sections it reads (``world``, ``planner`` ...): their settings are its parameters too
    config: tuple[str, ...] = ()
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
        except (ValueError, OSError, KeyError):
            return True

def init(args: list[str] | None) -> None:
    """rclpy without its own signal handlers: a signal must not invalidate the context while handler
    threads still publish; ``_spin`` turns SIGINT/SIGTERM into an orderly shutdown instead."""
    if rclpy.ok():
        return  # already initialised in this process (a node and a bridge, say)
    use_profile(os.environ)  # before the first participant: a node started by ros2 launch or by hand gets it too
    clean_stale()  # a file another process was killed making would hang this one's participant
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)


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


