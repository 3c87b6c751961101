"""Proxies that let the one agent loop (``homiebot.agent.Agent``) drive the nodes of the graph.

Each implements the interface the loop already uses in-process (World, Planner, the checker, the
executor), by calls to the corresponding node, so both runners share every line of the loop.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from homiebot_msgs import msg as hb
from homiebot_msgs.action import ExecuteSubtask, PlanSubtask
from homiebot_msgs.srv import (
    Check,
    GoalSatisfied,
    ListModels,
    Observe,
    ReleaseWorld,
    ResetPlanner,
    ResetWorld,
    RoomOf,
    Route,
    WorldInfo,
)
from rclpy.node import Node
from std_msgs.msg import String

from homiebot.core.contracts import Action, Observation, PlannerOutput, Subtask
from homiebot.core.errors import CheckResult, SnapshotBelief
from homiebot.core.tasks import Condition
from homiebot.core.world import World
from homiebot.executor import Execution
from homiebot.planners.base import (
    EpisodeContext,
    PlanCancelled,
    Planner,
    PlannerConfigError,
    PlannerError,
    PlannerReply,
    PlannerRequest,
)
from homiebot.ros.clients.world_link import scene_text
from homiebot.ros.kit.services import ActionCaller, NodeDown, ServiceCaller, ServiceCancelled, ServiceError, ServiceTimeout
from homiebot.ros.messages.common import (
    LATCHED,
    PLANNER_BACKEND_TOPIC,
    capabilities_msg,
    feedback_from_msg,
    feedback_msg,
    models_from_msg,
    models_msg,
    pairs_from_msg,
    pairs_msg,
    planner_output_msg,
    subtask_from_msg,
    subtask_msg,
)
from homiebot.ros.messages.observations import ObservationCache
from homiebot.ros.messages.round import snapshot_of

RELEASE_TIMEOUT = 5.0  # seconds a session release may take: the episode has ended, nothing waits on it


class RemoteWorld(World):
    """The world node, seen as a World.

    With mapped perception the planner node reads the map summary from /homiebot/map/summary itself,
    so ``map_summary`` stays None here (nothing else in the loop reads it); the map's text for prompts
    (``describe_in_prompt``) comes with each observation.
    """

    name = "remote"

    def __init__(self, calls: dict[str, ServiceCaller], cache: ObservationCache, scene: dict[str, Any] | None, timeout: float,
                 owner: str = "", reset_timeout: float | None = None) -> None:
        """``calls``: the world's services (``world_link.EPISODE_CALLS``); ``owner``: who holds the episode session;
        ``reset_timeout``: seconds a reset may take (default ``timeout``)."""
        self.calls, self.cache, self.scene, self.timeout, self.owner = calls, cache, scene, timeout, owner
        self.reset_timeout = timeout if reset_timeout is None else reset_timeout
        self._last: hb.RoundObservation | None = None
        self._known: dict[str, Any] = {}  # inventory and path length, while nothing has acted since they were reported
        self._belief: SnapshotBelief | None = None
        self.episode = 0
        self._untouched = False  # reset, and nothing has acted since: another reset would change nothing

    def reset(self) -> None:
        if self._untouched:
            return
        r = self.calls["reset"].call(ResetWorld.Request(scene=scene_text(self.scene), owner=self.owner), self.reset_timeout)
        self.episode = int(r.episode)
        self._last, self._known = None, {}
        self._untouched = True

    def release(self) -> None:
        """End the episode session on the world node (a release that fails expires with its lease)."""
        try:
            self.calls["release"].call(ReleaseWorld.Request(owner=self.owner), min(self.timeout, RELEASE_TIMEOUT))
        except (ServiceError, ServiceTimeout):
            pass

    def touched(self) -> None:
        """Something may have changed the world (an execution): the next reset must happen, and
        inventory and path length must be asked for again unless the execution reports them."""
        self._untouched = False
        self._known = {}

    def observe(self, round_index: int) -> Observation:
        meta = self.calls["observe"].call(Observe.Request(round=round_index), self.timeout).observation
        self._last = meta
        self._known = {"inventory": list(meta.inventory), "path_length": float(meta.path_length)}
        self._belief = None  # fetched only if someone asks (the detector node has its own copy)
        return self.cache.lazy_observation(meta, self.timeout)  # images are waited for when the round is recorded

    @property
    def describe_in_prompt(self) -> bool:
        """The world asks for its map's text in planner prompts (mapped perception, when configured)."""
        return self._last is not None and bool(self._last.has_map_text)

    def map_text(self) -> str:
        """The map's text of the last observation."""
        return "" if self._last is None else str(self._last.map_text)

    @property
    def round(self) -> int:
        """The round of the last observation."""
        return 0 if self._last is None else int(self._last.round)

    @property
    def belief(self) -> SnapshotBelief:
        if self._belief is None:
            self._belief = SnapshotBelief(snapshot_of(self.cache.wait_round("belief", self.episode, self.round, self.timeout)))
        return self._belief

    def note_state(self, state: dict) -> None:
        """Inventory and path length after an execution, as the executor reported them."""
        self._known = {"inventory": state["inventory"], "path_length": state["path_length"]}

    def _fact(self, key: str) -> Any:
        if key not in self._known:
            info = self.calls["info"].call(WorldInfo.Request(), self.timeout, idempotent=True)
            self._known = {"inventory": list(info.inventory), "path_length": info.path_length}
        return self._known[key]

    def inventory(self) -> list[str]:
        return list(self._fact("inventory"))

    def path_length(self) -> float:
        return float(self._fact("path_length"))

    def scene_description(self) -> dict[str, Any]:
        return self.scene or {}

    def goal_satisfied(self, goal: list[Condition]) -> bool | None:
        r = self.calls["goal"].call(GoalSatisfied.Request(goal=json.dumps([g.model_dump(mode="json") for g in goal])), self.timeout, idempotent=True)
        return bool(r.satisfied) if r.known else None

    def room_of(self, name: str) -> str | None:
        r = self.calls["room_of"].call(RoomOf.Request(name=name), self.timeout, idempotent=True)
        return str(r.room) if r.known else None

    def route(self, target: str) -> bool | None:
        r = self.calls["route"].call(Route.Request(target=target), self.timeout, idempotent=True)
        return bool(r.reachable) if r.known else None


