"""The planner node: wraps any registered planner backend behind ``reset`` and ``plan``.

The four views come from the camera topics (matched by the round's stamp). A privileged planner
(the oracle) gets a mirror of the simulator's state, kept up to date from /homiebot/world/state.
When the world keeps a semantic map (its observations say ``mapped``), the request's ``scene_map``
is the round's map summary from /homiebot/map/summary, as ``homiebot run`` passes the world's.
"""

from __future__ import annotations

import sys
from typing import Any

from rclpy.node import Node

from homiebot.contracts import Feedback
from homiebot.planners.base import EpisodeContext, ModelInfo, PlannerConfigError, PlannerRequest
from homiebot.ros.common import NodeDef, Param, positive, run_config, run_node
from homiebot.ros.observations import ObservationCache
from homiebot.ros.rpc import CallContext, RpcServer
from homiebot.runtime import SceneCache, build_planner
from homiebot.scenes import scene_source
from homiebot.tasks import Task


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
        self.cfg = run_config(params["config"])
        if params["planner"]:
            self.cfg = self.cfg.model_copy(update={"planner": self.cfg.planner.model_copy(update={"name": params["planner"], "params": {}})})
        self.wait = params["image_timeout"]
        self.planner = build_planner(self.cfg)  # fails at start-up for unknown planners or bad parameters
        self.mirror: MirrorWorld | None = None
        self._initial = _InitialStates(self.cfg.world.name)
        self.kinds = tuple(self.planner.needs_views)
        self.cache = ObservationCache(node, kinds=self.kinds, json_topics=("observation", "world/state", "map/summary"))
        # a planner refusing the instruction is the user's error: one line in the log, no traceback
        self.server = RpcServer(node, "planner", {"reset": self.reset, "plan": self.plan, "info": self.info},
                                expected=(PlannerConfigError,))

    def info(self, params: dict, ctx: CallContext) -> dict:
        return {"planner": self.cfg.planner.name}

    def reset(self, params: dict, ctx: CallContext) -> dict:
        task = Task.model_validate(params["task"])
        models = [ModelInfo(m["name"], tuple(m["actions"]), m.get("description", "")) for m in params["models"]]
        self.mirror = self._initial.of(task)
        self.planner.reset(EpisodeContext(task=task, models=models, seed=int(params["seed"]), world=self.mirror))
        return {"planner": self.cfg.planner.name, "understood": self.planner.understood(), "report": self.planner.report()}

    def plan(self, params: dict, ctx: CallContext) -> dict:
        r, episode = int(params["round"]), int(params["episode"])
        meta = self.cache.wait_json("observation", episode, r, self.wait)
        obs = self.cache.observation(meta, self.wait) if self.kinds else None
        if self.mirror is not None:
            self.mirror.mirror.apply_dynamic(self.cache.wait_json("world/state", episode, r, self.wait)["dynamic"])
        scene_map = self.cache.wait_json("map/summary", episode, r, self.wait)["summary"] if meta.get("mapped") else None
        fb = params.get("feedback")
        request = PlannerRequest(r, params["system"], params["user"], params["instruction"], params["inventory"], params["history"],
                                 Feedback.model_validate(fb) if fb else None, obs, scene_map=scene_map)
        reply = self.planner.plan(request)
        # asked after every round, as the in-process loop asks after End: what it understood, and why it stopped
        return {"text": reply.text, "usage": reply.usage, "prompt": reply.prompt, "understood": self.planner.understood(),
                "report": self.planner.report()}

    def close(self) -> None:
        self.planner.close()


PARAMS = (Param("planner", "", "planner backend by name (empty: the config's)"),
          Param("image_timeout", 15.0, "seconds to wait for the round's camera images", positive))


NODE = NodeDef("planner", PlannerNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
