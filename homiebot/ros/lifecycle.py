"""Every node of the graph is a ROS 2 managed (lifecycle) node.

| transition | what the node does |
| --- | --- |
| configure | builds its component from its parameters (the world loads its scene source, the planner its model, ...); a configuration error fails the transition and is logged |
| activate | its services and action servers accept calls |
| deactivate | they refuse calls (``FAILED``, "the node is inactive"); topics still flow, so caches stay warm |
| cleanup | closes the component and removes what it created: back to unconfigured, ready to configure again |
| shutdown | closes the component, if there is one |

With the parameter ``autostart`` (default true) a node configures and activates itself at start, as
``homiebot up`` and the launch files run it; a configuration error then ends its process with status 2
(3: something outside the graph it needs is missing), which ``homiebot up`` reports. With
``autostart:=false`` it waits unconfigured for a lifecycle manager (``ros2 lifecycle set``, nav2's
lifecycle manager, or a plain client of ``/<node>/change_state``).
"""

from __future__ import annotations

import traceback
from typing import Any

from rclpy.action import ActionClient, ActionServer
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter

from homiebot.config import ConfigError
from homiebot.registry import PluginError
from homiebot.ros import services
from homiebot.ros.common import CannotRun, NodeDef, ParameterError, declare

CLEANUP_WAIT = 10.0  # seconds a cleanup waits for calls in flight to be answered
ENTITY_KINDS = ("publishers", "subscriptions", "services", "clients", "timers", "guards", "waitables")
# what a configure may fail with: the node's own message says what to change
CONFIG_ERRORS = (ParameterError, ConfigError, PluginError, ValueError, CannotRun)


class GraphNode(LifecycleNode):
    """A lifecycle node that runs one component of the graph (``NodeDef``)."""

    def __init__(self, definition: NodeDef, name: str | None = None, overrides: dict[str, Any] | None = None) -> None:
        """Declares the node's parameters (``ros2 param`` works in every state); raises ParameterError for bad values.
        A definition that is not ``managed`` (the sim driver, which stands in for a robot's driver) offers no
        lifecycle services and always starts itself."""
        super().__init__(name or definition.name, parameter_overrides=[Parameter(k, value=v) for k, v in (overrides or {}).items()],
                         enable_communication_interface=definition.managed)
        services.pause(self)  # servers made while configuring refuse calls until activation
        self.definition = definition
        self.autostart = bool(self.declare_parameter("autostart", True).value) or not definition.managed
        self._kept: set[int] = set()  # entities of the process, not of the component (its heartbeat)
        self.values = declare(self, definition.params)
        self.component: object | None = None
        self.error: Exception | None = None  # why the last configure failed
        self._before: dict[str, set[int]] = {}

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Build the component; a configuration error fails the transition (``error`` keeps it)."""
        self._before = _entities(self)
        try:
            self.component = self.definition.build(self, self.values)
        except CONFIG_ERRORS as err:
            self.error = err
            self.get_logger().error(f"configure: {err}")
            self._remove_new_entities()
            return TransitionCallbackReturn.FAILURE
        except Exception as err:  # a bug, not the user's configuration: the traceback says where
            self.error = err
            self.get_logger().error(f"configure: {type(err).__name__}: {err}\n{traceback.format_exc()}")
            self._remove_new_entities()
            return TransitionCallbackReturn.ERROR
        self.error = None
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        services.resume(self)
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        services.pause(self)
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the component and remove its publishers, subscriptions, services, clients, timers and actions;
        fails (the node stays inactive) while its servers still answer calls that began before deactivation."""
        if not services.wait_idle(self, CLEANUP_WAIT):
            self.get_logger().error(f"cleanup: calls are still being answered after {CLEANUP_WAIT:g} s; try again when they end")
            return TransitionCallbackReturn.FAILURE
        self.close_component()
        self._remove_new_entities()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the component and remove what it made: nothing of it runs on (the process stays, finalized)."""
        services.pause(self)
        self.close_component()
        self._remove_new_entities()
        return TransitionCallbackReturn.SUCCESS

    def keep(self, entity: object) -> None:
        """An entity made after configure that is not the component's: cleanup leaves it."""
        self._kept.add(id(entity))

    def close_component(self) -> None:
        """Interrupt and close the component, if one is built (errors are logged, not raised)."""
        component, self.component = self.component, None
        if component is None:
            return
        services.begin_shutdown([self])  # its servers refuse, its calls in flight end
        interrupt = getattr(component, "interrupt", None)
        close = getattr(component, "close", None)
        for step in (interrupt, close):
            if step is None:
                continue
            try:
                step()
            except Exception as err:  # one failing step must not leave the rest undone
                self.get_logger().error(f"closing {type(component).__name__}: {type(err).__name__}: {err}")

    def _remove_new_entities(self) -> None:
        """Destroy what was created since ``on_configure`` began (the component's ROS entities)."""
        before = self._before
        if not before:
            return  # never configured: nothing of a component to remove
        for kind, destroy in (("publishers", self.destroy_publisher), ("subscriptions", self.destroy_subscription),
                              ("services", self.destroy_service), ("clients", self.destroy_client), ("timers", self.destroy_timer),
                              ("guards", self.destroy_guard_condition)):
            for entity in list(getattr(self, kind)):
                if id(entity) not in before.get(kind, set()) and id(entity) not in self._kept:
                    destroy(entity)
        for waitable in list(self.waitables):
            if id(waitable) not in before.get("waitables", set()) and id(waitable) not in self._kept:
                if isinstance(waitable, ActionServer | ActionClient):
                    waitable.destroy()  # removes itself from the node
                else:
                    self.remove_waitable(waitable)


def _entities(node: LifecycleNode) -> dict[str, set[int]]:
    return {kind: {id(e) for e in getattr(node, kind)} for kind in ENTITY_KINDS}
