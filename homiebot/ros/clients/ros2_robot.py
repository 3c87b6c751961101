"""The ``ros2_robot`` world plugin: a robot reached through its driver's ROS 2 interfaces.

A robot profile (``config/robots/<robot>.yaml``) names the driver's topics and services; the world
hosts a ``Ros2Robot`` bridge over them and gives the agent what it needs from a world:

* ``observe``: the planner's four views (front, left, back, right) from the cameras the profile's
  ``views`` names, upright, as RGB, at ``width`` x ``height``, with registered depth when the camera
  has it. With a head (the profile's ``head``: Fetch's single head camera), the views in ``head.views``
  come from turning it: the head is pointed at each view's point (a PointHead goal), the head camera
  read, and the head pointed back to the front. A view the robot has no camera for (Fetch's back: the
  pan reaches +-90 degrees) is a black image. The pose is the driver's odometry. No truth, no labels, no segmentation: what a robot sees.
* ``belief``: without a map the robot knows only what it holds (``RobotBelief``: no names, so the
  error detector answers F2 for every target); with ``perception: {mode: mapped}`` the runtime wraps
  this world in the perceiving world, whose semantic map is built from these cameras (the camera
  rig comes from the robot's ``camera_info`` and odometry) and whose belief names what was seen.
* ``attempt_check``: the robot's own signals plus the belief (``RobotSignalsCheck``); in simulation
  (``sim_truth``) the sim driver's truth (``TruthCheck``).
* ``floor_plan``: the named room rectangles given as the ``rooms`` parameter (the site's map), the
  semantic map's room prior; none by default.
* no scenes (``scenes = None``) and no ground truth: privileged skills and expert policies refuse
  at start-up with the reason.

In simulation (the robot served by ``homiebot_sim_driver``), ``sim_truth: true`` reads the driver's
simulator-only truth topic (``homiebot.robots.sim``): ``ground_truth()`` is then a ``SimTruth``
(expert sources ask the sim driver for commands through it: the ``sim_expert`` policy) and the
belief is the truth's snapshot, live (the oracle setting, as in the embedded home); with
``segmentation: true`` the views also carry the driver's segmentation cameras and the instance labels
(oracle perception, what the embedded home's ``segmentation: true`` gives). Never on a robot.

Construction waits for the driver (every stream the profile names, within ``connect_timeout``) and
runs the profile's start-up services; ``close`` runs its shut-down services.

Config::

    world: {name: ros2_robot, params: {profile: config/robots/spot.yaml, width: 256, height: 256}}
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from homiebot.core.attempt_checks import AttemptCheck
from homiebot.core.contracts import VIEW_NAMES, InstanceLabel, Observation, Pose2D, ViewImage
from homiebot.core.errors import EntityLike
from homiebot.core.robot import Robot, RobotUnavailable, Unsupported
from homiebot.core.world import World
from homiebot.robots.camera_rotation import to_upright
from homiebot.robots.profile import ProfileError, RobotProfile, load_profile
from homiebot.robots.sim import TRUTH_TOPIC, SimDriver, SimTruth, TruthBelief, TruthCheck, segmentation_topic


class RobotBelief:
    """What a robot without a map believes: nothing named, and whether its gripper holds something."""

    def __init__(self, robot: Robot) -> None:
        self.robot = robot

    def names(self) -> list[str]:
        return []

    def lookup(self, name: str) -> EntityLike | None:
        return None

    def held_object(self) -> str | None:
        return None  # the gripper may tell that it holds something, never what

    def distance_to(self, name: str) -> float:
        raise KeyError(f"'{name}' is not known without a map (perception: {{mode: mapped}})")

    def enclosing_container(self, obj: str) -> str | None:
        return None


def _rooms(rooms: Any) -> dict[str, list[float]] | None:
    """``{kitchen: [x0, y0, x1, y1], ...}`` checked; None when not given."""
    if rooms is None:
        return None
    if not isinstance(rooms, Mapping):
        raise ValueError("rooms must be a mapping: {room name: [x0, y0, x1, y1]} in the robot's map frame")
    out = {}
    for name, box in rooms.items():
        if not (isinstance(box, Sequence) and len(box) == 4 and all(isinstance(v, (int, float)) for v in box)):
            raise ValueError(f"room '{name}': give [x0, y0, x1, y1] in metres, not {box!r}")
        out[str(name)] = [float(v) for v in box]
    return out


def _with_workspace(profile: RobotProfile, box: Sequence[Sequence[float]]) -> RobotProfile:
    """The profile with another arm workspace box (checked)."""
    if not (len(box) == 2 and all(len(c) == 3 and all(isinstance(v, (int, float)) for v in c) for c in box)):
        raise ValueError(f"workspace: give [[x, y, z] min, [x, y, z] max] in metres, not {box!r}")
    lo, hi = (tuple(float(v) for v in c) for c in box)
    if any(a >= b for a, b in zip(lo, hi)):
        raise ValueError(f"workspace: each minimum must be below its maximum, not {list(lo)} and {list(hi)}")
    limits = profile.limits.model_copy(update={"workspace_min": lo, "workspace_max": hi})
    return profile.model_copy(update={"limits": limits})


class Ros2RobotWorld(World):
    """A robot behind its ROS 2 driver, configured by a robot profile (see the module doc).

    ``profile``: a profile name (``spot``, ``fetch``) or YAML file; ``width``/``height``: the planner
    views' size; ``depth``: read registered depth with the views; ``connect_timeout``: seconds to wait
    for the driver at start-up; ``stale_after``: odometry older than this means the driver is gone;
    ``call_timeout``: seconds per service call; ``rooms``: the site's named room rectangles;
    ``workspace``: ``[[x, y, z] min, [x, y, z] max]`` replaces the profile's arm workspace (another arm
    mount; in simulation, the embedded home's arm standing in for the robot's); ``segmentation``: with
    ``sim_truth``, the views carry the sim driver's segmentation and labels; ``lockstep``: with
    ``sim_truth`` and a sim driver started with ``lockstep:=true``, simulated time advances only
    through this world's robot (every wait for motion is a step), and views, truth and checks are
    read at the simulated instant: an episode repeats exactly from its seed.
    """

    name = "ros2_robot"
    scenes = None  # a real home has no scene file
    reached_through_driver = True  # the graph's executor node runs the skills with a bridge of its own

    def __init__(self, profile: str | RobotProfile = "spot", width: int = 256, height: int = 256, depth: bool = True,
                 connect_timeout: float = 30.0, stale_after: float = 1.0, call_timeout: float = 10.0,
                 rooms: Mapping[str, Sequence[float]] | None = None, sim_truth: bool = False,
                 workspace: Sequence[Sequence[float]] | None = None, segmentation: bool = False, lockstep: bool = False) -> None:
        if width <= 0 or height <= 0:
            raise ValueError(f"width and height must be positive, not {width}x{height}")
        try:
            self.profile = profile if isinstance(profile, RobotProfile) else load_profile(profile)
        except ProfileError as err:
            raise ValueError(str(err)) from None
        if workspace is not None:
            self.profile = _with_workspace(self.profile, workspace)
        if lockstep and not sim_truth:
            raise ValueError("lockstep steps the sim driver's simulated time: it needs sim_truth: true (a robot runs in real time)")
        if segmentation and not sim_truth:
            raise ValueError("segmentation comes from the sim driver's segmentation cameras: it needs sim_truth: true "
                             "(on a robot use perception: {mode: mapped} with a detector)")
        self.size = (int(height), int(width))
        self.depth = bool(depth)
        self.rooms = _rooms(rooms)
        from homiebot.ros.clients.robot import Ros2Robot  # rclpy only when this world is used

        self._sim: SimDriver | None = None  # the sim driver's calls (sim_truth)
        self._call_timeout, self._connect_timeout = call_timeout, connect_timeout
        self.lockstep = bool(lockstep)
        try:
            self._robot = Ros2Robot(self.profile, connect_timeout=connect_timeout, stale_after=stale_after,
                                    call_timeout=call_timeout, view_aliases=True, step=self._sim_step if lockstep else None,
                                    render=self._sim_render if lockstep else None)
        except Unsupported as err:
            raise ValueError(f"robot '{self.profile.robot}': {err}") from None
        if sim_truth:
            from homiebot.ros.clients.sim_client import SimDriverClient

            self._sim = SimDriverClient(self._robot.node)
        try:
            if lockstep:
                self._check_lockstep(connect_timeout)
            self._robot.start()
        except (RobotUnavailable, Unsupported) as err:
            self._robot.close()
            raise ValueError(f"robot '{self.profile.robot}' cannot start: {err}") from None
        if self._robot.head_client is not None:  # a head left turned would give the front view from the side
            try:
                self._robot.look("front")
            except (RobotUnavailable, Unsupported) as err:
                self._robot.close()
                raise ValueError(f"robot '{self.profile.robot}' cannot turn its head: {err}") from None
        self._belief: Any = RobotBelief(self._robot)
        self.truth: SimTruth | None = None
        self._segmentation: dict[str, Any] = {}  # view -> newest segmentation image of its camera
        self._segmentation_on = bool(sim_truth and segmentation)
        if sim_truth:
            self.truth = self._follow_truth(connect_timeout)
            self._belief = TruthBelief(self.truth)
            if segmentation:
                self._follow_segmentation()
        self._path = 0.0
        self._last: tuple[float, float] | None = None

    def _sim_step(self, seconds: float, after: dict[str, int], until: str | None,
                  cameras: list[str] | None) -> tuple[int, dict[str, int]]:
        """Lock-step: advance the simulation (see ``Ros2Robot``); its new time and command counts."""
        assert self._sim is not None
        return self._sim.step(seconds, after, until, self._call_timeout + seconds, cameras)

    def _sim_render(self, cameras: list[str]) -> int:
        """Lock-step: the sim driver renders ``cameras`` at the present instant."""
        assert self._sim is not None
        return self._sim.render(cameras, self._call_timeout)

    def _check_lockstep(self, timeout: float) -> None:
        assert self._sim is not None
        lockstep, _ = self._sim.mode(timeout)
        if not lockstep:
            raise RobotUnavailable("lockstep: true, but the sim driver runs in real time (give it lockstep:=true: "
                                   "sim_driver: {lockstep: true} in the config)")

    def _follow_truth(self, timeout: float) -> SimTruth:
        """Subscribe to the sim driver's truth topic and wait for its first message (in lock-step: ask for it)."""
        import time

        from homiebot_msgs.msg import GroundTruth

        from homiebot.ros.messages.common import RELIABLE
        from homiebot.ros.messages.truth import truth_of
        from homiebot.ros.messages.wire import safe_callback

        node = self._robot.node
        assert self._sim is not None
        truth = SimTruth(self._sim, lockstep=self.lockstep, timeout=self._call_timeout)
        if self.lockstep:
            truth.refresh(timeout)
            return truth

        def on_truth(msg: GroundTruth) -> None:
            truth.update(truth_of(msg))  # an unreadable one is dropped with a warning; the next (5 Hz) takes its place

        node.create_subscription(GroundTruth, TRUTH_TOPIC, safe_callback(node, TRUTH_TOPIC, on_truth), RELIABLE)
        deadline = time.monotonic() + timeout
        while not truth.fresh:
            if time.monotonic() > deadline:
                self._robot.close()
                raise ValueError(f"sim_truth: nothing arrived on {TRUTH_TOPIC} within {timeout:.0f} s; is homiebot_sim_driver "
                                 f"running (same ROS_DOMAIN_ID)? On a robot leave sim_truth out")
            time.sleep(0.05)
        return truth

    def _follow_segmentation(self) -> None:
        """Keep the newest image of each view camera's sim-only segmentation topic."""
        from sensor_msgs.msg import Image

        for view, camera in self.profile.views.items():
            def keep(msg: Image, view: str = view) -> None:
                self._segmentation[view] = msg

            self._robot.node.create_subscription(Image, segmentation_topic(camera), keep, 2)
        deadline = time.monotonic() + self._connect_timeout
        while missing := [segmentation_topic(c) for v, c in self.profile.views.items() if v not in self._segmentation]:
            if time.monotonic() > deadline:  # the first observation must not come without labels
                self._robot.close()
                raise ValueError(f"segmentation: nothing arrived on {', '.join(missing)} within {self._connect_timeout:.0f} s; "
                                 f"does the sim driver serve these cameras?")
            time.sleep(0.02)

    def _view_segmentation(self, view: str, not_before_ns: int = -1) -> np.ndarray | None:
        """A view's instance ids, upright and at the views' size; None before the first image. ``not_before_ns``:
        the stamp of the image it goes with (a head camera's, after a turn)."""
        from homiebot.ros.messages.common import ns_of  # rclpy only when this world is used

        msg = self._segmentation.get(view)
        deadline = time.monotonic() + self._call_timeout
        while msg is not None and ns_of(msg.header.stamp) < max(self._robot.instant, not_before_ns):  # not from before a restart, step or turn
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"no segmentation of the simulated instant for the {view} view")
            time.sleep(0.005)
            msg = self._segmentation.get(view)
        if msg is None:
            return None
        ids = np.frombuffer(bytes(msg.data), dtype=np.int32).reshape(msg.height, msg.width)
        # upright as the view's image, by the nearest pixel (ids are never blended); corners with no data: 0, background
        ids = to_upright(ids, self.profile.cameras[self.profile.views[view]].rotation_deg, order=0)
        rows = (np.arange(self.size[0]) * ids.shape[0] // self.size[0])[:, None]  # nearest: ids are not blended
        cols = (np.arange(self.size[1]) * ids.shape[1] // self.size[1])[None, :]
        return np.ascontiguousarray(ids[rows, cols])

    def _labels(self, views: Mapping[Any, ViewImage]) -> dict[int, InstanceLabel]:
        """Names and categories of the instances visible in the views' segmentation (the sim driver's labels)."""
        segs = [v.segmentation for v in views.values() if v.segmentation is not None]
        if not segs or self.truth is None:
            return {}
        table = self.truth.labels()
        visible = set(np.unique(np.concatenate([s.ravel() for s in segs])).tolist())
        return {i: InstanceLabel.model_validate(table[i]) for i in visible if i in table}

    def ground_truth(self) -> SimTruth | None:
        """The sim driver's truth (``sim_truth: true``); None on a robot."""
        return self.truth

    def own_robot(self) -> Robot:
        return self._robot

    def attempt_check(self) -> AttemptCheck:
        """The sim driver's truth in simulation (``sim_truth``); the robot's own signals on a robot."""
        return TruthCheck(self.truth) if self.truth is not None else super().attempt_check()

    @property
    def belief(self) -> Any:
        return self._belief

    def reset(self) -> None:
        """Stop the base and start counting the path afresh. A robot cannot be put back; in simulation
        (``sim_truth``) the sim driver restarts the home from its initial state."""
        if self.truth is None:
            self._robot.stop()
        else:  # the restart drops every command (a stop from here would race the executor's commands in lock-step)
            stamp = self.truth.driver.restart(self._call_timeout)
            self._wait_for_odometry_after_restart(stamp)
            self._robot.expect_instant(stamp)  # frames from before the restart are stale
            if self.lockstep:
                self.truth.refresh()
        pose = self._robot.odometry()
        self._path, self._last = 0.0, (pose.x, pose.y)

    def _track(self, x: float, y: float) -> None:
        if self._last is not None:
            self._path += math.dist(self._last, (x, y))
        self._last = (x, y)

    def observe(self, round_index: int) -> Observation:
        if self.lockstep and self.truth is not None:  # the views and the truth of the simulated instant
            self._robot.expect_instant(self.truth.driver.mode(self._call_timeout)[1])
            self.truth.refresh()
        views = {}
        depth_views = set(self._robot.capabilities.depth) if self.depth else set()
        head = self.profile.head if self._robot.head_client is not None else None
        turned = False
        for view in VIEW_NAMES:
            if head is not None and view in head.views:  # one camera on a head: turn it to this view
                self._robot.look(view)
                turned = True
                frame = self._robot.read_camera(head.camera, self.size, depth=head.camera in depth_views)
                # the head camera's segmentation (the front view's camera) of the same instant as this image
                seg = self._view_segmentation("front", int(frame.stamp * 1e9) - 1000) if self._segmentation_on else None
                views[view] = ViewImage(rgb=frame.rgb, depth=frame.depth if self.depth else None, segmentation=seg)
                continue
            if view not in self.profile.views:
                blank = np.zeros((*self.size, 3), dtype=np.uint8)
                nothing = np.zeros(self.size, dtype=np.int32) if self._segmentation_on else None  # every view carries the same kinds
                views[view] = ViewImage(rgb=blank, depth=np.zeros(self.size, dtype=np.float32) if self.depth else None,
                                        segmentation=nothing)
                continue
            frame = self._robot.read_camera(view, self.size, depth=view in depth_views)
            views[view] = ViewImage(rgb=frame.rgb, depth=frame.depth if self.depth else None, segmentation=self._view_segmentation(view))
        if turned:
            self._robot.look("front")  # the policies see the front again
        pose = self._robot.odometry()
        self._track(pose.x, pose.y)
        return Observation(round=round_index, views=views, pose=Pose2D(x=pose.x, y=pose.y, yaw=pose.yaw), inventory=self.inventory(),
                           labels=self._labels(views))

    def _wait_for_odometry_after_restart(self, stamp_ns: int) -> None:
        """Odometry from before a restart is stale: wait (bounded) for one stamped at or after the restart."""
        import time

        deadline = time.monotonic() + self._call_timeout
        while time.monotonic() < deadline and self._robot.odometry().stamp < stamp_ns / 1e9:
            time.sleep(0.02)

    def goal_satisfied(self, goal: list[Any]) -> bool | None:
        """In simulation the sim driver tells whether the goal holds; a robot cannot (None)."""
        if self.truth is None:
            return None
        conditions = [c.model_dump(mode="json") if hasattr(c, "model_dump") else c for c in goal]
        return self.truth.driver.goal(conditions, self._call_timeout)

    def floor_plan(self) -> dict[str, Any] | None:
        if self.rooms is None:
            return None
        return {name: {"name": name, "x0": b[0], "y0": b[1], "x1": b[2], "y1": b[3]} for name, b in self.rooms.items()}

    def path_length(self) -> float:
        """Metres between the odometry poses seen since reset (at each observation)."""
        return self._path

    def inventory(self) -> list[str]:
        try:
            if self.lockstep and self.truth is not None:
                self.truth.refresh()
            held = self.belief.held_object()
        except RobotUnavailable:  # the sim driver's truth is gone: nothing is known to be held
            return []
        return [held] if held else []

    def scene_description(self) -> dict[str, Any]:
        return {"robot": self.profile.robot, "namespace": self.profile.namespace}

    def close(self) -> None:
        if self._guarded is not None:
            self._guarded.close()
        self._robot.close()


__all__ = ["RobotBelief", "Ros2RobotWorld"]
