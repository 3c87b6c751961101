"""The executor node: routes a checked subtask to the skill of the chosen model and runs attempts.

It wraps the same ``Executor`` as the in-process runner, and runs the attempts itself on a world of its
own (``homiebot.runtime.skill_site`` decides, for both nodes), wrapped in the safety layer
(this node hears the e-stop and the task manager's cancel itself):

* a simulator (the embedded home): a copy of the world node's (homiebot/ros/nodes/sim_copy.py), built from the
  scene the world holds, put into the world's state of the round before a subtask and handed back after
  it (/homiebot/world/apply), so that the world node renders what the skills did;
* a robot reached through its driver (``World.reached_through_driver``: the ``ros2_robot`` bridge): this
  node's own bridge to the driver, which it commands.

With mapped perception that world sees through the mapper node's semantic map (homiebot/ros/clients/remote_map.py,
``MapFollower``): it joins the map session of the world node's episode, binds each subtask's map ids and
notes what the skills did there, and the Explore skill's looks feed the same map.

Either way it serves the ``homiebot_msgs/action/ExecuteSubtask`` action on /homiebot/executor/execute
(feedback after every attempt; a cancelled goal starts no further attempt, and a robot's motion stops)
and ``homiebot_msgs/srv/ListModels`` on /homiebot/executor/models.
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from typing import Any

from homiebot_msgs.action import ExecuteSubtask
from homiebot_msgs.msg import ModelInfo
from homiebot_msgs.srv import ListModels
from rclpy.action import ActionServer, CancelResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import UInt32

from homiebot.config import RunConfig
from homiebot.core.contracts import Subtask
from homiebot.core.world import World
from homiebot.core.world_capabilities import FollowingWorld
from homiebot.executor import Execution, Executor, skill_name
from homiebot.ros.clients.remote_map import MapFollower
from homiebot.ros.clients.world_link import world_callers
from homiebot.ros.kit import services
from homiebot.ros.kit.common import RUN_CONFIG, NodeDef, Param, positive
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.safety import CANCELLED_TOPIC, SafetyLink
from homiebot.ros.kit.services import ServiceError, ServiceInterrupted, ServiceTimeout, TypedServer
from homiebot.ros.kit.sim_thread import CLOSE_WAIT, SimThread
from homiebot.ros.messages.common import RELIABLE, feedback_msg, pairs_msg, subtask_from_msg, subtask_msg
from homiebot.ros.messages.wire import safe_callback
from homiebot.ros.nodes.sim_copy import SimulatorCopy
from homiebot.runtime import SkillSet, build_skills, build_world, skill_site
from homiebot.safety.gate import protect
from homiebot.safety.state import SafetyState
from homiebot.skills.base import Skill, SkillContext, SkillResult

WORLD_FIRST = 60.0  # s the bridge waits for the world node, which checks the robot's driver, before connecting itself


class Cancelled(Exception):
    """The goal was cancelled: no further attempt starts."""


class GoalAttempts:
    """One ExecuteSubtask goal, as its skill's attempts see it: a cancel check before each, feedback after each."""

    def __init__(self, handle: ServerGoalHandle) -> None:
        self.handle = handle

    def check_cancelled(self) -> None:
        if self.handle.is_cancel_requested:
            raise Cancelled("cancelled")

    def ended(self, context: SkillContext, result: SkillResult) -> None:
        self.handle.publish_feedback(ExecuteSubtask.Feedback(attempt=context.attempt, max_attempts=context.max_attempts,
                                                             success=result.success, message=result.message))


class ReportingSkill(Skill):
    """A skill that runs in this node, reporting each attempt as feedback of its goal."""

    def __init__(self, inner: Skill) -> None:
        super().__init__(inner.model, inner.actions)
        self.inner, self.name = inner, skill_name(inner)
        self.call: GoalAttempts | None = None

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        if self.call is not None:
            self.call.check_cancelled()
        result = self.inner.run(subtask, world, context)
        if self.call is not None:
            self.call.ended(context, result)
        return result