class RemotePlanner(Planner):
    """The planner node (``homiebot_msgs/srv/ResetPlanner`` and ``action/PlanSubtask``). Its failures are planner
    errors (F1 feedback), as in-process; a planner node that is not there or not active is a graph error."""

    def __init__(self, reset: ServiceCaller, plan: ActionCaller, timeout: float, plan_timeout: float, world: RemoteWorld) -> None:
        self.reset_srv, self.plan_action, self.timeout, self.plan_timeout, self.world = reset, plan, timeout, plan_timeout, world
        self._understood: str | None = None
        self._report: str | None = None
        self._backend: str | None = None  # the backend that answered the episode's reset

    def reset(self, context: EpisodeContext) -> None:
        self._understood = self._report = None
        request = ResetPlanner.Request(task=context.task.model_dump_json(by_alias=True), models=models_msg(context.models),
                                       seed=int(context.seed), ask=bool(context.ask), max_rounds=int(context.max_rounds or 0))
        try:
            r = self.reset_srv.call(request, self.plan_timeout)
        except ServiceError as err:
            if err.code == ResetPlanner.Response.REFUSED:  # it refuses the instruction: the user's to fix, as in-process
                raise PlannerConfigError(_remote_message(str(err))) from None
            raise
        self._backend = r.planner[:200] or None
        self._note(r)

    def backend_name(self) -> str | None:
        return self._backend

    def _note(self, reply: ResetPlanner.Response | PlanSubtask.Result) -> None:
        """What the planner node says it understood and reported (the in-process planner's accessors)."""
        self._understood = reply.understood or None
        self._report = reply.report or None

    def understood(self) -> str | None:
        return self._understood

    def report(self) -> str | None:
        return self._report

    def plan(self, request: PlannerRequest) -> PlannerReply:
        fb = request.feedback
        goal = PlanSubtask.Goal(episode=self.world.episode, round=request.round, system=request.system, user=request.user,
                                instruction=request.instruction, inventory=list(request.inventory), history=list(request.history),
                                has_feedback=fb is not None, feedback=feedback_msg(fb) if fb is not None else hb.Feedback())
        try:  # a timeout, an e-stop or a cancel (an abort of this caller) cancels the goal: the model's answer is dropped
            r = self.plan_action.run(goal, self.plan_timeout)
        except ServiceCancelled as err:  # the user cancelled the episode: it ends cancelled, as between rounds
            raise PlanCancelled(str(err)) from None
        except ServiceError as err:
            if err.code == PlanSubtask.Result.CONFIG_ERROR:  # e.g. a rejected API key: every round would fail alike
                raise PlannerConfigError(str(err)) from None
            if err.code is None or isinstance(err, NodeDown):  # aborted (the node died, or this process stops), or inactive
                raise
            raise PlannerError(str(err)) from None
        except ServiceTimeout as err:
            if not self.plan_action.connected:  # no planner node at all: the graph's fault, not the planner's answer
                raise NodeDown(f"no planner node serves {self.plan_action.resolved} any more ({err})") from None
            raise PlannerError(str(err)) from None
        self._note(r)
        return PlannerReply(r.text, {m.name: m.value for m in r.usage}, r.prompt or None)


