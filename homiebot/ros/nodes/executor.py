"""The executor node: routes a checked subtask to the skill of the chosen model and runs attempts.

It wraps the same ``Executor`` as the in-process runner. Skills that act on the simulator run their
attempts inside the world node (``skill_attempt``); progress is published after every attempt, a
cancel request stops before the next attempt, and a world that does not answer in ``attempt_timeout``
seconds fails the attempt.
"""

from __future__ import annotations

import sys
from typing import Any

from rclpy.node import Node

from homiebot.contracts import Action, SkillFailure, Subtask
from homiebot.executor import Executor
from homiebot.ros.common import NodeDef, Param, positive, run_config, run_node
from homiebot.ros.rpc import CallContext, RpcClient, RpcServer
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


class ExecutorNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.cfg = run_config(params["config"])
        self.timeout = params["attempt_timeout"]
        self.world = RpcClient(node, "world")
        self._listed: dict | None = None
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
        listed = self._list()  # asked once per episode: refresh what the world offers
        return {"models": listed["models"], "unavailable": self._executor(listed).unavailable}

    def execute(self, params: dict, ctx: CallContext) -> dict:
        executor = self._executor(self._listed or self._list())
        for skill in executor.skills.values():
            skill.call = ctx
        model = params["model"]
        run = executor.execute(Subtask.model_validate(params["subtask"]), model, None, int(params["seed"]), int(params["round"]))
        ran = executor.skills[executor.fallbacks.get(model, model)]
        return {"feedback": run.feedback.model_dump(mode="json"), "skill": run.skill, "attempts": run.attempts,
                "path_length": run.path_length, "world": ran.world_state, "acted": ran.acted}


PARAMS = (Param("attempt_timeout", 30.0, "seconds one skill attempt may take", positive),)


NODE = NodeDef("executor", ExecutorNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
