"""Every node of the graph is a ROS 2 managed (lifecycle) node.

| transition | what the node does |
| --- | --- |
| configure | builds its component from its parameters (the world loads its scene source, the planner its model, ...); a configuration error fails the transition and is logged |
| activate | its services and action servers accept calls |
| deactivate | they refuse calls (``FAILED``, "the node is inactive"); topics still flow, so caches stay warm; a component that runs work of its own (the task manager's episode) stops it (``Deactivates``) |
| cleanup | closes the component and removes what it created: back to unconfigured, ready to configure again |
| shutdown | closes the component, if there is one |

With the parameter ``autostart`` (default true) a node configures and activates itself at start, as
``homiebot up`` and the launch files run it; a configuration error then ends its process with status 2
(3: something outside the graph it needs is missing), which ``homiebot up`` reports. With
``autostart:=false`` it waits unconfigured for a lifecycle manager (``ros2 lifecycle set``, nav2's
lifecycle manager, or a plain client of ``/<namespace>/<node>/change_state``).
"""

from __future__ import annotations

import traceback
from typing import Any, Protocol, runtime_checkable

from lifecycle_msgs.srv import ChangeState
from rclpy.action import ActionClient, ActionServer
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher

from homiebot.core.errors import ConfigError
from homiebot.core.registry import PluginError
from homiebot.ros.kit import services
from homiebot.ros.kit.common import CannotRun, NodeDef, NodeParameters, ParameterError, stop_components
from homiebot.ros.kit.executors import PoolExecutor
from homiebot.ros.kit.names import DEFAULT_NAMESPACE

CLEANUP_WAIT = 10.0  # seconds a cleanup waits for calls in flight to be answered
ENTITY_KINDS = ("publishers", "subscriptions", "services", "clients", "timers", "guards", "waitables")
# what a configure may fail with: the node's own message says what to change
CONFIG_ERRORS = (ParameterError, ConfigError, PluginError, ValueError, CannotRun)


@runtime_checkable
class Deactivates(Protocol):
    """A component with work in flight beyond single calls (the task manager's episode)."""

    def deactivate(self) -> None:
        """Stop that work without blocking: the executor goes on spinning, so results still reach their clients."""


class Beating(Protocol):
    """The process's heartbeat for one node (``process._Heartbeat``)."""

    publisher: Publisher

    def close(self) -> None:
        """Stop beating."""