UNNAMED = "planner node"  # the name of a planner node that says none


class PlannerBackend:
    """The planner node's backend name, as it publishes it on /homiebot/planner/backend (kept for late joiners)."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._name: str | None = None
        self._seen = threading.Event()
        node.create_subscription(String, PLANNER_BACKEND_TOPIC, self._on_name, LATCHED)

    def _on_name(self, msg: String) -> None:
        self._name = msg.data[:200]
        self._seen.set()

    def name(self, timeout: float) -> str:
        """The latest name; waits up to ``timeout`` s for the first while the topic has a publisher. A planner
        node that does not publish it (one of another make) is ``UNNAMED`` until its reset's answer names it."""
        if self._node.count_publishers(PLANNER_BACKEND_TOPIC) == 0 and not self._seen.is_set():
            return UNNAMED
        if not self._seen.wait(timeout) or self._name is None:
            raise TimeoutError(f"the planner node did not say its backend on {self._node.resolve_topic_name(PLANNER_BACKEND_TOPIC)} "
                               f"within {timeout:g} s")
        return self._name


class RemoteChecker:
    """The detector node (``homiebot_msgs/srv/Check``), seen as the loop's checker."""

    def __init__(self, check: ServiceCaller, capabilities: dict[str, frozenset[Action]], aliases: dict[str, str], timeout: float,
                 world: RemoteWorld, unavailable: dict[str, str] | None = None) -> None:
        self.srv, self.timeout, self.world = check, timeout, world
        self._fixed = {"capabilities": capabilities_msg(capabilities), "aliases": pairs_msg(aliases),
                       "unavailable": pairs_msg(unavailable or {})}

    def check(self, output: PlannerOutput) -> CheckResult:
        r = self.srv.call(Check.Request(episode=self.world.episode, round=self.world.round, output=planner_output_msg(output),
                                        **self._fixed), self.timeout)
        subtask = subtask_from_msg(r.subtask) if r.subtask.action else None
        return CheckResult(None if r.passed else feedback_from_msg(r.feedback), subtask)


class RemoteExecutor:
    """The executor node (``homiebot_msgs/srv/ListModels`` and ``action/ExecuteSubtask``), with the in-process
    Executor's interface."""

    def __init__(self, models: ServiceCaller, execute: ActionCaller, timeout: float, execute_timeout: float) -> None:
        self.action, self.timeout = execute, execute_timeout
        listed = models.call(ListModels.Request(), timeout, idempotent=True)
        self.models = models_from_msg(listed.models)
        self.unavailable: dict[str, str] = pairs_from_msg(listed.unavailable)

    def capabilities(self) -> dict[str, frozenset[Action]]:
        return {m.name: frozenset(Action(a) for a in m.actions) for m in self.models}

    def execute(self, subtask: Subtask, model: str, world: World | None, seed: int, round_index: int) -> Execution:
        remote = world if isinstance(world, RemoteWorld) else None
        if remote is not None:
            remote.touched()
        # the episode: an executor that runs the skills itself starts its safety state afresh per episode
        goal = ExecuteSubtask.Goal(episode=remote.episode if remote is not None else 0, round=round_index, subtask=subtask_msg(subtask),
                                   model=model, seed=seed)
        r = self.action.run(goal, self.timeout)
        if remote is not None and r.has_world_state:
            remote.note_state({"inventory": list(r.inventory), "path_length": r.world_path_length})  # saves asking the world again
        return Execution(feedback_from_msg(r.feedback), r.skill, r.attempts, r.path_length,
                         subtask_from_msg(r.acted) if r.acted.action else None)

    def close(self) -> None:
        """Nothing to release: the skills live in their nodes."""


def _remote_message(text: str) -> str:
    """The remote exception's own message, without the ``node: Type:`` put before it."""
    marker = f"{PlannerConfigError.__name__}: "
    return text.split(marker, 1)[1] if marker in text else text
