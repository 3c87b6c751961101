"""Where the graph's names live: every homiebot node, topic, service and action name is relative and resolves
under the graph's namespace (``/homiebot`` unless ``homiebot up --namespace``, launch ``namespace:=`` or
``--ros-args -r __ns:=`` say otherwise), so two graphs (two robots, or a robot and a simulation) share one
ROS domain without meeting. A robot driver's own names come from its robot profile and stay as it gives them.
"""

from __future__ import annotations

DEFAULT_NAMESPACE = "/homiebot"
_process_namespace = DEFAULT_NAMESPACE  # the graph's namespace in this process, once a graph node knows it


class NamespaceError(ValueError):
    """A namespace that ROS would not accept; says what is wrong and what would do."""


def namespace(text: str | None) -> str:
    """A user's namespace as ROS writes it: ``robot1``, ``/robot1`` and ``/robot1/`` all give ``/robot1``;
    empty or None gives the default (``/homiebot``). Raises NamespaceError for a name ROS refuses."""
    text = (text or "").strip()
    if not text:
        return DEFAULT_NAMESPACE
    name = "/" + text.strip("/")
    if name == "/":
        raise NamespaceError("namespace '/': the graph needs a namespace of its own (default /homiebot)")
    from rclpy.validate_namespace import validate_namespace  # here: the graph's description imports this module without ROS

    try:
        validate_namespace(name)
    except Exception as err:  # rclpy's InvalidNamespaceException: its text names the offending character
        raise NamespaceError(f"namespace {text!r} is not a valid ROS namespace: use letters, digits, '_' and '/' "
                             f"and do not start a part with a digit (e.g. robot1, lab/robot2); {str(err).splitlines()[0]}") from None
    return name


def set_process_namespace(ns: str) -> None:
    """Note the namespace of this process's graph nodes (``run_node`` does): helpers that open a node of
    their own inside a node's process (a remote policy's client) join the same graph."""
    global _process_namespace
    _process_namespace = ns


def process_namespace() -> str:
    """The graph's namespace in this process (the default outside a graph node)."""
    return _process_namespace