class GraphNode(LifecycleNode):
    """A lifecycle node that runs one component of the graph (``NodeDef``)."""

    def __init__(self, definition: NodeDef, name: str | None = None, overrides: dict[str, Any] | None = None,
                 namespace: str | None = None) -> None:
        """Declares the node's parameters (``ros2 param`` works in every state); raises ParameterError for bad values.
        A definition that is not ``managed`` (the sim driver, which stands in for a robot's driver) offers no
        lifecycle services and always starts itself."""
        # the graph's namespace; a process's ``--ros-args -r __ns:=`` overrides it (rcl applies global remaps last)
        super().__init__(name or definition.name, parameter_overrides=[Parameter(k, value=v) for k, v in (overrides or {}).items()],
                         enable_communication_interface=definition.managed, namespace=namespace or DEFAULT_NAMESPACE)
        services.pause(self)  # servers made while configuring refuse calls until activation
        if definition.managed:
            self._guard_transitions()
        self.definition = definition
        self.autostart = bool(self.declare_parameter("autostart", True).value) or not definition.managed
        self.parameters = NodeParameters(self, definition.params, definition.config)
        try:
            self.values = self.parameters.read()
        except ParameterError:  # a config the node cannot build from: configuring fails, saying why
            self.values = self.parameters.read_own()
        self.component: object | None = None
        self.error: Exception | None = None  # why the last configure failed
        # ids of the entities that are the node's, not its component's (lifecycle services, heartbeat);
        # None until the first configure, which is when the component's start
        self._own: set[int] | None = None
        self._heartbeat: Beating | None = None

    def _guard_transitions(self) -> None:
        """A transition the state machine does not have from the current state (configure on an active node, an
        unknown id) is answered ``success: false`` with a warning in the log; rclpy's own handler raises, which
        ended the node's process and left the caller without an answer."""
        served = self._service_change_state
        handler = served.callback

        def guarded(request: ChangeState.Request, response: ChangeState.Response) -> ChangeState.Response:
            try:
                return handler(request, response)
            except _rclpy.RCLError as err:
                state = self._state_machine.current_state[1]
                wanted = request.transition.label or str(request.transition.id)
                self.get_logger().warning(f"refused transition '{wanted}' in state '{state}': {str(err).split(',')[0]}")
                response.success = False
                return response

        served.callback = guarded

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Build the component; a configuration error fails the transition (``error`` keeps it), any other
        exception is a bug: the transition errs and the log has the traceback."""
        self._own = (self._own or set()) | {id(e) for kind in ENTITY_KINDS for e in getattr(self, kind)}
        try:
            self.values = self.parameters.read()  # what set_parameters or a params file changed since
            self.component = self.definition.build(self, self.values)
        except Exception as err:
            self.error = err
            bug = not isinstance(err, CONFIG_ERRORS)
            self.get_logger().error(f"configure: {type(err).__name__}: {err}\n{traceback.format_exc()}" if bug else f"configure: {err}")
            self._remove_new_entities()
            return TransitionCallbackReturn.ERROR if bug else TransitionCallbackReturn.FAILURE
        self.error = None
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        services.resume(self)
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        services.pause(self)
        if isinstance(self.component, Deactivates):
            self.component.deactivate()
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the component and remove its publishers, subscriptions, services, clients, timers and actions;
        fails (the node stays inactive) while its servers still answer calls that began before deactivation."""
        if not services.wait_idle(self, CLEANUP_WAIT):
            self.get_logger().error(f"cleanup: calls are still being answered after {CLEANUP_WAIT:g} s; try again when they end")
            return TransitionCallbackReturn.FAILURE
        self._discard_component()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the component and remove what it made: nothing of it runs on (the process stays, finalized), and
        its heartbeat stops, so that the graph sees the node gone instead of a live one that answers nothing."""
        services.pause(self)
        self._discard_component()
        if self._heartbeat is not None:
            self._heartbeat.close()
        return TransitionCallbackReturn.SUCCESS

    def lifecycle_state(self) -> int:
        """The node's lifecycle state as a ``lifecycle_msgs/State`` id (3: active); its heartbeat carries it."""
        return int(self._state_machine.current_state[0])

    def keep_heartbeat(self, beat: Beating) -> None:
        """The process's heartbeat of this node: a cleanup leaves its publisher; a shutdown stops it."""
        self._heartbeat = beat
        self.keep(beat.publisher)

    def keep(self, publisher: Publisher) -> None:
        """A publisher made after configure that is not the component's: cleanup leaves it, and its QoS event
        handlers (waitables of the node), which the node's own destruction removes with it."""
        if self._own is not None:
            handlers: list = publisher.event_handlers  # type: ignore[assignment]  # a list; rclpy's annotation says one
            self._own |= {id(publisher), *(id(handler) for handler in handlers)}

    def close_component(self) -> None:
        """Stop the component, if one is built, as the process's shutdown stops it (errors are logged, not raised)."""
        component, self.component = self.component, None
        if component is not None:
            stop_components([component], [self])

    def _discard_component(self) -> None:
        self.close_component()
        self._remove_new_entities()

    def _remove_new_entities(self) -> None:
        """Destroy the component's ROS entities: all but the node's own; with a pool of callback threads, on the
        spin thread between two waits (``PoolExecutor.between_waits``)."""
        if self._own is None:
            return  # never configured: nothing of a component to remove
        executor = self.executor
        if isinstance(executor, PoolExecutor):
            executor.between_waits(self._destroy_component_entities)
        else:
            self._destroy_component_entities()

    def _destroy_component_entities(self) -> None:
        own = self._own or set()
        for kind, destroy in (("publishers", self.destroy_publisher), ("subscriptions", self.destroy_subscription),
                              ("services", self.destroy_service), ("clients", self.destroy_client), ("timers", self.destroy_timer),
                              ("guards", self.destroy_guard_condition)):
            for entity in [e for e in getattr(self, kind) if id(e) not in own]:
                destroy(entity)
        for waitable in [w for w in self.waitables if id(w) not in own]:
            if isinstance(waitable, ActionServer | ActionClient):
                waitable.destroy()  # removes itself from the node
            else:
                self.remove_waitable(waitable)
