"""The world node: hosts the world, the simulated home or a robot's bridge (``ros2_robot``).

Publishes per round the four views (image, depth, segmentation), odometry, the round's metadata
(/homiebot/observation), the detector's belief snapshot (/homiebot/world/belief) and, for privileged
planners, the simulator's moving state (/homiebot/world/state). Serves ``reset``, ``observe``,
``skills``, ``skill_attempt``, ``goal``, ``info`` and ``resolve`` on /homiebot/world/request.
Skills run here, next to the simulator; a robot reached through its driver is commanded by the
executor node instead, which runs the skills with a bridge of its own (``skills`` and
``skill_attempt`` then refuse).

With a world that keeps a semantic map (``perception: {mode: mapped}``) it also publishes, per round,
the map on /homiebot/world/map (its summary and occupancy grid; the mapper passes them on as
/homiebot/map/summary and /homiebot/map/occupancy). The observation metadata then says ``mapped``
(and carries the map's text in ``map_text`` when the config puts it in prompts), the belief snapshot
says ``resolves``, and ``resolve`` grounds a phrase with the map's belief for the detector node.

With ``prefetch`` (and a world whose view changes only through the robot's actions), the next
round's views are rendered as soon as an execution (its last attempt) or a reset finishes, while
the task manager records the round; ``observe`` then returns them if nothing changed since. A mapped
world is never rendered ahead (its ``static_between_actions`` is false): each of its observations
updates the map.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Image
from std_msgs.msg import String

from homiebot.config import RunConfig
from homiebot.contracts import VIEW_NAMES, Subtask
from homiebot.errors import take_snapshot
from homiebot.executor import is_last_attempt, run_attempt, stopped
from homiebot.ros.common import CannotRun, NodeDef, Param, positive, run_config, run_node
from homiebot.ros.messages import IMAGE_KINDS, image_topic, to_image, to_odometry
from homiebot.ros.observations import IMAGES, ROUND_DATA
from homiebot.ros.rpc import RELIABLE, CallContext, RpcServer, ThenRun
from homiebot.ros.safety import CANCELLED_TOPIC, SafetyLink
from homiebot.ros.wire import read_json, safe_callback
from homiebot.runtime import SkillSet, build_skills, build_world, scene_from_json, skills_run_in_executor
from homiebot.safety.gate import protect
from homiebot.safety.state import SafetyState
from homiebot.skills.base import SkillContext
from homiebot.tasks import Task
from homiebot.worlds.base import World


class WorldNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node = node
        self.cfg: RunConfig = run_config(params["config"])
        require_driver(node, self.cfg, params.get("driver_wait", DRIVER_WAIT))
        self.world: World | None = None
        self.skills: SkillSet | None = None
        self._scene_json: str | None = None
        # a robot reached through its driver is commanded by the executor node, which runs the skills
        self.skills_here = not skills_run_in_executor(self.cfg)
        self.episode = 0  # counts resets, so that consumers never mix up rounds of two episodes
        self._lock = threading.Lock()  # one simulator, one caller at a time
        self.prefetch = bool(params["prefetch"])
        self._version = 0  # bumped by everything that changes the world
        self._ahead: tuple[int, Any] | None = None  # (version, observation rendered ahead of time)
        self.mapped = False  # the world keeps a semantic map (mapped perception)
        self.image_pubs = {(v, k): node.create_publisher(Image, image_topic(v, k), IMAGES) for v in VIEW_NAMES for k in IMAGE_KINDS}
        self.odom_pub = node.create_publisher(Odometry, "/homiebot/odom", 10)
        self.json_pubs = {t: node.create_publisher(String, f"/homiebot/{t}", ROUND_DATA) for t in ("observation", "world/belief", "world/state", "world/map")}
        self.server = RpcServer(node, "world", {"reset": self.reset, "observe": self.observe, "skills": self.list_skills,
                                                "skill_attempt": self.skill_attempt, "goal": self.goal, "info": self.info,
                                                "resolve": self.resolve, "room_of": self.room_of, "route": self.route})
        # skills run here, so the robot's half of the safety layer lives here: it hears the e-stop itself
        self.safety = SafetyState()
        self.safety_link = SafetyLink(node, self.safety, episode=lambda: self.episode, heartbeat=self.cfg.safety.estop_heartbeat)
        node.create_subscription(String, CANCELLED_TOPIC, safe_callback(node, CANCELLED_TOPIC, self._on_cancelled), RELIABLE)

    def _publish(self, topic: str, data: dict) -> None:
        self.json_pubs[topic].publish(String(data=json.dumps(data)))

    def reset(self, params: dict, ctx: CallContext) -> ThenRun:
        """Start an episode in the given scene (rebuilt only when the scene changes)."""
        scene_json = json.dumps(params["scene"], sort_keys=True)
        with self._lock:
            if scene_json != self._scene_json or self.world is None or (self.skills_here and self.skills is None):
                self._release()
                world = build_world(self.cfg, scene_from_json(params["scene"], self.cfg.world.name))
                protect(world, self.cfg.safety, self.safety)
                self.world = world
                self.skills = build_skills(self.cfg, world) if self.skills_here else None
                self._scene_json = scene_json
            world, skills = self.world, self.skills
            world.reset()
            self.safety.new_episode()
            self.mapped = world.map_summary() is not None
            self.episode += 1
            self._changed()
        return ThenRun({"episode": self.episode, "unavailable": skills.unavailable if skills else {}}, self._render_ahead)

    def _changed(self) -> None:
        self._version += 1
        self._ahead = None

    def _render_ahead(self) -> None:
        """Render the views of the current state now, for the next ``observe``."""
        if not (self.prefetch and self.world is not None and self.world.static_between_actions):
            return
        with self._lock:
            if self.world is not None and self._ahead is None:
                self._ahead = (self._version, self.world.observe(0))

    def _require(self) -> World:
        if self.world is None:
            raise RuntimeError("no scene loaded: call reset first")
        return self.world

    def _require_skills(self) -> SkillSet:
        if not self.skills_here:
            raise RuntimeError("the skills of a robot reached through its driver run in the executor node, not here")
        if self.skills is None:
            raise RuntimeError("no scene loaded: call reset first")
        return self.skills

    def observe(self, params: dict, ctx: CallContext) -> ThenRun:
        round_index = int(params["round"])
        with self._lock:
            world = self._require()
            ahead, self._ahead = self._ahead, None
            if ahead is not None and ahead[0] == self._version:
                obs = ahead[1].model_copy(update={"round": round_index})
            else:
                obs = world.observe(round_index)
            stamp = time.time_ns()
            self.odom_pub.publish(to_odometry(obs.pose, stamp))
            kinds = [k for k, a in (("image", 1), ("depth", obs.views["front"].depth), ("segmentation", obs.views["front"].segmentation))
                     if a is not None]
            meta = {"episode": self.episode, "round": round_index, "stamp": stamp, "kinds": kinds, "pose": obs.pose.model_dump(), "inventory": obs.inventory,
                    "labels": {str(k): v.model_dump() for k, v in obs.labels.items()}, "path_length": world.path_length(),
                    "mapped": self.mapped}
            if self.mapped and world.describe_in_prompt:
                meta["map_text"] = world.map_text()
            self._publish("world/belief", {"episode": self.episode, "round": round_index, "snapshot": take_snapshot(world.belief),
                                           "resolves": callable(getattr(world.belief, "resolve", None))})
            if self.mapped:
                self._publish("world/map", self._map_message(world, round_index))
            state = world.ground_truth()
            if state is not None:  # a simulator's moving state, for privileged planners' mirrors
                self._publish("world/state", {"episode": self.episode, "round": round_index, "dynamic": state.dynamic()})
            self._publish("observation", meta)
        # the frames go out after the reply: the caller plans while they travel (consumers match them by stamp)
        return ThenRun(meta, lambda: self._publish_frames(obs, stamp))

    def _map_message(self, world, round_index: int) -> dict:
        """The round's map: its summary and its occupancy grid (OccupancyGrid fields, data as base64 int8)."""
        message = {"episode": self.episode, "round": round_index, "summary": world.map_summary(), "occupancy": None}
        smap = getattr(world, "map", None)
        if smap is not None and hasattr(smap, "to_occupancy_msg_fields"):
            fields = smap.to_occupancy_msg_fields()
            data = np.asarray(fields.pop("data"), dtype=np.int8)
            message["occupancy"] = {**fields, "data_b64": base64.b64encode(data.tobytes()).decode("ascii")}
        return message

    def resolve(self, params: dict, ctx: CallContext) -> dict:
        """Ground a phrase with the world's belief: ``{"id": name or None, "message": why not}``.

        ``episode`` (when given) must be the current one: a belief of another episode would mislead.
        """
        with self._lock:
            world = self._require()
            if "episode" in params and int(params["episode"]) != self.episode:
                raise RuntimeError(f"episode {params['episode']} is over (the world is in episode {self.episode})")
            resolver = getattr(world.belief, "resolve", None)
            if not callable(resolver):
                raise RuntimeError(f"the world's belief ({type(world.belief).__name__}) does not resolve phrases")
            found, message = resolver(str(params["phrase"]))
        return {"id": found, "message": message}

    def _publish_frames(self, obs, stamp: int) -> None:
        for view in VIEW_NAMES:
            img = obs.views[view]
            for kind, array in (("image", img.rgb), ("depth", img.depth), ("segmentation", img.segmentation)):
                pub = self.image_pubs[(view, kind)]
                if array is not None and pub.get_subscription_count() > 0:  # big frames only go where they are read
                    pub.publish(to_image(array, kind, stamp, f"homiebot/{view}_camera"))

    def list_skills(self, params: dict, ctx: CallContext) -> dict:
        return self._require_skills().listing()

    def skill_attempt(self, params: dict, ctx: CallContext) -> ThenRun | dict[str, Any]:
        """One attempt of a skill that acts in this simulator (privileged skills)."""
        with self._lock:
            world = self._require()
            skill = self._require_skills().skills[params["model"]]
            c = params["context"]
            self._changed()
            subtask = Subtask.model_validate(params["subtask"])
            acted = world.skill_subtask(subtask)
            context = SkillContext(c["episode_seed"], c["round"], c["attempt"], c["max_attempts"])
            self.safety.round = context.round
            why = self.safety.interruption()  # e-stop or cancel: no attempt starts (privileged skills too)
            result = stopped(why, context.attempt) if why else run_attempt(skill, subtask, world, context, acted)
            self._changed()
            reply = {"success": result.success, "message": result.message, "dropped": result.dropped,
                     "reason": None if result.success else result.failure.value,
                     "path_length": result.path_length, "inventory": world.inventory(), "world_path_length": world.path_length(),
                     "acted": acted.model_dump(mode="json")}
        # a retry follows a failed attempt that is not the last: rendering now would delay it for nothing
        return ThenRun(reply, self._render_ahead) if is_last_attempt(result, context) else reply

    def _on_cancelled(self, msg: String) -> None:
        data = read_json(msg.data)
        if isinstance(data, dict) and data.get("episode") == self.episode:
            self.safety.cancel("task manager", record=False)

    def room_of(self, params: dict, ctx: CallContext) -> str | None:
        """The room a named thing is in (for keep-out rules); None when unknown."""
        with self._lock:
            return self._require().room_of(str(params["name"]))

    def route(self, params: dict, ctx: CallContext) -> bool | None:
        """Whether the navigation reaches a target while keeping out of forbidden rooms; None when unknown."""
        with self._lock:
            return self._require().route(str(params["target"]))

    def goal(self, params: dict, ctx: CallContext) -> bool | None:
        with self._lock:
            world = self._require()
            task = Task.model_validate({"instruction": "-", "scene_seed": 0, "goal": params["goal"]})
            return world.goal_satisfied(task.goal or [])

    def info(self, params: dict, ctx: CallContext) -> dict:
        """Path length and inventory; the scene description too when ``{"scene": true}`` (it is large)."""
        with self._lock:
            world = self._require()
            info = {"path_length": world.path_length(), "inventory": world.inventory()}
            if params.get("scene"):
                info["scene"] = world.scene_description()
            return info

    def _release(self) -> None:
        """Close the skills (model weights, policy-server clients) and the world of the last scene."""
        if self.skills is not None:
            for skill in self.skills.skills.values():
                skill.close()
            self.skills = None
        if self.world is not None:
            self.world.close()
            self.world = None

    def close(self) -> None:
        self._release()


