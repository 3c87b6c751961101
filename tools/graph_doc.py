#!/usr/bin/env python3
"""Write docs/graph.md from the running graph: who publishes and subscribes to which topic, who serves
and calls which service and action, and the homiebot_msgs interfaces with their fields.

It starts the graph of a run configuration (``config/sim.yaml`` by default) in a ROS domain of its
own with localhost discovery, waits until every node is up, reads the graph through rclpy's
introspection (as ``ros2 node info`` does), stops the nodes it started and writes the page.
``--check`` compares instead of writing, and fails when the page is not what the graph is.

    .venv/bin/python tools/graph_doc.py            # rewrite docs/graph.md
    .venv/bin/python tools/graph_doc.py --check    # exit 1 if docs/graph.md is stale
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGE = ROOT / "docs" / "graph.md"
# what every node has and nobody needs drawn: parameters, logging, liveness, its lifecycle
HIDDEN_TOPICS = {"/parameter_events", "/rosout", "/homiebot/heartbeat"}
HIDDEN_TOPIC_SUFFIXES = ("/transition_event",)
HIDDEN_SERVICE_SUFFIXES = ("/describe_parameters", "/get_parameter_types", "/get_parameters", "/get_type_description",
                           "/list_parameters", "/set_parameters", "/set_parameters_atomically",
                           "/change_state", "/get_state", "/get_available_states", "/get_available_transitions",
                           "/get_transition_graph")
RECORDERS = {"recorder"}  # subscribes to every /homiebot topic: listed once instead of drawn to each


class GraphDocError(Exception):
    """The graph did not come up, or the page is stale (the message says what to do)."""


def _collapse(topic: str) -> str:
    """The twelve image topics as one pattern, the four camera_info topics as another."""
    parts = topic.split("/")
    if topic.startswith("/homiebot/camera/") and len(parts) == 5:
        return "/homiebot/camera/{view}/camera_info" if parts[4] == "camera_info" else "/homiebot/camera/{view}/{kind}"
    return topic


def _short(type_name: str) -> str:
    return type_name.replace("/msg/", "/").replace("/srv/", "/").replace("/action/", "/")


def introspect(config: str, domain: int, timeout: float, settle: float = 2.0) -> dict[str, dict[str, set[tuple[str, str]]]]:
    """node -> {"pub", "sub", "srv", "cli", "act", "act_cli"} -> {(name, type)} for the graph of ``config``,
    once every node beats and discovery has brought nothing new for ``settle`` seconds."""
    import rclpy
    from homiebot_msgs.msg import Heartbeat
    from rclpy import action
    from rclpy.node import Node

    from homiebot.ros.bringup.graph import graph
    from homiebot.ros.bringup.up import spawn_all, stop
    from homiebot.ros.kit.common import HEARTBEAT_QOS, HEARTBEAT_TOPIC
    from homiebot.ros.kit.environment import ros_environment
    from homiebot.ros.kit.names import DEFAULT_NAMESPACE

    env = ros_environment(domain)
    specs = graph(config, out_dir=str(Path(os.environ.get("TMPDIR", "/tmp")) / f"graph_doc_{os.getpid()}"))
    wanted = {s.name for s in specs}
    os.environ.update({"ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"})
    quiet = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1), os.dup(2)
    os.dup2(quiet, 1)  # the nodes inherit these: their start-up lines are not the page's business
    os.dup2(quiet, 2)
    try:
        procs = spawn_all(specs, env)  # stopped below: processes we started
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (quiet, *saved):
            os.close(fd)
    rclpy.init()
    probe = Node("graph_doc_probe", namespace=DEFAULT_NAMESPACE)
    ready: set[str] = set()  # nodes that beat: a node's heartbeat starts once it is built (homiebot.ros.kit.common)
    probe.create_subscription(Heartbeat, HEARTBEAT_TOPIC, lambda m: ready.add(m.node), HEARTBEAT_QOS)
    try:
        deadline = time.monotonic() + timeout
        seen: dict[str, dict[str, set[tuple[str, str]]]] = {}
        stable_since, last = time.monotonic(), None
        while time.monotonic() < deadline:
            rclpy.spin_once(probe, timeout_sec=0.2)
            dead = [n for n, p in procs.items() if p.poll() is not None]
            if dead:
                raise GraphDocError(f"node(s) {', '.join(dead)} exited while the graph started")
            names = {n for n, ns in probe.get_node_names_and_namespaces() if n in wanted and ns == DEFAULT_NAMESPACE}
            if names != wanted or not wanted <= ready:
                continue
            seen = {n: _endpoints(probe, action, n) for n in sorted(names)}
            if seen != last:
                stable_since, last = time.monotonic(), seen
            elif time.monotonic() - stable_since > settle:  # every node built, and discovery has nothing new
                return seen
        missing = wanted - ready
        raise GraphDocError(f"the graph did not settle within {timeout:g} s" + (f" (missing: {', '.join(sorted(missing))})" if missing else ""))
    finally:
        probe.destroy_node()
        rclpy.try_shutdown()
        stop(procs)


def _endpoints(probe, action, name: str) -> dict[str, set[tuple[str, str]]]:
    from homiebot.ros.kit.names import DEFAULT_NAMESPACE

    def pairs(items) -> set[tuple[str, str]]:
        return {(n, _short(t[0])) for n, t in items}

    servers = pairs(action.get_action_server_names_and_types_by_node(probe, name, DEFAULT_NAMESPACE))
    clients = pairs(action.get_action_client_names_and_types_by_node(probe, name, DEFAULT_NAMESPACE))

    def plain(items) -> set[tuple[str, str]]:
        return {(n, t) for n, t in pairs(items) if "/_action/" not in n and not n.endswith(HIDDEN_SERVICE_SUFFIXES)}

    def topics(items) -> set[tuple[str, str]]:
        return {(_collapse(n), t) for n, t in pairs(items)
                if n not in HIDDEN_TOPICS and not n.endswith(HIDDEN_TOPIC_SUFFIXES) and "/_action/" not in n}

    return {"pub": topics(probe.get_publisher_names_and_types_by_node(name, DEFAULT_NAMESPACE)),
            "sub": topics(probe.get_subscriber_names_and_types_by_node(name, DEFAULT_NAMESPACE)),
            "srv": plain(probe.get_service_names_and_types_by_node(name, DEFAULT_NAMESPACE)),
            "cli": plain(probe.get_client_names_and_types_by_node(name, DEFAULT_NAMESPACE)),
            "act": servers, "act_cli": clients}


def _interfaces() -> list[str]:
    """The homiebot_msgs interfaces and their fields, through rosidl's Python API."""
    import importlib

    from homiebot.ros.messages.common import homiebot_msgs_share

    lines = []
    share = homiebot_msgs_share()
    for kind in ("msg", "srv", "action"):
        for path in sorted((share / kind).glob(f"*.{kind}")):
            module = importlib.import_module(f"homiebot_msgs.{kind}")
            cls = getattr(module, path.stem)
            parts = [("", cls)] if kind == "msg" else [(f"{p} ", getattr(cls, p)) for p in
                                                         (("Request", "Response") if kind == "srv" else ("Goal", "Result", "Feedback"))]
            for label, part in parts:
                fields = ", ".join(f"`{n}` `{t}`" for n, t in part.get_fields_and_field_types().items())
                lines.append(f"| `homiebot_msgs/{kind}/{path.stem}` | {label.strip() or 'message'} | {fields} |")
    return lines