class LocalSkills:
    """The skills this node runs itself, on a world of its own: its own bridge to a robot's driver, or its
    copy of the world node's simulator (see the module doc). The world's work runs on one thread (a
    renderer's GL context lives in the thread that made it)."""

    def __init__(self, node: Node, cfg: RunConfig, timeout: float, on_a_copy: bool, world_wait: float) -> None:
        """``on_a_copy``: a copy of the world node's simulator; else a bridge to the robot's driver, connected once the
        world node has checked the driver (or after ``world_wait`` s without a world node)."""
        self.cfg = cfg
        self.episode: int | None = None
        self.safety = SafetyState()
        self.link = SafetyLink(node, self.safety, episode=lambda: self.episode, heartbeat=cfg.safety.estop_heartbeat)
        node.create_subscription(UInt32, CANCELLED_TOPIC, safe_callback(node, CANCELLED_TOPIC, self._on_cancelled), RELIABLE)
        self.sim = SimThread(node)
        self.world: World | None = None
        self.skills: SkillSet | None = None
        self.reporting: dict[str, ReportingSkill] = {}
        self.executor: Executor[ReportingSkill] | None = None
        self.copy = SimulatorCopy(node, cfg, timeout) if on_a_copy else None
        # mapped perception on a robot: this node's bridge sees through the mapper's map, in the world node's episode
        self.follower = MapFollower(node, cfg, timeout) if self.copy is None and cfg.perception.mode == "mapped" else None
        self.info = world_callers(node, ("info",))["info"] if self.copy is None else None
        if self.copy is None:  # waits for the driver, runs its start-up procedure
            assert self.info is not None
            # after the world node's check of the driver: a missing driver is said once, by the world node
            with contextlib.suppress(ServiceTimeout):
                self.info.verify(world_wait)
            remote = self.follower.remote_map if self.follower is not None else None
            self.sim.call(lambda _: self._use(build_world(cfg, None, remote_map=remote)), None)

    def _use(self, world: World) -> None:
        """Skills for ``world`` (built again only for another world: a copy of a new scene)."""
        if world is self.world:
            return
        if self.executor is not None:
            self.executor.close()
        protect(world, self.cfg.safety, self.safety)
        self.world, self.skills = world, build_skills(self.cfg, world)
        self.reporting = {m: ReportingSkill(s) for m, s in self.skills.skills.items()}
        self.executor = Executor(self.reporting, max_attempts=self.cfg.attempts, unavailable=self.skills.unavailable,
                                 fallbacks=self.skills.fallbacks, interruption=self.safety.interruption)

    def listing(self) -> tuple[list[dict], dict[str, str]]:
        """The models offered (name, actions, description) and the configured ones that cannot run here;
        with a simulator, for the scene the world node holds now (asked at the start of each episode)."""
        def listed(_: Any) -> tuple[list[dict], dict[str, str]]:
            if self.copy is not None:
                self._use(self.copy.prepare())
            assert self.skills is not None and self.executor is not None
            return self.skills.listing()["models"], self.executor.unavailable
        return self.sim.call(listed, None)

    def execute(self, goal: ExecuteSubtask.Goal, subtask: Subtask, attempts: GoalAttempts) -> ExecuteSubtask.Result:
        return self.sim.call(lambda _: self._execute(goal, subtask, attempts), None)

    def _execute(self, goal: ExecuteSubtask.Goal, subtask: Subtask, attempts: GoalAttempts) -> ExecuteSubtask.Result:
        if goal.episode and goal.episode != self.episode:
            self.episode = goal.episode
            self.safety.new_episode()
            if self.follower is not None and self.info is not None:
                self.follower.join_world(self.info)
        if self.copy is not None:
            self._use(self.copy.follow(int(goal.episode), int(goal.round)))
        elif self.world is not None:
            if isinstance(self.world, FollowingWorld):
                self.world.enter_round(int(goal.round))
        assert self.executor is not None
        self.safety.round = int(goal.round)
        for skill in self.reporting.values():
            skill.call = attempts
        run = self.executor.execute(subtask, goal.model, self.world, int(goal.seed), int(goal.round))
        # a simulator takes over what the attempts did; a robot's driver reports it itself (the world node's odometry)
        world_state = self.copy.hand_back(int(goal.round)) if self.copy is not None else None
        return _result(run, acted=run.acted, world_state=world_state)

    def cancel(self) -> None:
        """A goal was cancelled: the robot's motion stops now, not after the attempt."""
        self.safety.cancel("the executor's goal was cancelled", record=False)

    def _on_cancelled(self, msg: UInt32) -> None:
        if self.episode is not None and int(msg.data) == self.episode:
            self.safety.cancel("task manager", record=False)

    def interrupt(self) -> None:
        """The process is stopping: a wait for the world's state gives up now."""
        if self.copy is not None:
            self.copy.interrupt()

    def close(self) -> None:
        def release(_: Any = None) -> None:
            if self.executor is not None:
                self.executor.close()
            if self.copy is not None:
                self.copy.close()
            elif self.world is not None:
                self.world.close()  # the robot's shut-down procedure
        self.sim.close(release, wait=None if self.copy is None else CLOSE_WAIT)  # a robot's shut-down is not cut short


