"""``Ros2Robot``: the Robot interface over a robot driver's ROS 2 topics and services, as a profile names them.

Streams (odometry, joint states, camera images and camera_info, registered depth) are subscribed and
the newest sample of each is kept; commands are published (``cmd_vel`` re-sent at 20 Hz while a
velocity is held, so the driver's own timeout never fires mid-command and does fire when this
process dies) and Trigger services are called with a timeout. Nothing here knows which robot it
drives: ``config/robots/spot.yaml`` and ``fetch.yaml`` say that; the sim driver serves the embedded
home under the same names.

``Ros2Robot`` assembles one part per subsystem, each owning its subscriptions, clients and state, and
delegates to them: ``DriverHealth`` (odometry, a silent or restarted driver; ``DriverWatch``: the driver's own
node; ``DriverStatus``: its E-Stop, power and fault status), ``JointStates``,
``Cameras``, ``Base`` (cmd_vel), ``PoseArm`` (end-effector goals, Spot), ``TrajectoryArm`` (joint
trajectories, Fetch), ``Gripper``, ``Head``, ``Torso``, ``TriggerServices`` and ``ActionGoals``; time
comes from ``LockStep`` (the wall clock, or a lock-step simulation's steps). Their modules say how each works.

* homiebot's e-stop also runs the profile's ``estop`` services (Spot: ``stop``); its release runs
  ``estop_release`` (Spot: none) before motion resumes. A driver's own ``estop/*`` services are the
  operator's and are never called (the profile refuses procedures that would).
* ``start()`` waits for every stream the profile names (a name nobody publishes fails within
  ``connect_timeout``, naming it) and runs the profile's start-up services (Spot: claim, power_on,
  stand); ``close()`` runs the shut-down services. A driver that serves only once an operator's E-Stop
  is registered (``estop_registration``: spot_ros2 advertises its services but answers none before) is
  waited for up to the profile's ``estop_registration.wait``, then start-up fails saying so in one line; one
  whose node says it runs with ``start_estop: true`` is refused before anything is claimed
  (``driver_params``: homiebot's E-Stop promise holds only with false).
* Bringing the robot up (at start-up, and again for a restarted driver) puts a torso at the profile's
  ``height`` once the start-up services ran.
"""

from __future__ import annotations

import time

import numpy as np
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import Image

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
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.driver_check import describe_no_estop, driver_answers
from homiebot.ros.clients.robot.actions import ActionGoals
from homiebot.ros.clients.robot.base import Base
from homiebot.ros.clients.robot.cameras import Cameras
from homiebot.ros.clients.robot.driver_params import start_estop_problem
from homiebot.ros.clients.robot.driver_watch import DriverWatch
from homiebot.ros.clients.robot.gripper import Gripper
from homiebot.ros.clients.robot.hand_motion import bridge_limits
from homiebot.ros.clients.robot.head import Head
from homiebot.ros.clients.robot.health import DriverHealth
from homiebot.ros.clients.robot.joints import JointStates
from homiebot.ros.clients.robot.lockstep import LockStep, RenderFunction, StepFunction
from homiebot.ros.clients.robot.pose_arm import PoseArm
from homiebot.ros.clients.robot.services import TriggerServices
from homiebot.ros.clients.robot.torso import Torso
from homiebot.ros.clients.robot.trajectory_arm import TrajectoryArm
from homiebot.ros.kit.common import init, spin_in_background


