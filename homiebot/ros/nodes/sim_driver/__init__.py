"""The embedded home served as a robot driver, under a robot profile's ROS 2 names and types.

As Gazebo or ros2_control serve a simulated robot, this node makes the embedded home look like the
real driver a profile describes (``config/robots/spot.yaml``: spot_ros2's ``/spot/...`` names):

* streams at driver rates: odometry (nav_msgs/Odometry) and joint states at ``sim.state_rate_hz``,
  each camera's image, camera_info and registered depth at ``sim.camera_rate_hz``, as the mounted camera
  gives them: the home renders the upright view (grown to cover the turned sensor, at the camera's focal
  length), turned by minus the profile's ``rotation_deg`` into the published ``height`` x ``width``
  (``camera_size`` overrides it; ``homiebot.robots.camera_rotation``), in the emulated driver's encoding
  (``upstream``: for ``sim.driver: spot_ros2`` its ``rgb_cameras`` parameter, default true: bgr8 everywhere;
  false: mono8 body cameras, the hand bgr8; depth 16UC1 millimetres), else the profile's;
* ``cmd_vel`` (geometry_msgs/Twist) applied in real time within the profile's limits, each command for the
  driver's duration (``cmd_duration``: spot_ros2's 0.125 s, else the profile's ``cmd_vel_timeout``): with no
  new command the base stops;
* Trigger services that behave as on the robot: with ``sim.needs_power`` the base refuses to move
  until ``power_on`` and ``stand`` ran; ``estop/gentle`` cuts power; ``sit`` and ``power_off`` too. For a
  driver that serves only once an operator's E-Stop is registered (the profile's ``estop_registration``,
  spot_ros2) they are on a node named as the driver's (``/spot/spot_ros2``), advertised from the start but
  answered (its parameter services too) only once the simulated operator registered one,
  ``sim.estop_registered_after`` seconds after start-up (the ``estop_registered_after`` parameter overrides
  it; ``never``: never), while the streams go on;
* the profile's ``status`` topics (spot_ros2's ``status/estop``, ``status/power_states``,
  ``status/behavior_faults``, spot_msgs) and a simulated operator's E-Stop (``/homiebot/sim/operator_estop``,
  ``status.SimStatus``); the driver's own node stopped apart from the streams or restarted
  (``/homiebot/sim/driver_node``, ``driver_part.DriverPart``), as a killed or restarted spot_ros2 whose state
  publisher goes on;
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

The driver is assembled from one part per subsystem, each owning its publishers, subscriptions, services or
action servers and its state (``driver.SimDriver`` assembles them and runs the tick):

* ``base.SimBase``: ``cmd_vel`` and its timeout, odometry; ``power.Power``: power and stance;
* ``arm.SimArm``: the end-effector goal and its approach; ``trajectory.TrajectoryArm``: a trajectory arm's
  action server and joints; ``torso.SimTorso``: the lift; ``gripper.SimGripper``: the gripper's action
  server and state;
* ``chains.CameraChains``: the camera chains' joints; ``head.SimHead``: PointHead; ``joint_states.JointStates``;
* ``cameras.SimCameras`` (messages by ``images``); ``truth.TruthStream``; ``expert_policies.ExpertPolicies``;
* ``triggers.DriverTriggers``: the driver's Trigger services; ``estop.EStopRegistration``: the E-Stop they may
  wait for; ``status.SimStatus``: the status topics and the operator's E-Stop; ``driver_part.DriverPart``: the
  driver's node stopped or restarted; ``upstream``: the emulated driver's defaults; ``clock.SimClock``: real or simulated time; ``goals.GoalNotes``: the timed goals a step waits on.
"""

from homiebot.ros.nodes.sim_driver.driver import SimDriver
from homiebot.ros.nodes.sim_driver.estop import _estop_after, _estop_check
from homiebot.ros.nodes.sim_driver.node import NODE, PARAMS, main
from homiebot.ros.nodes.sim_driver.truth import GROUND_TRUTH_TOPIC

__all__ = ["GROUND_TRUTH_TOPIC", "NODE", "PARAMS", "SimDriver", "_estop_after", "_estop_check", "main"]
