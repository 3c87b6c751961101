"""``Ros2Robot``: the Robot interface over a robot driver's ROS 2 topics and services, as a profile names them.

Streams (odometry, joint states, camera images and camera_info, registered depth) are subscribed and
the newest sample of each is kept; commands are published (``cmd_vel`` re-sent at 20 Hz while a
velocity is held, so the driver's own timeout never fires mid-command and does fire when this
process dies) and Trigger services are called with a timeout. Nothing here knows which robot it
drives: ``config/robots/spot.yaml`` and ``fetch.yaml`` say that; the sim driver serves the embedded
home under the same names.

* homiebot's e-stop also runs the profile's ``estop`` services (Spot: ``stop``); its release runs
  ``estop_release`` (Spot: none) before motion resumes. A driver's own ``estop/*`` services are the
  operator's and are never called (the profile refuses procedures that would).
* ``start()`` waits for every stream the profile names (a name nobody publishes fails within
  ``connect_timeout``, naming it) and runs the profile's start-up services (Spot: claim, power_on,
  stand); ``close()`` runs the shut-down services. A driver that serves only once an operator's E-Stop
  is registered (``estop_registration``: spot_ros2 advertises its services but answers none before) is
  waited for up to the profile's ``estop_registration.wait``, then start-up fails saying so in one line.
* A driver that stops publishing odometry for ``stale_after`` seconds is gone: every command then
  raises ``RobotUnavailable`` (a skill attempt fails with the reason ``unavailable``). A driver process
  that comes back (a new odometry publisher) starts unpowered: the start-up services run again before
  the next command, or the command raises ``RobotUnavailable`` saying why it could not be brought up.
* Camera images are turned upright by the profile's ``rotation_deg`` (any angle, about the image
  centre: ``homiebot.robots.camera_rotation``) into the published frame turned by the nearest quarter
  turn (Spot's front cameras: 480x640 -> 640x480), whose corners no sensor pixel reaches are 0 (depth:
  unknown; depth and segmentation are sampled by the nearest pixel, never blended); then converted to RGB
  (a mono8 body camera is repeated over three channels) and resized to what the caller asks for. The
  driver's camera_info (of the published image) is turned with them: the principal point turns, the
  focal length stays (square pixels), and both are scaled with the resize. A body camera's pose is
  static in the profile (that of the upright view); a camera on a chain (Spot's hand camera on the arm,
  Fetch's head camera on the torso lift, pan and tilt) is placed by the forward kinematics of
  the newest ``joint_states`` (with the profile's ``joint_prefix``) over its table, and its
  ``CameraInfo.pose_stamp`` is those joint states' stamp (for a frame read, the joint states nearest
  the image's stamp); joint states lacking one of its joints
  raise ``RobotUnavailable`` naming it. A camera with neither reports an identity pose.
* A head (``head.point``: control_msgs/PointHead, Fetch): ``look(view)`` turns it to the profile's point
  for a view (or back to ``front``) and waits for the result, for joint states and an image taken after it.
* An arm taking end-effector goals (``arm.pose``: geometry_msgs/PoseStamped in the base frame, Spot):
  closed on the measured hand: each delta starts from where the forward kinematics of the arm's
  joint_states (the profile's ``kinematics`` table) put the hand and the yaw of its approach axis, and a
  hand that is still more than ``ARM_TOLERANCE`` from its goal, or turned more than ``ARM_YAW_TOLERANCE``
  from the goal's yaw, when the command's time is up is said in the report's message. Without
  the arm's joints in joint_states the deltas are integrated from the profile's ``arm_ready`` pose. Before
  the first arm motion after start-up or a stow it calls ``arm_unstow``, which puts the hand there. The gripper is its open /
  close services; whether it holds something is the driver's gripper state (``gripper_state``: Spot's
  ``manipulation_state``, bosdyn_api_msgs/msg/ManipulatorState ``is_gripper_holding_item`` and
  ``gripper_open_percentage``), read from a message that arrived after the last gripper command; without
  one in the profile it is unknown (None).
* An arm taking joint trajectories (``arm.trajectory``: control_msgs/FollowJointTrajectory, Fetch):
  the hand is the forward kinematics of the measured ``joint_states`` over the profile's kinematic
  table; each end-effector delta is solved (IK seeded with the measured joints) into a one-point
  trajectory for the table's joints, sent, and its result awaited. ``stow_arm`` brings the hand to
  ``arm_ready``. The gripper is a GripperCommand action (position = the profile's ``gripper_max_gap``
  times the open fraction); a result ``stalled`` short of closed is the robot saying it holds something.
  Joints the table holds (Fetch's torso lift) are read from the same joint_states when they carry them.
* A torso (``torso``: its own FollowJointTrajectory action, Fetch's ``torso_controller/follow_joint_trajectory``):
  bringing the robot up puts it at the profile's ``height`` (``set_torso``), once the start-up services ran
  and only when joint_states say it is elsewhere; the arm's table and the head camera's chain read it from
  joint_states.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from PIL import Image as PILImage
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo as CameraInfoMsg
from sensor_msgs.msg import Image, JointState
from std_srvs.srv import Trigger

from homiebot.core.robot import (
    ArmState,
    BasePose,
    CameraFrame,
    CameraInfo,
    Capabilities,
    CommandCounters,
    GripperState,
    MotionReport,
    Robot,
    RobotLimits,
    RobotUnavailable,
    Unsupported,
)
from homiebot.robots.built import built_module
from homiebot.robots.camera_rotation import to_upright, upright_intrinsics, upright_shape
from homiebot.robots.kinematics import Unreachable
from homiebot.robots.manipulator_state import gripper_reading, manipulator_state_type
from homiebot.robots.profile import CameraSpec, RobotProfile
from homiebot.ros.clients.driver_check import (
    describe_missing_driver,
    describe_no_estop,
    driver_answers,
    driver_interfaces,
    missing_driver_interfaces,
)
from homiebot.ros.kit.common import init, spin_in_background
from homiebot.ros.messages.common import ns_of

CLOCKS_AGREE_NS = 1_000_000_000  # a driver's stamps within 1 s of this machine's clock are taken to be on it

RESEND = 0.05  # s between two cmd_vel messages while a velocity is held
DRIVER_CHECK = 1.0  # s between two looks at which processes publish odometry (a restarted driver is brought up again)


class Ros2Robot(Robot):
    """A robot reached through its driver's ROS 2 interfaces (see the module doc)."""

    def __init__(self, profile: RobotProfile, node: Node | None = None, connect_timeout: float = 30.0,
                 stale_after: float = 1.0, call_timeout: float = 10.0, view_aliases: bool = False,
                 step: Callable[[float, dict[str, int], str | None], tuple[int, dict[str, int]]] | None = None) -> None:
        """``view_aliases``: also answer to the planner's view names (front, left, back, right) for the
        cameras the profile's ``views`` name (what mapped perception asks for). ``step``: lock-step
        simulation (the sim driver's ``step``: seconds, the driver's command counts to wait for and an
        action goal's id to run until it ended, or None -> the new simulated time in ns and the driver's
        counts); every wait for motion then advances simulated time instead of sleeping, after the
        commands sent before it arrived, and a trajectory or head goal's result is awaited after a step
        that ran until the driver ended it."""
        self.profile = profile
        self.aliases = dict(profile.views) if view_aliases else {}
        self.name = profile.robot
        self.connect_timeout, self.stale_after, self.call_timeout = connect_timeout, stale_after, call_timeout
        self.counters = CommandCounters()
        self._executor: SingleThreadedExecutor | None = None  # spinning a node of our own
        if node is None:
            init(None)
            # use_global_arguments=False: a node process's `-r __node:=...` names its own node, not this one
            node = Node(f"homiebot_bridge_{profile.robot}_{int(time.time() * 1000) % 100000}", use_global_arguments=False)
            self._executor, _ = spin_in_background(node)
        self.node = node
        self._lock = threading.Lock()
        self._odom: tuple[BasePose, float] | None = None  # (pose, monotonic time received)
        self._odom_ns = -1  # its stamp (ns)
        self._joints: JointState | None = None
        self._joint_history: deque[JointState] = deque(maxlen=100)  # about 2 s at 50 Hz: an image's own joints
        self._images: dict[str, Image] = {}
        self._depths: dict[str, Image] = {}
        self._infos: dict[str, CameraInfoMsg] = {}
        self._ee = np.array(self.profile.arm_ready, dtype=float)  # the integrated end-effector estimate (base frame)
        self._ee_yaw = 0.0  # and its yaw about the base's z axis
        self._arm_ready = False  # stowed until arm_unstow puts the hand at the ready pose
        self._gripper_open = 1.0
        self._started = False  # start() got the streams: closing runs the shut-down procedure
        self._unanswered = False  # the driver answered none of its services (no E-Stop): its shut-down would only time out
        self._gripper_sent: tuple[float, float] | None = None  # (goal, clock) of the last gripper command that was carried out
        self._step = step
        self._sim_ns = -1  # lock-step: the simulated time of the last step (images older than it are stale)
        self._driver_counts: dict[str, int] = {}  # lock-step: the driver's command counts after the last step
        self._sent = {"cmd_vel": 0, "arm_goals": 0}  # and what this bridge sent since
        self._holding: bool | None = None  # what the gripper's action result said (None: it cannot tell)
        self._joint_count = 0  # joint_states messages received (to wait for one after a motion)
        self._gripper_reading: tuple[float, bool] | None = None  # the driver's gripper state: (open fraction, holding)
        self._gripper_count = 0  # gripper state messages received
        self._gripper_after = -1  # the count when the last gripper command returned (a reading must be newer)
        self._driver: set[bytes] = set()  # the odometry publishers start() brought up (a newcomer is a restarted driver)
        self._driver_checked = 0.0
        p = profile
        self.kinematics = p.kinematics.build() if p.kinematics is not None and "trajectory" in p.arm else None
        # an arm taking pose goals (Spot) is measured through the same table: the hand from joint_states
        self.hand_chain = p.kinematics.build() if p.kinematics is not None and self.kinematics is None and "pose" in p.arm else None
        self.mounts = {cam: m for cam in p.cameras if (m := p.camera_mount(cam)) is not None}  # cameras moved by joints
        self._image_ns: dict[str, int] = {}  # the newest image's stamp per camera (a turned head waits for a newer one)
        self.trajectory_client = self.gripper_client = self.head_client = self.torso_client = None
        if "trajectory" in p.arm or "command" in p.gripper or self._has_head or self._has_torso:
            from rclpy.action import ActionClient

            actions = _control_msgs(p.robot)
            if "trajectory" in p.arm:
                self.trajectory_client = ActionClient(node, actions.FollowJointTrajectory, p.topic(p.arm["trajectory"].name))
            if "command" in p.gripper:
                self.gripper_client = ActionClient(node, actions.GripperCommand, p.topic(p.gripper["command"].name))
            if p.head is not None and self._has_head:
                self.head_client = ActionClient(node, actions.PointHead, p.topic(p.head.point.name))
            if p.torso is not None and self._has_torso:
                self.torso_client = ActionClient(node, actions.FollowJointTrajectory, p.topic(p.torso.trajectory.name))
        self.cmd_pub = node.create_publisher(Twist, p.topic(p.cmd_vel.name), 10)
        self.arm_pub = node.create_publisher(PoseStamped, p.topic(p.arm["pose"].name), 10) if "pose" in p.arm else None
        node.create_subscription(Odometry, p.topic(p.odometry.name), self._on_odom, 10)
        if p.joint_states is not None:
            node.create_subscription(JointState, p.topic(p.joint_states.name), self._on_joints, 10)
        if p.gripper_state is not None and "gripper" not in p.unverified:
            node.create_subscription(manipulator_state_type(p.robot), p.topic(p.gripper_state.name), self._on_gripper_state, 10)
        for cam, spec in p.cameras.items():
            node.create_subscription(Image, p.topic(spec.image), self._keeper(self._images, cam), 2)
            if spec.info:
                node.create_subscription(CameraInfoMsg, p.topic(spec.info), self._keeper(self._infos, cam), 2)
            if spec.depth:
                node.create_subscription(Image, p.topic(spec.depth), self._keeper(self._depths, cam), 2)
        triggers = {role: i for role, i in {**p.services, **{f"gripper_{k}": v for k, v in p.gripper.items()}}.items()
                    if i.type == "std_srvs/srv/Trigger"}
        self.services = {role: node.create_client(Trigger, p.topic(i.name)) for role, i in triggers.items()}
        self.call_timeouts = {role: i.timeout or call_timeout for role, i in triggers.items()}

    # ---- streams -----------------------------------------------------------------------------------
    def _on_odom(self, msg: Odometry) -> None:
        q = msg.pose.pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        pose = BasePose(float(msg.pose.pose.position.x), float(msg.pose.pose.position.y), yaw, stamp)
        with self._lock:
            self._odom = (pose, time.monotonic())
            self._odom_ns = ns_of(msg.header.stamp)

    def _on_joints(self, msg: JointState) -> None:
        with self._lock:
            self._joints = msg
            self._joint_history.append(msg)
            self._joint_count += 1

    def _on_gripper_state(self, msg: Any) -> None:
        reading = gripper_reading(msg)
        with self._lock:
            self._gripper_reading = reading
            self._gripper_count += 1

    @property
    def _reads_gripper_state(self) -> bool:
        p = self.profile
        return p.gripper_state is not None and "gripper" not in p.unverified

    def _keeper(self, store: dict[str, Any], camera: str) -> Callable[[Any], None]:
        """A callback that keeps the newest message of a camera's stream in ``store``."""

        def keep(msg: Any) -> None:
            with self._lock:
                store[camera] = msg
                if store is self._images:
                    self._image_ns[camera] = ns_of(msg.header.stamp)

        return keep

    def start(self) -> None:
        """Wait for the driver's streams, then run the profile's start-up services."""
        p = self.profile
        images = {p.topic(spec.image): cam for cam, spec in p.cameras.items()}
        deadline = time.monotonic() + self.connect_timeout
        while True:
            missing = [p.topic(p.odometry.name)] if self._odom is None else []
            if self._reads_gripper_state and self._gripper_count == 0:
                missing.append(p.topic(p.gripper_state.name))  # type: ignore[union-attr]
            missing += [topic for topic, cam in images.items() if cam not in self._images]
            if not missing:
                break
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"{p.robot}: nothing arrived on {', '.join(missing)} within {self.connect_timeout:.0f} s; "
                                       f"is the driver running (same ROS_DOMAIN_ID), and are these the names it publishes?")
            time.sleep(0.05)
        if self.cmd_pub.get_subscription_count() == 0:
            raise RobotUnavailable(f"{p.robot}: nobody subscribes to {p.topic(p.cmd_vel.name)}")
        caps = self.capabilities
        for client, needed in ((self.trajectory_client, caps.arm), (self.gripper_client, caps.gripper)):
            if client is not None and needed and not client.wait_for_server(timeout_sec=max(deadline - time.monotonic(), 1.0)):
                raise RobotUnavailable(f"{p.robot}: no action server {client._action_name} within {self.connect_timeout:.0f} s")
        for client in (self.head_client, self.torso_client):
            if client is not None and not client.wait_for_server(timeout_sec=max(deadline - time.monotonic(), 1.0)):
                raise RobotUnavailable(f"{p.robot}: no action server {client._action_name} within {self.connect_timeout:.0f} s")
        while self.torso_client is not None:  # joint_states carrying the torso (brought to its height below)
            try:
                self._torso_height()
                break
            except RobotUnavailable:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
        for cam, mount in self.mounts.items():  # cameras placed by joints: wait for joint states carrying them
            while True:
                try:
                    self._joint_values(mount.names, f"camera '{cam}'")
                    break
                except RobotUnavailable:
                    if time.monotonic() > deadline:
                        raise
                time.sleep(0.05)
        if self.kinematics is not None and caps.arm:
            while self._joints_of_arm() is None:
                if time.monotonic() > deadline:
                    raise RobotUnavailable(f"{p.robot}: no joint_states on {p.topic(p.joint_states.name) if p.joint_states else '?'} "
                                           f"with the arm's joints {self.kinematics.names} within {self.connect_timeout:.0f} s")
                time.sleep(0.05)
        self._started = True  # from here on closing runs the shut-down procedure (a half-done start-up is undone too)
        # the graph lists a publisher a moment after its first messages can arrive: an empty set here would make
        # the first command take the driver for a restarted one
        while not (publishers := self._odometry_publishers()) and time.monotonic() < deadline:
            time.sleep(0.05)
        self._driver, self._driver_checked = publishers, time.monotonic()
        self._bring_up()

    def _bring_up(self) -> None:
        """The profile's start-up services (Spot: claim, power on, stand), in order, once the driver answers (a
        driver waiting for an operator's E-Stop is waited for up to the profile's ``estop_registration.wait``)."""
        registration = self.profile.estop_registration
        if registration is not None and not driver_answers(self.profile, registration.wait):
            self._unanswered = True  # nothing was claimed or powered: closing has nothing to undo
            raise RobotUnavailable(describe_no_estop(self.profile))
        self._unanswered = False
        for role in self.profile.startup:
            self.call(role)
        if self._step is not None:  # lock-step: the driver's counts the next step waits beyond
            self._sim_ns, self._driver_counts = self._step(0.0, {}, None)
        if self.torso_client is not None and self.profile.torso is not None:
            self.set_torso(self.profile.torso.height)

    def _odometry_publishers(self) -> set[bytes]:
        topic = self.profile.topic(self.profile.odometry.name)
        return {bytes(info.endpoint_gid) for info in self.node.get_publishers_info_by_topic(topic)}

    def _check_driver(self) -> None:
        """Bring a driver up again when a new process publishes its odometry: it was restarted, and a
        restarted driver is unpowered and unclaimed (its commands would be ignored)."""
        now = time.monotonic()
        if not self._started or now - self._driver_checked < DRIVER_CHECK:
            return
        self._driver_checked = now
        publishers = self._odometry_publishers()
        if not publishers - self._driver:
            return
        self._driver = publishers
        self.node.get_logger().warning(f"{self.profile.robot}: its driver restarted; bringing it up again "
                                       f"({', '.join(self.profile.startup) or 'no start-up services'})")
        try:
            self._bring_up()
        except RobotUnavailable as err:
            self._driver = set()  # try again at the next command
            raise RobotUnavailable(f"{self.profile.robot}: its driver restarted and could not be brought up again: {err}") from None

    def call(self, role: str) -> str:
        """Call a Trigger service of the profile by role; RobotUnavailable when it fails or does not answer."""
        client = self.services.get(role)
        if client is None:
            raise Unsupported(f"{self.profile.robot}'s profile has no service '{role}'")
        name, timeout = client.srv_name, self.call_timeouts[role]
        if not client.wait_for_service(timeout_sec=self.call_timeout):
            raise RobotUnavailable(f"{self.profile.robot}: the service {name} is not available")
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"{self.profile.robot}: {name} did not answer within {timeout:.0f} s")
            time.sleep(0.01)
        result = future.result()
        if not result.success:
            raise RobotUnavailable(f"{self.profile.robot}: {name} refused: {result.message}")
        self.counters.add(f"service:{role}")
        return str(result.message)

    # ---- description and sensing ------------------------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        p = self.profile
        depth = tuple(c for c, s in p.cameras.items() if s.depth)
        cameras = tuple(p.cameras) + tuple(a for a in self.aliases if a not in p.cameras)
        depth += tuple(a for a, c in self.aliases.items() if c in depth and a not in depth)
        return Capabilities(cameras=cameras, base=True, arm=bool(p.arm) and "arm" not in p.unverified,
                            gripper=bool(p.gripper) and "gripper" not in p.unverified, head=False,
                            depth=depth, policy_camera=p.policy_camera)

    @property
    def limits(self) -> RobotLimits:
        lim = self.profile.limits
        return RobotLimits(lim.max_linear, lim.max_angular, lim.max_ee_speed, 1.0, lim.workspace_min, lim.workspace_max)

    def _spec(self, camera: str) -> CameraSpec:
        camera = self.aliases.get(camera, camera)
        if camera not in self.profile.cameras:
            raise ValueError(f"unknown camera '{camera}'; {self.profile.robot} has {sorted(self.profile.cameras)}")
        return self.profile.cameras[camera]

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        return self._camera_info(camera, size)

    def _camera_info(self, camera: str, size: tuple[int, int] | None = None, at_ns: int | None = None) -> CameraInfo:
        """``camera_info``; a camera on a chain placed by the joint states nearest ``at_ns`` (an image's
        stamp), else by the newest."""
        spec = self._spec(camera)
        camera = self.aliases.get(camera, camera)
        with self._lock:
            msg = self._infos.get(camera)
        if msg is not None and msg.k[0] > 0 and msg.height > 0 and msg.width > 0:  # the driver's, of the image as published
            raw = (int(msg.height), int(msg.width))
            k = (msg.k[0], msg.k[4], msg.k[2], msg.k[5])
        else:  # no camera_info: a pinhole from the profile's field of view
            raw = (spec.height, spec.width)
            f = 0.5 * spec.width / math.tan(math.radians(spec.hfov_deg) / 2)
            k = (f, f, (spec.width - 1) / 2, (spec.height - 1) / 2)
        fx, fy, cx, cy = upright_intrinsics(*k, raw, spec.rotation_deg)  # turned upright like the image
        h, w = upright_shape(raw, spec.rotation_deg)
        if size is not None:
            sy, sx = size[0] / h, size[1] / w
            fx, fy, cx, cy, h, w = fx * sx, fy * sy, cx * sx, cy * sy, size[0], size[1]
        stamp = None
        if camera in self.mounts:  # moved by joints: where the newest joint states put it
            mount = self.mounts[camera]
            q, stamp = self._joint_values(mount.names, f"camera '{camera}'", at_ns)
            pose = mount.pose(q)
        else:
            pose = np.array(spec.base_from_camera, dtype=float) if spec.base_from_camera is not None else np.eye(4)
        return CameraInfo(camera, int(h), int(w), (fx, fy, cx, cy), pose, "rgb8", spec.depth is not None, stamp)

    def _joint_values(self, names: list[str], what: str, at_ns: int | None = None) -> tuple[np.ndarray, float]:
        """The named joints (table names, without the profile's prefix) from the newest joint_states (or
        those stamped nearest ``at_ns``) and their stamp; RobotUnavailable naming the first joint they
        lack (``what`` needs them)."""
        p = self.profile
        with self._lock:
            msg = self._joints
            if at_ns is not None and self._joint_history:
                msg = min(self._joint_history, key=lambda m: abs(ns_of(m.header.stamp) - at_ns))
        topic = p.topic(p.joint_states.name) if p.joint_states is not None else "joint_states"
        if msg is None:
            raise RobotUnavailable(f"{p.robot}: {what} is placed by joints, but nothing arrived on {topic} yet")
        index = {n: i for i, n in enumerate(msg.name)}
        values = []
        for name in names:
            i = index.get(p.joint_name(name))
            if i is None or i >= len(msg.position):
                raise RobotUnavailable(f"{p.robot}: {what} needs the joint '{p.joint_name(name)}', which {topic} lacks "
                                       f"(it has {', '.join(msg.name) or 'none'}); check joint_prefix and the table's names")
            values.append(float(msg.position[i]))
        return np.array(values), msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

    def _pause(self, duration: float, until: str | None = None) -> None:
        """Let ``duration`` seconds of motion happen: real time, or a lock-step simulation step (with
        ``until``, an action goal's id: ending at the tick the driver ended that goal)."""
        if self._step is None:
            time.sleep(duration)
            return
        after = {k: self._driver_counts.get(k, 0) + n for k, n in self._sent.items() if n}
        self._sim_ns, self._driver_counts = self._step(duration, after, until)
        self._sent = dict.fromkeys(self._sent, 0)

    def clock(self) -> float:
        """Simulated seconds in lock-step (time passes only in steps), else the monotonic clock."""
        return self._sim_ns / 1e9 if self._step is not None else time.monotonic()

    @property
    def instant(self) -> int:
        """The stamp (ns) before which odometry and images are stale (lock-step: the simulated instant);
        -1 when nothing was said."""
        return self._sim_ns

    def expect_instant(self, ns: int) -> None:
        """Odometry and images stamped before ``ns`` are stale from now on: after a restart of the
        simulation, or (lock-step) a step another process took. Readers wait for newer ones."""
        self._sim_ns = max(self._sim_ns, int(ns))

    def _frames(self, camera: str) -> tuple[Image | None, Image | None]:
        """The newest image and depth of a camera; in lock-step, of the last step's instant (waited for)."""
        deadline = time.monotonic() + self.call_timeout
        while True:
            with self._lock:
                msg, dmsg = self._images.get(camera), self._depths.get(camera)
            if msg is None or self._sim_ns < 0 or ns_of(msg.header.stamp) >= self._sim_ns:
                return msg, dmsg
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"{self.profile.robot}: no image of the simulated instant {self._sim_ns} ns from camera '{camera}'")
            time.sleep(0.005)

    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        spec = self._spec(camera)
        camera = self.aliases.get(camera, camera)
        self._alive()
        msg, dmsg = self._frames(camera)
        if msg is None:
            raise RobotUnavailable(f"{self.profile.robot}: no image on {self.profile.topic(spec.image)} yet")
        rgb = _to_rgb(msg, spec)
        target = size or rgb.shape[:2]
        if rgb.shape[:2] != tuple(target):
            rgb = np.asarray(PILImage.fromarray(rgb).resize((target[1], target[0]), PILImage.Resampling.BILINEAR))
        d = None
        if depth:
            if dmsg is None:
                raise Unsupported(f"{self.profile.robot}: no depth for camera '{camera}'")
            d = _to_depth(dmsg, spec)
            if d.shape != tuple(target):
                d = np.asarray(PILImage.fromarray(d).resize((target[1], target[0]), PILImage.Resampling.NEAREST))
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        info = self._camera_info(camera, (int(target[0]), int(target[1])), ns_of(msg.header.stamp))
        return CameraFrame(rgb, info, stamp, d)

    def odometry(self) -> BasePose:
        return self._alive()

    def _alive(self) -> BasePose:
        deadline = time.monotonic() + self.call_timeout
        while True:
            with self._lock:
                odom, stamp = self._odom, self._odom_ns
            if odom is None or stamp >= self._sim_ns or time.monotonic() > deadline:
                break  # lock-step: the odometry of the last step's instant (waited for); late: judged stale below
            time.sleep(0.002)
        if odom is None:
            raise RobotUnavailable(f"{self.profile.robot}: no odometry on {self.profile.topic(self.profile.odometry.name)}")
        age = time.monotonic() - odom[1]
        if age > self.stale_after:
            raise RobotUnavailable(f"{self.profile.robot}'s driver stopped publishing odometry {age:.1f} s ago (it died or hangs)")
        self._check_driver()
        return odom[0]

    def _publishing(self) -> bool:
        """Whether the driver's odometry is fresh (it has not died or stopped)."""
        with self._lock:
            odom = self._odom
        return odom is not None and time.monotonic() - odom[1] <= self.stale_after

    def arm_state(self) -> ArmState:
        if not self.capabilities.arm:
            raise Unsupported(f"{self.profile.robot} has no arm the bridge can command")
        with self._lock:
            joints = self._joints
        names = tuple(joints.name) if joints is not None else ()
        positions = tuple(float(v) for v in joints.position) if joints is not None else ()
        if self.kinematics is not None:  # the hand from the measured joints
            ee = self.kinematics.forward(self._measured_joints())
            return ArmState(ee.position, ee.yaw, names, positions)
        return ArmState(self._ee.copy(), self._ee_yaw, names, positions)

    def _joints_of_arm(self) -> np.ndarray | None:
        """The kinematic table's joints from the newest joint_states (None when it lacks them)."""
        assert self.kinematics is not None
        with self._lock:
            msg = self._joints
        if msg is not None:
            index = {n: i for i, n in enumerate(msg.name)}
            names = [self.profile.joint_name(n) for n in self.kinematics.names]
            if all(n in index and index[n] < len(msg.position) for n in names):
                torso = self.profile.torso.joint if self.profile.torso is not None else None
                for held in self.kinematics.held:  # a torso lift: where joint_states say it is
                    i = index.get(self.profile.joint_name(held), len(msg.position))
                    if i < len(msg.position):
                        self.kinematics.hold(held, float(msg.position[i]))
                    elif held == torso:
                        return None  # a commanded torso must be measured
                return np.array([float(msg.position[index[n]]) for n in names])
        return None

    def _measured_joints(self) -> np.ndarray:
        """The kinematic table's joints as measured; RobotUnavailable when joint_states lack them."""
        q = self._joints_of_arm()
        if q is None:
            assert self.kinematics is not None
            torso = [self.profile.torso.joint] if self.profile.torso is not None else []
            raise RobotUnavailable(f"{self.profile.robot}: joint_states lack the arm's joints {[*torso, *self.kinematics.names]}")
        return q

    def gripper_state(self) -> GripperState:
        if not self.capabilities.gripper:
            raise Unsupported(f"{self.profile.robot} has no gripper the bridge can command")
        if self._reads_gripper_state:  # the driver's own: a message from after the last gripper command
            p = self.profile
            deadline = time.monotonic() + self.call_timeout
            while True:
                with self._lock:
                    reading, count = self._gripper_reading, self._gripper_count
                if reading is not None and count > self._gripper_after + 1:  # not one already on its way
                    return GripperState(*reading)
                if time.monotonic() > deadline:
                    topic = p.topic(p.gripper_state.name)  # type: ignore[union-attr]
                    raise RobotUnavailable(f"{p.robot}: no gripper state on {topic} after the last gripper command "
                                           f"within {self.call_timeout:.0f} s")
                self._alive()
                time.sleep(0.005)
        return GripperState(self._gripper_open, self._holding)

    # ---- commands --------------------------------------------------------------------------------------
    def drive(self, linear: float, angular: float, duration: float) -> MotionReport:
        lim = self.profile.limits
        v = float(np.clip(linear, -lim.max_linear, lim.max_linear))
        w = float(np.clip(angular, -lim.max_angular, lim.max_angular))
        start = self._alive()
        msg = Twist()
        msg.linear.x, msg.angular.z = v, w
        end = time.monotonic() + duration
        while True:
            self._alive()
            self.cmd_pub.publish(msg)
            self.counters.add("cmd_vel")
            self._sent["cmd_vel"] += 1
            if self._step is not None:  # lock-step: the simulation holds it for exactly the duration
                self._pause(duration)
                break
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(RESEND, left))
        here = self._alive()
        return MotionReport(clipped=(v, w) != (linear, angular), distance=math.dist((start.x, start.y), (here.x, here.y)),
                            duration=duration)

    def hold(self, duration: float) -> MotionReport:
        return self.drive(0.0, 0.0, duration)

    def stop(self) -> None:
        self.cmd_pub.publish(Twist())
        self.counters.add("stop")
        self._sent["cmd_vel"] += 1

    def emergency_stop(self) -> None:
        self.stop()
        self._gripper_sent = None  # a power cut may drop what the gripper held to
        for role in self.profile.estop:  # e.g. Spot's stop
            try:
                self.call(role)
            except (RobotUnavailable, Unsupported) as err:
                self.node.get_logger().error(f"e-stop: {err}")

    def emergency_release(self) -> None:
        for role in self.profile.estop_release:  # e.g. estop/release, power_on, stand
            self.call(role)

    def move_end_effector(self, translation: np.ndarray, rotation: np.ndarray, duration: float) -> MotionReport:
        if self.kinematics is not None and self.capabilities.arm:
            return self._move_by_trajectory(translation, rotation, duration)
        if self.arm_pub is None or not self.capabilities.arm:
            raise Unsupported(f"{self.profile.robot} has no arm the bridge can command")
        self._alive()
        self._unstow()
        lim = self.profile.limits
        measured = self._measured_hand_pose()
        if measured is not None:  # closed loop: from where the hand is and how it is turned, not where it was sent
            self._ee, self._ee_yaw = measured
        t, turn, clipped = self._limited_step(translation, rotation, duration)
        target = np.clip(self._ee + t, lim.workspace_min, lim.workspace_max)
        yaw = math.remainder(self._ee_yaw + turn, 2 * math.pi)
        msg = PoseStamped()
        msg.header.frame_id = self.profile.base_frame
        # the driver's base frame sits base_height above homiebot's (on the floor)
        msg.pose.position.x, msg.pose.position.y = float(target[0]), float(target[1])
        msg.pose.position.z = float(target[2]) - self.profile.base_height
        msg.pose.orientation.z, msg.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        self.arm_pub.publish(msg)
        self.counters.add("arm_pose")
        self._sent["arm_goals"] += 1
        self._ee, self._ee_yaw = target, yaw
        count = self._joint_count
        self._pause(duration)
        if measured is None:
            return MotionReport(clipped=clipped, duration=duration)
        self._fresh_joints(count)  # the joints after the command's time, not from before it
        return MotionReport(clipped=clipped, duration=duration, message=_shortfall(self._measured_hand_pose(), target, yaw))

    def _measured_hand_pose(self) -> tuple[np.ndarray, float] | None:
        """The hand of a pose-goal arm by the forward kinematics of the newest joint_states: its position in
        homiebot's base frame and the yaw of its approach axis; None without a table or without the arm's joints."""
        if self.hand_chain is None:
            return None
        try:
            q, _ = self._joint_values(self.hand_chain.names, "the arm")
        except RobotUnavailable:
            return None
        hand = self.hand_chain.forward(q)
        position = hand.position.copy()
        position[2] += self.profile.base_height  # the driver's base frame sits base_height above homiebot's
        return position, float(hand.yaw)

    def _limited_step(self, translation: np.ndarray, rotation: np.ndarray | None, duration: float) -> tuple[np.ndarray, float, bool]:
        """A base-frame end-effector delta within the speed limits for ``duration``: (translation, yaw turn,
        whether either was cut)."""
        t = np.asarray(translation, dtype=float).reshape(3)
        step = self.profile.limits.max_ee_speed * duration
        norm = float(np.linalg.norm(t))
        clipped = norm > step
        if clipped:
            t = t * (step / norm)
        turn = float(np.asarray(rotation, dtype=float).reshape(3)[2]) if rotation is not None else 0.0
        yaw_step = self.limits.max_ee_yaw_rate * duration
        clipped = clipped or abs(turn) > yaw_step
        return t, float(np.clip(turn, -yaw_step, yaw_step)), clipped

    def _unstow(self) -> None:
        """Bring the hand to the ready pose the estimate starts from, once after start-up or a stow."""
        if self._arm_ready:
            return
        if "arm_unstow" in self.services:
            count = self._joint_count
            self.call("arm_unstow")
            if self.hand_chain is not None:
                self._fresh_joints(count)  # measured from here on: the joints after the unstow
        self._ee, self._ee_yaw = np.array(self.profile.arm_ready, dtype=float), 0.0
        self._arm_ready = True

    def _move_by_trajectory(self, translation: np.ndarray, rotation: np.ndarray | None, duration: float) -> MotionReport:
        """An end-effector delta as a one-point joint trajectory from the measured joints (see the module doc)."""
        assert self.kinematics is not None
        self._alive()
        lim = self.profile.limits
        q = self._measured_joints()
        here = self.kinematics.forward(q)
        t, turn, clipped = self._limited_step(translation, rotation, duration)
        target = np.clip(here.position + t, lim.workspace_min, lim.workspace_max)
        clipped = clipped or bool(np.any(target != here.position + t))
        if float(np.linalg.norm(target - here.position)) < 1e-4 and abs(turn) < 1e-4:
            self._pause(duration)
            return MotionReport(clipped=clipped, duration=duration)
        try:
            goal = self.kinematics.inverse(target, here.yaw + turn, seed=q)
        except Unreachable:
            try:  # half the step, as far as the arm reaches
                goal = self.kinematics.inverse(here.position + (target - here.position) / 2, here.yaw + turn / 2, seed=q)
                clipped = True
            except Unreachable as err:
                self._pause(duration)
                return MotionReport(clipped=True, duration=duration, message=str(err))
        report = self._send_trajectory(goal, duration)
        report.clipped = report.clipped or clipped
        return report

    def _send_trajectory(self, goal_q: np.ndarray, duration: float) -> MotionReport:
        """Send a one-point trajectory reaching ``goal_q`` after ``duration`` and wait for its result."""
        assert self.kinematics is not None and self.trajectory_client is not None
        seconds = max(float(duration), 0.05)
        goal = self._trajectory_goal(list(self.kinematics.names), [float(v) for v in goal_q], seconds)
        result = self._action(self.trajectory_client, goal, seconds + self.call_timeout, timed=True)
        self.counters.add("arm_trajectory")
        self._fresh_joints(self._joint_count)
        if result.error_code != 0:
            return MotionReport(clipped=True, duration=seconds, message=result.error_string or f"error {result.error_code}")
        return MotionReport(duration=seconds)

    def _trajectory_goal(self, names: list[str], positions: list[float], seconds: float) -> Any:
        """A FollowJointTrajectory goal of one point: ``positions`` of ``names`` after ``seconds``."""
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectoryPoint

        goal = _control_msgs(self.profile.robot).FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(names)
        point = JointTrajectoryPoint(positions=[float(v) for v in positions],
                                     time_from_start=Duration(sec=int(seconds), nanosec=int((seconds % 1) * 1e9)))
        goal.trajectory.points = [point]
        return goal

    def _action(self, client: Any, goal: Any, timeout: float, timed: bool = False) -> Any:
        """Send an action goal and wait for its result; RobotUnavailable when refused or silent."""
        return self._goal(client, goal, timeout, timed).result

    def _goal(self, client: Any, goal: Any, timeout: float, timed: bool = False) -> Any:
        """Send an action goal and wait ``timeout`` s for the end of it: the response (``status`` and ``result``).
        ``timed``: the goal takes time (a trajectory, a head turn); in lock-step the simulation runs
        (up to ``timeout`` simulated seconds) until the driver ended it, then the result is awaited."""
        name = client._action_name
        if not client.server_is_ready() and not client.wait_for_server(timeout_sec=self.call_timeout):
            raise RobotUnavailable(f"{self.profile.robot}: the action server {name} is not available")
        sent = self._in_spin(client.send_goal_async, goal)
        handle = self._wait(sent, self.call_timeout, f"{name} did not accept a goal")
        if not handle.accepted:
            raise RobotUnavailable(f"{self.profile.robot}: {name} rejected the goal")
        result = self._in_spin(handle.get_result_async)
        if self._step is not None and timed:
            self._pause(min(timeout, 60.0), until=bytes(handle.goal_id.uuid).hex())
            timeout = self.call_timeout  # simulated time is up: the result is on its way
        return self._wait(result, timeout, f"{name} did not finish")

    def _in_spin(self, request: Callable[..., Any], *args: Any) -> Any:
        """``request(*args)`` (an action client's send) run in the thread that spins the node: rclpy's
        ActionClient notes a request only after sending it, so a reply the spinning thread takes in
        between is dropped as unexpected and the wait never ends."""
        executor = self._executor or self.node.executor
        if executor is None:
            return request(*args)
        task = executor.create_task(request, *args)
        return self._wait(task, self.call_timeout, f"the node's executor did not run {getattr(request, '__name__', 'a request')}")

    def _wait(self, future: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while not future.done():
            self._alive()
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"{self.profile.robot}: {what} within {timeout:.0f} s")
            time.sleep(0.005)
        return future.result()

    def _fresh_joints(self, count: int, timeout: float = 1.0) -> None:
        """Wait for joint_states that show the state after a motion that has just ended: the second message
        after the ``count``-th, and (in real time, where the driver stamps with this machine's clock, as
        ``look`` assumes of images) one stamped from now on. Counting alone was not enough on a loaded
        machine: messages published before an unstow took effect arrived after its response, and the
        next goal started from the stowed hand."""
        deadline = time.monotonic() + timeout
        now, newest = time.time_ns(), self._joint_stamp()
        # a driver whose stamps are not this machine's clock (lock-step's simulated time, a robot's own): counting only
        since = now if self._step is None and newest is not None and abs(now - newest) < CLOCKS_AGREE_NS else None
        while time.monotonic() < deadline:
            if self._joint_count > count + 1 and (since is None or (self._joint_stamp() or 0) >= since):
                return
            time.sleep(0.005)

    def _joint_stamp(self) -> int | None:
        """The stamp (ns) of the newest joint_states, None before the first."""
        with self._lock:
            return ns_of(self._joints.header.stamp) if self._joints is not None else None

    @property
    def _has_head(self) -> bool:
        return self.profile.head is not None and "head" not in self.profile.unverified

    @property
    def _has_torso(self) -> bool:
        return self.profile.torso is not None and "torso" not in self.profile.unverified

    def _torso_height(self) -> float:
        """The torso lift from the newest joint_states; RobotUnavailable when they lack it."""
        assert self.profile.torso is not None
        return float(self._joint_values([self.profile.torso.joint], "the torso")[0][0])

    def set_torso(self, height: float) -> MotionReport:
        """Put the torso lift at ``height`` (m, within its joint's limits) by a goal to its trajectory
        controller at the profile's ``max_velocity``; returns once the controller ended the goal and joint
        states from after it arrived. Nothing is sent when it is already within ``tolerance``."""
        torso = self.profile.torso
        if torso is None or self.torso_client is None:
            raise Unsupported(f"{self.profile.robot} has no torso the bridge can command")
        spec = next(j for j in self.profile.kinematics.joints if j.name == torso.joint)  # type: ignore[union-attr]
        low, high = spec.limits or (-math.inf, math.inf)
        if not (math.isfinite(height) and low <= height <= high):
            raise ValueError(f"torso height {height} is outside {torso.joint}'s limits [{low}, {high}]")
        self._alive()
        here = self._torso_height()
        if abs(here - height) <= torso.tolerance:
            return MotionReport()
        seconds = max(abs(height - here) / torso.max_velocity, 0.5)
        joints = self._joint_count
        result = self._action(self.torso_client, self._trajectory_goal([torso.joint], [height], seconds),
                              seconds + self.call_timeout, timed=True)
        self.counters.add("torso_trajectory")
        self._fresh_joints(joints)
        name = self.torso_client._action_name
        if result.error_code != 0:
            raise RobotUnavailable(f"{self.profile.robot}: {name} did not bring the torso to {height} m: "
                                   f"{result.error_string or f'error {result.error_code}'}")
        there = self._torso_height()
        if abs(there - height) > 4 * torso.tolerance:
            raise RobotUnavailable(f"{self.profile.robot}: the torso is at {there:.3f} m after {name} said it reached {height} m")
        return MotionReport(duration=seconds)

    def look(self, view: str = "front") -> MotionReport:
        """Turn the head to the profile's point for ``view`` (``front``: back to the front) by a PointHead
        goal; return once the driver says it is there and joint states and an image of the head camera
        from after that arrived (so the next read shows the turned view, placed where it looks)."""
        head = self.profile.head
        if head is None or self.head_client is None:
            raise Unsupported(f"{self.profile.robot} has no head the bridge can turn")
        if view != "front" and view not in head.views:
            raise ValueError(f"the head has no point for the view '{view}'; it has front, {', '.join(head.views)}")
        from action_msgs.msg import GoalStatus
        from builtin_interfaces.msg import Duration

        self._alive()
        actions = _control_msgs(self.profile.robot)
        goal = actions.PointHead.Goal()
        goal.target.header.frame_id = head.frame or self.profile.base_frame
        goal.target.point.x, goal.target.point.y, goal.target.point.z = (float(v) for v in (head.front if view == "front" else head.views[view]))
        goal.pointing_axis.z = 1.0  # the optical axis of the pointing frame
        goal.pointing_frame = head.pointing_frame
        goal.min_duration = Duration(sec=int(head.min_duration), nanosec=int((head.min_duration % 1) * 1e9))
        goal.max_velocity = float(head.max_velocity)
        joints = self._joint_count
        name = self.head_client._action_name
        response = self._goal(self.head_client, goal, self.call_timeout + math.pi / head.max_velocity, timed=True)
        if response.status != GoalStatus.STATUS_SUCCEEDED:
            raise RobotUnavailable(f"{self.profile.robot}: {name} did not turn the head to the {view} view (goal status {response.status})")
        self.counters.add("point_head")
        self._fresh_joints(joints)
        if self._step is not None:
            return MotionReport()  # lock-step: the last step published the joints and images of the instant it ended
        there = time.time_ns()
        deadline = time.monotonic() + self.call_timeout
        for _ in range(2):  # an image stamped after the turn, then the next: one whose exposure began after it
            while self._image_ns.get(head.camera, -1) <= there:
                if time.monotonic() > deadline:
                    raise RobotUnavailable(f"{self.profile.robot}: no image from camera '{head.camera}' after the head turned")
                time.sleep(0.005)
            there = self._image_ns[head.camera]
        return MotionReport()

    def set_gripper(self, closedness: float) -> MotionReport:
        """The gripper to ``closedness``. A policy repeats its gripper command every period: a command
        equal to the last one, carried out or repeated less than ``GRIPPER_HOLD`` s ago, is in force (the
        driver holds its last goal) and is not sent again."""
        if not self.capabilities.gripper:
            raise Unsupported(f"{self.profile.robot} has no gripper the bridge can command")
        goal = min(max(float(closedness), 0.0), 1.0) if self.gripper_client is not None else float(closedness >= 0.5)
        now = self.clock()
        if self._gripper_sent is not None and self._gripper_sent[0] == goal and 0.0 <= now - self._gripper_sent[1] < GRIPPER_HOLD:
            self._gripper_sent = (goal, now)
            return MotionReport()
        self._gripper_sent = None  # until this one is carried out
        if self.gripper_client is not None:
            report = self._gripper_action(goal)
        else:
            self.call("gripper_close" if goal else "gripper_open")
            self._gripper_open = 0.0 if goal else 1.0
            with self._lock:
                self._gripper_after = self._gripper_count  # the gripper's state is read from a newer message
            report = MotionReport()
        if not report.message:
            self._gripper_sent = (goal, now)
        return report

    def _gripper_action(self, closedness: float) -> MotionReport:
        """A GripperCommand goal; a stall short of closed means the fingers hold something."""
        self._alive()
        p = self.profile
        actions = _control_msgs(p.robot)
        goal = actions.GripperCommand.Goal()
        goal.command.position = float((1.0 - min(max(closedness, 0.0), 1.0)) * p.gripper_max_gap)
        goal.command.max_effort = float(p.gripper_max_effort)
        result = self._action(self.gripper_client, goal, self.call_timeout)
        self.counters.add("gripper_command")
        self._gripper_open = float(min(max(result.position / p.gripper_max_gap, 0.0), 1.0))
        self._holding = bool(result.stalled and result.position > 1e-3)
        return MotionReport(message="" if result.reached_goal or result.stalled else "the gripper did not reach its goal")

    def stow_arm(self) -> MotionReport:
        if "arm_stow" not in self.services and self.kinematics is not None and self.capabilities.arm:
            q = self._measured_joints()  # the hand to the carry pose, in one move at the end-effector speed
            distance = float(np.linalg.norm(self.kinematics.forward(q).position - np.array(self.profile.arm_ready)))
            try:
                goal = self.kinematics.inverse(self.profile.arm_ready, 0.0, seed=q)
            except Unreachable as err:
                raise Unsupported(f"{self.profile.robot}: arm_ready: {err}") from None
            return self._send_trajectory(goal, max(distance / self.profile.limits.max_ee_speed, 0.5))
        if "arm_stow" not in self.services:
            raise Unsupported(f"{self.profile.robot}'s profile has no arm_stow service")
        self.call("arm_stow")
        self._arm_ready = False
        return MotionReport()

    def close(self) -> None:
        if getattr(self, "_closed", False):
            return  # the shut-down procedure runs once
        self._closed = True
        try:
            self.stop()
            # a robot whose streams never came was not started, one waiting for an E-Stop never answered, and a
            # driver that stopped publishing is gone: their services would only time out one by one
            for role in self.profile.shutdown if self._started and not self._unanswered else ():
                if not self._publishing():
                    break  # gone, or it went during the previous call
                try:
                    self.call(role)
                except (RobotUnavailable, Unsupported):
                    pass  # shutting down a robot that is already gone
        finally:
            if self._executor is not None:
                self._executor.shutdown()
                self.node.destroy_node()