class Ros2Robot(Robot):
    """A robot reached through its driver's ROS 2 interfaces (see the module doc)."""

    def __init__(self, profile: RobotProfile, node: Node | None = None, connect_timeout: float = 30.0,
                 stale_after: float = 1.0, call_timeout: float = 10.0, view_aliases: bool = False,
                 step: StepFunction | None = None, render: RenderFunction | None = None) -> None:
        """``view_aliases``: also answer to the planner's view names (front, left, back, right) for the
        cameras the profile's ``views`` name (what mapped perception asks for). ``step``: lock-step
        simulation (the sim driver's ``step``: seconds, the driver's command counts to wait for and an
        action goal's id to run until it ended, or None -> the new simulated time in ns and the driver's
        counts); every wait for motion then advances simulated time instead of sleeping, after the
        commands sent before it arrived, and a trajectory or head goal's result is awaited after a step
        that ran until the driver ended it. ``render`` (lock-step): the driver renders cameras on demand
        (the sim driver's ``render``): each step renders only the cameras read at the instant before."""
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
        self._unanswered = False  # the driver answered none of its services (no E-Stop): its shut-down would only time out
        self.lockstep = LockStep(step, render)
        self.health = DriverHealth(node, profile, self.lockstep, stale_after, call_timeout, self._bring_up)
        self.driver_watch = self.health.driver_watch = DriverWatch(node, profile, self._bring_up, stale_after)
        alive = self.health.alive
        self.joints = JointStates(node, profile, self.lockstep)
        self.triggers = TriggerServices(node, profile, call_timeout, self.counters)
        self.actions = ActionGoals(node, self._executor, profile.robot, call_timeout, self.lockstep, alive)
        self.cameras = Cameras(node, profile, self.aliases, self.joints, self.lockstep, alive, call_timeout,
                               lambda: self.health.base_frame)
        self.base = Base(node, profile, self.counters, self.lockstep, alive, stopped=self.cameras.settle)
        self.pose_arm = PoseArm(node, profile, self.joints, self.triggers, self.counters, self.lockstep, alive)
        self.trajectory_arm = TrajectoryArm(node, profile, self.joints, self.actions, self.counters, self.lockstep, alive,
                                            call_timeout)
        self.gripper = Gripper(node, profile, self.triggers, self.actions, self.counters, self.lockstep, alive, call_timeout)
        self.head = Head(node, profile, self.joints, self.cameras, self.actions, self.counters, self.lockstep, alive,
                         call_timeout)
        self.torso = Torso(node, profile, self.joints, self.actions, self.counters, alive, call_timeout)
        # the parts' handles, by the names callers know them
        self.kinematics, self.hand_chain, self.mounts = self.trajectory_arm.kinematics, self.pose_arm.hand_chain, self.cameras.mounts
        self.trajectory_client, self.gripper_client = self.trajectory_arm.client, self.gripper.client
        self.head_client, self.torso_client = self.head.client, self.torso.client
        self.cmd_pub, self.arm_pub = self.base.cmd_pub, self.pose_arm.arm_pub
        self.services, self.call_timeouts = self.triggers.clients, self.triggers.timeouts

    # ---- start-up and shut-down ---------------------------------------------------------------------
    def start(self) -> None:
        """Wait for the driver's streams, then run the profile's start-up services."""
        p = self.profile
        deadline = time.monotonic() + self.connect_timeout
        while True:
            missing = [p.topic(p.odometry.name)] if self.health.latest is None else []
            if self.gripper.reads_state and self.gripper.readings == 0:
                missing.append(p.topic(p.gripper_state.name))  # type: ignore[union-attr]
            missing += self.cameras.missing_images()
            if not missing:
                break
            for camera in self.cameras.missing_cameras():  # lock-step on demand: a step renders only the cameras read
                self.lockstep.ask(camera)
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
        if self.torso_client is not None:  # joint_states carrying the torso (brought to its height below)
            self.torso.wait_measured(deadline)
        self.cameras.wait_for_mounts(deadline)  # cameras placed by joints: joint states carrying them
        if self.kinematics is not None and caps.arm:
            while self.trajectory_arm.joints_of_arm() is None:
                if time.monotonic() > deadline:
                    raise RobotUnavailable(f"{p.robot}: no joint_states on {p.topic(p.joint_states.name) if p.joint_states else '?'} "
                                           f"with the arm's joints {self.kinematics.names} within {self.connect_timeout:.0f} s")
                time.sleep(0.05)
        self.health.watch(deadline)  # from here on closing runs the shut-down procedure (a half-done start-up is undone too)
        self._bring_up()

    def _bring_up(self) -> None:
        """The profile's start-up services (Spot: claim, power on, stand), in order, once the driver answers (a
        driver waiting for an operator's E-Stop is waited for up to the profile's ``estop_registration.wait``)."""
        registration = self.profile.estop_registration
        if registration is not None and not driver_answers(self.profile, registration.wait):
            self._unanswered = True  # nothing was claimed or powered: closing has nothing to undo
            raise RobotUnavailable(describe_no_estop(self.profile))
        self._unanswered = False
        if registration is not None and (problem := start_estop_problem(self.node, self.profile, self.call_timeout)):
            raise RobotUnavailable(problem)  # before anything is claimed or powered
        for role in self.profile.startup:
            self.call(role)
        self.driver_watch.watch()  # the driver's node as brought up: from here on it must answer, a new one is a restart
        self.lockstep.sync()  # lock-step: the driver's counts the next step waits beyond
        if self.torso_client is not None and self.profile.torso is not None:
            self.set_torso(self.profile.torso.height)

    def call(self, role: str) -> str:
        """Call a Trigger service of the profile by role; RobotUnavailable when it fails or does not answer."""
        self.driver_watch.busy(+1)  # the driver may take seconds (power_on): meanwhile it need not answer probes
        try:
            answer = self.triggers.call(role)
        finally:
            self.driver_watch.busy(-1)
        if role == "power_on":  # motor power reported off after this is a loss (the status says so)
            self.health.status.powered_ns = time.time_ns()
        elif role == "power_off":
            self.health.status.powered_ns = -1
        return answer

    def close(self) -> None:
        """Stop, run the profile's shut-down services (when the robot was started and still answers), and
        release the node this bridge made."""
        if getattr(self, "_closed", False):
            return  # the shut-down procedure runs once
        self._closed = True
        try:
            self.stop()
            # a robot whose streams never came was not started, one waiting for an E-Stop never answered, and a
            # driver that stopped publishing is gone: their services would only time out one by one
            for role in self.profile.shutdown if self.health.started and not self._unanswered else ():
                if not self.health.publishing():
                    break  # gone, or it went during the previous call
                try:
                    self.call(role)
                except (RobotUnavailable, Unsupported):
                    pass  # shutting down a robot that is already gone
        finally:
            self.driver_watch.stop()
            if self._executor is not None:
                self._executor.shutdown()
                self.node.destroy_node()

    # ---- description and sensing ------------------------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """The profile's cameras (and view aliases), depth, arm and gripper unless unverified."""
        p = self.profile
        depth = tuple(c for c, s in p.cameras.items() if s.depth)
        cameras = tuple(p.cameras) + tuple(a for a in self.aliases if a not in p.cameras)
        depth += tuple(a for a, c in self.aliases.items() if c in depth and a not in depth)
        return Capabilities(cameras=cameras, base=True, arm=bool(p.arm) and "arm" not in p.unverified,
                            gripper=bool(p.gripper) and "gripper" not in p.unverified, head=False,
                            depth=depth, policy_camera=p.policy_camera)

    @property
    def limits(self) -> RobotLimits:
        """The profile's limits."""
        return bridge_limits(self.profile)

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        """A camera's geometry at ``size`` (see ``Cameras.info``)."""
        return self.cameras.info(camera, size)

    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        """The newest frame of a camera (see ``Cameras.read``)."""
        return self.cameras.read(camera, size, depth)

    def odometry(self) -> BasePose:
        """The newest base pose; RobotUnavailable when the driver is silent."""
        return self.health.alive()

    def arm_state(self) -> ArmState:
        """The hand measured through the kinematic table, else the pose arm's estimate, with the joint states."""
        if not self.capabilities.arm:
            raise Unsupported(f"{self.profile.robot} has no arm the bridge can command")
        joints = self.joints.latest
        names = tuple(joints.name) if joints is not None else ()
        positions = tuple(float(v) for v in joints.position) if joints is not None else ()
        if self.kinematics is not None:  # the hand from the measured joints
            ee = self.kinematics.forward(self.trajectory_arm.measured_joints())
            return ArmState(ee.position, ee.yaw, names, positions)
        return ArmState(self.pose_arm.ee.copy(), self.pose_arm.ee_yaw, names, positions)

    def gripper_state(self) -> GripperState:
        """The gripper's opening and whether it holds something (see ``Gripper.state``)."""
        if not self.capabilities.gripper:
            raise Unsupported(f"{self.profile.robot} has no gripper the bridge can command")
        return self.gripper.state()

    def clock(self) -> float:
        """Simulated seconds in lock-step (time passes only in steps), else the monotonic clock."""
        return self.lockstep.clock()

    @property
    def instant(self) -> int:
        """The stamp (ns) before which odometry and images are stale (lock-step: the simulated instant);
        -1 when nothing was said."""
        return self.lockstep.sim_ns

    def expect_instant(self, ns: int) -> None:
        """Odometry and images stamped before ``ns`` are stale from now on: after a restart of the
        simulation, or (lock-step) a step another process took. Readers wait for newer ones."""
        self.lockstep.expect_instant(ns)

    # ---- commands --------------------------------------------------------------------------------------
    def drive(self, linear: float, angular: float, duration: float) -> MotionReport:
        """Hold a base velocity for ``duration`` seconds (see ``Base.drive``)."""
        return self.base.drive(linear, angular, duration)

    def hold(self, duration: float) -> MotionReport:
        """Stand still for ``duration`` seconds."""
        return self.drive(0.0, 0.0, duration)

    def stop(self) -> None:
        """The base to zero velocity, now."""
        self.base.stop()

    def emergency_stop(self) -> None:
        """Stop, and run the profile's ``estop`` services (never the driver's own e-stop)."""
        self.stop()
        self.gripper.forget()  # a power cut may drop what the gripper held to
        for role in self.profile.estop:  # e.g. Spot's stop
            try:
                self.call(role)
            except (RobotUnavailable, Unsupported) as err:
                self.node.get_logger().error(f"e-stop: {err}")

    def emergency_release(self) -> None:
        """Run the profile's ``estop_release`` services."""
        for role in self.profile.estop_release:  # e.g. estop/release, power_on, stand
            self.call(role)

    def move_end_effector(self, translation: np.ndarray, rotation: np.ndarray, duration: float) -> MotionReport:
        """Move the hand by a base-frame delta: by joint trajectories where the profile has a table for them,
        else by pose goals."""
        if self.kinematics is not None and self.capabilities.arm:
            return self.trajectory_arm.move(translation, rotation, duration)
        if self.arm_pub is None or not self.capabilities.arm:
            raise Unsupported(f"{self.profile.robot} has no arm the bridge can command")
        return self.pose_arm.move(translation, rotation, duration)

    def set_gripper(self, closedness: float) -> MotionReport:
        """The gripper to ``closedness`` (see ``Gripper.set``)."""
        if not self.capabilities.gripper:
            raise Unsupported(f"{self.profile.robot} has no gripper the bridge can command")
        return self.gripper.set(closedness)

    def stow_arm(self) -> MotionReport:
        """The profile's ``arm_stow`` service, else a trajectory to ``arm_ready``."""
        if "arm_stow" not in self.services and self.kinematics is not None and self.capabilities.arm:
            return self.trajectory_arm.stow()
        if "arm_stow" not in self.services:
            raise Unsupported(f"{self.profile.robot}'s profile has no arm_stow service")
        return self.pose_arm.stow()

    def look(self, view: str = "front") -> MotionReport:
        """Turn the head to the profile's point for ``view`` (see ``Head.look``)."""
        return self.head.look(view)

    def set_torso(self, height: float) -> MotionReport:
        """Put the torso lift at ``height`` (see ``Torso.set``)."""
        return self.torso.set(height)

    # ---- the parts' state, as checks read it ------------------------------------------------------------
    @property
    def _odom(self) -> tuple[BasePose, float] | None:
        return self.health.latest

    @property
    def _ee_yaw(self) -> float:
        return self.pose_arm.ee_yaw

    @_ee_yaw.setter
    def _ee_yaw(self, yaw: float) -> None:
        self.pose_arm.ee_yaw = yaw

    def _frames(self, camera: str) -> tuple[Image | None, Image | None]:
        return self.cameras.frames(camera)

    def _measured_hand_pose(self) -> tuple[np.ndarray, float] | None:
        return self.pose_arm.measured_hand_pose()

    def _measured_joints(self) -> np.ndarray:
        return self.trajectory_arm.measured_joints()

    def _torso_height(self) -> float:
        return self.torso.height()


__all__ = ["Ros2Robot"]
