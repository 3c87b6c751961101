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


def run_node(name: str, build: Callable[[Node, dict[str, Any]], object], params: tuple[Param, ...] = (),
             args: list[str] | None = None) -> int:
    """Create the node, declare parameters, build its component, spin until shutdown."""
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    rclpy.init(args=args if args is not None else sys.argv)
    node = Node(name)
    try:
        values = declare(node, params)
        component = build(node, values)
    except (ParameterError, ConfigError, ValueError) as err:
        print(f"homiebot {name}: error: {err}", file=sys.stderr, flush=True)
        node.destroy_node()
        rclpy.try_shutdown()
        return 2
    executor = SingleThreadedExecutor()  # callbacks only queue work; long calls run in their own threads
    executor.add_node(node)
    node.get_logger().info(f"{name} node ready")
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        close = getattr(component, "close", None)
        if close:
            close()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def spin_in_background(node: Node) -> tuple[SingleThreadedExecutor, threading.Thread]:
    """Spin a node in a daemon thread (for callers that block on RPC results)."""
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    return executor, thread


def set_parameters(node: Node, values: dict[str, Any]) -> None:
    node.set_parameters([Parameter(k, value=v) for k, v in values.items()])
