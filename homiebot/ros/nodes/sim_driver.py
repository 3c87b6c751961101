"""The embedded home served as a robot driver, under a robot profile's ROS 2 names and types.

As Gazebo or ros2_control serve a simulated robot, this node makes the embedded home look like the
real driver a profile describes (``config/robots/spot.yaml``: spot_ros2's ``/spot/...`` names):

* streams at driver rates: odometry (nav_msgs/Odometry) and joint states at ``sim.state_rate_hz``,
  each camera's image, camera_info and registered depth at ``sim.camera_rate_hz``, as the mounted camera
  gives them: the home renders the upright view (grown to cover the turned sensor, at the camera's focal
  length), turned by minus the profile's ``rotation_deg`` into the published ``height`` x ``width``
  (``camera_size`` overrides it), in the profile's encoding (``homiebot.robots.camera_rotation``);
* ``cmd_vel`` (geometry_msgs/Twist) applied in real time within the profile's limits, and a
  ``cmd_vel_timeout`` as real drivers have: with no new command the base stops;
* Trigger services that behave as on the robot: with ``sim.needs_power`` the base refuses to move
  until ``power_on`` and ``stand`` ran; ``estop/gentle`` cuts power; ``sit`` and ``power_off`` too. For a
  driver that serves only once an operator's E-Stop is registered (the profile's ``estop_registration``,
  spot_ros2) they are on a node named as the driver's (``/spot/spot_ros2``), advertised from the start but
  answered (its parameter services too) only once the simulated operator registered one,
  ``sim.estop_registered_after`` seconds after start-up (the ``estop_registered_after`` parameter overrides
  it; ``never``: never), while the streams go on;
* end-effector goals (``arm_pose_commands``, PoseStamped in the base frame) approached at the
  end-effector speed limit, ``arm_unstow`` (the hand to the profile's ``arm_ready`` pose) and
  ``arm_stow``, and the gripper's open / close services; the gripper's state (``gripper_state``: Spot's
  ``manipulation_state``, bosdyn_api_msgs/msg/ManipulatorState) at the state rate, holding when the home's
  gripper has an object grasped;
* for a profile whose arm takes joint trajectories (Fetch): a FollowJointTrajectory action server
  (the final point's joints -> the hand's pose by the profile's kinematic table -> the home's arm
  approaches it at the end-effector speed limit; the result says when it is there, or that the
  arm was blocked), ``joint_states`` with the table's joint names (the home hand's pose solved back
  into them after each motion), and a GripperCommand action server that closes or opens the home's
  gripper and reports ``stalled`` when the fingers stop on something;
* ``joint_states`` also carry the joints of every camera on a chain, as the robot's would: for a pose-goal
  arm with a kinematic table (Spot) the table's joints solved (IK) for where the home's hand is, so
  the bridge's forward kinematics of them puts the hand camera at the hand; a head's pan and tilt;
* for a profile with a ``torso`` (Fetch's ``torso_controller/follow_joint_trajectory``): a
  FollowJointTrajectory server for the lift's joint, which moves it to the final point at the joint's
  velocity limit (``homiebot.robots.lift``); ``joint_states`` carry it (it starts at the table's value),
  and the arm's joints are solved again for the home's hand when it stops;
* a PointHead action server for a profile with a ``head`` (Fetch's ``head_controller/point_head``): the
  pan and tilt that aim the head at the target (base frame) within their limits, reached at the goal's
  ``max_velocity`` (and no sooner than ``min_duration``); the head camera renders the home's view the
  pan faces (about +90 degrees: left, -90: right, else the camera's own view);
* ``/homiebot/sim/ground_truth`` (homiebot_msgs/GroundTruth: the home's moving state, its belief
  snapshot and the instance labels, see ``homiebot.robots.sim``), a simulator-only topic for privileged
  components, as Gazebo publishes model states; and beside each camera of the planner's views its
  instance segmentation (``/homiebot/sim/<camera>/segmentation``), as a segmentation camera would;
* typed services under ``/homiebot/sim``, simulator-only (``homiebot.robots.sim``,
  ``homiebot.ros.nodes.sim_services``): ``expert/reset`` and ``expert/act`` (the home's expert
  policies computed from its truth, for the ``sim_expert`` policy of a bridged world; their commands
  come back through the profile's topics), ``goal`` (whether the task's goal conditions hold),
  ``restart`` (the home back to its initial state: a bridged world's reset), ``mode``, ``step`` and
  ``truth`` (lock-step).

In lock-step (``lockstep:=true``) simulated time advances only when the bridge calls ``step``
{seconds, after, until}: the commands it published before are waited for (the driver's counters), the
simulation runs in ticks of the state period, and the state and camera messages of the new instant go
out, stamped with simulated time (also on ``/clock``). Timed action goals (a trajectory, a head turn)
run in simulated time too: with ``until`` (a goal's id) the step waits for that goal to be running and
ends at the tick it ended. Between steps the streams go on at their rates, unchanged (the cameras
re-send the instant's images rather than render them again); ``truth`` answers the truth message of
the instant; ``mode`` says which mode runs.
Episodes then repeat exactly from their seed; real time is for demos and the benchmark.

Run: ``python -m homiebot.ros.nodes.sim_driver --ros-args -p robot:=spot -p scene:=0``.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections import OrderedDict
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped, Twist
from homiebot_msgs.msg import GroundTruth
from nav_msgs.msg import Odometry
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.task import Future
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_srvs.srv import Trigger

from homiebot.core.contracts import Subtask
from homiebot.core.errors import take_snapshot
from homiebot.core.tasks import Task
from homiebot.policies.base import Command, PolicyObservation, PrivilegedPolicy
from homiebot.robots.camera_rotation import render_shape, to_mounted
from homiebot.robots.kinematics import Unreachable
from homiebot.robots.lift import SimLift
from homiebot.robots.manipulator_state import manipulator_state, manipulator_state_type
from homiebot.robots.profile import CameraSpec, RobotProfile, load_profile
from homiebot.robots.sim import TRUTH_TOPIC, segmentation_topic
from homiebot.ros.kit.common import NodeDef, Param, spin_in_background
from homiebot.ros.kit.process import run_node
from homiebot.ros.messages.common import RELIABLE, stamp_of, to_camera_info, to_image
from homiebot.ros.messages.truth import ground_truth_msg
from homiebot.ros.messages.wire import WireError, safe_callback
from homiebot.ros.nodes.sim_services import serve_sim_services
from homiebot.worlds.home.control import HomeControl
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.world import EmbeddedHome

GROUND_TRUTH_TOPIC = TRUTH_TOPIC


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


class SimDriver:
    """The node's component: one embedded home, one profile (see the module doc)."""

    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node = node
        self.profile: RobotProfile = load_profile(params["robot"])
        scene = str(params["scene"])
        spec = generate_scene(int(scene)) if scene.lstrip("-").isdigit() else load_scene(scene)
        self.size = _size(params["camera_size"])
        self.world = EmbeddedHome(spec, width=64, height=64, depth=False, segmentation=False)
        self.robot: HomeControl = self.world.own_robot()
        p = self.profile
        self.robot.max_linear, self.robot.max_angular = p.limits.max_linear, p.limits.max_angular
        self.robot.max_ee_speed = p.limits.max_ee_speed
        self.powered = self.standing = not p.sim.needs_power
        self.counters: dict[str, int] = {"cmd_vel": 0, "applied": 0, "timeouts": 0, "arm_goals": 0, "head_goals": 0, "gripper_goals": 0,
                                         "services": 0, "expert_acts": 0}
        # timed action goals (trajectory, head turn) by id -> ended: a lock-step `step` may run until one ended
        self._goals: OrderedDict[str, bool] = OrderedDict()
        self._expert: PrivilegedPolicy | None = None
        self._lock = threading.Lock()
        self._cmd: tuple[float, float, float] | None = None  # (v, w, wall time received)
        self._ee_goal: tuple[np.ndarray, float] | None = None  # (position, yaw) in the base frame
        self._moving = False
        self._last_tick = time.monotonic()
        # lock-step: simulated time (ns) advances only on `step` calls and is published on /clock
        self.lockstep = bool(params["lockstep"])
        self.sim_ns = 0
        self.clock_pub = node.create_publisher(Clock, "/clock", 10) if self.lockstep else None
        self._frame = 0
        self.odom_pub = node.create_publisher(Odometry, p.topic(p.odometry.name), 10)
        self.joint_pub = node.create_publisher(JointState, p.topic(p.joint_states.name), 10) if p.joint_states else None
        # the gripper's state as the driver tells it (Spot: manipulation_state, whether the gripper holds something)
        self.gripper_state_pub = (node.create_publisher(manipulator_state_type(p.robot), p.topic(p.gripper_state.name), 10)
                                  if p.gripper_state is not None else None)
        self.truth_pub = node.create_publisher(GroundTruth, GROUND_TRUTH_TOPIC, RELIABLE)
        self.cams = {name: self._camera_pubs(spec_) for name, spec_ in p.cameras.items() if name in p.sim.views}
        # a segmentation camera beside each camera of the planner's views (simulator only, for oracle perception)
        self.seg_pubs = {name: node.create_publisher(Image, segmentation_topic(name), 5) for name in self.cams if name in p.views.values()}
        self.labels = {str(i): label.model_dump() for i, label in self.world.instance_labels().items()}
        node.create_subscription(Twist, p.topic(p.cmd_vel.name), safe_callback(node, p.cmd_vel.name, self._on_cmd_vel), 10)
        if "pose" in p.arm:
            node.create_subscription(PoseStamped, p.topic(p.arm["pose"].name), safe_callback(node, "arm pose", self._on_arm_pose), 10)
        # the services answer on a node and thread of their own: a lock-step ``step`` waits for commands that
        # this node's single-threaded subscriptions count, and a power-on that takes time must not stall the streams
        self._services_node = Node(f"{node.get_name()}_services")
        self._services_executor, self._services_thread = spin_in_background(self._services_node)
        # the driver's own Trigger services; for a driver that waits for an operator's E-Stop (spot_ros2) on a node
        # named as the driver's, advertised now and answered once it spins (once an E-Stop is registered: _await_estop)
        self._driver_node = self._services_node if p.estop_registration is None else self._make_driver_node()
        self._driver_executor: Any = None
        for role, iface in {**p.services, **{f"gripper_{k}": v for k, v in p.gripper.items()}}.items():
            if iface.type == "std_srvs/srv/Trigger":
                self._driver_node.create_service(Trigger, p.topic(iface.name), self._trigger(role))
        self.kinematics = p.kinematics.build() if p.kinematics is not None and "trajectory" in p.arm else None
        self._arm_q = self._joints_of_home(self.kinematics.rest) if self.kinematics is not None else None
        self._trajectory: tuple[Future, np.ndarray, float, Any] | None = None  # (result, joints, deadline, goal handle)
        # a torso lift with its own trajectory controller (Fetch): held in the table, moved by its goals
        self.lift = SimLift.of(p) if self.kinematics is not None else None
        self._lift_goal: tuple[Future, Any] | None = None  # (result, goal handle)
        self._init_chains()
        self._action_servers = self._serve_actions()
        serve_sim_services(self._services_node, self)  # the simulator-only ones too
        node.create_timer(1.0 / p.sim.state_rate_hz, self._state_tick)
        self._sent_frames: list[tuple[Any, Any]] = []  # lock-step: the messages of the instant (publisher, message)
        node.create_timer(1.0 / p.sim.camera_rate_hz, self._camera_timer)
        node.get_logger().info(f"sim driver: the embedded home as {p.robot} ({'unpowered' if not self.powered else 'ready'})")
        self._estop_timer: threading.Timer | None = None
        self._estop_lock = threading.Lock()  # the registration (a timer's thread) against close()
        self._closed = False
        self._await_estop(_estop_after(params["estop_registered_after"], p))

    # ---- the driver's node, and the E-Stop it may wait for ----------------------------------------------
    def _make_driver_node(self) -> Node:
        """The node serving the Trigger services of a driver that waits for an E-Stop: named as the real driver's
        node (its parameter services are what the bridge and the driver check ask)."""
        p = self.profile
        assert p.estop_registration is not None
        namespace = f"/{p.namespace.strip('/')}" if p.namespace.strip("/") else "/"
        return Node(p.estop_registration.node, namespace=namespace, use_global_arguments=False)

    def _await_estop(self, after: float | None) -> None:
        """For a driver that waits for an operator's E-Stop (spot_ros2): serve its services ``after`` seconds from
        now (None: never), when the simulated operator registers one. Until then they are advertised but
        unanswered, as the real driver's (its constructor blocks; its streams come from other nodes and go on)."""
        if self.profile.estop_registration is None:
            return  # the services answer on the simulator's services node, spinning already
        if after == 0.0:
            self._serve_driver()
            return
        self.node.get_logger().warning(
            f"sim driver: waiting for an E-Stop to be registered ({'never, as configured' if after is None else f'in {after:g} s'}); "
            f"{self.profile.driver_node()} answers no service until then")
        if after is not None:
            self._estop_timer = threading.Timer(after, self._serve_driver)
            self._estop_timer.daemon = True
            self._estop_timer.start()

    def _serve_driver(self) -> None:
        """An E-Stop is registered: the driver's node spins and answers from now on."""
        with self._estop_lock:
            if self._driver_executor is not None or self._closed:
                return
            self._driver_executor, _ = spin_in_background(self._driver_node)
        self.node.get_logger().info("sim driver: an E-Stop is registered; the driver serves its services")

    # ---- commands -------------------------------------------------------------------------------
    def _on_cmd_vel(self, msg: Twist) -> None:
        v, w = float(msg.linear.x), float(msg.angular.z)
        if not _finite(v, w):
            raise WireError("cmd_vel with a non-finite velocity")
        with self._lock:
            self.counters["cmd_vel"] += 1
            self._cmd = (v, w, self._seconds())

    def _on_arm_pose(self, msg: PoseStamped) -> None:
        pos = msg.pose.position
        if not _finite(pos.x, pos.y, pos.z):
            raise WireError("arm pose with a non-finite position")
        with self._lock:
            self.counters["arm_goals"] += 1
            q = msg.pose.orientation
            yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
            self._ee_goal = (np.array([pos.x, pos.y, pos.z + self.profile.base_height]), yaw)  # the home's frame is on the floor

    def _trigger(self, role: str):  # noqa: ANN202 - a service callback
        def handle(request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            if role == "power_on" and not self.powered:
                time.sleep(self.profile.sim.power_on_seconds)  # the motors take time to power (the streams go on)
            with self._lock:
                self.counters["services"] += 1
                response.success, response.message = self._service(role)
            return response

        return handle

    def _service(self, role: str) -> tuple[bool, str]:
        """What a Trigger service does on the simulated robot (as on the real one)."""
        if role == "power_on":
            self.powered = True
            return True, "powered on"
        if role in ("power_off", "estop_gentle"):
            self.powered = self.standing = False
            self._cmd = None
            return True, "motor power cut" if role == "estop_gentle" else "powered off"
        if role == "stand":
            if not self.powered:
                return False, "the robot is not powered on: call power_on first"
            self.standing = True
            return True, "standing"
        if role == "sit":
            self.standing = False
            self._cmd = None
            return True, "sitting"
        if role == "stop":
            self._cmd = None
            return True, "stopped"
        if role == "gripper_open":
            self.robot.set_gripper(0.0)
            return True, "gripper open"
        if role == "gripper_close":
            self.robot.set_gripper(1.0)
            return True, "gripper closed"
        if role == "arm_stow":
            self.robot.stow()
            self._ee_goal = None
            return True, "arm stowed"
        if role == "arm_unstow":
            return self._unstow()
        return True, f"{role}: done"  # claim, release, arm_unstow, estop_release: nothing to simulate

    def _unstow(self) -> tuple[bool, str]:
        """The hand to the profile's ready pose in front of the body (what the bridge's estimate starts from)."""
        self._ee_goal = None
        report = self.robot.ready(self.profile.arm_ready)
        return (False, report.message) if report.clipped else (True, "arm ready")

    # ---- cameras on chains: the hand camera's arm joints, a head's pan and tilt ------------------------
    def _init_chains(self) -> None:
        p = self.profile
        self.mounts = {cam: m for cam in p.cameras if (m := p.camera_mount(cam)) is not None}
        # a pose-goal arm with a table (Spot): joint_states carry the table's joints solved for the home's hand
        arm_camera = any(c.chain == "arm" for c in p.cameras.values())
        self.hand_table = p.kinematics.build() if self.kinematics is None and arm_camera and p.kinematics is not None else None
        self._hand: tuple[np.ndarray, float, np.ndarray] | None = None  # (hand position, yaw, the table's joints for it)
        self._hand_solved = 0.0  # when it was last solved (monotonic)
        held = {j.name for j in self.kinematics.joints if j.value is not None} if self.kinematics is not None else set()
        arms = set(self.kinematics.names if self.kinematics is not None else self.hand_table.names if self.hand_table is not None else [])
        self._extra: dict[str, float] = {}  # the other chains' joints (a head), by table name
        for mount in self.mounts.values():
            for j in mount.chain.active:
                if j.name not in held | arms:
                    self._extra[j.name] = float(np.clip(0.0, j.lower, j.upper))
        self._extra_start = dict(self._extra)
        # (joints, speed, earliest end, result, goal handle)
        self._head_goal: tuple[dict[str, float], float, float, Future, Any] | None = None
        head = p.head
        self.head_chain = self.mounts[head.camera].chain if head is not None and head.camera in self.mounts else None
        if head is not None and (self.head_chain is None or {head.pan_joint, head.tilt_joint} - set(self._extra)):
            self.node.get_logger().warning(f"head: camera '{head.camera}' needs a chain with {head.pan_joint} and {head.tilt_joint} "
                                           f"to be turned in simulation; {head.point.name} is not served")
            self.head_chain = None

    def _hand_joints(self) -> np.ndarray:
        """The arm table's joints for where the home's hand is (solved when it moved, from the last solution)."""
        assert self.hand_table is not None
        here, yaw = self.robot.gripper_pose()
        if self._hand is not None and float(np.abs(self._hand[0] - here).max()) < 1e-6 and abs(self._hand[1] - yaw) < 1e-6:
            return self._hand[2]
        now = time.monotonic()
        if self._hand is not None and not self.lockstep and now - self._hand_solved < 0.05:
            return self._hand[2]  # in real time at most 20 solves a second (a few ms each) while the hand moves
        self._hand_solved = now
        seed = self._hand[2] if self._hand is not None else None
        target = here - np.array([0.0, 0.0, self.profile.base_height])  # the table starts at the driver's base frame
        try:
            q = self.hand_table.inverse(target, yaw, seed=seed)
        except Unreachable as err:
            self.node.get_logger().warning(f"joint_states: the home's hand is out of the table's reach: {err}", throttle_duration_sec=10.0)
            q = seed if seed is not None else self.hand_table.rest.copy()
        self._hand = (here.copy(), yaw, q)
        return q

    def _chain_values(self, chain: Any) -> np.ndarray:
        """A chain's joints (table order) as this driver publishes them."""
        held = {j.name: float(j.value) for j in self.kinematics.joints if j.value is not None} if self.kinematics is not None else {}
        return np.array([self._extra.get(n, held.get(n, 0.0)) for n in chain.names])

    def _aim(self, target: np.ndarray) -> tuple[dict[str, float], float]:
        """The head's pan and tilt (within their limits) aiming it at ``target`` (base frame), and the
        angle by which it misses when the limits cut them."""
        head, chain = self.profile.head, self.head_chain
        assert head is not None and chain is not None
        names = chain.names
        ip, it = names.index(head.pan_joint), names.index(head.tilt_joint)
        q = self._chain_values(chain)
        q[ip] = q[it] = 0.0
        d = target - chain.joint_origins(q)[ip]
        pan = math.atan2(d[1], d[0])
        q[ip] = float(np.clip(pan, chain.lower[ip], chain.upper[ip]))
        d = target - chain.joint_origins(q)[it]
        tilt = math.atan2(-d[2], math.hypot(d[0], d[1]))  # about +y: positive looks down
        q[it] = float(np.clip(tilt, chain.lower[it], chain.upper[it]))
        error = abs(math.remainder(pan - q[ip], 2 * math.pi)) + abs(tilt - q[it])
        return {head.pan_joint: float(q[ip]), head.tilt_joint: float(q[it])}, error

    async def _execute_point_head(self, handle: Any) -> Any:
        from control_msgs.action import PointHead

        result = PointHead.Result()
        goal, p = handle.request, self.profile
        point = goal.target.point
        frame = goal.target.header.frame_id
        if frame not in ("", p.base_frame) or not _finite(point.x, point.y, point.z, goal.max_velocity):
            self.node.get_logger().error(f"point_head: a target in '{frame}' with ({point.x}, {point.y}, {point.z}): "
                                         f"give finite coordinates in {p.base_frame} (the simulation has no tf)")
            with self._lock:
                self._note_goal(handle, ended=True)  # at once
            handle.abort()
            return result
        joints, error = self._aim(np.array([point.x, point.y, point.z]))
        speed = min(float(goal.max_velocity), 1.57) if goal.max_velocity > 0 else 1.57  # the joints' velocity limit
        done = Future()
        with self._lock:
            self.counters["head_goals"] += 1
            if self._head_goal is not None:  # a new goal preempts the running one
                self._end_head(False)
            earliest = self._seconds() + goal.min_duration.sec + goal.min_duration.nanosec * 1e-9
            self._head_goal = (joints, speed, earliest, done, handle)
            self._note_goal(handle, ended=False)
        reached = await done
        feedback = PointHead.Feedback()
        feedback.pointing_angle_error = float(error)  # how far the limits keep it from the target
        handle.publish_feedback(feedback)
        if reached:
            handle.succeed()
        else:
            handle.abort()
        return result

    def _move_head(self, dt: float, now: float) -> None:
        """Turn the head towards its goal for ``dt`` seconds at the goal's speed (under the lock)."""
        assert self._head_goal is not None
        joints, speed, earliest, _, _ = self._head_goal
        for name, goal in joints.items():
            here = self._extra[name]
            self._extra[name] = here + float(np.clip(goal - here, -speed * dt, speed * dt))
        if all(abs(self._extra[n] - v) < 1e-9 for n, v in joints.items()) and now >= earliest:
            self._end_head(True)

    def _end_head(self, reached: bool) -> None:
        """End the running PointHead goal (under the lock)."""
        assert self._head_goal is not None
        done, handle = self._head_goal[3], self._head_goal[4]
        self._head_goal = None
        self._note_goal(handle, ended=True)
        done.set_result(reached)

    def _home_view(self, camera: str) -> str:
        """The home's view a camera renders: a head camera's follows the pan."""
        head = self.profile.head
        if head is not None and camera == head.camera and self.head_chain is not None:
            pan = self._extra[head.pan_joint]
            if pan > math.pi / 4:
                return "left"
            if pan < -math.pi / 4:
                return "right"
        return self.profile.sim.views[camera]

    # ---- control_msgs actions (a trajectory arm and a GripperCommand gripper) -------------------------
    def _serve_actions(self) -> list[Any]:
        p = self.profile
        if "trajectory" not in p.arm and "command" not in p.gripper and self.head_chain is None and self.lift is None:
            return []
        from control_msgs.action import FollowJointTrajectory, GripperCommand, PointHead
        from rclpy.action import ActionServer, CancelResponse

        group = ReentrantCallbackGroup()
        servers = []
        if p.head is not None and self.head_chain is not None:
            servers.append(ActionServer(self.node, PointHead, p.topic(p.head.point.name), self._execute_point_head,
                                        callback_group=group))
        if "trajectory" in p.arm:
            servers.append(ActionServer(self.node, FollowJointTrajectory, p.topic(p.arm["trajectory"].name), self._execute_trajectory,
                                        callback_group=group, cancel_callback=lambda _: CancelResponse.ACCEPT))
        if "command" in p.gripper:
            servers.append(ActionServer(self.node, GripperCommand, p.topic(p.gripper["command"].name), self._execute_gripper,
                                        callback_group=group))
        if self.lift is not None and p.torso is not None:
            servers.append(ActionServer(self.node, FollowJointTrajectory, p.topic(p.torso.trajectory.name), self._execute_lift,
                                        callback_group=group))
        return servers

    def _reject_trajectory(self, handle: Any, result: Any, reason: str) -> Any:
        """A FollowJointTrajectory goal that cannot run: aborted at once with INVALID_JOINTS and the reason."""
        result.error_code, result.error_string = result.INVALID_JOINTS, reason
        with self._lock:
            self._note_goal(handle, ended=True)  # at once
        handle.abort()
        return result

    async def _execute_lift(self, handle: Any) -> Any:
        """The torso's trajectory controller: the lift moves to the final point (``homiebot.robots.lift``)."""
        from control_msgs.action import FollowJointTrajectory

        assert self.lift is not None
        result = FollowJointTrajectory.Result()
        try:
            target, seconds = self.lift.goal(handle.request.trajectory)
        except ValueError as err:
            return self._reject_trajectory(handle, result, str(err))
        done = Future()
        with self._lock:
            self.counters["torso_goals"] = self.counters.get("torso_goals", 0) + 1
            if self._lift_goal is not None:  # a new goal preempts the running one
                self._end_lift((FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED, "preempted by a new goal"))
            self.lift.start(target, seconds)
            self._lift_goal = (done, handle)
            self._note_goal(handle, ended=False)
        result.error_code, result.error_string = await done
        if result.error_code == FollowJointTrajectory.Result.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return result

    def _move_lift(self, dt: float) -> None:
        """Move the torso for ``dt`` seconds (under the lock); joint_states carry it. The home's hand stays where
        it is (the home's arm stands in for Fetch's): at the end the arm's joints are solved again for it."""
        assert self.lift is not None and self.kinematics is not None
        reached = self.lift.advance(dt)
        self.kinematics.hold(self.lift.joint, self.lift.value)
        if reached:
            if self._arm_q is not None:
                self._arm_q = self._joints_of_home(self._arm_q)
            self._end_lift((0, ""))  # SUCCESSFUL

    def _end_lift(self, outcome: tuple[int, str]) -> None:
        """End the running torso goal with (error code, text) (under the lock)."""
        assert self._lift_goal is not None
        done, handle = self._lift_goal
        self._lift_goal = None
        self._note_goal(handle, ended=True)
        done.set_result(outcome)

    def _joints_of_home(self, seed: np.ndarray) -> np.ndarray:
        """The table's joints for where the home's hand is (the seed when the table cannot reach it)."""
        assert self.kinematics is not None
        here, yaw = self.robot.gripper_pose()
        try:
            return self.kinematics.inverse(here, yaw, seed=seed, spread=False)  # in the spinning thread: keep it short
        except Unreachable as err:
            self.node.get_logger().warning(f"joint_states: the home's hand is out of the table's reach: {err}")
            return np.asarray(seed, dtype=float)

    def _trajectory_goal(self, goal: Any) -> tuple[np.ndarray, float]:
        """The final point's joints in table order and its time; WireError naming what is wrong."""
        assert self.kinematics is not None
        traj = goal.trajectory
        names = list(traj.joint_names)
        if sorted(names) != sorted(self.kinematics.names):
            raise WireError(f"the trajectory's joints {names} are not the arm's {self.kinematics.names}")
        if not traj.points:
            raise WireError("a trajectory without points")
        last = traj.points[-1]
        if len(last.positions) != len(names) or not _finite(*last.positions):
            raise WireError("the final point needs one finite position per joint")
        by_name = dict(zip(names, (float(v) for v in last.positions)))
        q = np.array([by_name[n] for n in self.kinematics.names])
        outside = [n for n, v, lo, hi in zip(self.kinematics.names, q, self.kinematics.lower, self.kinematics.upper)
                   if not lo - 1e-6 <= v <= hi + 1e-6]
        if outside:
            raise WireError(f"the final point is outside the joint limits of {outside}")
        return q, last.time_from_start.sec + last.time_from_start.nanosec * 1e-9

    async def _execute_trajectory(self, handle: Any) -> Any:
        from control_msgs.action import FollowJointTrajectory

        assert self.kinematics is not None
        result = FollowJointTrajectory.Result()
        try:
            q, seconds = self._trajectory_goal(handle.request)
        except WireError as err:
            return self._reject_trajectory(handle, result, str(err))
        done = Future()
        ee = self.kinematics.forward(q)
        with self._lock:
            self.counters["arm_goals"] += 1
            if self._trajectory is not None:  # a new goal preempts the running one, as the controller does
                self._end_trajectory((FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED, "preempted by a new goal"))
            self._ee_goal = (ee.position, ee.yaw)
            # the hand moves at the speed limit: a step takes its time (a joint-space path may be longer); twice that is a hand that cannot get there
            self._trajectory = (done, q, self._seconds() + 2.0 * seconds + 0.5, handle)
            self._note_goal(handle, ended=False)
        code, message = await done
        result.error_code, result.error_string = code, message
        if code is None:  # cancelled: the arm stopped where it was
            result.error_code, result.error_string = FollowJointTrajectory.Result.SUCCESSFUL, message
            handle.canceled()
        elif code == FollowJointTrajectory.Result.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return result

    def _trajectory_progress(self, before: np.ndarray, before_yaw: float, message: str) -> None:
        """After a tick's arm motion: end the running trajectory when there, blocked, late or cancelled (under the lock)."""
        from control_msgs.action import FollowJointTrajectory

        assert self._trajectory is not None and self.kinematics is not None
        done, q, deadline, handle = self._trajectory
        here, yaw = self.robot.gripper_pose()
        if handle.is_cancel_requested:
            code, text = None, "cancelled"
        elif self._ee_goal is None:
            code, text = FollowJointTrajectory.Result.SUCCESSFUL, ""
        elif float(np.linalg.norm(here - before)) < 1e-5 and abs(yaw - before_yaw) < 1e-5:
            code, text = FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED, message or "the arm is blocked"
        elif self._seconds() > deadline:
            code, text = FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED, "the arm did not get there in time"
        else:
            return
        self._arm_q = self._joints_of_home(q)
        self._ee_goal = None
        self._end_trajectory((code, text))

    def _end_trajectory(self, outcome: tuple[int | None, str]) -> None:
        """End the running trajectory goal with (error code or None when cancelled, text) (under the lock)."""
        assert self._trajectory is not None
        done, handle = self._trajectory[0], self._trajectory[3]
        self._trajectory = None
        self._note_goal(handle, ended=True)
        done.set_result(outcome)

    def _note_goal(self, handle: Any, ended: bool) -> None:
        """Note a timed goal as running or ended (under the lock); the oldest notes go."""
        self._goals[bytes(handle.goal_id.uuid).hex()] = ended  # as the client reads its goal_id
        while len(self._goals) > 256:
            self._goals.popitem(last=False)

    def _execute_gripper(self, handle: Any) -> Any:
        from control_msgs.action import GripperCommand

        result = GripperCommand.Result()
        position, gap = float(handle.request.command.position), self.profile.gripper_max_gap
        if not _finite(position):
            handle.abort()
            return result
        with self._lock:
            self.counters["gripper_goals"] += 1
            self.robot.set_gripper(1.0 - min(max(position / gap, 0.0), 1.0))
            state = self.robot.gripper_state()
        result.position = float(state.open_fraction * gap)
        result.stalled = bool(state.holding)  # the fingers stopped on something before the goal
        result.reached_goal = not result.stalled
        result.effort = float(handle.request.command.max_effort) if result.stalled else 0.0
        handle.succeed()
        return result

    # ---- privileged experts, computed from the home's truth ---------------------------------------------
    def expert_reset(self, name: str, params: dict[str, Any], instruction: str, subtask: Subtask) -> PrivilegedPolicy:
        """Start an expert policy (``name``: a registered expert, e.g. expert_waypoints) on a subtask."""
        from homiebot.skills.policy_skill import make_policy

        policy = make_policy(name, **params)
        if not isinstance(policy, PrivilegedPolicy):
            raise ValueError(f"'{name}' is not an expert policy of the simulator")
        with self._lock:
            policy.attach(self.world, self.robot, subtask)
            policy.reset(instruction, None)
            self._expert = policy
        return policy

    def expert_act(self) -> tuple[list[Command], str]:
        """The expert's next commands from the home's present truth, and why it cannot plan (or "")."""
        with self._lock:
            if self._expert is None:
                raise LookupError("no expert: call expert/reset first")
            commands = self._expert.act(PolicyObservation(rgb=np.zeros((1, 1, 3), dtype=np.uint8)))
            self.counters["expert_acts"] += 1
            return commands, self._expert.diagnosis()

    def goal_holds(self, goal: Any) -> bool:
        """Whether the task goal conditions ``goal`` (the task format's list) hold in the home now."""
        task = Task.model_validate({"instruction": "-", "scene_seed": 0, "goal": goal})
        with self._lock:
            return bool(self.world.goal_satisfied(task.goal or []))

    def restart(self) -> dict[str, float]:
        """The home back to its initial state for a new episode; commands dropped, power kept."""
        with self._lock:
            self.world.reset()
            self._cmd, self._ee_goal, self._expert = None, None, None
            if self._trajectory is not None:
                self._end_trajectory((-4, "the simulation restarted"))  # PATH_TOLERANCE_VIOLATED
            if self.kinematics is not None:
                self._arm_q = self._joints_of_home(self.kinematics.rest)
            if self._head_goal is not None:
                self._end_head(False)
            self._extra, self._head_goal, self._hand = dict(self._extra_start), None, None  # the head to the front
            r = self.world.state.robot
            if self.lockstep:
                self.sim_ns += 1_000_000  # what is published from now on is told apart from before the restart
                self._sent_frames = []  # the cameras of the new instant are rendered
            stamp = self._stamp_ns()
            self._publish_state(truth=True)
            return {"x": r.x, "y": r.y, "yaw": r.yaw, "stamp": stamp}

    # ---- the simulation, in real time -------------------------------------------------------------
    def _seconds(self) -> float:
        """The driver's clock: simulated seconds in lock-step, else the monotonic clock."""
        return self.sim_ns / 1e9 if self.lockstep else time.monotonic()

    def _stamp_ns(self) -> int:
        """Message stamps: simulated time in lock-step, else the wall clock."""
        return self.sim_ns if self.lockstep else time.time_ns()

    def _state_tick(self) -> None:
        now = time.monotonic()
        with self._lock:
            dt = min(now - self._last_tick, 0.1)  # a stalled timer must not teleport the robot
            self._last_tick = now
            if not self.lockstep:  # in lock-step only `step` moves the simulation; the streams go on
                self._advance(dt, now)
            self._frame += 1
            self._publish_state(truth=self._frame % 10 == 0)

    def _advance(self, dt: float, now: float) -> None:
        """Apply the held velocity and the arm goal for ``dt`` seconds (``now``: the driver's clock)."""
        cmd = self._cmd
        can_move = self.powered and self.standing
        if cmd is not None and now - cmd[2] > self.profile.cmd_vel_timeout:
            self._cmd, cmd = None, None
            self.counters["timeouts"] += 1
        if cmd is not None and can_move and dt > 0:
            self.robot.drive(cmd[0], cmd[1], dt)
            self.counters["applied"] += 1
        if self._head_goal is not None and can_move and dt > 0:
            self._move_head(dt, now)
        if self._lift_goal is not None and can_move and dt > 0:
            self._move_lift(dt)
        if self._ee_goal is not None and can_move and dt > 0:
            here, here_yaw = self.robot.gripper_pose()
            step, turn = self._ee_goal[0] - here, math.remainder(self._ee_goal[1] - here_yaw, 2 * math.pi)
            message = ""
            if float(np.linalg.norm(step)) < 0.005 and abs(turn) < 0.01:
                self._ee_goal = None
            else:
                said = self.robot.move_end_effector(step, [0.0, 0.0, turn], dt).message.split("; ")
                # the goal is approached at the speed limit on purpose: only the other reasons say why the arm stopped
                message = "; ".join(m for m in said if m and not m.startswith("the step was limited"))
                if "out of the arm's reach" in message and self._trajectory is not None and float(np.linalg.norm(step)) > 0.05:
                    # a joint trajectory does not move the hand on a straight line, which may cross the body:
                    # far goals the home's arm reaches are reached by its own joint-space motion
                    if not self.robot.ready(tuple(self._ee_goal[0])).clipped:
                        message = ""
            if self._trajectory is not None:
                self._trajectory_progress(here, here_yaw, message)

    def _truth(self, stamp: int) -> dict[str, Any]:
        return {"robot": self.profile.robot, "stamp": stamp, "dynamic": self.world.state.dynamic(), "belief": take_snapshot(self.world.belief),
                "powered": self.powered, "standing": self.standing, "labels": self.labels, "counters": dict(self.counters)}

    def _publish_state(self, truth: bool) -> None:
        stamp = self._stamp_ns()
        if self.clock_pub is not None:
            self.clock_pub.publish(Clock(clock=stamp_of(stamp)))
        self.odom_pub.publish(self._odometry(stamp))
        if self.joint_pub is not None:
            self.joint_pub.publish(self._joints(stamp))
        if self.gripper_state_pub is not None:
            gripper = self.robot.gripper_state()
            self.gripper_state_pub.publish(manipulator_state(self.profile.robot, gripper.open_fraction, bool(gripper.holding)))
        if truth:
            self.truth_pub.publish(ground_truth_msg(self._truth(stamp)))

    # ---- lock-step ------------------------------------------------------------------------------------
    def truth_now(self) -> dict[str, Any]:
        """The truth message of this instant (lock-step readers ask instead of waiting for the topic)."""
        with self._lock:
            return self._truth(self._stamp_ns())

    def step(self, seconds: float, after: dict[str, int], until: str | None) -> tuple[int, dict[str, int]]:
        """Advance simulated time by ``seconds`` in ticks of the state period, once the commands the caller
        sent before (``after``: counter -> count, e.g. {"cmd_vel": 12}) have arrived; with ``until`` (an
        action goal's id, hex) once that goal is running, and only until the tick it ended. Then publish
        the state and the cameras of the new instant. Lock-step only."""
        if not self.lockstep:
            raise ValueError("the sim driver runs in real time; start it with lockstep:=true (sim_driver: {lockstep: true})")
        if not (math.isfinite(seconds) and 0.0 <= seconds <= 60.0):
            raise ValueError(f"step seconds must be within [0, 60], not {seconds}")
        deadline = time.monotonic() + 10.0
        # ordering: the commands and the goal first, then the step
        while any(self.counters.get(k, 0) < n for k, n in after.items()) or (until is not None and until not in self._goals):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the commands sent before this step ({after}{', goal ' + until if until else ''}) did not arrive "
                                   f"within 10 s (have {self.counters})")
            time.sleep(0.002)
        dt = 1.0 / self.profile.sim.state_rate_hz
        with self._lock:
            for _ in range(round(seconds / dt)):
                if until is not None and self._goals.get(until):
                    break
                self.sim_ns += round(dt * 1e9)
                self._advance(dt, self.sim_ns / 1e9)
            self._publish_state(truth=True)
        self._camera_tick()  # the views of this instant, stamped with it
        return self.sim_ns, dict(self.counters)

    def _odometry(self, stamp: int) -> Odometry:
        r = self.world.state.robot
        msg = Odometry()
        msg.header.stamp = stamp_of(stamp)
        msg.header.frame_id = self.profile.odom_frame
        msg.child_frame_id = self.profile.base_frame
        msg.pose.pose.position.x, msg.pose.pose.position.y = r.x, r.y
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = math.sin(r.yaw / 2), math.cos(r.yaw / 2)
        cmd = self._cmd if self.powered and self.standing else None
        msg.twist.twist.linear.x, msg.twist.twist.angular.z = (cmd[0], cmd[1]) if cmd else (0.0, 0.0)
        return msg

    def _joints(self, stamp: int) -> JointState:
        msg = JointState()
        msg.header.stamp = stamp_of(stamp)
        extra = list(self._extra)  # a head's joints (before the arm's: the arm's stay last)
        name = self.profile.joint_name
        if self.kinematics is not None and self._arm_q is not None:  # the robot's own joint names
            held = [j for j in self.kinematics.joints if j.value is not None]
            msg.name = [name(n) for n in [j.name for j in held] + extra + list(self.kinematics.names)]
            msg.position = [float(j.value or 0.0) for j in held] + [self._extra[n] for n in extra] + [float(v) for v in self._arm_q]
            return msg
        if self.hand_table is not None:  # a pose-goal arm: its table's joints where the home's hand is
            q = self._hand_joints()
            msg.name = [name(n) for n in extra + list(self.hand_table.names)]
            msg.position = [self._extra[n] for n in extra] + [float(v) for v in q]
            if self.profile.gripper_joint is not None:  # the fingers, between their open and closed positions
                joint, opened, closed = self.profile.gripper_joint
                fraction = self.robot.gripper_state().open_fraction
                msg.name.append(name(joint))
                msg.position.append(float(closed + fraction * (opened - closed)))
            return msg
        arm = self.robot.arm_state()
        msg.name = list(arm.joint_names) + [name(n) for n in extra]
        msg.position = [float(v) for v in arm.joint_positions] + [self._extra[n] for n in extra]
        return msg

    # ---- cameras -------------------------------------------------------------------------------------
    def _camera_pubs(self, spec: CameraSpec) -> tuple[Any, Any, Any]:
        p = self.profile
        image = self.node.create_publisher(Image, p.topic(spec.image), 5)
        info = self.node.create_publisher(CameraInfo, p.topic(spec.info), 5) if spec.info else None
        depth = self.node.create_publisher(Image, p.topic(spec.depth), 5) if spec.depth else None
        return image, info, depth

    def _camera_timer(self) -> None:
        """The camera streams: rendered at their rate in real time; in lock-step nothing moves between
        steps, so the instant's messages are sent again (for late subscribers) without rendering again."""
        if not self.lockstep or not self._sent_frames:  # (none yet: at start-up and after a restart)
            self._camera_tick()
            return
        for pub, msg in self._sent_frames:
            pub.publish(msg)

    def _camera_tick(self) -> None:
        """Render and publish each camera in turn, stamped when it is rendered (as a camera stamps at capture)."""
        sent: list[tuple[Any, Any]] = []
        for name in self.cams:
            spec = self.profile.cameras[name]
            raw = self.size or (spec.height, spec.width)  # the image as the driver publishes it
            upright = render_shape(raw, spec.rotation_deg)
            with self._lock:
                view = self.robot.render(upright, (self._home_view(name),), fovy=_render_fovy(spec, raw, upright),
                                         segmentation=name in self.seg_pubs)
            frame = next(iter(view.values()))
            stamp = self._stamp_ns()
            image_pub, info_pub, depth_pub = self.cams[name]
            messages = [(image_pub, _image(frame.rgb, spec, raw, stamp, name))]
            if info_pub is not None:
                messages.append((info_pub, _camera_info(raw, spec, stamp, name)))
            if depth_pub is not None and frame.depth is not None:  # by the nearest pixel: depth is never blended
                depth = to_mounted(frame.depth, spec.rotation_deg, raw, order=0)
                messages.append((depth_pub, to_image(depth, "depth", stamp, name)))
            if name in self.seg_pubs and frame.segmentation is not None:
                ids = to_mounted(frame.segmentation, spec.rotation_deg, raw, order=0)
                messages.append((self.seg_pubs[name], to_image(ids, "segmentation", stamp, name)))
            for pub, msg in messages:
                pub.publish(msg)
            sent += messages
        self._sent_frames = sent

    def close(self) -> None:
        with self._estop_lock:
            self._closed = True
            if self._estop_timer is not None:
                self._estop_timer.cancel()
        for executor in (self._services_executor, self._driver_executor):  # no handler left to use the home it closes
            if executor is not None:
                executor.shutdown(timeout_sec=2.0)
        self._services_node.destroy_node()
        if self._driver_node is not self._services_node:
            self._driver_node.destroy_node()
        for server in self._action_servers:
            server.destroy()
        self.world.close()


