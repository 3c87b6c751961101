"""The sim driver node's component: the embedded home served under a robot profile's ROS 2 names and types,
assembled from one part per subsystem (see the package doc). It owns what the parts share (the lock, the
command counters, the clock, the timed goals' notes), runs the simulation tick and lock-step's ``step``, and
answers the simulator-only services (``homiebot.ros.nodes.sim_services``)."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from homiebot.core.contracts import Subtask
from homiebot.policies.base import Command, PrivilegedPolicy
from homiebot.robots.profile import RobotProfile, load_profile
from homiebot.ros.kit.common import spin_in_background
from homiebot.ros.nodes.sim_driver.arm import SimArm
from homiebot.ros.nodes.sim_driver.base import SimBase
from homiebot.ros.nodes.sim_driver.cameras import SimCameras
from homiebot.ros.nodes.sim_driver.chains import CameraChains
from homiebot.ros.nodes.sim_driver.clock import SimClock
from homiebot.ros.nodes.sim_driver.driver_part import DriverPart
from homiebot.ros.nodes.sim_driver.estop import EStopRegistration, _estop_after
from homiebot.ros.nodes.sim_driver.expert_policies import ExpertPolicies
from homiebot.ros.nodes.sim_driver.frames import publish_camera_frames
from homiebot.ros.nodes.sim_driver.goals import GoalNotes
from homiebot.ros.nodes.sim_driver.gripper import SimGripper
from homiebot.ros.nodes.sim_driver.head import SimHead
from homiebot.ros.nodes.sim_driver.images import camera_size
from homiebot.ros.nodes.sim_driver.joint_states import JointStates
from homiebot.ros.nodes.sim_driver.lease import SimLease, lease_holder
from homiebot.ros.nodes.sim_driver.power import Power
from homiebot.ros.nodes.sim_driver.status import SimStatus
from homiebot.ros.nodes.sim_driver.torso import SimTorso
from homiebot.ros.nodes.sim_driver.trajectory import TrajectoryArm
from homiebot.ros.nodes.sim_driver.triggers import DriverTriggers
from homiebot.ros.nodes.sim_driver.truth import TruthStream
from homiebot.ros.nodes.sim_driver.upstream import cmd_duration
from homiebot.ros.nodes.sim_services import serve_sim_services
from homiebot.worlds.home.control import HomeControl
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.world import EmbeddedHome

MAX_TICK_S = 0.1  # a stalled timer must not teleport the robot
TRUTH_EVERY = 10  # state ticks per truth message in real time
STATUS_EVERY = 5  # state ticks per status message (E-Stop, power, faults) in real time
STEP_WAIT_S = 10.0  # how long a step waits for the commands sent before it
RESTART_NS = 1_000_000  # lock-step: what is published after a restart is told apart from before it


class SimDriver:
    """The node's component: one embedded home, one profile (see the package doc)."""

    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node = node
        self.profile: RobotProfile = load_profile(params["robot"])
        p = self.profile
        scene = str(params["scene"])
        spec = generate_scene(int(scene)) if scene.lstrip("-").isdigit() else load_scene(scene)
        size = camera_size(params["camera_size"])
        self.world = EmbeddedHome(spec, width=64, height=64, depth=False, segmentation=False)
        self.robot: HomeControl = self.world.own_robot()
        self.robot.max_linear, self.robot.max_angular = p.limits.max_linear, p.limits.max_angular
        self.robot.max_ee_speed = p.limits.max_ee_speed
        self.power = Power(p.sim.needs_power)
        self.counters: dict[str, int] = {"cmd_vel": 0, "applied": 0, "timeouts": 0, "arm_goals": 0, "head_goals": 0, "gripper_goals": 0,
                                         "services": 0, "expert_acts": 0}
        self._lock = threading.Lock()
        self.goals = GoalNotes(self._lock)
        self._last_tick = time.monotonic()
        self.clock = SimClock(node, bool(params["lockstep"]))
        self._frame = 0
        lock, counters, seconds = self._lock, self.counters, self.clock.seconds
        self.base = SimBase(node, p, self.world, self.power, seconds, lock, counters, cmd_duration(p, params["cmd_duration"]))
        self.gripper = SimGripper(node, p, self.robot, lock, counters, seconds, self.goals)
        self.truth = TruthStream(node, p.robot, self.world, self.power, counters)
        self.arm = SimArm(node, p, self.robot, lock, counters)
        # the services answer on a node and thread of their own: a lock-step ``step`` waits for commands that
        # this node's single-threaded subscriptions count, and a power-on that takes time must not stall the streams
        self._services_node = Node(f"{node.get_name()}_services")
        self._services_executor, self._services_thread = spin_in_background(self._services_node)
        # for a driver that waits for an operator's E-Stop (spot_ros2) its services are on a node named as the
        # driver's, advertised now and answered once an E-Stop is registered
        self.estop = EStopRegistration(node, p, self._services_node)
        self.status = SimStatus(node, self._services_node, p, self.power, self.base, lock)
        self.lease = SimLease(lease_holder(params["lease_held_by"]))
        self.triggers = DriverTriggers(self.estop.node, p, self.power, self.base, self.arm, self.gripper, lock, counters,
                                       self.lease, real_time=not self.clock.lockstep)
        self.driver_part = DriverPart(self._services_node, self.estop, self.triggers, self.power, self.base, lock)
        self.trajectory = TrajectoryArm(node, p, self.robot, self.arm, seconds, self.goals, counters)
        self.torso = SimTorso(node, p, self.trajectory, self.goals, counters)
        self.chains = CameraChains(node, p, self.robot, self.trajectory.kinematics, self.clock.lockstep)
        self.head = SimHead(node, p, self.chains, seconds, self.goals, counters)
        self.joint_states = JointStates(node, p, self.robot, self.trajectory, self.chains)
        self.cameras = SimCameras(node, p, self.robot, size, self.head.view, self.clock.stamp_ns, lock, self.clock.lockstep,
                                  bool(params["rgb_cameras"]))
        self._tf_static = publish_camera_frames(node, p)  # the fixed cameras' frames, as the driver sends them
        self.experts = ExpertPolicies(self.world, self.robot, lock, counters)
        self._action_servers = self._serve_actions()
        serve_sim_services(self._services_node, self)  # the simulator-only ones too
        node.create_timer(1.0 / p.sim.state_rate_hz, self._state_tick)
        self.cameras.start()
        node.get_logger().info(f"sim driver: the embedded home as {p.robot} ({'unpowered' if not self.power.powered else 'ready'})")
        self.estop.wait(_estop_after(params["estop_registered_after"], p))

    def _serve_actions(self) -> list[Any]:
        """The control_msgs action servers the profile has (a head, a trajectory arm, a gripper, a torso)."""
        group = ReentrantCallbackGroup()
        servers = [part.serve(group) for part in (self.head, self.trajectory, self.gripper, self.torso)]
        return [server for server in servers if server is not None]

    @property
    def lockstep(self) -> bool:
        """Whether simulated time advances only on ``step`` calls."""
        return self.clock.lockstep

    @property
    def sim_ns(self) -> int:
        """Simulated time (ns; lock-step)."""
        return self.clock.sim_ns

    # ---- the simulation ------------------------------------------------------------------------------
    def _state_tick(self) -> None:
        """The state timer: in real time the simulation moves on; in both modes the state streams go out."""
        now = time.monotonic()
        with self._lock:
            dt = min(now - self._last_tick, MAX_TICK_S)
            self._last_tick = now
            if not self.clock.lockstep:  # in lock-step only `step` moves the simulation; the streams go on
                self._advance(dt, now)
            self._frame += 1
            self._publish_state(truth=self._frame % TRUTH_EVERY == 0)

    def _advance(self, dt: float, now: float) -> None:
        """Apply the held velocity, the head's, the torso's and the arm's goals for ``dt`` seconds (``now``: the driver's clock)."""
        self.base.advance(dt, now)
        if self.gripper.running:
            self.gripper.advance(now)
        if not (self.power.can_move and dt > 0):
            return
        if self.head.running:
            self.head.advance(dt, now)
        if self.torso.running:
            self.torso.advance(dt)
        if self.arm.goal is not None:
            motion = self.arm.advance(dt, joint_space=self.trajectory.running)
            if self.trajectory.running:
                self.trajectory.progress(motion)

    def _publish_state(self, truth: bool) -> None:
        """Publish the instant's clock, odometry, joints and gripper state (``truth``: and the truth) (under the lock)."""
        stamp = self.clock.stamp_ns()
        self.clock.publish(stamp)
        self.base.publish(stamp)
        self.joint_states.publish(stamp)
        self.gripper.publish()
        if truth or self._frame % STATUS_EVERY == 0:
            self.status.publish(stamp)
        if truth:
            self.truth.publish(stamp)

    # ---- lock-step ------------------------------------------------------------------------------------
    def truth_now(self) -> dict[str, Any]:
        """The truth message of this instant (lock-step readers ask instead of waiting for the topic)."""
        with self._lock:
            return self.truth.truth(self.clock.stamp_ns())

    def step(self, seconds: float, after: dict[str, int], until: str | None,
             cameras: list[str] | None = None) -> tuple[int, dict[str, int]]:
        """Advance simulated time by ``seconds`` in ticks of the state period, once the commands the caller
        sent before (``after``: counter -> count, e.g. {"cmd_vel": 12}) have arrived; with ``until`` (an
        action goal's id, hex) once that goal is running, and only until the tick it ended. Then publish
        the state and the cameras of the new instant (``cameras``: those only; a reader asks for the others
        with ``render_now``). Lock-step only."""
        if not self.clock.lockstep:
            raise ValueError("the sim driver runs in real time; start it with lockstep:=true (sim_driver: {lockstep: true})")
        if not (math.isfinite(seconds) and 0.0 <= seconds <= 60.0):
            raise ValueError(f"step seconds must be within [0, 60], not {seconds}")
        deadline = time.monotonic() + STEP_WAIT_S
        # ordering: the commands and the goal first, then the step
        while any(self.counters.get(k, 0) < n for k, n in after.items()) or (until is not None and not self.goals.known(until)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the commands sent before this step ({after}{', goal ' + until if until else ''}) did not arrive "
                                   f"within 10 s (have {self.counters})")
            time.sleep(0.002)
        dt = 1.0 / self.profile.sim.state_rate_hz
        with self._lock:
            if after.get("cmd_vel"):  # the command sent before the step is held for it (a process re-sends it meanwhile)
                self.base.hold(self.clock.seconds() + seconds)
            for _ in range(round(seconds / dt)):
                if until is not None and self.goals.ended(until):
                    break
                self.clock.advance(dt)
                self._advance(dt, self.clock.sim_ns / 1e9)
            self._publish_state(truth=True)
        self.cameras.render(cameras)  # the views of this instant, stamped with it
        return self.clock.sim_ns, dict(self.counters)

    def render_now(self, cameras: list[str]) -> int:
        """Render ``cameras`` at the present instant, without advancing it (lock-step: a reader asked for a camera
        the last step did not render); the instant's time (ns)."""
        if not self.clock.lockstep:
            raise ValueError("the sim driver runs in real time: its cameras stream on their own")
        self.cameras.render(list(cameras), more=True)
        return self.clock.sim_ns

    # ---- the simulator-only services ----------------------------------------------------------------
    def expert_reset(self, name: str, params: dict[str, Any], instruction: str, subtask: Subtask) -> PrivilegedPolicy:
        """Start an expert policy (``name``: a registered expert, e.g. expert_waypoints) on a subtask."""
        return self.experts.reset(name, params, instruction, subtask)

    def expert_act(self) -> tuple[list[Command], str]:
        """The expert's next commands from the home's present truth, and why it cannot plan (or "")."""
        return self.experts.act()

    def goal_holds(self, goal: Any) -> bool:
        """Whether the task goal conditions ``goal`` (the task format's list) hold in the home now."""
        return self.experts.goal_holds(goal)

    def restart(self) -> dict[str, float]:
        """The home back to its initial state for a new episode; commands dropped, power kept."""
        with self._lock:
            self.world.reset()
            self.base.stop()
            self.arm.stop()
            self.experts.forget()
            self.trajectory.restart()
            self.head.restart()
            self.gripper.restart()
            self.chains.restart()
            r = self.world.state.robot
            if self.clock.lockstep:
                self.clock.sim_ns += RESTART_NS
                self.cameras.forget()  # the cameras of the new instant are rendered
            stamp = self.clock.stamp_ns()
            self._publish_state(truth=True)
            return {"x": r.x, "y": r.y, "yaw": r.yaw, "stamp": stamp}

    def close(self) -> None:
        """Stop serving, then close the home (no handler is left to use it)."""
        self.estop.cancel()
        self._services_executor.shutdown(timeout_sec=2.0)
        self.estop.shutdown()
        self._services_node.destroy_node()
        self.estop.destroy()
        for server in self._action_servers:
            server.destroy()
        self.world.close()
