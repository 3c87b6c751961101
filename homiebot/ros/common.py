"""What every homiebot node shares: start-up with declared, validated parameters, and spinning."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy_impl
from rclpy.node import Node
from rclpy.parameter import Parameter

from homiebot.config import ConfigError, RunConfig, load_config


class ParameterError(ValueError):
    """A node parameter with a wrong type or value; the node exits with this message."""


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    description: str
    check: Callable[[Any], str | None] | None = None  # returns an error text, or None if fine


COMMON = (Param("config", "", "run configuration YAML (empty: built-in defaults)"),)


def declare(node: Node, params: tuple[Param, ...]) -> dict[str, Any]:
    """Declare typed parameters with defaults, read them, and validate them (ParameterError)."""
    values = {}
    for p in COMMON + params:
        try:
            node.declare_parameter(p.name, p.default)
            value = node.get_parameter(p.name).value
        except Exception as err:  # rclpy raises its own type-mismatch exceptions
            raise ParameterError(f"parameter '{p.name}': {err} (expected {type(p.default).__name__}, default {p.default!r})") from None
        if p.check and (problem := p.check(value)):
            raise ParameterError(f"parameter '{p.name}' = {value!r}: {problem}")
        values[p.name] = value
    return values


def positive(value: Any) -> str | None:
    return None if value > 0 else "must be greater than 0"


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


def _start(node: Node, definition: NodeDef) -> object:
    values = declare(node, definition.params)
    return definition.build(node, values)


def _spin(nodes: list[Node], components: list[object]) -> None:
    executor = SingleThreadedExecutor()  # callbacks only queue work; long calls run in their own threads
    for node in nodes:
        executor.add_node(node)
        node.get_logger().info(f"{node.get_name()} node ready")
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except _rclpy_impl.RCLError:
        if rclpy.ok():  # not a stop signal racing the executor's wait: a real failure
            raise
    finally:
        for component in components:
            close = getattr(component, "close", None)
            if close:
                close()
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()


def run_node(definition: NodeDef, args: list[str] | None = None) -> int:
    """One node in this process: parameters from the command line (``--ros-args -p k:=v``)."""
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    rclpy.init(args=args if args is not None else sys.argv)
    node = Node(definition.name)
    try:
        component = _start(node, definition)
    except (ParameterError, ConfigError, ValueError) as err:
        print(f"homiebot {definition.name}: error: {err}", file=sys.stderr, flush=True)
        node.destroy_node()
        rclpy.try_shutdown()
        return 2
    _spin([node], [component])
    return 0


def run_composed(members: list[tuple[NodeDef, str, dict[str, Any]]]) -> int:
    """Several nodes in one process (name and parameters per node); calls between them skip the middleware."""
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    rclpy.init(args=None)
    nodes, components = [], []
    for definition, name, params in members:
        node = Node(name, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
        nodes.append(node)
        try:
            components.append(_start(node, definition))
        except (ParameterError, ConfigError, ValueError) as err:
            print(f"homiebot {name}: error: {err}", file=sys.stderr, flush=True)
            for n in nodes:
                n.destroy_node()
            rclpy.try_shutdown()
            return 2
    _spin(nodes, components)
    return 0


def spin_in_background(node: Node) -> tuple[SingleThreadedExecutor, threading.Thread]:
    """Spin a node in a daemon thread (for callers that block on RPC results)."""
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    return executor, thread