def render(nodes: dict[str, dict[str, set[tuple[str, str]]]], config: str) -> str:
    """The page: a Mermaid diagram, a table per kind of connection, and the interface list."""
    topic_type: dict[str, str] = {}
    pubs, subs = defaultdict(set), defaultdict(set)
    for node, ends in nodes.items():
        for topic, t in ends["pub"]:
            pubs[topic].add(node)
            topic_type[topic] = t
        for topic, t in ends["sub"]:
            subs[topic].add(node)
            topic_type[topic] = t
    ids = {t: f"t{i}" for i, t in enumerate(sorted(topic_type))}
    out = ["# The ROS 2 graph", "",
           f"Generated by `tools/graph_doc.py` from the running graph of `{config}` (rclpy's introspection, as",
           "`ros2 node info` reads it); `make test` checks that it is current. The graph runs in the default namespace",
           "`/homiebot`; under `homiebot up --namespace NAME` every name below starts with `/NAME` instead (docs/ros.md,",
           "*Namespaces*). Every node is a lifecycle node",
           "(`/homiebot/<node>/change_state`, `/homiebot/<node>/get_state`, `/homiebot/<node>/transition_event`; docs/ros.md, *Lifecycle*): those, the",
           "per-node parameter services, `/rosout`, `/parameter_events` and the `/homiebot/heartbeat` every node",
           "publishes are left out; the recorder subscribes to every `/homiebot` topic and is drawn without its edges.", "",
           "```mermaid", "flowchart LR"]
    for node in nodes:
        out.append(f"  {node}([{node}])")
    for topic, i in ids.items():
        out.append(f'  {i}["{topic}<br/><small>{topic_type[topic]}</small>"]')
    for topic in sorted(topic_type):
        for node in sorted(pubs[topic]):
            out.append(f"  {node} --> {ids[topic]}")
        for node in sorted(subs[topic] - RECORDERS):
            out.append(f"  {ids[topic]} --> {node}")
    actions = sorted({(name, t) for ends in nodes.values() for name, t in ends["act"] | ends["act_cli"]})
    for i, (name, t) in enumerate(actions):
        out.append(f'  a{i}{{{{"{name}<br/><small>{t} (action)</small>"}}}}')
        for node, ends in nodes.items():
            if (name, t) in ends["act"]:
                out.append(f"  a{i} --- {node}")
            if (name, t) in ends["act_cli"]:
                out.append(f"  {node} --> a{i}")
    out += ["```", "", "## Topics", "", "| topic | type | published by | subscribed by |", "| --- | --- | --- | --- |"]
    for topic in sorted(topic_type):
        out.append(f"| `{topic}` | {topic_type[topic]} | {', '.join(sorted(pubs[topic])) or '-'} | "
                   f"{', '.join(sorted(subs[topic])) or '-'} |")
    out += ["", "## Services and actions", "", "| name | type | kind | served by | called by |", "| --- | --- | --- | --- | --- |"]
    calls: dict[tuple[str, str, str], tuple[set[str], set[str]]] = defaultdict(lambda: (set(), set()))
    for node, ends in nodes.items():
        for kind, serve, call in (("service", "srv", "cli"), ("action", "act", "act_cli")):
            for name, t in ends[serve]:
                calls[(name, t, kind)][0].add(node)
            for name, t in ends[call]:
                calls[(name, t, kind)][1].add(node)
    for (name, t, kind), (servers, clients) in sorted(calls.items()):
        out.append(f"| `{name}` | {t} | {kind} | {', '.join(sorted(servers)) or '-'} | {', '.join(sorted(clients)) or '-'} |")
    out += ["", "## Interfaces", "", "| interface | part | fields |", "| --- | --- | --- |", *_interfaces(), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--config", default="config/sim.yaml", help="run configuration whose graph is drawn (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="compare with docs/graph.md instead of writing it")
    parser.add_argument("--domain-id", type=int, default=150 + os.getpid() % 50, help="ROS_DOMAIN_ID of the graph it starts")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for the graph to come up")
    args = parser.parse_args(argv)
    try:
        # a check waits longer for discovery: on a loaded machine an endpoint can take seconds to be seen
        page = render(introspect(str(ROOT / args.config), args.domain_id, args.timeout, 5.0 if args.check else 2.0), args.config)
        if args.check:
            current = PAGE.read_text() if PAGE.exists() else ""
            if current != page:
                diff = "".join(list(difflib.unified_diff(current.splitlines(True), page.splitlines(True), "docs/graph.md",
                                                         "the running graph"))[:60])
                raise GraphDocError(f"docs/graph.md is not the running graph; run `{sys.executable} tools/graph_doc.py`\n{diff}")
            print("docs/graph.md: current")
        else:
            PAGE.write_text(page)
            print(f"wrote {PAGE.relative_to(ROOT)}")
    except GraphDocError as err:
        print(f"graph_doc: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
