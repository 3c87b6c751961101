"""``RemotePolicy``: a ``Policy`` whose model runs in a policy server process, spoken to over ROS 2.

Each model family needs its own software stack (Octo: JAX; RT-1-X: TensorFlow; NoMaD and PixNav:
PyTorch), often in conflicting versions, so each can live in its own Python environment and run in
``homiebot_policy_server`` (``homiebot.ros.nodes.policy_server``). This class is the client side: it
calls the server's typed ``describe``, ``reset`` and ``act`` services (homiebot_msgs DescribePolicy,
ResetPolicy, PolicyAct; ``homiebot.ros.messages.policy``) with a per-call timeout; a server that does not answer in time (killed, hung, never started) raises ``PolicyError``
with a message that says so, which ``PolicySkill`` reports as a failed attempt.

Where the server comes from: in the ROS graph (``homiebot up`` / the launch files) the graph starts
one server per skill configured with ``process``. In a plain in-process run (``homiebot run``) there
is no graph, so the client starts the server itself (``spawn="auto"``), with the configured
``python_executable``, and stops it on ``close``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from homiebot.policies.base import Command, Policy, PolicyError, PolicyObservation
from homiebot.policies.training_cameras import default_training_camera
from homiebot.ros.messages.policy_names import default_service, service_slug

if TYPE_CHECKING:
    from rclpy.executors import SingleThreadedExecutor

SERVER_MODULE = "homiebot.ros.nodes.policy_server"


def yaml_string(value: str) -> str:
    """A string parameter value that ROS's command-line YAML parsing keeps a string (JSON included)."""
    return "'" + value.replace("'", "''") + "'"


def server_command(python: str, node_name: str, policy: str, policy_params: dict, service: str) -> list[str]:
    """The command line that starts a policy server for one policy."""
    return [python, "-m", SERVER_MODULE, "--ros-args", "-r", f"__node:={node_name}", "-p", f"policy:={policy}",
            "-p", f"policy_params:={yaml_string(json.dumps(policy_params))}", "-p", f"service:={service}"]


