"""``joint_states`` as the robot's driver publishes them, under the profile's joint names: a trajectory arm's
table joints (the held ones, such as a torso, first), a pose-goal arm's table joints solved for the home's
hand and its fingers, or else the home's own arm joints; and the other camera chains' joints (a head's)."""

from __future__ import annotations

from typing import Any

from sensor_msgs.msg import JointState

from homiebot.robots.profile import RobotProfile
from homiebot.ros.messages.common import stamp_of
from homiebot.ros.nodes.sim_driver.chains import CameraChains
from homiebot.ros.nodes.sim_driver.trajectory import TrajectoryArm


class JointStates:
    """The joint states publisher (``publisher``: None for a profile without joint_states) and its messages."""

    def __init__(self, node: Any, profile: RobotProfile, robot: Any, arm: TrajectoryArm, chains: CameraChains) -> None:
        self.profile, self.robot, self.arm, self.chains = profile, robot, arm, chains
        self.publisher = node.create_publisher(JointState, profile.topic(profile.joint_states.name), 10) if profile.joint_states else None

    def message(self, stamp: int) -> JointState:
        """The joints at the instant ``stamp``."""
        msg = JointState()
        msg.header.stamp = stamp_of(stamp)
        values = self.chains.extra
        extra = list(values)  # a head's joints (before the arm's: the arm's stay last)
        name = self.profile.joint_name
        kinematics, hand_table = self.arm.kinematics, self.chains.hand_table
        if kinematics is not None and self.arm.joints is not None:  # the robot's own joint names
            held = [j for j in kinematics.joints if j.value is not None]
            msg.name = [name(n) for n in [j.name for j in held] + extra + list(kinematics.names)]
            msg.position = [float(j.value or 0.0) for j in held] + [values[n] for n in extra] + [float(v) for v in self.arm.joints]
            return msg
        if hand_table is not None:  # a pose-goal arm: its table's joints where the home's hand is
            q = self.chains.hand_joints()
            msg.name = [name(n) for n in extra + list(hand_table.names)]
            msg.position = [values[n] for n in extra] + [float(v) for v in q]
            if self.profile.gripper_joint is not None:  # the fingers, between their open and closed positions
                joint, opened, closed = self.profile.gripper_joint
                fraction = self.robot.gripper_state().open_fraction
                msg.name.append(name(joint))
                msg.position.append(float(closed + fraction * (opened - closed)))
            return msg
        arm = self.robot.arm_state()
        msg.name = list(arm.joint_names) + [name(n) for n in extra]
        msg.position = [float(v) for v in arm.joint_positions] + [values[n] for n in extra]
        return msg

    def publish(self, stamp: int) -> None:
        """Publish the joints of the instant ``stamp`` (for a profile with joint_states)."""
        if self.publisher is not None:
            self.publisher.publish(self.message(stamp))