def _result(run: Execution, acted: Subtask | None, world_state: dict | None = None) -> ExecuteSubtask.Result:
    """An execution as the goal's result (``world_state``: the world's inventory and path, when reported)."""
    result = ExecuteSubtask.Result(feedback=feedback_msg(run.feedback), skill=run.skill or "", attempts=run.attempts,
                                   path_length=float(run.path_length), acted=subtask_msg(acted))
    if world_state is not None:
        result.has_world_state, result.inventory = True, list(world_state["inventory"])
        result.world_path_length = float(world_state["path_length"])
    return result


class ExecutorNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.cfg = params[RUN_CONFIG]
        self.node = node
        self.timeout = params["attempt_timeout"]
        self.local = LocalSkills(node, self.cfg, self.timeout, on_a_copy=skill_site(self.cfg) == "copy",
                                 world_wait=params["world_wait"])
        where = "on a copy of the simulator" if self.local.copy is not None else "through this node's own bridge to the robot"
        node.get_logger().info(f"skills run here, {where}")
        self.models = TypedServer(node, ListModels, "executor/models", self.capabilities, (), ListModels.Response.FAILED)
        self.server = ActionServer(node, ExecuteSubtask, "executor/execute", execute_callback=self.execute,
                                   cancel_callback=self._on_cancel, callback_group=ReentrantCallbackGroup())

    def _on_cancel(self, handle: ServerGoalHandle) -> CancelResponse:
        self.local.cancel()
        return CancelResponse.ACCEPT

    def capabilities(self, request: ListModels.Request) -> ListModels.Response:
        models, unavailable = self.local.listing()
        return ListModels.Response(models=[ModelInfo(name=m["name"], actions=list(m["actions"]), description=m.get("description", ""))
                                           for m in models], unavailable=pairs_msg(unavailable))

    def execute(self, handle: ServerGoalHandle) -> ExecuteSubtask.Result:
        if not services.serving(self.node):
            handle.abort()
            return ExecuteSubtask.Result(error_code=ExecuteSubtask.Result.INACTIVE, error_msg=services.inactive(self.node))
        goal: ExecuteSubtask.Goal = handle.request
        try:
            subtask = subtask_from_msg(goal.subtask)
        except ValueError as err:
            handle.abort()
            return ExecuteSubtask.Result(error_code=ExecuteSubtask.Result.INVALID_REQUEST,
                                         error_msg=f"the subtask is not the contract's: {str(err).splitlines()[0]}")
        attempts = GoalAttempts(handle)
        try:
            attempts.check_cancelled()
            result = self.local.execute(goal, subtask, attempts)
        except ServiceInterrupted as err:  # this process is stopping: the goal ends with it, without an error in the log
            with contextlib.suppress(Exception):  # the action server may be gone already
                handle.abort()
            return ExecuteSubtask.Result(error_code=ExecuteSubtask.Result.FAILED, error_msg=f"the executor node is stopping: {err}")
        except Exception as err:  # reported to the caller; the node serves the next goal
            if isinstance(err, Cancelled) or (isinstance(err, ServiceError) and handle.is_cancel_requested):
                handle.canceled()
                return ExecuteSubtask.Result(error_code=ExecuteSubtask.Result.CANCELLED, error_msg="cancelled before the subtask ended")
            self.node.get_logger().error(f"execute failed: {type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}")
            handle.abort()
            return ExecuteSubtask.Result(error_code=ExecuteSubtask.Result.FAILED, error_msg=f"{type(err).__name__}: {err}"[:2000])
        if handle.is_cancel_requested:  # the robot's skill was stopped by the cancel (see _on_cancel): say so, with what ran
            handle.canceled()
            result.error_code, result.error_msg = ExecuteSubtask.Result.CANCELLED, "cancelled before the subtask ended"
            return result
        handle.succeed()
        return result

    def interrupt(self) -> None:
        """The process is stopping: a subtask waiting for the world's state gives up now."""
        self.local.interrupt()

    def close(self) -> None:
        self.local.close()


PARAMS = (Param("attempt_timeout", 30.0, "seconds one skill attempt may take", positive),
          Param("world_wait", WORLD_FIRST, "a robot: seconds to wait for the world node's check of the driver before "
                "connecting (a graph without a world node)", positive))


# the run configuration's sections this node reads: their settings are its parameters too
CONFIG = ("attempts", "skill_profile", "skills", "perception", "safety", "world")
NODE = NodeDef("executor", ExecutorNode, PARAMS, config=CONFIG, waiting_handlers=True)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
