"""The executor node: routes a checked subtask to the skill of the chosen model and runs attempts.

It wraps the same ``Executor`` as the in-process runner. Where the skills run depends on the world:

* a simulator (the embedded home) lives in the world node, so skills that act on it run their attempts
  there (``skill_attempt``), and a world that does not answer in ``attempt_timeout`` fails the attempt;
* a robot reached through its driver (``World.reached_through_driver``: the ``ros2_robot`` bridge)
  is commanded from here: this node builds its own world from the config (its own bridge to the
  driver), wraps the robot in the safety layer (it hears the e-stop and the task manager's cancel
  itself) and runs the skills (``homiebot.runtime.skills_run_in_executor``).

Either way it serves the ``homiebot_msgs/action/ExecuteSubtask`` action on /homiebot/executor/execute
(feedback after every attempt; a cancelled goal starts no further attempt, and a robot's motion stops)
and ``homiebot_msgs/srv/ListModels`` on /homiebot/executor/models.
"""

from __future__ import annotations

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
from std_msgs.msg import String

from homiebot.config import RunConfig
from homiebot.contracts import Action, SkillFailure, Subtask
from homiebot.executor import Execution, Executor, skill_name
from homiebot.ros.common import NodeDef, Param, positive, run_config, run_node
from homiebot.ros.messages import feedback_msg, pairs_msg, subtask_from_msg, subtask_msg
from homiebot.ros.rpc import RELIABLE, RpcClient
from homiebot.ros.safety import CANCELLED_TOPIC, SafetyLink
from homiebot.ros.services import TypedServer
from homiebot.ros.wire import read_json, safe_callback
from homiebot.runtime import SkillSet, build_skills, build_world, skills_run_in_executor
from homiebot.safety.gate import protect
from homiebot.safety.state import SafetyState
from homiebot.skills.base import Skill, SkillContext, SkillResult
from homiebot.worlds.base import World


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