DRIVER_WAIT = 10.0  # s for discovery to show a running driver's topics and services


def require_driver(node: Node, cfg: RunConfig, wait: float) -> None:
    """A robot reached through a driver that the graph does not start (no ``sim_driver`` section) must
    be running already: CannotRun naming what of it is missing, at start-up, rather than an episode
    failing later on a timeout."""
    from homiebot.worlds.ros2_robot import Ros2RobotWorld

    if cfg.world.name != Ros2RobotWorld.name or cfg.sim_driver is not None:
        return
    from homiebot.robots.profile import ProfileError, load_profile
    from homiebot.ros.graph import robot_config
    from homiebot.ros.robot import describe_missing_driver, missing_driver_interfaces

    try:
        profile = load_profile(str(cfg.world.params.get("profile", "spot")))
    except ProfileError as err:
        raise ValueError(str(err)) from None
    missing = missing_driver_interfaces(node, profile, wait)
    if missing:
        try:
            simulated: str | None = f"config/robots/{Path(robot_config(profile.robot, sim_driver=True)).name}"
        except ValueError:
            simulated = None
        raise CannotRun(describe_missing_driver(profile, missing, os.environ.get("ROS_DOMAIN_ID", "0"), simulated))


PARAMS: tuple[Param, ...] = (
    Param("prefetch", True, "render the next views right after an action (simulated worlds only)"),
    Param("driver_wait", DRIVER_WAIT, "seconds to wait at start-up for a robot driver the graph does not start (ros2_robot world)",
          positive),
)


NODE = NodeDef("world", WorldNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