def _size(text: str) -> tuple[int, int] | None:
    """``"120x160"`` -> (120, 160); empty: each camera's own resolution."""
    if not text:
        return None
    h, _, w = text.partition("x")
    return int(h), int(w)


def _focal(spec: CameraSpec, raw: tuple[int, int]) -> float:
    """The focal length (pixels) of a camera publishing ``raw`` (height, width): its field of view spans
    the published width; with square pixels the upright render has the same."""
    return 0.5 * raw[1] / math.tan(math.radians(spec.hfov_deg) / 2)


def _render_fovy(spec: CameraSpec, raw: tuple[int, int], upright: tuple[int, int]) -> float:
    """The vertical field of view of the upright render (``upright`` = height, width) at the camera's focal length."""
    return math.degrees(2 * math.atan(0.5 * upright[0] / _focal(spec, raw)))


def _image(rgb: np.ndarray, spec: CameraSpec, raw: tuple[int, int], stamp: int, frame: str) -> Image:
    """The upright render as the mounted camera gives it: turned into the published ``raw`` frame (bilinear),
    in the profile's encoding."""
    if spec.encoding == "mono8":  # grey before turning: a third of the work
        data = (rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)).round().astype(np.uint8)
        channels = 1
    else:
        data = rgb[:, :, ::-1] if spec.encoding == "bgr8" else rgb
        channels = 3
    data = to_mounted(data, spec.rotation_deg, raw)
    msg = Image(height=data.shape[0], width=data.shape[1], encoding=spec.encoding, is_bigendian=0, step=data.shape[1] * channels)
    msg.header.stamp = stamp_of(stamp)
    msg.header.frame_id = frame
    msg.data = data.tobytes()
    return msg