ARM_TOLERANCE = 0.03  # metres between a pose-goal arm's measured hand and its goal that a report says
ARM_YAW_TOLERANCE = math.radians(5.0)  # and radians between its measured yaw and the goal's


def _shortfall(measured: tuple[np.ndarray, float] | None, target: np.ndarray, yaw: float) -> str:
    """What a report says of a hand (measured position, yaw) that stopped away from its goal; empty when it is
    there (or cannot be measured)."""
    if measured is None:
        return ""
    short = float(np.linalg.norm(measured[0] - target))
    turn = abs(math.remainder(measured[1] - yaw, 2 * math.pi))
    said = [f"the hand stopped {short:.2f} m from its goal" if short > ARM_TOLERANCE else "",
            f"its yaw stopped {math.degrees(turn):.0f} deg from the goal's" if turn > ARM_YAW_TOLERANCE else ""]
    said = [s for s in said if s]
    return f"{'; '.join(said)} (measured from joint_states)" if said else ""


GRIPPER_HOLD = 2.0  # seconds a gripper command stays in force after it was carried out or last repeated (see set_gripper)


def _control_msgs(robot: str) -> Any:
    """control_msgs.action (built by ``make``), or why it is missing."""
    return built_module("control_msgs.action", robot, "uses control_msgs actions")


