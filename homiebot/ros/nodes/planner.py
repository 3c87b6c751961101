"""The planner node: serves any registered planner backend as planner/reset and planner/plan under the graph's
namespace (``homiebot_msgs/srv/ResetPlanner`` and the cancellable ``action/PlanSubtask``), and names the backend on /homiebot/planner/backend.

The four views come from the camera topics (matched by the round's stamp). A privileged planner
(the oracle) gets a mirror of the simulator's state, kept up to date from /homiebot/world/state.
When the world keeps a semantic map (its observations say ``mapped``), the request's ``scene_map``
is the round's map summary from /homiebot/map/summary, as ``homiebot run`` passes the world's.
With a demonstration memory in the config (``memory:``), each episode's planner is handed the segments
recalled for its instruction, as ``homiebot run`` does; a memory that cannot serve the task's home and
user refuses the episode with the reason.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

import yaml
from homiebot_msgs.action import PlanSubtask
from homiebot_msgs.msg import Measure
from homiebot_msgs.srv import ResetPlanner
from pydantic import ValidationError
from rclpy.action import ActionServer, CancelResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String

from homiebot.core.contracts import FormatError
from homiebot.core.errors import ConfigError
from homiebot.core.parsing import parse_planner_output
from homiebot.core.tasks import Task, scene_source
from homiebot.core.yamlio import format_validation_error, parse_yaml
from homiebot.memory.recall import RecallingPlanner
from homiebot.planners.base import EpisodeContext, Planner, PlannerConfigError, PlannerRequest
from homiebot.ros.kit import services
from homiebot.ros.kit.common import RUN_CONFIG, NodeDef, Param, positive
from homiebot.ros.kit.goal_work import GoalWork
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.services import ErrorMapping, TypedServer
from homiebot.ros.messages.common import LATCHED, PLANNER_BACKEND_TOPIC, feedback_from_msg, models_from_msg, planner_output_msg
from homiebot.ros.messages.observations import ObservationCache
from homiebot.ros.messages.round import dynamic_of, summary_of
from homiebot.runtime import SceneCache, build_planner, recall_for


class MirrorWorld:
    """Stands in for the world in a privileged planner: the world plugin's mirror of its ground
    truth, following the world node's state."""

    def __init__(self, mirror: Any) -> None:
        self.mirror = mirror

    def ground_truth(self) -> Any:
        return self.mirror.state


class _InitialStates:
    """The mirror of the last scene, put back to its initial values for each episode in that home
    (building it from the scene takes longer than a round)."""

    def __init__(self, world: str) -> None:
        self._scenes = SceneCache(world)
        self._source = scene_source(world)
        self._scene: Any = None  # the scene the mirror was built from (the cache's object)
        self._mirror: Any = None

    def of(self, task: Task) -> MirrorWorld | None:
        if self._source is None or not task.has_scene:
            return None
        scene = self._scenes.get(task)
        if scene is not self._scene or self._mirror is None:
            self._scene, self._mirror = scene, self._source.truth_mirror(scene)
        elif self._mirror is not None:
            self._mirror.reset()
        return None if self._mirror is None else MirrorWorld(self._mirror)


class PlannerNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.cfg = params[RUN_CONFIG]
        if params["backend"]:
            self.cfg = self.cfg.model_copy(update={"planner": self.cfg.planner.model_copy(update={"name": params["backend"], "params": {}})})
        self.wait = params["image_timeout"]
        self.planner = build_planner(self.cfg)  # fails at start-up for unknown planners or bad parameters
        self.active: Planner = self.planner  # this episode's: handed the recalled demonstrations when the config names a memory
        self.mirror: MirrorWorld | None = None
        self._initial = _InitialStates(self.cfg.world.name)
        self.kinds = tuple(self.planner.needs_views)
        self.cache = ObservationCache(node, kinds=self.kinds, round_topics=("observation", "world/state", "map/summary"))
        # which backend plans, for the records of whoever drives the episode (kept for late joiners)
        backend = node.create_publisher(String, PLANNER_BACKEND_TOPIC, LATCHED)
        backend.publish(String(data=self.cfg.planner.name))
        # a planner refusing the instruction is the user's error: the caller reports it, the node logs no traceback
        self.server = TypedServer(node, ResetPlanner, "planner/reset", self.reset,
                                  (ErrorMapping(PlannerConfigError, ResetPlanner.Response.REFUSED),
                                   ErrorMapping(ConfigError, ResetPlanner.Response.REFUSED),
                                   ErrorMapping(InvalidRequest, ResetPlanner.Response.INVALID_REQUEST)), ResetPlanner.Response.FAILED)
        self.node, self.model_names = node, tuple[str, ...]()
        self.work = GoalWork()
        self.action = ActionServer(node, PlanSubtask, "planner/plan", execute_callback=self.plan_goal,
                                   cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=ReentrantCallbackGroup())

    def reset(self, request: ResetPlanner.Request) -> ResetPlanner.Response:
        task = read_task(request.task)
        if self.kinds:  # the world sends frames only to matched readers: be one before the episode's first round
            self.cache.wait_for_cameras(self.wait)
        models = models_from_msg(request.models)
        self.model_names = tuple(m.name for m in models)
        memories = recall_for(self.cfg, task)  # ConfigError when the memory cannot serve this home and user
        self.active = self.planner if memories is None else RecallingPlanner(self.planner, memories)
        self.mirror = self._initial.of(task)
        self.active.reset(EpisodeContext(task=task, models=models, seed=int(request.seed), world=self.mirror, ask=bool(request.ask),
                                         max_rounds=int(request.max_rounds) or None))
        return ResetPlanner.Response(planner=self.cfg.planner.name, understood=self.active.understood() or "",
                                     report=self.active.report() or "")

    def plan_goal(self, handle: ServerGoalHandle) -> PlanSubtask.Result:
        """One round as an action goal: the backend works in a thread of its own; a cancel ends the goal at once."""
        if not services.serving(self.node):
            handle.abort()
            return PlanSubtask.Result(error_code=PlanSubtask.Result.INACTIVE, error_msg=services.inactive(self.node))
        outcome = self.work.run(handle, lambda: self.plan(handle.request),
                                lambda elapsed, stage: PlanSubtask.Feedback(elapsed=elapsed, stage=stage))
        if outcome.cancelled:
            handle.canceled()
            return PlanSubtask.Result(error_code=PlanSubtask.Result.CANCELLED, error_msg="cancelled before the planner answered")
        if outcome.error is not None:
            err = outcome.error
            code = (PlanSubtask.Result.CONFIG_ERROR if isinstance(err, PlannerConfigError) else
                    PlanSubtask.Result.INVALID_REQUEST if isinstance(err, InvalidRequest) else PlanSubtask.Result.FAILED)
            if code == PlanSubtask.Result.FAILED:
                self.node.get_logger().error(f"plan failed: {type(err).__name__}: {err}\n{''.join(traceback.format_exception(err, limit=5))}")
            handle.abort()
            return PlanSubtask.Result(error_code=code, error_msg=f"{type(err).__name__}: {err}"[:2000])
        assert outcome.value is not None
        handle.succeed()
        return outcome.value

    def plan(self, request: PlanSubtask.Goal) -> PlanSubtask.Result:
        r, episode = int(request.round), int(request.episode)
        try:
            feedback = feedback_from_msg(request.feedback) if request.has_feedback else None
        except ValueError as err:
            raise InvalidRequest(f"the feedback is not the contract's: {err}") from None
        meta = self.cache.wait_round("observation", episode, r, self.wait)
        obs = self.cache.observation(meta, self.wait) if self.kinds else None
        if self.mirror is not None:
            try:
                dynamic = dynamic_of(self.cache.wait_round("world/state", episode, r, self.wait))
            except ValueError as err:
                raise InvalidRequest(f"the simulator's state of round {r} is unreadable: {err}") from None
            self.mirror.mirror.apply_dynamic(dynamic)
        scene_map = summary_of(self.cache.wait_round("map/summary", episode, r, self.wait)) if meta.mapped else None
        planner_request = PlannerRequest(r, request.system, request.user, request.instruction, list(request.inventory),
                                         list(request.history), feedback, obs, scene_map=scene_map)
        reply = self.active.plan(planner_request)
        # asked after every round, as the in-process loop asks after End: what it understood, and why it stopped
        result = PlanSubtask.Result(text=reply.text, usage=[Measure(name=k, value=float(v)) for k, v in reply.usage.items()],
                                    prompt=reply.prompt or "", understood=self.active.understood() or "",
                                    report=self.active.report() or "")
        try:  # typed for whoever reads the result; the task manager's loop parses the text itself, as in-process
            result.output, result.parsed = planner_output_msg(parse_planner_output(reply.text, self.model_names)), True
        except FormatError as err:
            result.parse_error = str(err)[:2000]
        return result

    def interrupt(self) -> None:
        """The process is stopping: a round waiting for its views gives up now."""
        self.cache.close()

    def close(self) -> None:
        self.planner.close()


class InvalidRequest(ValueError):
    """A request whose contents cannot be used (the caller's mistake; the node logs no traceback)."""


def read_task(text: str) -> Task:
    """A task document sent as JSON (what homiebot sends) or YAML (what a person types)."""
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = parse_yaml(text)
        except yaml.YAMLError as err:
            raise InvalidRequest(f"the task is neither JSON nor YAML: {str(err).splitlines()[0]}") from None
    try:
        return Task.model_validate(value)
    except ValidationError as err:
        raise InvalidRequest(f"invalid task:\n{format_validation_error(err)}") from None


PARAMS = (Param("backend", "", "planner backend by name, with its default parameters (empty: the config's planner.name and planner.params)"),
          Param("image_timeout", 15.0, "seconds to wait for the round's camera images", positive))


# the run configuration's sections this node reads: their settings are its parameters too
CONFIG = ("planner", "memory", "perception", "world")
NODE = NodeDef("planner", PlannerNode, PARAMS, config=CONFIG, waiting_handlers=True)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