def _camera_info(raw: tuple[int, int], spec: CameraSpec, stamp: int, frame: str) -> CameraInfo:
    """The intrinsics of the published image (as a driver gives them: of the sensor's frame, before any turning)."""
    h, w = raw
    f = _focal(spec, raw)
    return to_camera_info(h, w, (f, f, (w - 1) / 2, (h - 1) / 2), stamp, frame)


def _estop_after(value: Any, profile: RobotProfile | None) -> float | None:
    """When the simulated operator registers an E-Stop (seconds from start-up; None: never), from the node
    parameter: empty for the profile's ``sim.estop_registered_after``, ``never`` or a negative number for never."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "":
            return profile.sim.estop_registered_after if profile is not None else None
        if text == "never":
            return None
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"estop_registered_after must be seconds, 'never' or empty, not '{value}'") from None
    seconds = float(value)
    if not math.isfinite(seconds):
        raise ValueError(f"estop_registered_after must be finite, not {value}")
    return None if seconds < 0 else seconds


def _estop_check(value: Any) -> str | None:
    """A parameter check: the error text of a wrong ``estop_registered_after``, or None."""
    try:
        _estop_after(value, None)
    except ValueError as err:
        return str(err)
    return None


PARAMS = (Param("robot", "spot", "robot profile: a name in config/robots or a YAML file"),
          Param("scene", "0", "the home: a seed (an integer) or a scene YAML file", types=(int,)),
          Param("camera_size", "", "publish every camera at HEIGHTxWIDTH (empty: each camera's own resolution)"),
          Param("estop_registered_after", "", "for a driver that waits for an operator's E-Stop (the profile's "
                "estop_registration): seconds until the simulated operator registers one; 'never' or a negative "
                "number: never; empty: the profile's sim.estop_registered_after", _estop_check, types=(float, int)),
          Param("lockstep", False, "simulated time advances only on `step` calls (reproducible episodes) and is published on /clock"))

NODE = NodeDef("sim_driver", SimDriver, PARAMS, managed=False)  # as the real drivers: no lifecycle services


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
