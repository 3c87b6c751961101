"""The world node: hosts the world, the simulated home or a robot's bridge (``ros2_robot``).

Publishes per round the four views (image, depth, segmentation), odometry, the round's observation
(/homiebot/observation, homiebot_msgs/RoundObservation) and a simulator's moving state
(/homiebot/world/state, SimState: for the mapper's mirror of the truth, privileged planners and the
executor's copy), or, where the world's belief is its own (``homiebot.runtime.belief_site``: a semantic
map, a robot bridge), that belief's snapshot (/homiebot/world/belief, Belief). Serves typed services
(``homiebot_msgs/srv``, homiebot/ros/clients/world_link.py) under /homiebot/world: ``reset``, ``release``,
``observe``, ``info``, ``goal``, ``room_of`` and ``route``. No skill runs here: the executor node runs
them (``homiebot.runtime.skill_site``) on a copy of the simulator, whose state this node takes over
through ``apply`` (homiebot/ros/nodes/sim_copy.py), or through its own bridge to a robot's driver.

In mapped perception (``perception: {mode: mapped}``) the semantic map is the mapper node's: this node
renders and hands each observation, with its images and camera rig, to the mapper's map services
(homiebot/ros/clients/remote_map.py), which detect, fuse and publish the round's belief, summary and occupancy
grid. The observation then says ``mapped`` (and carries the map's text in ``map_text`` when the config
puts it in prompts). The exploration phase a task asks for runs here, as the episode starts.

With ``prefetch`` (and a world whose view changes only through the robot's actions), the next
round's views are rendered as soon as the executor hands a subtask's state back (``apply``) or a reset finishes, while
the task manager records the round; ``observe`` then returns them if nothing changed since. A mapped
world is never rendered ahead (its ``static_between_actions`` is false): each of its observations
updates the map.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from homiebot_msgs.msg import PeopleSeen
from homiebot_msgs.srv import ApplyState, GoalSatisfied, Observe, ReleaseWorld, ResetWorld, RoomOf, Route, WorldInfo
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import UInt32

from homiebot.config import RunConfig
from homiebot.core.contracts import VIEW_NAMES
from homiebot.core.errors import take_snapshot
from homiebot.core.tasks import Task
from homiebot.core.world import World
from homiebot.core.world_capabilities import GoalJudge, MapDescribing, MappedWorld, PrivilegedWorld, RoomAware
from homiebot.ros.clients.map_link import WORLD_CALLS, map_callers
from homiebot.ros.clients.remote_map import RemoteKeeper, remote_keeper
from homiebot.ros.clients.world_link import SERVICES, service_name
from homiebot.ros.kit.common import RUN_CONFIG, CannotRun, NodeDef, Param, positive
from homiebot.ros.kit.peers import PeerWatch
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.safety import CANCELLED_TOPIC, SafetyLink
from homiebot.ros.kit.services import ErrorMapping, TypedServer
from homiebot.ros.kit.sim_thread import SimThread
from homiebot.ros.messages.common import (
    IMAGE_KINDS,
    PEOPLE_TOPIC,
    RELIABLE,
    ROUND_TOPICS,
    camera_info_topic,
    image_topic,
    to_camera_info,
    to_image,
    to_odometry,
)
from homiebot.ros.messages.observations import IMAGES, ROUND_DATA
from homiebot.ros.messages.round import belief_msg, round_observation_msg, sim_state_msg
from homiebot.ros.messages.transforms import TransformPublisher
from homiebot.ros.messages.wire import safe_callback
from homiebot.runtime import belief_site, build_world, scene_from_json, skill_site
from homiebot.safety.gate import protect
from homiebot.safety.state import SafetyState


class BadRequest(ValueError):
    """A request the world cannot serve as given (the caller's mistake: one line in the log)."""


class OutOfTurn(RuntimeError):
    """A reset while another caller's episode holds the world."""


SESSION_LEASE = 30.0  # seconds an episode session outlives the last call to the world


class WorldNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node = node
        self.cfg: RunConfig = params[RUN_CONFIG]
        require_driver(node, self.cfg, params.get("driver_wait", DRIVER_WAIT))
        self.world: World | None = None
        self._scene_json: str | None = None
        site = skill_site(self.cfg)
        self.belief_here = belief_site(self.cfg) == "world"  # else the mapper builds it from the state published here
        # counts resets, so that consumers never mix up rounds of two episodes; from a random start, so that a
        # restarted or reconfigured world's episodes are not taken for its predecessor's (caches are keyed by them)
        self.episode = random.SystemRandom().randrange(2**30)
        self._lock = threading.Lock()  # one simulator, one caller at a time
        self.session: tuple[str, float] | None = None  # (owner, last call): the episode that holds the world
        # the session's own lock: a call's renewal must not wait for the world's lock, which a render ahead holds
        self._session_lock = threading.Lock()
        self.prefetch = bool(params["prefetch"])
        self._version = 0  # bumped by everything that changes the world
        self._ahead: tuple[int, Any] | None = None  # (version, observation rendered ahead of time)
        self.mapped = False  # the world keeps a semantic map (mapped perception)
        self.image_pubs = {(v, k): node.create_publisher(Image, image_topic(v, k), IMAGES) for v in VIEW_NAMES for k in IMAGE_KINDS}
        self.info_pubs = {v: node.create_publisher(CameraInfo, camera_info_topic(v), IMAGES) for v in VIEW_NAMES}
        self.odom_pub = node.create_publisher(Odometry, "odom", 10)
        self.tf = TransformPublisher(node)
        self.people_pub = node.create_publisher(PeopleSeen, PEOPLE_TOPIC, ROUND_DATA)
        self.round_pubs = {t: node.create_publisher(ROUND_TOPICS[t], f"{t}", ROUND_DATA)
                           for t in ("observation", "world/state", *(("world/belief",) if self.belief_here else ()))}
        # mapped perception: the map is the mapper's (made now, so that discovery is done before the first episode)
        self.map_calls = map_callers(node, WORLD_CALLS) if self.cfg.perception.mode == "mapped" else None
        self.map_timeout = float(params.get("map_timeout", MAP_TIMEOUT))
        # a killed mapper fails the calls waiting on it at once (they held the next episode's reset for map_timeout)
        self.mapper_watch = PeerWatch(node, {"mapper": self.map_calls.values()}, self.map_timeout) if self.map_calls is not None else None
        self.map_keeper: RemoteKeeper | None = None  # the current world's map, in the mapper
        self.sim = SimThread(node)
        self.handlers: dict[str, Callable[[Any], Any]] = {
            "reset": self.reset, "release": self.release, "observe": self.observe, "info": self.info, "goal": self.goal,
            "room_of": self.room_of, "route": self.route,
            **({"apply": self.apply} if site == "copy" else {})}  # the state the executor's copy of the simulator hands back
        self.servers = [self._serve(name) for name in self.handlers]
        # the robot moves here too (a mapped task's exploration before the task): it hears the e-stop itself
        self.safety = SafetyState()
        self.safety_link = SafetyLink(node, self.safety, episode=lambda: self.episode, heartbeat=self.cfg.safety.estop_heartbeat)
        node.create_subscription(UInt32, CANCELLED_TOPIC, safe_callback(node, CANCELLED_TOPIC, self._on_cancelled), RELIABLE)

    def handle(self, name: str, request: Any) -> Any:
        """Serve one request of the named service, on the simulator's thread. A request that is answered keeps the
        episode session that holds the world (a reset or release only its owner's: ``reset``); a refused one changes
        nothing."""
        reply = self.sim.call(self.handlers[name], request)
        if name not in ("reset", "release"):
            self._renew()
        return reply

    def _serve(self, name: str) -> TypedServer:
        """A typed server of one world service: malformed requests and an unloaded world are INVALID_REQUEST."""
        srv = SERVICES[name]
        codes = srv.Response
        errors = [ErrorMapping(BadRequest, codes.INVALID_REQUEST)] if hasattr(codes, "INVALID_REQUEST") else []
        if hasattr(codes, "OUT_OF_TURN"):
            errors.append(ErrorMapping(OutOfTurn, codes.OUT_OF_TURN))

        return TypedServer(self.node, srv, service_name(name), lambda request: self.handle(name, request), errors, srv.Response.FAILED)

    def _renew(self) -> None:
        """An episode's call to the world (observe, info, ...: they carry no owner) keeps the live session that holds
        it; a session past its lease stays over."""
        with self._session_lock:
            now = time.monotonic()
            if self.session is not None and now - self.session[1] < SESSION_LEASE:
                self.session = (self.session[0], now)

    def _check_turn(self, owner: str) -> None:
        """OutOfTurn while another owner's session holds the world (nothing changes: the session stays its owner's,
        its lease not renewed)."""
        now = time.monotonic()
        with self._session_lock:
            held = self.session if self.session and now - self.session[1] < SESSION_LEASE else None
        if held is not None and held[0] != owner:
            raise OutOfTurn(f"refused: 'reset' is out of turn: the world node is serving an episode of {held[0]} "
                            "(try again when it has ended)")

    def _take_turn(self, owner: str) -> None:
        """An accepted reset opens (or renews) its owner's session; one without an owner ends any session past."""
        with self._session_lock:
            self.session = (owner, time.monotonic()) if owner else None

    def release(self, request: ReleaseWorld.Request) -> ReleaseWorld.Response:
        """End the owner's episode session: resets are in turn for anyone."""
        with self._session_lock:
            if self.session and self.session[0] == request.owner:
                self.session = None
        return ReleaseWorld.Response()

    def reset(self, request: ResetWorld.Request) -> ResetWorld.Response:
        """Start an episode in the given scene (rebuilt only when the scene changes)."""
        try:
            data = json.loads(request.scene) if request.scene else None
        except ValueError as err:
            raise BadRequest(f"the scene is not JSON: {err}") from None
        scene_key = json.dumps(data, sort_keys=True)
        with self._lock:
            self._check_turn(request.owner)
            if scene_key != self._scene_json or self.world is None:
                try:
                    scene = scene_from_json(data, self.cfg.world.name)
                except (ValueError, TypeError, AttributeError) as err:  # pydantic's ValidationError is a ValueError
                    raise BadRequest(f"the scene is not a scene description: {str(err).splitlines()[0]}") from None
                self._release()
                world = build_world(self.cfg, scene, remote_map=self._remote_map if self.map_calls is not None else None)
                protect(world, self.cfg.safety, self.safety)
                self.world = world
                self._scene_json = scene_key
            world = self.world
            if self.mapper_watch is not None:
                self.mapper_watch.begin()
            world.reset()
            self._take_turn(request.owner)  # only an accepted reset takes the world
            self.safety.new_episode()
            self.mapped = isinstance(world, MappedWorld) and world.map_summary() is not None
            self.episode += 1
            self._changed()
        self.sim.later(self._render_ahead)
        return ResetWorld.Response(episode=self.episode)

    def _remote_map(self, inner: World, floor_plan: Any, holding: Callable[[], bool]) -> RemoteKeeper:
        """The mapper's map of ``inner``; in simulation with its scene, whose names bind the map's ids."""
        assert self.map_calls is not None
        self.map_keeper = remote_keeper(self.map_calls, self.cfg, inner, floor_plan, holding, episode=lambda: self.episode,
                                        timeout=self.map_timeout, leads=True)
        return self.map_keeper

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
            raise BadRequest("no scene loaded: call reset first")
        return self.world

    def observe(self, request: Observe.Request) -> Observe.Response:
        round_index = int(request.round)
        with self._lock:
            world = self._require()
            ahead, self._ahead = self._ahead, None
            if ahead is not None and ahead[0] == self._version:
                obs = ahead[1].model_copy(update={"round": round_index})
            else:
                obs = world.observe(round_index)
            stamp = time.time_ns()
            self.odom_pub.publish(to_odometry(obs.pose, stamp, self.tf.frames.odom, self.tf.frames.base))
            self.tf.base(obs.pose, stamp)
            kinds = [k for k, a in (("image", 1), ("depth", obs.views["front"].depth), ("segmentation", obs.views["front"].segmentation))
                     if a is not None]
            at = {"episode": self.episode, "round_index": round_index, "stamp_ns": stamp}
            observation = round_observation_msg(obs, episode=self.episode, stamp_ns=stamp, kinds=kinds, path_length=world.path_length(),
                                                mapped=self.mapped, map_text=world.map_text() if self.mapped and isinstance(world, MapDescribing) and world.describe_in_prompt else None)
            if self.belief_here:
                self.round_pubs["world/belief"].publish(belief_msg(take_snapshot(world.belief), resolves=callable(getattr(world.belief, "resolve", None)), **at))
            state = world.ground_truth() if isinstance(world, PrivilegedWorld) else None
            if state is not None:  # a simulator's moving state, for privileged planners' mirrors
                self.round_pubs["world/state"].publish(sim_state_msg(state.dynamic(), **at))
            self.round_pubs["observation"].publish(observation)
            self.people_pub.publish(PeopleSeen(header=observation.header, episode=observation.episode, round=observation.round,
                                               people=observation.people))
        # the frames go out beside the reply: the caller plans while they travel (consumers match them by stamp)
        self.sim.later(lambda: self._publish_frames(obs, stamp))
        return Observe.Response(observation=observation)

    def _publish_frames(self, obs, stamp: int) -> None:
        robot = self.world.own_robot() if self.world is not None else None
        cameras = set(robot.capabilities.cameras) if robot is not None else set()
        poses: dict[str, Any] = {}
        for view in VIEW_NAMES:
            img = obs.views[view]
            frame = self.tf.frames.camera(view)
            for kind, array in (("image", img.rgb), ("depth", img.depth), ("segmentation", img.segmentation)):
                pub = self.image_pubs[(view, kind)]
                if array is not None and pub.get_subscription_count() > 0:  # big frames only go where they are read
                    pub.publish(to_image(array, kind, stamp, frame))
            if robot is not None and view in cameras:  # the view's geometry, at the size it was rendered
                h, w = img.rgb.shape[:2]
                info = robot.camera_info(view, size=(h, w))
                self.info_pubs[view].publish(to_camera_info(h, w, info.intrinsics, stamp, frame))
                poses[view] = info.base_from_camera
        self.tf.cameras(poses, stamp)

    def apply(self, request: ApplyState.Request) -> ApplyState.Response:
        """Take over the simulator's moving state from the executor node's copy, where a subtask's attempts ran."""
        with self._lock:
            world = self._require()
            if int(request.episode) != self.episode:
                raise BadRequest(f"episode {request.episode} is over (the world is in episode {self.episode})")
            state = world.ground_truth() if isinstance(world, PrivilegedWorld) else None
            if state is None:
                raise BadRequest(f"{type(world).__name__} has no simulator state to take over")
            try:
                dynamic = json.loads(request.dynamic)
            except ValueError as err:
                raise BadRequest(f"the state is not JSON: {err}") from None
            if not isinstance(dynamic, dict):
                raise BadRequest(f"the state is not a JSON object but {type(dynamic).__name__}")
            before = state.dynamic()
            try:
                state.apply_dynamic(dynamic)
            except (KeyError, TypeError, ValueError, AttributeError) as err:
                state.apply_dynamic(before)  # a state half taken over would be neither
                raise BadRequest(f"the state is not this simulator's: {type(err).__name__}: {err}") from None
            self._changed()
            if self.map_keeper is not None:
                self.map_keeper.refresh()  # the copy's skills kept the map in step: what is held now is the map's word
            reply = ApplyState.Response(path_length=float(world.path_length()), inventory=list(world.inventory()))
        self.sim.later(self._render_ahead)
        return reply

    def _on_cancelled(self, msg: UInt32) -> None:
        if int(msg.data) == self.episode:
            self.safety.cancel("task manager", record=False)

    def room_of(self, request: RoomOf.Request) -> RoomOf.Response:
        """The room a named thing is in (for keep-out rules)."""
        with self._lock:
            world = self._require()
            room = world.room_of(str(request.name)) if isinstance(world, RoomAware) else None
        return RoomOf.Response(known=room is not None, room=room or "")

    def route(self, request: Route.Request) -> Route.Response:
        """Whether the navigation reaches a target while keeping out of forbidden rooms."""
        with self._lock:
            world = self._require()
            reachable = world.route(str(request.target)) if isinstance(world, RoomAware) else None
        return Route.Response(known=reachable is not None, reachable=bool(reachable))

    def goal(self, request: GoalSatisfied.Request) -> GoalSatisfied.Response:
        try:
            task = Task.model_validate({"instruction": "-", "scene_seed": 0, "goal": json.loads(request.goal)})
        except ValueError as err:  # not JSON, or not goal conditions
            raise BadRequest(f"the goal is not goal conditions: {str(err).splitlines()[0]}") from None
        with self._lock:
            world = self._require()
            satisfied = world.goal_satisfied(task.goal or []) if isinstance(world, GoalJudge) else None
        return GoalSatisfied.Response(known=satisfied is not None, satisfied=bool(satisfied))

    def info(self, request: WorldInfo.Request) -> WorldInfo.Response:
        """Path length and inventory; the scene description too when asked (it is large)."""
        with self._lock:
            world = self._require()
            return WorldInfo.Response(episode=self.episode, path_length=float(world.path_length()), inventory=list(world.inventory()),
                                      scene_description=json.dumps(world.scene_description()) if request.scene else "",
                                      map_session=self.map_keeper.session if self.map_keeper is not None else "")

    def _release(self) -> None:
        """Close the world of the last scene."""
        if self.world is not None:
            self.world.close()
            self.world = None
            self.map_keeper = None

    def close(self) -> None:
        def release() -> None:
            with self._lock:
                self._release()
        self.sim.close(release)  # in the simulator's thread, after the work in hand


DRIVER_WAIT = 10.0  # s for discovery to show a running driver's topics and services
MAP_TIMEOUT = 60.0  # s a call to the mapper's map may take (a detection included)


def require_driver(node: Node, cfg: RunConfig, wait: float) -> None:
    """A robot reached through a driver that the graph does not start (no ``sim_driver`` section) must
    be running already: CannotRun naming what of it is missing, at start-up, rather than an episode
    failing later on a timeout."""
    from homiebot.ros.clients.ros2_robot import Ros2RobotWorld

    if cfg.world.name != Ros2RobotWorld.name or cfg.sim_driver is not None:
        return
    from homiebot.core.resources import robot_config
    from homiebot.robots.profile import ProfileError, load_profile
    from homiebot.ros.clients.robot import describe_missing_driver, missing_driver_interfaces

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
    Param("map_timeout", MAP_TIMEOUT, "seconds a call to the mapper's map may take (mapped perception; a detection included)", positive),
    Param("driver_wait", DRIVER_WAIT, "seconds to wait at start-up for a robot driver the graph does not start (ros2_robot world)",
          positive),
)


def _maps(params: dict[str, Any]) -> bool:
    """Mapped perception: the handlers wait for the mapper's replies."""
    return params[RUN_CONFIG].perception.mode == "mapped"


# the run configuration's sections this node reads: their settings are its parameters too
CONFIG = ("world", "perception", "safety", "sim_driver")
NODE = NodeDef("world", WorldNode, PARAMS, config=CONFIG, waiting_if=_maps)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