def _to_rgb(msg: Image, spec: CameraSpec) -> np.ndarray:
    """The image upright (in ``upright_shape`` of the published one) and as RGB (mono8 repeated over three
    channels)."""
    channels = 1 if msg.encoding == "mono8" else 3
    data = np.frombuffer(bytes(msg.data), dtype=np.uint8)
    if data.size != msg.height * msg.width * channels:
        raise RobotUnavailable(f"a {msg.encoding} image of {msg.width}x{msg.height} with {data.size} bytes")
    a = to_upright(data.reshape(msg.height, msg.width, channels), spec.rotation_deg)  # bilinear; corners with no data: 0
    if msg.encoding == "bgr8":
        a = a[:, :, ::-1]
    elif channels == 1:  # repeated after turning: a third of the work
        a = np.repeat(a, 3, axis=2)
    return np.ascontiguousarray(a)


def _to_depth(msg: Image, spec: CameraSpec) -> np.ndarray:
    """Depth in metres, upright like the image (32FC1 metres or 16UC1 millimetres)."""
    if msg.encoding == "16UC1":
        d = np.frombuffer(bytes(msg.data), dtype=np.uint16).reshape(msg.height, msg.width).astype(np.float32) / 1000.0
    else:
        d = np.frombuffer(bytes(msg.data), dtype=np.float32).reshape(msg.height, msg.width)
    return to_upright(d, spec.rotation_deg, order=0)  # the nearest pixel: depth is never blended across an edge; 0: unknown


__all__ = ["Ros2Robot", "describe_missing_driver", "driver_interfaces", "missing_driver_interfaces"]