class RemotePolicy(Policy):
    """A policy served by another process.

    ``policy`` and ``policy_params`` say what the server hosts (used when this client starts it);
    ``service`` where the server's services are (default ``policy/<policy>``); ``timeout`` seconds per ``reset`` /
    ``act`` call; ``connect_timeout`` seconds to wait for the server at start-up; ``label`` names the
    model in messages; ``python_executable`` the interpreter of the server's environment;
    ``spawn``: True start the server here, False expect it to be running, "auto" start it unless this
    process already runs ROS nodes (then the graph starts it).
    """

    def __init__(self, policy: str, policy_params: dict | None = None, service: str | None = None, timeout: float = 10.0,
                 connect_timeout: float = 30.0, label: str | None = None, python_executable: str | None = None,
                 spawn: bool | str = "auto") -> None:
        self.policy_name = policy
        self.policy_params = dict(policy_params or {})
        self.label = label or policy
        self.timeout, self.connect_timeout = float(timeout), float(connect_timeout)
        self.python = python_executable or sys.executable
        if spawn not in (True, False, "auto"):
            raise ValueError(f"spawn must be true, false or auto, not {spawn!r}")
        self.spawn = spawn
        self.service = service or default_service(policy)
        self._copy_class_attributes()
        self.camera = default_training_camera(self.family, self.policy_params)
        if self.family == "rt1x" and "rate_hz" not in self.policy_params:
            self.rate_hz = 3.0 if self.policy_params.get("profile") == "fractal" else 5.0
        self._lock = threading.Lock()
        self._client: dict[str, Any] | None = None  # the service callers, by method
        self._node: Any = None
        self._executor: SingleThreadedExecutor | None = None
        self._context: Any = None
        self._process: subprocess.Popen | None = None
        self._described: dict | None = None

    def _copy_class_attributes(self) -> None:
        """family / kind / image_size / rate_hz of the hosted class when it is importable here (the server's answer wins)."""
        from homiebot.skills.policy_skill import policy_factory

        try:
            factory = policy_factory(self.policy_name)
        except ValueError:
            return
        for attr in ("family", "kind", "image_size", "rate_hz"):
            value = getattr(factory, attr, None)
            if value is not None and not callable(value):
                setattr(self, attr, value)

    # ---- connection ----------------------------------------------------------------------------
    def _connect(self) -> dict[str, Any]:
        """The service clients, created on first use (starting rclpy and, if asked, the server)."""
        with self._lock:
            if self._client is not None:
                return self._client
            try:
                import rclpy
                from homiebot_msgs.srv import DescribePolicy, PolicyAct, ResetPolicy
                from rclpy.executors import SingleThreadedExecutor
                from rclpy.node import Node

                from homiebot.ros.kit.names import process_namespace
                from homiebot.ros.kit.services import ServiceCaller
            except ImportError as err:
                raise PolicyError(f"the {self.label} policy server is reached over ROS 2, but rclpy or homiebot_msgs is not "
                                  f"importable ({err}); install them with `make setup` (or `pip install -e .[ros]` and "
                                  "tools/build_interfaces.py) or source ROS 2 Jazzy") from None
            in_graph = rclpy.ok()
            if not in_graph:  # a plain process: discovery on this machine only
                os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            # a context of its own, on the domain the environment names now: a context this process opened
            # earlier (a robot bridge, a test) may be on another domain
            self._context = rclpy.Context()
            rclpy.init(context=self._context)
            if self.spawn is True or (self.spawn == "auto" and not in_graph):
                self._start_server()
            name = f"policy_client_{service_slug(self.label)}_{os.getpid()}_{id(self) % 100000}"
            self._node = node = Node(name, namespace=process_namespace(), context=self._context)  # the graph's, in a node's process
            base, who = self.service.strip("/"), f"{self.label} policy server"
            callers: dict[str, Any] = {"describe": ServiceCaller(node, DescribePolicy, f"{base}/describe", who),
                                       "reset": ServiceCaller(node, ResetPolicy, f"{base}/reset", who),
                                       "act": ServiceCaller(node, PolicyAct, f"{base}/act", who)}
            self._client = callers
            self._executor = executor = SingleThreadedExecutor(context=self._context)
            executor.add_node(node)
            threading.Thread(target=self._spin, args=(executor,), daemon=True).start()
            return callers

    def _spin(self, executor: SingleThreadedExecutor) -> None:
        try:
            executor.spin()
        except Exception:  # shut down underneath us on close
            pass

    def _start_server(self) -> None:
        from homiebot.ros.kit.environment import ros_environment

        if not self.service.endswith(f"_{os.getpid()}"):
            self.service = f"{self.service}_{os.getpid()}"  # private to this run: no other client answers
        node_name = "policy_" + service_slug(self.service.rsplit("/", 1)[-1])
        cmd = server_command(self.python, node_name, self.policy_name, self.policy_params, self.service)
        try:
            self._process = subprocess.Popen(cmd, env=ros_environment(None), stdin=subprocess.DEVNULL)
        except OSError as err:
            raise PolicyError(f"cannot start the {self.label} policy server with {self.python}: {err}") from None

    def _call(self, method: str, request: Any, timeout: float) -> Any:
        """One service call; PolicyError when the server is gone, silent past ``timeout`` or reports an error."""
        from homiebot.ros.kit.services import ServiceError, ServiceTimeout

        caller = self._connect()[method]
        if self._process is not None and self._process.poll() is not None:
            raise PolicyError(f"the {self.label} policy server exited with status {self._process.returncode}")
        try:
            return caller.call(request, timeout, idempotent=method == "describe")  # the first call: its answer may be lost
        except ServiceTimeout:
            raise PolicyError(f"the {self.label} policy server did not answer within {timeout:g} s; is it running? "
                              f"(service {caller.name})") from None
        except ServiceError as err:
            raise PolicyError(f"the {self.label} policy server failed: {err}") from None

    # ---- Policy interface ----------------------------------------------------------------------
    def describe(self) -> dict:
        """What the server hosts: ``{"policy", "family", "kind", "image_size", "rate_hz", "availability"}``."""
        from homiebot_msgs.srv import DescribePolicy

        from homiebot.ros.messages.policy import PolicyMessageError, camera_of

        info = self._call("describe", DescribePolicy.Request(), self.connect_timeout)
        self.family, self.kind = info.family or self.family, info.kind or self.kind
        if info.image_height and info.image_width:
            self.image_size = (int(info.image_height), int(info.image_width))
        self.rate_hz = float(info.rate_hz) if info.rate_hz > 0 else self.rate_hz
        if info.has_camera:  # a server that reports its policy's training camera
            try:
                self.camera = camera_of(info.camera)
            except PolicyMessageError as err:
                raise PolicyError(f"the {self.label} policy server described a bad training camera: {err}") from None
        self._described = {"policy": info.policy, "family": self.family, "kind": self.kind, "image_size": list(self.image_size),
                           "rate_hz": self.rate_hz, "availability": info.availability or None}
        return self._described

    def availability(self) -> str | None:
        try:
            info = self.describe()
        except PolicyError as err:
            return str(err)
        return info.get("availability")

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        from homiebot_msgs.srv import ResetPolicy

        from homiebot.ros.messages.policy import image_msg

        self._call("reset", ResetPolicy.Request(instruction=instruction, goal_image=image_msg(goal_image, "rgb8")), self.timeout)

    def act(self, obs: PolicyObservation) -> list[Command]:
        from homiebot.ros.messages.policy import PolicyMessageError, act_request, command_of

        try:
            request = act_request(obs)
        except PolicyMessageError as err:
            raise PolicyError(f"the {self.label} policy's observation cannot be sent: {err}") from None
        reply = self._call("act", request, self.timeout)
        try:
            return [command_of(c) for c in reply.commands]
        except PolicyMessageError as err:
            raise PolicyError(f"the {self.label} policy server sent bad commands: {err}") from None

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(timeout_sec=1.0)
            if self._node is not None:
                self._node.destroy_node()
            if self._context is not None:
                self._context.try_shutdown()
            self._client = self._node = self._executor = self._context = None
            if self._process is not None:
                if self._process.poll() is None:
                    self._process.send_signal(signal.SIGINT)
                    try:
                        self._process.wait(5.0)
                    except subprocess.TimeoutExpired:
                        self._process.kill()
                        self._process.wait()
                self._process = None


PROCESS_KEYS = frozenset({"python_executable", "timeout", "connect_timeout", "service", "spawn"})


def remote_policy(model: str, policy: str, params: dict, process: dict) -> Policy:
    """A ``RemotePolicy`` for a skill's ``process`` settings (``homiebot.skills.policy_skill.PolicySkill``): the
    ``ros`` host of the ``homiebot.policy_hosts`` entry points."""
    unknown = set(process) - PROCESS_KEYS
    if unknown:
        raise ValueError(f"process: unknown keys {sorted(unknown)}; known: {sorted(PROCESS_KEYS)}")
    return RemotePolicy(policy, params, service=process.get("service") or default_service(model),
                        timeout=float(process.get("timeout", 10.0)), connect_timeout=float(process.get("connect_timeout", 30.0)),
                        label=f"{model} ({policy})", python_executable=process.get("python_executable"),
                        spawn=process.get("spawn", "auto"))


__all__ = ["PROCESS_KEYS", "RemotePolicy", "remote_policy", "server_command"]
