"""The executor node: routes a checked subtask to the skill of the chosen model and runs attempts.

It wraps the same ``Executor`` as the in-process runner. Where the skills run depends on the world:

* a simulator (the embedded home) lives in the world node, so skills that act on it run their attempts
  there (``skill_attempt``), and a world that does not answer in ``attempt_timeout`` fails the attempt;
* a robot reached through its driver (``World.reached_through_driver``: the ``ros2_robot`` bridge)
  is commanded from here: this node builds its own world from the config (its own bridge to the
  driver), wraps the robot in the safety layer (it hears the e-stop and the task manager's cancel
  itself) and runs the skills (``homiebot.runtime.skills_run_in_executor``).

Either way progress is published after every attempt and a cancel request stops before the next one.
"""

from __future__ import annotations

import sys
from typing import Any

from rclpy.node import Node
from std_msgs.msg import String

from homiebot.config import RunConfig
from homiebot.contracts import Action, SkillFailure, Subtask
from homiebot.executor import Executor, skill_name
from homiebot.ros.common import NodeDef, Param, positive, run_config, run_node
from homiebot.ros.rpc import RELIABLE, CallContext, RpcClient, RpcServer
from homiebot.ros.safety import CANCELLED_TOPIC, SafetyLink
from homiebot.ros.wire import read_json, safe_callback
from homiebot.runtime import SkillSet, build_skills, build_world, skills_run_in_executor
from homiebot.safety.gate import protect
from homiebot.safety.state import SafetyState
from homiebot.skills.base import Skill, SkillContext, SkillResult
from homiebot.worlds.base import World


class WorldSideSkill(Skill):
    """A skill whose attempts execute in the world node."""

    def __init__(self, model: str, actions: frozenset[Action], world: RpcClient, timeout: float, name: str) -> None:
        super().__init__(model, actions)
        self.world, self.timeout, self.name = world, timeout, name
        self.call: CallContext | None = None
        self.world_state: dict | None = None  # inventory and path length, as the world reported them after the last attempt
        self.acted: dict | None = None  # the subtask in the world's names, as the world reported it

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        if self.call is not None:
            self.call.check_cancelled()
        r = self.world.call("skill_attempt", {"model": self.model, "subtask": subtask.model_dump(mode="json"),
                                              "context": context.__dict__}, timeout=self.timeout)
        self.world_state = {"inventory": r["inventory"], "path_length": r["world_path_length"]}
        self.acted = r.get("acted")
        if self.call is not None:
            self.call.progress({"attempt": context.attempt, "of": context.max_attempts, "success": r["success"], "message": r["message"]})
        reason = SkillFailure(r["reason"]) if r.get("reason") else None
        return SkillResult(r["success"], r["message"], r["dropped"], r["path_length"], reason=reason)


class ReportingSkill(Skill):
    """A skill that runs in this node, reporting each attempt as progress of the ``execute`` call."""

    def __init__(self, inner: Skill) -> None:
        super().__init__(inner.model, inner.actions)
        self.inner, self.name = inner, skill_name(inner)
        self.call: CallContext | None = None

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        if self.call is not None:
            self.call.check_cancelled()
        result = self.inner.run(subtask, world, context)
        if self.call is not None:
            self.call.progress({"attempt": context.attempt, "of": context.max_attempts, "success": result.success,
                                "message": result.message})
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

    def execute(self, params: dict, ctx: CallContext) -> dict:
        episode = params.get("episode")
        if episode is not None and episode != self.episode:
            self.episode = episode
            self.safety.new_episode()
        self.safety.round = int(params["round"])
        for skill in self.reporting.values():
            skill.call = ctx
        run = self.executor.execute(Subtask.model_validate(params["subtask"]), params["model"], self.world, int(params["seed"]),
                                    int(params["round"]))
        # "world": None: the task manager asks the world node for the inventory and the path (its odometry)
        return {"feedback": run.feedback.model_dump(mode="json"), "skill": run.skill, "attempts": run.attempts,
                "path_length": run.path_length, "world": None, "acted": run.acted.model_dump(mode="json") if run.acted else None}

    def _on_cancelled(self, msg: String) -> None:
        data = read_json(msg.data)
        if isinstance(data, dict) and self.episode is not None and data.get("episode") == self.episode:
            self.safety.cancel("task manager", record=False)

    def close(self) -> None:
        self.executor.close()
        self.world.close()  # the robot's shut-down procedure


class ExecutorNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.cfg = run_config(params["config"])
        self.timeout = params["attempt_timeout"]
        self.world = RpcClient(node, "world")
        self._listed: dict | None = None
        self.local = LocalSkills(node, self.cfg) if skills_run_in_executor(self.cfg) else None
        if self.local is not None:
            node.get_logger().info(f"skills run here, through this node's own bridge to the robot: {sorted(self.local.skills.skills)}")
        self.server = RpcServer(node, "executor", {"capabilities": self.capabilities, "execute": self.execute})

    def _executor(self, listed: dict) -> Executor[WorldSideSkill]:
        """The core Executor over world-side skills for what the world listed (fallbacks included)."""
        fallbacks = listed.get("fallbacks") or {}
        skills = {m["name"]: WorldSideSkill(m["name"], frozenset(Action(a) for a in m["actions"]), self.world, self.timeout, m["skill"])
                  for m in listed["models"] if m["name"] not in fallbacks}
        return Executor(skills, max_attempts=self.cfg.attempts, unavailable=listed.get("unavailable"), fallbacks=fallbacks)

    def _list(self) -> dict:
        self._listed = self.world.call("skills", timeout=self.timeout, resend=1.0)
        return self._listed

    def capabilities(self, params: dict, ctx: CallContext) -> dict:
        if self.local is not None:
            return {"models": self.local.skills.listing()["models"], "unavailable": self.local.executor.unavailable}
        listed = self._list()  # asked once per episode: refresh what the world offers
        return {"models": listed["models"], "unavailable": self._executor(listed).unavailable}

    def execute(self, params: dict, ctx: CallContext) -> dict:
        if self.local is not None:
            return self.local.execute(params, ctx)
        executor = self._executor(self._listed or self._list())
        for skill in executor.skills.values():
            skill.call = ctx
        model = params["model"]
        run = executor.execute(Subtask.model_validate(params["subtask"]), model, None, int(params["seed"]), int(params["round"]))
        ran = executor.skills[executor.fallbacks.get(model, model)]
        return {"feedback": run.feedback.model_dump(mode="json"), "skill": run.skill, "attempts": run.attempts,
                "path_length": run.path_length, "world": ran.world_state, "acted": ran.acted}

    def close(self) -> None:
        if self.local is not None:
            self.local.close()


PARAMS = (Param("attempt_timeout", 30.0, "seconds one skill attempt may take", positive),)


NODE = NodeDef("executor", ExecutorNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