class WorldSideSkill(Skill):
    """A skill whose attempts execute in the world node."""

    def __init__(self, model: str, actions: frozenset[Action], world: RpcClient, timeout: float, name: str) -> None:
        super().__init__(model, actions)
        self.world, self.timeout, self.name = world, timeout, name
        self.call: GoalAttempts | None = None
        self.world_state: dict | None = None  # inventory and path length, as the world reported them after the last attempt
        self.acted: dict | None = None  # the subtask in the world's names, as the world reported it

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        if self.call is not None:
            self.call.check_cancelled()
        r = self.world.call("skill_attempt", {"model": self.model, "subtask": subtask.model_dump(mode="json"),
                                              "context": context.__dict__}, timeout=self.timeout)
        self.world_state = {"inventory": r["inventory"], "path_length": r["world_path_length"]}
        self.acted = r.get("acted")
        reason = SkillFailure(r["reason"]) if r.get("reason") else None
        result = SkillResult(r["success"], r["message"], r["dropped"], r["path_length"], reason=reason)
        if self.call is not None:
            self.call.ended(context, result)
        return result


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
    """The world and skills of a robot reached through its driver, built in this node (see the module doc)."""

    def __init__(self, node: Node, cfg: RunConfig) -> None:
        self.cfg = cfg
        self.episode: int | None = None
        self.safety = SafetyState()
        self.link = SafetyLink(node, self.safety, episode=lambda: self.episode, heartbeat=cfg.safety.estop_heartbeat)
        node.create_subscription(String, CANCELLED_TOPIC, safe_callback(node, CANCELLED_TOPIC, self._on_cancelled), RELIABLE)
        self.world: World = build_world(cfg, None)  # waits for the driver, runs its start-up procedure
        protect(self.world, cfg.safety, self.safety)
        self.skills: SkillSet = build_skills(cfg, self.world)
        self.reporting = {m: ReportingSkill(s) for m, s in self.skills.skills.items()}
        self.executor = Executor(self.reporting, max_attempts=cfg.attempts, unavailable=self.skills.unavailable,
                                 fallbacks=self.skills.fallbacks, interruption=self.safety.interruption)

    def execute(self, goal: ExecuteSubtask.Goal, subtask: Subtask, attempts: GoalAttempts) -> ExecuteSubtask.Result:
        if goal.episode and goal.episode != self.episode:
            self.episode = goal.episode
            self.safety.new_episode()
        self.safety.round = int(goal.round)
        for skill in self.reporting.values():
            skill.call = attempts
        run = self.executor.execute(subtask, goal.model, self.world, int(goal.seed), int(goal.round))
        # no world state: the task manager asks the world node for the inventory and the path (its odometry)
        return _result(run, acted=run.acted)

    def cancel(self) -> None:
        """A goal was cancelled: the robot's motion stops now, not after the attempt."""
        self.safety.cancel("the executor's goal was cancelled", record=False)

    def _on_cancelled(self, msg: String) -> None:
        data = read_json(msg.data)
        if isinstance(data, dict) and self.episode is not None and data.get("episode") == self.episode:
            self.safety.cancel("task manager", record=False)

    def close(self) -> None:
        self.executor.close()
        self.world.close()  # the robot's shut-down procedure


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
        self.cfg = run_config(params["config"])
        self.node = node
        self.timeout = params["attempt_timeout"]
        self.world = RpcClient(node, "world")
        self._listed: dict | None = None
        self.local = LocalSkills(node, self.cfg) if skills_run_in_executor(self.cfg) else None
        if self.local is not None:
            node.get_logger().info(f"skills run here, through this node's own bridge to the robot: {sorted(self.local.skills.skills)}")
        self.models = TypedServer(node, ListModels, "/homiebot/executor/models", self.capabilities, (), ListModels.Response.FAILED)
        self.server = ActionServer(node, ExecuteSubtask, "/homiebot/executor/execute", execute_callback=self.execute,
                                   cancel_callback=self._on_cancel, callback_group=ReentrantCallbackGroup())

    def _on_cancel(self, handle: ServerGoalHandle) -> CancelResponse:
        if self.local is not None:
            self.local.cancel()
        return CancelResponse.ACCEPT

    def _executor(self, listed: dict) -> Executor[WorldSideSkill]:
        """The core Executor over world-side skills for what the world listed (fallbacks included)."""
        fallbacks = listed.get("fallbacks") or {}
        skills = {m["name"]: WorldSideSkill(m["name"], frozenset(Action(a) for a in m["actions"]), self.world, self.timeout, m["skill"])
                  for m in listed["models"] if m["name"] not in fallbacks}
        return Executor(skills, max_attempts=self.cfg.attempts, unavailable=listed.get("unavailable"), fallbacks=fallbacks)

    def _list(self) -> dict:
        self._listed = self.world.call("skills", timeout=self.timeout, resend=1.0)
        return self._listed

    def capabilities(self, request: ListModels.Request) -> ListModels.Response:
        if self.local is not None:
            models, unavailable = self.local.skills.listing()["models"], self.local.executor.unavailable
        else:
            listed = self._list()  # asked once per episode: refresh what the world offers
            models, unavailable = listed["models"], self._executor(listed).unavailable
        return ListModels.Response(models=[ModelInfo(name=m["name"], actions=list(m["actions"]), description=m.get("description", ""))
                                           for m in models], unavailable=pairs_msg(unavailable))

    def execute(self, handle: ServerGoalHandle) -> ExecuteSubtask.Result:
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
            result = self.local.execute(goal, subtask, attempts) if self.local is not None else self._execute(goal, subtask, attempts)
        except Cancelled:
            handle.canceled()
            return ExecuteSubtask.Result(error_code=ExecuteSubtask.Result.CANCELLED, error_msg="cancelled before the subtask ended")
        except Exception as err:  # reported to the caller; the node serves the next goal
            self.node.get_logger().error(f"execute failed: {type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}")
            handle.abort()
            return ExecuteSubtask.Result(error_code=ExecuteSubtask.Result.FAILED, error_msg=f"{type(err).__name__}: {err}"[:2000])
        handle.succeed()
        return result

    def _execute(self, goal: ExecuteSubtask.Goal, subtask: Subtask, attempts: GoalAttempts) -> ExecuteSubtask.Result:
        """Attempts in the world node (a simulator's privileged skills)."""
        executor = self._executor(self._listed or self._list())
        for skill in executor.skills.values():
            skill.call = attempts
        run = executor.execute(subtask, goal.model, None, int(goal.seed), int(goal.round))
        ran = executor.skills[executor.fallbacks.get(goal.model, goal.model)]
        acted = Subtask.model_validate(ran.acted) if ran.acted else None
        return _result(run, acted, ran.world_state)

    def close(self) -> None:
        if self.local is not None:
            self.local.close()


PARAMS = (Param("attempt_timeout", 30.0, "seconds one skill attempt may take", positive),)


NODE = NodeDef("executor", ExecutorNode, PARAMS, waiting_handlers=True)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
